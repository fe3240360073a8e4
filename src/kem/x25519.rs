//! X25519 used as a KEM through HPQC's hashed-ElGamal adapter
//! (SPEC.md §2.1), on any backend's X25519 ([`X25519`]).
//!
//! The adapter turns Diffie–Hellman into a KEM: the ciphertext is a fresh
//! ephemeral public key `E`, and the shared secret is
//! `BLAKE2Xb(len 32, key = X25519(e, X), msg = X ‖ E)` where `X` is the
//! recipient's public key. A point of small order would make the
//! Diffie–Hellman output all-zero and public; it is refused, never hashed.
//! Scalars are clamped and bit 255 of `u` is ignored, as RFC 7748 requires.

use zeroize::Zeroizing;

use super::backend::X25519;
use super::blake2::blake2xb_prefix;
use crate::error::Error;
use crate::geometry::X25519_LEN;

/// Output length the adapter declares to BLAKE2Xb.
const ADAPTER_OUT: u32 = 32;

/// A raw (unclamped) X25519 secret, as the reference stores it.
pub(super) type Secret = Zeroizing<[u8; X25519_LEN]>;

/// `X25519(secret, 9)`: the public key of `secret`.
pub(super) fn public_key<X: X25519>(secret: &[u8; X25519_LEN]) -> [u8; X25519_LEN] {
    X::base_point(secret)
}

/// Encapsulate to `recipient` with the ephemeral secret `ephemeral`:
/// returns the ephemeral public key (the ciphertext) and the adapter's
/// shared secret.
pub(super) fn encapsulate<X: X25519>(
    ephemeral: &[u8; X25519_LEN],
    recipient: &[u8; X25519_LEN],
) -> Result<([u8; X25519_LEN], Zeroizing<[u8; 32]>), Error> {
    let ephemeral_public = X::base_point(ephemeral);
    let dh = X::shared_secret(ephemeral, recipient).ok_or(Error::Kem)?;
    Ok((
        ephemeral_public,
        hash_shared(&dh, recipient, &ephemeral_public),
    ))
}

/// Decapsulate the ephemeral public key `ephemeral` with the recipient's
/// secret `secret` (whose public key is `recipient`).
pub(super) fn decapsulate<X: X25519>(
    secret: &[u8; X25519_LEN],
    recipient: &[u8; X25519_LEN],
    ephemeral: &[u8; X25519_LEN],
) -> Result<Zeroizing<[u8; 32]>, Error> {
    finish_decapsulate(
        X::shared_secret(secret, ephemeral).as_deref(),
        recipient,
        ephemeral,
    )
}

/// Decapsulation from its Diffie–Hellman output, computed already (in a
/// batch): `None` is an all-zero output, a point of small order.
pub(super) fn finish_decapsulate(
    dh: Option<&[u8; X25519_LEN]>,
    recipient: &[u8; X25519_LEN],
    ephemeral: &[u8; X25519_LEN],
) -> Result<Zeroizing<[u8; 32]>, Error> {
    let dh = dh.ok_or(Error::Kem)?;
    Ok(hash_shared(dh, recipient, ephemeral))
}

/// The adapter's hash of a Diffie–Hellman output.
fn hash_shared(
    dh: &[u8; X25519_LEN],
    recipient: &[u8; X25519_LEN],
    ephemeral: &[u8; X25519_LEN],
) -> Zeroizing<[u8; 32]> {
    let mut msg = [0u8; 2 * X25519_LEN];
    let (first, second) = msg.split_at_mut(X25519_LEN);
    first.copy_from_slice(recipient);
    second.copy_from_slice(ephemeral);
    blake2xb_prefix::<32>(dh, &msg, ADAPTER_OUT, ADAPTER_OUT as usize)
}

/// Whether `point` has small order (0, 1, 2, 4 or 8 times it is the
/// identity), so that every Diffie–Hellman with it would be all-zero.
///
/// A clamped scalar is a multiple of 8 and smaller than the prime order of
/// both the curve and its twist, so its product with `point` is the
/// identity exactly when `point` has small order.
pub(super) fn is_low_order<X: X25519>(point: &[u8; X25519_LEN]) -> bool {
    X::shared_secret(&[0x55; X25519_LEN], point).is_none()
}
