//! Differential property tests of the KEM backends (proptest): keys derived
//! from the same seed on every backend compiled into this build
//! (`kem::differential`: libcrux with AVX2 ML-KEM and verified-assembly
//! X25519 where the CPU has them, libcrux's portable code, and RustCrypto
//! `ml-kem` + `x25519-dalek` when the feature `rustcrypto` is on) must
//! agree byte for byte on
//!
//! 1. the private and public key encodings, and with the public API;
//! 2. loading those encodings, and mutated ones (same key or same error);
//! 3. deterministic encapsulation (ciphertext and shared secret);
//! 4. decapsulation of the valid ciphertext, of mutated ones (implicit
//!    rejection must pick the same pseudo-random secret), of ones whose
//!    X25519 half is random or of small order: same secret, same
//!    intermediates (each half separately), or the same error;
//! 5. raw X25519 on random secrets and points.
//!
//! Fewer cases in debug builds, where ML-KEM runs unoptimised.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kemsphinx::geometry::{KEM_CIPHERTEXT_LEN, KEY_SEED_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN};
use kemsphinx::hazmat::kem_backends::{self as differential, Backend};
use kemsphinx::hazmat::{KemCiphertext as Ciphertext, debug_decapsulate};
use kemsphinx::{Error, KeyError, PrivateKey, hazmat};
use proptest::prelude::*;

/// Cases per property.
const CASES: u32 = if cfg!(debug_assertions) { 8 } else { 256 };

/// Every small-order X25519 u-coordinate encoding, with and without bit 255.
fn small_order_points() -> Vec<[u8; 32]> {
    [
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ]
    .iter()
    .flat_map(|h| {
        let p: [u8; 32] = hex::decode(h).unwrap().try_into().unwrap();
        let mut high = p;
        high[31] |= 0x80;
        [p, high]
    })
    .collect()
}

/// Everything a decapsulation reveals, in comparable form: the secret and
/// every intermediate, or the error.
type Decapsulated = Result<[[u8; 32]; 7], Error>;

fn decapsulated(b: Backend, key: &[u8; PRIVATE_KEY_LEN], ct: &Ciphertext) -> Decapsulated {
    let plain = differential::decapsulate(b, key, ct).map(|ss| *ss.as_bytes());
    let debug = differential::debug_decapsulate(b, key, ct).map(|d| {
        [
            d.x25519_adapter_shared_secret,
            d.mlkem_shared_secret,
            d.splitprf_key_x25519,
            d.splitprf_key_mlkem,
            d.splitprf_hash_x25519,
            d.splitprf_hash_mlkem,
            d.shared_secret,
        ]
    });
    assert_eq!(plain, debug.as_ref().map(|d| d[6]).map_err(|e| *e));
    debug
}

/// A mutation of a ciphertext: XOR `mask` into byte `at` (both nonzero-ish
/// by construction of the strategy).
fn mutations() -> impl Strategy<Value = Vec<(usize, u8)>> {
    prop::collection::vec((0..KEM_CIPHERTEXT_LEN, 1..=255u8), 1..4)
}

fn seed() -> impl Strategy<Value = [u8; KEY_SEED_LEN]> {
    prop::collection::vec(any::<u8>(), KEY_SEED_LEN).prop_map(|v| v.try_into().unwrap())
}

/// The first backend's result, after checking that every other backend's
/// is the same.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, f: impl Fn(Backend) -> T) -> T {
    let mut all = Backend::ALL.iter().map(|&b| (b, f(b)));
    let (first_backend, first) = all.next().unwrap();
    for (b, got) in all {
        assert_eq!(got, first, "{what}: {b:?} differs from {first_backend:?}");
    }
    first
}

#[test]
fn more_than_one_backend_is_compared() {
    assert!(Backend::ALL.len() >= 2, "{:?}", Backend::ALL);
    eprintln!(
        "backends compared: {:?}; X25519 on verified assembly: {}",
        Backend::ALL,
        differential::x25519_asm_active()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    /// 1–4 for one seed, one encapsulation and its mutations.
    #[test]
    fn every_backend_agrees(
        seed in seed(),
        ephemeral in any::<[u8; 32]>(),
        m in any::<[u8; 32]>(),
        flips in mutations(),
        random_x in any::<[u8; 32]>(),
        small in 0usize..14,
        key_flip in (0..PRIVATE_KEY_LEN, 1..=255u8),
    ) {
        // 1. Encodings, and the public API.
        let private = same("private key", |b| *differential::private_key(b, &seed));
        let public = same("public key", |b| differential::public_key(b, &private)).unwrap();
        let api = PrivateKey::from_seed(&seed);
        prop_assert_eq!(*api.to_bytes(), private);
        prop_assert_eq!(api.public_key().to_bytes(), public);

        // 2. Loading, as encoded and mutated.
        let loaded = same("load private", |b| {
            differential::load_private_key(b, &private).map(|k| *k)
        });
        prop_assert_eq!(loaded, Ok(private));
        // A flipped X25519 secret or z is another valid key (the
        // encapsulation key depends on d only); a flip in the encapsulation
        // key or d makes the two disagree.
        let mut bad_private = private;
        bad_private[key_flip.0] ^= key_flip.1;
        let loaded = same("load mutated private", |b| {
            differential::load_private_key(b, &bad_private).map(|k| *k)
        });
        if key_flip.0 < 32 || key_flip.0 >= PRIVATE_KEY_LEN - 32 {
            prop_assert_eq!(loaded, Ok(bad_private));
        } else {
            prop_assert_eq!(loaded, Err(Error::Key(KeyError::Inconsistent)));
        }
        let mut bad_public = public;
        bad_public[key_flip.0 % PUBLIC_KEY_LEN] ^= key_flip.1;
        let loaded = same("load mutated public", |b| {
            differential::load_public_key(b, &bad_public)
        });
        prop_assert!(
            loaded == Ok(bad_public)
                || loaded == Err(Error::Key(KeyError::X25519LowOrder))
                || loaded == Err(Error::Key(KeyError::MlKemEncapsulationKey)),
            "{:?}",
            loaded.map(|_| ())
        );

        // 3. Deterministic encapsulation.
        let (ct, ss) = same("encapsulate", |b| {
            differential::encapsulate_deterministic(b, &public, &ephemeral, &m)
                .map(|(ct, ss)| (ct, *ss.as_bytes()))
        })
        .unwrap();
        let (api_ct, api_ss) = hazmat::encapsulate_deterministic(api.public_key(), &ephemeral, &m).unwrap();
        prop_assert_eq!(api_ct, ct);
        prop_assert_eq!(*api_ss.as_bytes(), ss);

        // 4. Decapsulation: valid, mutated, random and small-order X25519.
        let valid = same("decapsulate valid", |b| decapsulated(b, &private, &ct));
        prop_assert_eq!(valid.unwrap()[6], ss);
        prop_assert_eq!(debug_decapsulate(&api, &ct).unwrap().shared_secret, ss);

        let mut mutated = ct;
        for &(at, mask) in &flips {
            mutated[at] ^= mask;
        }
        let got = same("decapsulate mutated", |b| decapsulated(b, &private, &mutated));
        prop_assert_eq!(got.map(|d| d[6]), hazmat::decapsulate(&api, &mutated).map(|s| *s.as_bytes()));

        let mut random = ct;
        random[..32].copy_from_slice(&random_x);
        let got = same("decapsulate random X25519 half", |b| decapsulated(b, &private, &random));
        prop_assert!(got.is_ok() || small_order_points().contains(&random_x));

        let mut low = mutated;
        low[..32].copy_from_slice(&small_order_points()[small]);
        let got = same("decapsulate small-order X25519 half", |b| decapsulated(b, &private, &low));
        prop_assert_eq!(got, Err(Error::Kem));
    }

    /// 5. Raw X25519 (the secret is clamped at use; bit 255 of u ignored).
    #[test]
    fn x25519_agrees(secret in any::<[u8; 32]>(), point in any::<[u8; 32]>()) {
        same("x25519", |b| differential::x25519(b, &secret, &point));
        same("x25519 base point", |b| differential::x25519_base_point(b, &secret));
    }
}
