//! HPQC's keyed split-PRF combiner, "splitprf-v1" (SPEC.md §2.3).
//!
//! Each component's secret keys its own BLAKE2b-256 over the same message
//! (a label and every component's ciphertext, length-prefixed); the two
//! digests are XORed. The result stays secret as long as either component
//! does. The older unkeyed combiner (`BLAKE2b(ss ‖ ct)`) is a different
//! function and does not interoperate.

use zeroize::Zeroizing;

use super::blake2::{blake2b_256, keyed_blake2b_256};
use crate::geometry::{MLKEM_CT_LEN, SHARED_SECRET_LEN, X25519_LEN};

/// Domain-separation label of the combiner.
const LABEL: &[u8] = b"splitprf-v1";
/// Number of KEMs combined.
const COMPONENTS: u32 = 2;
/// Length prefix of the X25519 ciphertext, big-endian u32.
const X25519_CT_LEN_BE: [u8; 4] = len_be(X25519_LEN);
/// Length prefix of the ML-KEM ciphertext, big-endian u32.
const MLKEM_CT_LEN_BE: [u8; 4] = len_be(MLKEM_CT_LEN);

/// A length as the combiner's 32-bit big-endian prefix (checked at compile
/// time to fit).
#[allow(clippy::cast_possible_truncation)]
const fn len_be(len: usize) -> [u8; 4] {
    assert!(len <= u32::MAX as usize);
    (len as u32).to_be_bytes()
}

/// Intermediate values of one combination, kept for conformance debugging
/// (read only by the `hazmat` hook).
#[cfg_attr(not(feature = "hazmat"), allow(dead_code))]
pub(crate) struct Intermediates {
    /// `BLAKE2b-256(ss_x25519)`.
    pub(crate) key_x25519: Zeroizing<[u8; 32]>,
    /// `BLAKE2b-256(ss_mlkem)`.
    pub(crate) key_mlkem: Zeroizing<[u8; 32]>,
    /// The X25519 half's keyed hash of the message.
    pub(crate) hash_x25519: Zeroizing<[u8; 32]>,
    /// The ML-KEM half's keyed hash of the message.
    pub(crate) hash_mlkem: Zeroizing<[u8; 32]>,
}

/// Combine both components' shared secrets and ciphertexts into the hybrid
/// shared secret.
pub(crate) fn combine(
    ss_x25519: &[u8; 32],
    ct_x25519: &[u8; X25519_LEN],
    ss_mlkem: &[u8; 32],
    ct_mlkem: &[u8; MLKEM_CT_LEN],
) -> (Zeroizing<[u8; SHARED_SECRET_LEN]>, Intermediates) {
    let count = COMPONENTS.to_be_bytes();
    let msg: [&[u8]; 6] = [
        LABEL,
        &count,
        &X25519_CT_LEN_BE,
        ct_x25519,
        &MLKEM_CT_LEN_BE,
        ct_mlkem,
    ];

    let key_x25519 = blake2b_256(&[ss_x25519]);
    let key_mlkem = blake2b_256(&[ss_mlkem]);
    let hash_x25519 = keyed_blake2b_256(&key_x25519[..], &msg);
    let hash_mlkem = keyed_blake2b_256(&key_mlkem[..], &msg);

    let mut ss = Zeroizing::new([0u8; SHARED_SECRET_LEN]);
    for ((out, a), b) in ss.iter_mut().zip(hash_x25519.iter()).zip(hash_mlkem.iter()) {
        *out = a ^ b;
    }
    let intermediates = Intermediates {
        key_x25519,
        key_mlkem,
        hash_x25519,
        hash_mlkem,
    };
    (ss, intermediates)
}
