//! X25519 used as a KEM through HPQC's hashed-ElGamal adapter
//! (SPEC.md §2.1).
//!
//! The adapter turns Diffie–Hellman into a KEM: the ciphertext is a fresh
//! ephemeral public key `E`, and the shared secret is
//! `BLAKE2Xb(len 32, key = X25519(e, X), msg = X ‖ E)` where `X` is the
//! recipient's public key. A point of small order would make the
//! Diffie–Hellman output all-zero and public; it is refused, never hashed.

use x25519_dalek::{PublicKey, SharedSecret, StaticSecret};
use zeroize::Zeroizing;

use super::blake2::blake2xb_prefix;
use crate::error::Error;
use crate::geometry::X25519_LEN;

/// Output length the adapter declares to BLAKE2Xb.
const ADAPTER_OUT: u32 = 32;

/// Encapsulate to `recipient` with the ephemeral secret `ephemeral`
/// (clamped here): returns the ephemeral public key (the ciphertext) and the
/// adapter's shared secret.
pub(super) fn encapsulate(
    ephemeral: &[u8; X25519_LEN],
    recipient: &[u8; X25519_LEN],
) -> Result<([u8; X25519_LEN], Zeroizing<[u8; 32]>), Error> {
    let ephemeral = StaticSecret::from(*ephemeral);
    let ephemeral_public = PublicKey::from(&ephemeral).to_bytes();
    let dh = ephemeral.diffie_hellman(&PublicKey::from(*recipient));
    let ss = hash_shared(&dh, recipient, &ephemeral_public)?;
    Ok((ephemeral_public, ss))
}

/// Decapsulate the ephemeral public key `ephemeral` with the recipient's
/// secret `secret` (whose public key is `recipient`).
pub(super) fn decapsulate(
    secret: &StaticSecret,
    recipient: &[u8; X25519_LEN],
    ephemeral: &[u8; X25519_LEN],
) -> Result<Zeroizing<[u8; 32]>, Error> {
    let dh = secret.diffie_hellman(&PublicKey::from(*ephemeral));
    hash_shared(&dh, recipient, ephemeral)
}

/// The adapter's hash of a Diffie–Hellman output, refusing the all-zero
/// output of a small-order point.
fn hash_shared(
    dh: &SharedSecret,
    recipient: &[u8; X25519_LEN],
    ephemeral: &[u8; X25519_LEN],
) -> Result<Zeroizing<[u8; 32]>, Error> {
    if !dh.was_contributory() {
        return Err(Error::Kem);
    }
    let mut msg = [0u8; 2 * X25519_LEN];
    let (first, second) = msg.split_at_mut(X25519_LEN);
    first.copy_from_slice(recipient);
    second.copy_from_slice(ephemeral);
    Ok(blake2xb_prefix::<32>(
        dh.as_bytes(),
        &msg,
        ADAPTER_OUT,
        ADAPTER_OUT as usize,
    ))
}

/// Whether `point` has small order (0, 1, 2, 4 or 8 times it is the
/// identity), so that every Diffie–Hellman with it would be all-zero.
///
/// A clamped scalar is a multiple of 8 and smaller than the prime order of
/// both the curve and its twist, so its product with `point` is the
/// identity exactly when `point` has small order.
pub(super) fn is_low_order(point: &[u8; X25519_LEN]) -> bool {
    let probe = StaticSecret::from([0x55; X25519_LEN]);
    !probe
        .diffie_hellman(&PublicKey::from(*point))
        .was_contributory()
}
