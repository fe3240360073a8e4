//! Every KEM backend compiled in, on the same inputs (`kem::differential`).
//!
//! Built with `-O --features rustcrypto` (as `run.sh` does) it compares
//! three: libcrux as the library runs it (AVX2 ML-KEM, X25519 on
//! s2n-bignum's verified assembly where the CPU has them), libcrux's
//! portable code (portable ML-KEM, HACL*'s portable X25519), and RustCrypto
//! `ml-kem` + `x25519-dalek`; without the feature, the first two. (With
//! debug assertions, cargo fuzz's default, the library keeps X25519 on the
//! portable code, so `-O` is what brings the assembly into the comparison.)
//!
//! - A key from the same seed, or the same encoding, has the same private
//!   and public encodings on every backend (and with the public API), or
//!   the same error.
//! - Encapsulation with the same randomness gives the same ciphertext and
//!   secret; decapsulation of it gives that secret.
//! - After every mutation of the ciphertext (flipped bytes, a small-order
//!   or arbitrary X25519 half), decapsulation gives the same secret and
//!   the same intermediates of each half on every backend, or the same
//!   error, which it is exactly when the X25519 half has small order; the
//!   public API agrees.
//! - Mutated public and private keys load the same way everywhere.
//! - Raw X25519 agrees everywhere.

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::fmt::Debug;

use kemsphinx::geometry::{KEM_CIPHERTEXT_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN};
use kemsphinx::hazmat::KemCiphertext as Ciphertext;
use kemsphinx::hazmat::kem_backends::{self as differential, Backend};
use kemsphinx::{Error, PrivateKey, PublicKey, hazmat};
use kemsphinx_fuzz::input::{KemCase, KemCiphertext, KemKey, KemOp};
use libfuzzer_sys::fuzz_target;

/// Every small-order X25519 u-coordinate (0, 1, the two of order 8, p − 1,
/// p, p + 1), each also with bit 255 set.
fn small_order(which: u8) -> [u8; 32] {
    const POINTS: [[u8; 32]; 7] = {
        let mut p = [[0u8; 32]; 7];
        p[1][0] = 1;
        p[2] = [
            0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f,
            0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16,
            0x5f, 0x49, 0xb8, 0x00,
        ];
        p[3] = [
            0x5f, 0x9c, 0x95, 0xbc, 0xa3, 0x50, 0x8c, 0x24, 0xb1, 0xd0, 0xb1, 0x55, 0x9c, 0x83,
            0xef, 0x5b, 0x04, 0x44, 0x5c, 0xc4, 0x58, 0x1c, 0x8e, 0x86, 0xd8, 0x22, 0x4e, 0xdd,
            0xd0, 0x9f, 0x11, 0x57,
        ];
        let mut i = 4;
        while i < 7 {
            let mut j = 1;
            while j < 31 {
                p[i][j] = 0xff;
                j += 1;
            }
            p[i][31] = 0x7f;
            i += 1;
        }
        p[4][0] = 0xec;
        p[5][0] = 0xed;
        p[6][0] = 0xee;
        p
    };
    let which = usize::from(which) % (2 * POINTS.len());
    let mut point = POINTS[which / 2];
    if which % 2 == 1 {
        point[31] |= 0x80;
    }
    point
}

/// `f` on every backend; all results must be equal. Returns the first.
fn same<T: PartialEq + Debug>(what: &str, f: impl Fn(Backend) -> T) -> T {
    let mut all = Backend::ALL.iter().map(|&b| (b, f(b)));
    let (first_backend, first) = all.next().unwrap();
    for (b, got) in all {
        assert_eq!(got, first, "{what}: {b:?} differs from {first_backend:?}");
    }
    first
}

/// A decapsulation in comparable form: every intermediate and the secret,
/// or the error. (`debug_decapsulate` is `decapsulate` keeping the
/// intermediates: one code path.)
fn decapsulated(
    b: Backend,
    key: &[u8; PRIVATE_KEY_LEN],
    ct: &Ciphertext,
) -> Result<[[u8; 32]; 7], Error> {
    differential::debug_decapsulate(b, key, ct).map(|d| {
        [
            d.x25519_adapter_shared_secret,
            d.mlkem_shared_secret,
            d.splitprf_key_x25519,
            d.splitprf_key_mlkem,
            d.splitprf_hash_x25519,
            d.splitprf_hash_mlkem,
            d.shared_secret,
        ]
    })
}

/// Decapsulate `ct` on every backend: the same result everywhere, an error
/// exactly when the X25519 half has small order (recomputed here with
/// `x25519-dalek`'s bare function: a clamped scalar sends exactly the
/// small-order points to zero).
fn check_decapsulation(key: &[u8; PRIVATE_KEY_LEN], ct: &Ciphertext) -> Result<[u8; 32], Error> {
    let got = same("decapsulate", |b| decapsulated(b, key, ct)).map(|d| d[6]);
    let low_order = x25519_dalek::x25519([0x3c; 32], ct[..32].try_into().unwrap()) == [0; 32];
    assert_eq!(got.is_err(), low_order);
    got
}

fuzz_target!(|data: &[u8]| {
    assert!(Backend::ALL.len() >= 2, "{:?}", Backend::ALL);
    let case = KemCase::decode(data);

    // The key on every backend, and through the public API.
    let api = match &case.key {
        KemKey::Seed(seed) => {
            let private = same("private key", |b| *differential::private_key(b, seed));
            let api = PrivateKey::from_seed(seed);
            assert!(private == *api.to_bytes());
            api
        }
        KemKey::Encoded(bytes) => {
            let loaded = same("load private key", |b| {
                differential::load_private_key(b, bytes).map(|k| *k)
            });
            let api = PrivateKey::from_bytes(bytes);
            assert_eq!(loaded, api.as_ref().map(|k| *k.to_bytes()).map_err(|e| *e));
            let Ok(api) = api else {
                return;
            };
            api
        }
    };
    let private = *api.to_bytes();
    let public = same("public key", |b| differential::public_key(b, &private)).unwrap();
    assert!(public == api.public_key().to_bytes());

    // The ciphertext: encapsulated on every backend, or given.
    let mut ct: [u8; KEM_CIPHERTEXT_LEN] = match &case.ciphertext {
        KemCiphertext::Encapsulated(ephemeral, m) => {
            let (ct, ss) = same("encapsulate", |b| {
                differential::encapsulate_deterministic(b, &public, ephemeral, m)
                    .map(|(ct, ss)| (ct, *ss.as_bytes()))
            })
            .unwrap();
            let (api_ct, api_ss) =
                hazmat::encapsulate_deterministic(api.public_key(), ephemeral, m).unwrap();
            assert!(api_ct == ct);
            assert_eq!(*api_ss.as_bytes(), ss);
            let got = same("decapsulate valid", |b| decapsulated(b, &private, &ct));
            assert_eq!(got.unwrap()[6], ss);
            ct
        }
        KemCiphertext::Given(ct) => **ct,
    };
    // The public API runs the selected backend (one of those compared):
    // checked once per input.
    assert_eq!(
        check_decapsulation(&private, &ct),
        hazmat::decapsulate(&api, &ct).map(|ss| *ss.as_bytes())
    );

    for op in &case.ops {
        match *op {
            KemOp::Flip { at, xor } => {
                ct[usize::from(at) % KEM_CIPHERTEXT_LEN] ^= xor;
                let _ = check_decapsulation(&private, &ct);
            }
            KemOp::SmallOrder { which } => {
                ct[..32].copy_from_slice(&small_order(which));
                assert_eq!(check_decapsulation(&private, &ct), Err(Error::Kem));
            }
            KemOp::X25519Half { bytes } => {
                ct[..32].copy_from_slice(&bytes);
                let _ = check_decapsulation(&private, &ct);
            }
            KemOp::FlipPublicKey { at, xor } => {
                let mut bad = public;
                bad[usize::from(at) % PUBLIC_KEY_LEN] ^= xor;
                let loaded = same("load public key", |b| {
                    differential::load_public_key(b, &bad)
                });
                assert_eq!(loaded, PublicKey::from_bytes(&bad).map(|k| k.to_bytes()));
            }
            KemOp::FlipPrivateKey { at, xor } => {
                let mut bad = private;
                bad[usize::from(at) % PRIVATE_KEY_LEN] ^= xor;
                let loaded = same("load private key", |b| {
                    differential::load_private_key(b, &bad).map(|k| *k)
                });
                assert_eq!(loaded, PrivateKey::from_bytes(&bad).map(|k| *k.to_bytes()));
            }
            KemOp::X25519 { point } => {
                let secret: [u8; 32] = private[..32].try_into().unwrap();
                same("x25519", |b| differential::x25519(b, &secret, &point));
                same("x25519 base point", |b| {
                    differential::x25519_base_point(b, &point)
                });
            }
        }
    }
});
