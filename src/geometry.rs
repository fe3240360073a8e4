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

/// Header stream cipher (AES-256) key length.
pub const STREAM_KEY_LEN: usize = 32;
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

/// Where every field sits, as byte ranges: the format's layout, stated once
/// for the library and for every tool, test and benchmark (SPEC.md §1, §3.1).
///
/// Ranges index the buffer they are named after: [`packet`](layout::packet)
/// ranges a 16,150-byte packet (the header ranges also a SURB, whose first
/// 5,962 bytes are a header), [`surb`](layout::surb) a 6,058-byte SURB,
/// [`block`](layout::block) one hop's 1,202-byte routing block once
/// decrypted, [`payload`](layout::payload) the enciphered payload once every
/// layer is removed. Each range is checked at compile time against the
/// sizes above.
///
/// The offsets inside secret key material (the KDF's output, a key block,
/// [`SurbKeys`](crate::SurbKeys)' encoding) and inside the creator's own
/// encodings (where the next-hop MAC goes in a commands area) are stated
/// here too, but only for the library: they are no part of the API (the
/// tools reach the KDF's through `hazmat`).
pub mod layout {
    use core::ops::Range;

    /// `start..start + len`, as a `const`.
    const fn at(start: usize, len: usize) -> Range<usize> {
        start..start + len
    }

    /// Fields of a packet; the first five also of a header and of a SURB.
    pub mod packet {
        use super::super::{
            ENCRYPTED_PAYLOAD_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, PACKET_LEN,
            PER_HOP_ROUTING_LEN, ROUTING_INFO_LEN, VERSION_LEN, X25519_LEN,
        };
        use super::{Range, at};

        /// Version bytes, always `00 00`.
        pub const VERSION: Range<usize> = at(0, VERSION_LEN);
        /// The hybrid KEM ciphertext for this hop (hashed into the replay tag).
        pub const KEM_CIPHERTEXT: Range<usize> = at(VERSION.end, KEM_CIPHERTEXT_LEN);
        /// Its X25519 half: the ephemeral public key.
        pub const KEM_X25519: Range<usize> = at(KEM_CIPHERTEXT.start, X25519_LEN);
        /// Its ML-KEM-768 half.
        pub const KEM_MLKEM: Range<usize> = KEM_X25519.end..KEM_CIPHERTEXT.end;
        /// The encrypted routing information: four 1,202-byte blocks.
        pub const ROUTING_INFO: Range<usize> = at(KEM_CIPHERTEXT.end, ROUTING_INFO_LEN);
        /// The header MAC, over everything before it.
        pub const MAC: Range<usize> = at(ROUTING_INFO.end, MAC_LEN);
        /// What the header MAC covers: version, KEM ciphertext, routing.
        pub const AUTHENTICATED: Range<usize> = 0..MAC.start;
        /// The whole header.
        pub const HEADER: Range<usize> = 0..MAC.end;
        /// The enciphered payload.
        pub const PAYLOAD: Range<usize> = at(HEADER.end, ENCRYPTED_PAYLOAD_LEN);

        /// Block `i` (0..4) of the routing information as it arrives; only
        /// block 0 is readable by the receiving hop.
        #[must_use]
        pub const fn routing_block(i: usize) -> Range<usize> {
            at(
                ROUTING_INFO.start + i * PER_HOP_ROUTING_LEN,
                PER_HOP_ROUTING_LEN,
            )
        }

        const _: () = assert!(HEADER.end == HEADER_LEN && PAYLOAD.end == PACKET_LEN);
    }

    /// Fields of a SURB after its header.
    pub mod surb {
        use super::super::{HEADER_LEN, NODE_ID_LEN, SPRP_KEY_BLOCK_LEN, SURB_LEN};
        use super::{Range, at};

        /// The header of the reply's path.
        pub const HEADER: Range<usize> = 0..HEADER_LEN;
        /// The id of the hop the reply is sent to.
        pub const FIRST_HOP: Range<usize> = at(HEADER.end, NODE_ID_LEN);
        /// Reply key and nonce: the 64-byte key block that is also the last
        /// of the SURB keys.
        pub const REPLY_KEY_BLOCK: Range<usize> = at(FIRST_HOP.end, SPRP_KEY_BLOCK_LEN);

        const _: () = assert!(REPLY_KEY_BLOCK.end == SURB_LEN);
    }

    /// One hop's decrypted 1,202-byte routing block.
    pub mod block {
        use super::super::{COMMANDS_LEN, KEM_CIPHERTEXT_LEN, PER_HOP_ROUTING_LEN};
        use super::{Range, at};

        /// The hop's commands area.
        pub const COMMANDS: Range<usize> = at(0, COMMANDS_LEN);
        /// The next hop's KEM ciphertext (zero at the terminal hop).
        pub const NEXT_KEM_CIPHERTEXT: Range<usize> = at(COMMANDS.end, KEM_CIPHERTEXT_LEN);

        const _: () = assert!(NEXT_KEM_CIPHERTEXT.end == PER_HOP_ROUTING_LEN);
    }

    /// The 10,188-byte enciphered payload, once every layer is removed.
    pub mod payload {
        use super::super::{ENCRYPTED_PAYLOAD_LEN, PAYLOAD_LEN, PAYLOAD_TAG_LEN};
        use super::{Range, at};

        /// The tag: all zero, checked at the end.
        pub const TAG: Range<usize> = at(0, PAYLOAD_TAG_LEN);
        /// The payload the sender gave.
        pub const BODY: Range<usize> = at(TAG.end, PAYLOAD_LEN);

        const _: () = assert!(BODY.end == ENCRYPTED_PAYLOAD_LEN);
    }

    /// Offsets only the library uses, inside secret key material and its
    /// own encodings (not part of the API; `hazmat::kdf_layout` re-exports
    /// [`kdf`](internal::kdf) for the tools).
    pub(crate) mod internal {
        /// The 160 bytes HKDF-Expand derives from one hop's shared secret.
        #[cfg_attr(not(feature = "hazmat"), allow(unreachable_pub))]
        pub mod kdf {
            use super::super::super::{MAC_LEN, SPRP_IV_LEN, SPRP_KEY_LEN, STREAM_KEY_LEN};
            use super::super::{Range, at};

            /// Bytes of key material per hop.
            pub const OUTPUT_LEN: usize = 160;
            /// Header MAC key.
            pub const MAC_KEY: Range<usize> = at(0, MAC_LEN);
            /// Header stream (AES-256-CTR) key.
            pub const STREAM_KEY: Range<usize> = at(MAC_KEY.end, STREAM_KEY_LEN);
            /// Header stream IV, also the payload SPRP's nonce.
            pub const STREAM_IV: Range<usize> = at(STREAM_KEY.end, SPRP_IV_LEN);
            /// Payload SPRP (AEZ) key.
            pub const SPRP_KEY: Range<usize> = at(STREAM_IV.end, SPRP_KEY_LEN);
            /// Derived but not used by KEMSphinx.
            pub const UNUSED: Range<usize> = SPRP_KEY.end..OUTPUT_LEN;

            const _: () = assert!(UNUSED.start <= UNUSED.end);
        }

        /// One 64-byte SPRP key block (the SURB's reply key block, and each
        /// block of [`SurbKeys`](crate::SurbKeys)' encoding).
        pub(crate) mod key_block {
            use super::super::super::{SPRP_IV_LEN, SPRP_KEY_BLOCK_LEN, SPRP_KEY_LEN};
            use super::super::{Range, at};

            /// The AEZ key.
            pub(crate) const KEY: Range<usize> = at(0, SPRP_KEY_LEN);
            /// The AEZ nonce.
            pub(crate) const NONCE: Range<usize> = at(KEY.end, SPRP_IV_LEN);

            const _: () = assert!(NONCE.end == SPRP_KEY_BLOCK_LEN);
        }

        /// The 320-byte encoding of [`SurbKeys`](crate::SurbKeys): the four
        /// hops' key blocks, last hop first, then the reply's own.
        pub(crate) mod surb_keys {
            use super::super::super::{HOPS, SPRP_KEY_BLOCK_LEN, SURB_KEYS_LEN};
            use super::super::{Range, at};

            /// Hop key block `i` (0..4).
            #[must_use]
            pub(crate) const fn hop(i: usize) -> Range<usize> {
                at(i * SPRP_KEY_BLOCK_LEN, SPRP_KEY_BLOCK_LEN)
            }
            /// The reply's own key block.
            pub(crate) const OWN: Range<usize> = at(hop(HOPS - 1).end, SPRP_KEY_BLOCK_LEN);

            const _: () = assert!(OWN.end == SURB_KEYS_LEN);
        }

        /// Where the creator writes a forwarding hop's `next_node_hop` MAC
        /// in its commands area: `next_node_hop` follows the caller's
        /// commands, and a forwarding hop takes nothing from the caller but
        /// a `node_delay`, so there are exactly two places.
        pub(crate) mod commands {
            use super::super::super::{
                COMMANDS_LEN, MAC_LEN, NEXT_NODE_HOP_CMD_LEN, NODE_DELAY_CMD_LEN, NODE_ID_LEN,
            };
            use super::super::{Range, at};

            /// `next_node_hop` first: after its id byte and the node id.
            pub(crate) const MAC_FIRST: Range<usize> = at(1 + NODE_ID_LEN, MAC_LEN);
            /// `next_node_hop` after a `node_delay`.
            pub(crate) const MAC_AFTER_DELAY: Range<usize> =
                at(NODE_DELAY_CMD_LEN + MAC_FIRST.start, MAC_LEN);

            const _: () = assert!(
                MAC_FIRST.end == NEXT_NODE_HOP_CMD_LEN
                    && MAC_AFTER_DELAY.end == NODE_DELAY_CMD_LEN + NEXT_NODE_HOP_CMD_LEN
                    && MAC_AFTER_DELAY.end <= COMMANDS_LEN
            );
        }

        /// The version bytes every header carries, the only version this
        /// format has.
        pub(crate) const VERSION: [u8; super::super::VERSION_LEN] = [0, 0];
    }
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
