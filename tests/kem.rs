//! The hybrid KEM's keys and edge cases: encodings, validation, small-order
//! X25519 points, secrets that never print, and thread safety.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::rng;
use kemsphinx::geometry::{KEM_CIPHERTEXT_LEN, PUBLIC_KEY_LEN};
use kemsphinx::{Error, KeyError, PrivateKey, PublicKey, Surb, SurbKeys};
use kemsphinx_support::small_order_encodings;

#[test]
fn keys_round_trip_through_their_encodings() {
    let key = PrivateKey::generate(&mut rng(1));
    let again = PrivateKey::from_bytes(&key.to_bytes()).unwrap();
    assert_eq!(again.public_key(), key.public_key());
    assert_eq!(*again.to_bytes(), *key.to_bytes());
    let public = PublicKey::from_bytes(key.public_key().as_bytes()).unwrap();
    assert_eq!(&public, key.public_key());
}

#[test]
fn derivation_from_a_seed_is_deterministic() {
    let seed = [7u8; 96];
    assert_eq!(
        *PrivateKey::from_seed(&seed).to_bytes(),
        *PrivateKey::from_seed(&seed).to_bytes()
    );
    let mut other = seed;
    other[0] ^= 1;
    assert_ne!(
        PrivateKey::from_seed(&seed).public_key(),
        PrivateKey::from_seed(&other).public_key()
    );
}

#[test]
fn encapsulation_and_decapsulation_agree() {
    let mut rng = rng(2);
    let key = PrivateKey::generate(&mut rng);
    for _ in 0..4 {
        let (ct, ss) = key.public_key().encapsulate(&mut rng).unwrap();
        assert_eq!(key.decapsulate(&ct).unwrap().as_bytes(), ss.as_bytes());
    }
}

#[test]
fn a_private_key_whose_encapsulation_key_does_not_match_its_seed_is_refused() {
    let mut rng = rng(3);
    let (a, b) = (
        PrivateKey::generate(&mut rng),
        PrivateKey::generate(&mut rng),
    );
    let mut mixed = *a.to_bytes();
    mixed[32..32 + 1184].copy_from_slice(&b.to_bytes()[32..32 + 1184]);
    assert_eq!(
        PrivateKey::from_bytes(&mixed).err(),
        Some(Error::Key(KeyError::Inconsistent))
    );
    let mut flipped = *a.to_bytes();
    flipped[1_000] ^= 1;
    assert_eq!(
        PrivateKey::from_bytes(&flipped).err(),
        Some(Error::Key(KeyError::Inconsistent))
    );
}

#[test]
fn an_encapsulation_key_with_a_coefficient_of_q_or_more_is_refused() {
    let key = PrivateKey::generate(&mut rng(4));
    let mut bytes = key.public_key().to_bytes();
    // The first 12-bit coefficient of the ML-KEM key becomes 0xfff ≥ q = 3329.
    bytes[32] = 0xff;
    bytes[33] |= 0x0f;
    assert_eq!(
        PublicKey::from_bytes(&bytes).err(),
        Some(Error::Key(KeyError::MlKemEncapsulationKey))
    );
}

#[test]
fn small_order_x25519_public_keys_are_refused() {
    let key = PrivateKey::generate(&mut rng(5));
    // 0, 1, the two points of order 8, p − 1, p, p + 1, and each again with
    // bit 255 set (X25519 ignores that bit).
    for point in small_order_encodings() {
        let mut bytes: [u8; PUBLIC_KEY_LEN] = key.public_key().to_bytes();
        bytes[..32].copy_from_slice(&point.u);
        assert_eq!(
            PublicKey::from_bytes(&bytes).err(),
            Some(Error::Key(KeyError::X25519LowOrder)),
            "{}",
            point.name
        );
    }
}

#[test]
fn small_order_ephemeral_keys_fail_decapsulation() {
    let mut rng = rng(6);
    let key = PrivateKey::generate(&mut rng);
    let (ct, _) = key.public_key().encapsulate(&mut rng).unwrap();
    for point in small_order_encodings() {
        let mut bad: [u8; KEM_CIPHERTEXT_LEN] = ct;
        bad[..32].copy_from_slice(&point.u);
        assert_eq!(
            key.decapsulate(&bad).err(),
            Some(Error::Kem),
            "{}",
            point.name
        );
    }
}

#[test]
fn a_non_canonical_u_is_reduced_as_x25519_does() {
    let mut rng = rng(7);
    let key = PrivateKey::generate(&mut rng);
    let (ct, _) = key.public_key().encapsulate(&mut rng).unwrap();
    // u = 9 + p encodes the base point non-canonically; X25519 reduces it.
    let mut canonical = ct;
    canonical[..32].copy_from_slice(&{
        let mut nine = [0u8; 32];
        nine[0] = 9;
        nine
    });
    let mut non_canonical = ct;
    non_canonical[..32].copy_from_slice(
        &hex::decode("f6ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f").unwrap(),
    );
    // The adapter hashes the ciphertext bytes, so the secrets differ, but
    // both decapsulate: the point is accepted, not refused.
    assert!(key.decapsulate(&canonical).is_ok());
    assert!(key.decapsulate(&non_canonical).is_ok());
}

#[test]
fn secrets_never_print() {
    let key = PrivateKey::from_seed(&[0x42; 96]);
    let secret_hex = hex::encode(&key.to_bytes()[..8]);
    let printed = format!("{key:?}");
    assert!(printed.starts_with("PrivateKey"), "{printed}");
    assert!(!printed.contains(&secret_hex), "{printed}");

    let (ct, ss) = key.public_key().encapsulate(&mut rng(8)).unwrap();
    let printed = format!("{ss:?}");
    assert!(
        !printed.contains(&hex::encode(&ss.as_bytes()[..4])),
        "{printed}"
    );
    assert!(key.decapsulate(&ct).is_ok());

    let keys = SurbKeys::from_bytes(&[0x5a; 320]);
    assert_eq!(format!("{keys:?}"), "SurbKeys { .. }");
}

#[test]
fn shared_types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<PrivateKey>();
    check::<PublicKey>();
    check::<Surb>();
    check::<SurbKeys>();
    check::<Error>();
}
