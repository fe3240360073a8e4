//! Every size of the format, derived from a handful of base values and
//! checked at compile time (SPEC.md §1).
//!
//! The geometry is fixed: four hops, the `MLKEM768-X25519` KEM and the
//! Katzenpost "FOG" payload (a 4,096-byte user message plus one SURB). There
//! is no runtime geometry; every buffer in the public API is an array of one
//! of these lengths.

/// Number of hops of every forward packet and every SURB.
pub const HOPS: usize = 4;

/// X25519 public key, secret key and shared secret length.
pub const X25519_LEN: usize = 32;
/// ML-KEM-768 encapsulation key length (FIPS 203).
pub const MLKEM_EK_LEN: usize = 1_184;
/// ML-KEM-768 ciphertext length (FIPS 203).
pub const MLKEM_CT_LEN: usize = 1_088;
/// ML-KEM seed `d ‖ z` length (FIPS 203).
pub const MLKEM_SEED_LEN: usize = 64;

/// Hybrid KEM public key: X25519 public ‖ ML-KEM encapsulation key.
pub const PUBLIC_KEY_LEN: usize = X25519_LEN + MLKEM_EK_LEN;
/// Hybrid KEM private key: X25519 secret ‖ ML-KEM encapsulation key ‖ ML-KEM seed.
pub const PRIVATE_KEY_LEN: usize = X25519_LEN + MLKEM_EK_LEN + MLKEM_SEED_LEN;
/// Seed from which the reference derives a key pair.
pub const KEY_SEED_LEN: usize = 96;
/// Hybrid KEM ciphertext: X25519 ephemeral public ‖ ML-KEM ciphertext.
pub const KEM_CIPHERTEXT_LEN: usize = X25519_LEN + MLKEM_CT_LEN;
/// Hybrid KEM shared secret.
pub const SHARED_SECRET_LEN: usize = 32;

/// Node identifier (the hash of a mix's identity key, opaque here).
pub const NODE_ID_LEN: usize = 32;
/// Recipient identifier at the terminal hop.
pub const RECIPIENT_ID_LEN: usize = 32;
/// SURB identifier.
pub const SURB_ID_LEN: usize = 16;
/// HMAC-SHA256 tag length.
pub const MAC_LEN: usize = 32;

/// `next_node_hop` command: id byte ‖ node id ‖ MAC.
pub const NEXT_NODE_HOP_CMD_LEN: usize = 1 + NODE_ID_LEN + MAC_LEN;
/// `recipient` command: id byte ‖ recipient id.
pub const RECIPIENT_CMD_LEN: usize = 1 + RECIPIENT_ID_LEN;
/// `surb_reply` command: id byte ‖ SURB id.
pub const SURB_REPLY_CMD_LEN: usize = 1 + SURB_ID_LEN;
/// `node_delay` command: id byte ‖ u32 big-endian.
pub const NODE_DELAY_CMD_LEN: usize = 1 + 4;
/// Commands area of each hop: room for `next_node_hop` and `surb_reply`.
pub const COMMANDS_LEN: usize = NEXT_NODE_HOP_CMD_LEN + SURB_REPLY_CMD_LEN;

/// Routing information for one hop: commands ‖ next hop's KEM ciphertext.
pub const PER_HOP_ROUTING_LEN: usize = COMMANDS_LEN + KEM_CIPHERTEXT_LEN;
/// Routing information for the whole path.
pub const ROUTING_INFO_LEN: usize = HOPS * PER_HOP_ROUTING_LEN;
/// Keystream that decrypts one hop's routing info (whole routing info plus
/// the block shifted in at the end).
pub const STREAM_LEN: usize = ROUTING_INFO_LEN + PER_HOP_ROUTING_LEN;
/// Version bytes at the start of every header (`00 00`).
pub const VERSION_LEN: usize = 2;
/// Header: version ‖ KEM ciphertext ‖ routing info ‖ MAC.
pub const HEADER_LEN: usize = VERSION_LEN + KEM_CIPHERTEXT_LEN + ROUTING_INFO_LEN + MAC_LEN;

/// All-zero tag in front of every payload, checked at the end.
pub const PAYLOAD_TAG_LEN: usize = 32;
/// Payload the caller sends (forward) or replies with (SURB).
pub const PAYLOAD_LEN: usize = 10_156;
/// Enciphered payload: tag ‖ payload.
pub const ENCRYPTED_PAYLOAD_LEN: usize = PAYLOAD_TAG_LEN + PAYLOAD_LEN;
/// What the SURB's terminal hop delivers: the still-enciphered reply.
pub const ENCRYPTED_REPLY_LEN: usize = ENCRYPTED_PAYLOAD_LEN;
/// Packet: header ‖ enciphered payload.
pub const PACKET_LEN: usize = HEADER_LEN + ENCRYPTED_PAYLOAD_LEN;

/// AEZ key length (the extracted key `I ‖ J ‖ L`).
pub const SPRP_KEY_LEN: usize = 48;
/// AEZ nonce length.
pub const SPRP_IV_LEN: usize = 16;
/// One SPRP key block: key ‖ IV.
pub const SPRP_KEY_BLOCK_LEN: usize = SPRP_KEY_LEN + SPRP_IV_LEN;
/// SURB: header ‖ first hop ‖ reply SPRP key ‖ reply SPRP IV.
pub const SURB_LEN: usize = HEADER_LEN + NODE_ID_LEN + SPRP_KEY_BLOCK_LEN;
/// SURB decryption keys: one key block per hop plus the reply's own.
pub const SURB_KEYS_LEN: usize = (HOPS + 1) * SPRP_KEY_BLOCK_LEN;

/// SHA-512/256 replay tag.
pub const REPLAY_TAG_LEN: usize = 32;

/// Offsets of the header fields inside a packet (and a SURB).
pub(crate) mod offset {
    use super::{HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, ROUTING_INFO_LEN, VERSION_LEN};

    /// Start of the KEM ciphertext.
    pub(crate) const KEM_CT: usize = VERSION_LEN;
    /// Start of the routing information.
    pub(crate) const ROUTING: usize = KEM_CT + KEM_CIPHERTEXT_LEN;
    /// Start of the header MAC.
    pub(crate) const MAC: usize = ROUTING + ROUTING_INFO_LEN;
    /// Start of the enciphered payload.
    pub(crate) const PAYLOAD: usize = HEADER_LEN;

    const _: () = assert!(MAC + MAC_LEN == HEADER_LEN);
}

// The numbers the reference fixes; a change to any base value above must
// break the build rather than the wire format.
const _: () = {
    assert!(PACKET_LEN == 16_150);
    assert!(HEADER_LEN == 5_962);
    assert!(SURB_LEN == 6_058);
    assert!(PAYLOAD_LEN == 10_156);
    assert!(ENCRYPTED_PAYLOAD_LEN == 10_188);
    assert!(SURB_KEYS_LEN == 320);
    assert!(PER_HOP_ROUTING_LEN == 1_202);
    assert!(COMMANDS_LEN == 82);
    assert!(KEM_CIPHERTEXT_LEN == 1_120);
    assert!(PUBLIC_KEY_LEN == 1_216);
    assert!(PRIVATE_KEY_LEN == 1_280);
    assert!(ROUTING_INFO_LEN == 4_808);
    assert!(STREAM_LEN == 6_010);
    // The framing the payload is sized for: 2-byte header ‖ SURB ‖ 4 KiB.
    assert!(PAYLOAD_LEN == 2 + SURB_LEN + 4_096);
};
