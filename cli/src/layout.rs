//! Header offsets, derived from the library's public sizes (SPEC.md §1):
//! version `[0,2)`, KEM ciphertext `[2,1122)`, routing `[1122,5930)`, MAC
//! `[5930,5962)`, then the payload (packets) or first hop and reply key
//! (SURBs).

use kemsphinx::geometry::{
    HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, NODE_ID_LEN, PER_HOP_ROUTING_LEN, ROUTING_INFO_LEN,
    VERSION_LEN, X25519_LEN,
};

/// Start of the KEM ciphertext.
pub const KEM_CT: usize = VERSION_LEN;
/// Start of the ML-KEM half of the KEM ciphertext.
pub const MLKEM_CT: usize = KEM_CT + X25519_LEN;
/// Start of the routing information.
pub const ROUTING: usize = KEM_CT + KEM_CIPHERTEXT_LEN;
/// Start of the header MAC.
pub const MAC: usize = ROUTING + ROUTING_INFO_LEN;
/// Start of the enciphered payload of a packet.
pub const PAYLOAD: usize = HEADER_LEN;
/// Start of a SURB's first-hop id.
pub const SURB_FIRST_HOP: usize = HEADER_LEN;
/// Start of a SURB's reply key block.
pub const SURB_REPLY_KEY: usize = HEADER_LEN + NODE_ID_LEN;

/// Start of hop `i`'s 1,202-byte block in the routing information as it
/// arrives (only block 0 is readable by the receiving hop).
#[must_use]
pub const fn routing_block(i: usize) -> usize {
    ROUTING + i * PER_HOP_ROUTING_LEN
}

const _: () = assert!(MAC + MAC_LEN == HEADER_LEN);
const _: () = assert!(MAC == 5_930 && ROUTING == 1_122);
