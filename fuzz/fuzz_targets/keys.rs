//! Public and private key decoding, raw and PEM.
//!
//! - The slice boundary of both key types.
//! - A public key (the input, padded) loads iff its X25519 half has large
//!   order and its ML-KEM half passes the FIPS 203 modulus check, both
//!   recomputed here; a loaded key keeps its bytes.
//! - A private key loads iff its stored encapsulation key is the one its
//!   `d‖z` derives (recomputed with the `ml-kem` crate); a loaded key
//!   re-encodes to the same bytes and has the right public key.
//! - A key pair derived from the input as a seed round-trips through both
//!   encodings (raw and PEM) and decapsulates what its public key
//!   encapsulates.
//! - Any text that loads as a PEM key re-encodes to PEM that loads as the
//!   same key; the recomputed checks above hold for it too.

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{
    KEY_SEED_LEN, MLKEM_EK_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN, X25519_LEN,
};
use kemsphinx::{Error, Input, KeyError, PrivateKey, PublicKey, hazmat};
use kemsphinx_fuzz::{check_length, padded};
use libfuzzer_sys::fuzz_target;
use ml_kem::{DecapsulationKey, KeyExport, MlKem768, Seed};
use rand_core::SeedableRng;
use x25519_dalek::{X25519_BASEPOINT_BYTES, x25519};

fuzz_target!(|data: &[u8]| {
    let n = data.len();
    check_length(
        PublicKey::try_from(data),
        Input::PublicKey,
        PUBLIC_KEY_LEN,
        n,
    );
    check_length(
        PrivateKey::try_from(data),
        Input::PrivateKey,
        PRIVATE_KEY_LEN,
        n,
    );
    public_key(&padded(data));
    private_key(&padded(data));
    derived(&padded(data), data);
    pem(data);
});

/// PEM decoding of arbitrary text: whatever loads re-encodes to PEM that
/// loads as the same key, and passes the raw checks.
fn pem(text: &[u8]) {
    if let Ok(pk) = PublicKey::from_pem(text) {
        let again = PublicKey::from_pem(&pk.to_pem()).unwrap();
        assert_eq!(again, pk);
        public_key(pk.as_bytes());
    }
    if let Ok(sk) = PrivateKey::from_pem(text) {
        let again = PrivateKey::from_pem(&sk.to_pem()[..]).unwrap();
        assert!(again.to_bytes()[..] == sk.to_bytes()[..]);
        private_key(&sk.to_bytes());
    }
}

fn public_key(bytes: &[u8; PUBLIC_KEY_LEN]) {
    let (x, ek) = bytes.split_at(X25519_LEN);
    let want = if low_order(x.try_into().unwrap()) {
        Err(Error::Key(KeyError::X25519LowOrder))
    } else if !canonical(ek) {
        Err(Error::Key(KeyError::MlKemEncapsulationKey))
    } else {
        Ok(())
    };
    let got = PublicKey::from_bytes(bytes).map(|pk| assert!(pk.to_bytes() == *bytes));
    assert_eq!(got, want);
}

/// Small order: a clamped scalar (a multiple of 8 below the prime orders)
/// sends exactly the small-order points to zero.
fn low_order(u: [u8; 32]) -> bool {
    x25519([0x3c; 32], u) == [0; 32]
}

/// FIPS 203 modulus check: the 768 packed 12-bit coefficients are below q.
fn canonical(ek: &[u8]) -> bool {
    ek[..MLKEM_EK_LEN - 32].chunks_exact(3).all(|b| {
        let (b0, b1, b2) = (u16::from(b[0]), u16::from(b[1]), u16::from(b[2]));
        (b0 | (b1 & 0x0f) << 8) < 3329 && (b1 >> 4 | b2 << 4) < 3329
    })
}

fn private_key(bytes: &[u8; PRIVATE_KEY_LEN]) {
    let (x, rest) = bytes.split_at(X25519_LEN);
    let (ek, d_z) = rest.split_at(MLKEM_EK_LEN);
    let mut seed = Seed::default();
    seed.copy_from_slice(d_z);
    let derived = DecapsulationKey::<MlKem768>::from_seed(seed)
        .encapsulation_key()
        .to_bytes();
    match PrivateKey::from_bytes(bytes) {
        Ok(sk) => {
            assert!(derived[..] == *ek);
            assert!(sk.to_bytes()[..] == bytes[..]);
            let public = sk.public_key().as_bytes();
            assert_eq!(
                public[..X25519_LEN],
                x25519(x.try_into().unwrap(), X25519_BASEPOINT_BYTES)
            );
            assert!(public[X25519_LEN..] == *ek);
        }
        Err(e) => {
            assert_eq!(e, Error::Key(KeyError::Inconsistent));
            assert!(derived[..] != *ek);
        }
    }
}

fn derived(seed: &[u8; KEY_SEED_LEN], data: &[u8]) {
    let sk = PrivateKey::from_seed(seed);
    let reloaded = PrivateKey::from_bytes(&sk.to_bytes()).unwrap();
    assert_eq!(reloaded.public_key(), sk.public_key());
    let from_pem = PrivateKey::from_pem(&sk.to_pem()[..]).unwrap();
    assert!(from_pem.to_bytes()[..] == sk.to_bytes()[..]);
    let pk = PublicKey::from_bytes(sk.public_key().as_bytes()).unwrap();
    assert_eq!(PublicKey::from_pem(&pk.to_pem()).unwrap(), pk);
    let mut rng = ChaCha20Rng::from_seed(*padded(data.get(KEY_SEED_LEN..).unwrap_or_default()));
    let (ct, ss) = hazmat::encapsulate(&pk, &mut rng).unwrap();
    assert_eq!(
        hazmat::decapsulate(&reloaded, &ct).unwrap().as_bytes(),
        ss.as_bytes()
    );
}
