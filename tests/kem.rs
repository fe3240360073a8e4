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
use kemsphinx::hazmat::kem_backends::{self as differential, Backend};
use kemsphinx::{Error, KeyError, PrivateKey, PublicKey, Surb, SurbKeys, hazmat};
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
        let (ct, ss) = hazmat::encapsulate(key.public_key(), &mut rng).unwrap();
        assert_eq!(
            hazmat::decapsulate(&key, &ct).unwrap().as_bytes(),
            ss.as_bytes()
        );
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
fn a_damaged_x25519_secret_loads_but_fails_the_check_against_the_published_key() {
    // Any 32 bytes are an X25519 secret: loading cannot see the damage,
    // only a comparison with the published public key can.
    let key = PrivateKey::generate(&mut rng(4));
    let published = key.public_key().clone();
    assert_eq!(key.check_public_key(&published), Ok(()));
    // (Bits 0-2, 254 and 255 are clamped away: flipping them changes
    // nothing, the key works as before.)
    for bit in [3, 7, 100, 253] {
        let mut damaged = *key.to_bytes();
        damaged[bit / 8] ^= 1 << (bit % 8);
        let loaded = PrivateKey::from_bytes(&damaged).expect("loads: X25519 has no check");
        assert_ne!(loaded.public_key(), &published, "bit {bit}");
        assert_eq!(
            loaded.check_public_key(&published),
            Err(Error::Key(KeyError::NotPublished)),
            "bit {bit}"
        );
    }
    let other = PrivateKey::generate(&mut rng(5));
    assert_eq!(
        other.check_public_key(&published),
        Err(Error::Key(KeyError::NotPublished))
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
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut rng).unwrap();
    for point in small_order_encodings() {
        let mut bad: [u8; KEM_CIPHERTEXT_LEN] = ct;
        bad[..32].copy_from_slice(&point.u);
        assert_eq!(
            hazmat::decapsulate(&key, &bad).err(),
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
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut rng).unwrap();
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
    assert!(hazmat::decapsulate(&key, &canonical).is_ok());
    assert!(hazmat::decapsulate(&key, &non_canonical).is_ok());
}

#[test]
fn secrets_never_print() {
    let key = PrivateKey::from_seed(&[0x42; 96]);
    let secret_hex = hex::encode(&key.to_bytes()[..8]);
    let printed = format!("{key:?}");
    assert!(printed.starts_with("PrivateKey"), "{printed}");
    assert!(!printed.contains(&secret_hex), "{printed}");
    // A public key prints its first eight bytes, for logs.
    let public = hex::encode(&key.public_key().as_bytes()[..8]);
    assert_eq!(
        format!("{:?}", key.public_key()),
        format!("PublicKey({public}…)")
    );

    let (ct, ss) = hazmat::encapsulate(key.public_key(), &mut rng(8)).unwrap();
    let printed = format!("{ss:?}");
    assert_eq!(printed, "SharedSecret { .. }");
    assert!(
        !printed.contains(&hex::encode(&ss.as_bytes()[..4])),
        "{printed}"
    );
    assert!(hazmat::decapsulate(&key, &ct).is_ok());

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

/// 32 bytes from hex.
fn h32(s: &str) -> [u8; 32] {
    hex::decode(s).unwrap().try_into().unwrap()
}

#[test]
fn the_selected_backend_is_the_one_the_features_name() {
    // `rustcrypto` wins whenever it is enabled, even beside the default
    // `libcrux`.
    let want = if cfg!(feature = "rustcrypto") {
        "rustcrypto"
    } else {
        "libcrux"
    };
    assert_eq!(kemsphinx::KEM_BACKEND, want);
    assert_eq!(Backend::SELECTED.name(), want);
    assert!(Backend::ALL.contains(&Backend::SELECTED));
    // The public types run on the selected backend: same keys, same
    // secrets as the hazmat key on it.
    let seed = [0x3c; 96];
    let key = PrivateKey::from_seed(&seed);
    let same = differential::private_key(Backend::SELECTED, &seed);
    assert_eq!(*key.to_bytes(), *same);
    let (ct, ss) = hazmat::encapsulate(key.public_key(), &mut rng(9)).unwrap();
    let on_selected = differential::decapsulate(Backend::SELECTED, &same, &ct).unwrap();
    assert_eq!(on_selected.as_bytes(), ss.as_bytes());
}

/// What `x25519_asm_active` must say in this build on this CPU: the
/// libcrux backend's X25519 runs on verified assembly only with the
/// features on, the build neither forced portable nor with debug
/// assertions, and every instruction present.
fn x25519_asm_expected() -> bool {
    let cpu = {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("aes")
                && std::arch::is_x86_feature_detected!("pclmulqdq")
                && std::arch::is_x86_feature_detected!("bmi1")
                && std::arch::is_x86_feature_detected!("bmi2")
                && std::arch::is_x86_feature_detected!("adx")
                && std::arch::is_x86_feature_detected!("avx")
                && std::arch::is_x86_feature_detected!("avx2")
        }
        #[cfg(target_arch = "aarch64")]
        {
            std::arch::is_aarch64_feature_detected!("neon")
                && std::arch::is_aarch64_feature_detected!("aes")
                && std::arch::is_aarch64_feature_detected!("pmull")
                && std::arch::is_aarch64_feature_detected!("sha2")
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            false
        }
    };
    cfg!(feature = "x25519-asm")
        && cfg!(feature = "libcrux")
        && !cfg!(kemsphinx_backend = "portable")
        && !cfg!(debug_assertions)
        && cpu
}

#[test]
fn the_x25519_path_is_the_one_the_build_and_cpu_allow() {
    let active = differential::x25519_asm_active();
    let selected = kemsphinx::KEM_BACKEND;
    eprintln!(
        "backend {selected}, X25519 on {}",
        if active && selected == "libcrux" {
            "verified assembly (s2n-bignum via graviola)"
        } else {
            "portable code"
        }
    );
    assert_eq!(active, x25519_asm_expected());
    // Either way the vectors hold (see the RFC 7748 tests below, and
    // tests/conformance.rs, which CI runs on both paths).
}

/// RFC 7748 §5.2: two single multiplications (the second with bit 255 of u
/// set), and the iterated test after 1 and 1,000 rounds; §6.1: both key
/// pairs and their shared secret. On every backend compiled in.
#[test]
fn x25519_meets_rfc_7748_on_every_backend() {
    let singles = [
        (
            "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
            "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
            "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552",
        ),
        (
            "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
            "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
            "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957",
        ),
    ];
    let alice = h32("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    let alice_pub = h32("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
    let bob = h32("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
    let bob_pub = h32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
    let shared = h32("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
    for &b in Backend::ALL {
        for (k, u, out) in singles {
            assert_eq!(
                differential::x25519(b, &h32(k), &h32(u)),
                Some(h32(out)),
                "{b:?}"
            );
        }
        let (mut k, mut u) = ([0u8; 32], [0u8; 32]);
        k[0] = 9;
        u[0] = 9;
        for round in 1..=1_000 {
            let r = differential::x25519(b, &k, &u).unwrap();
            u = k;
            k = r;
            if round == 1 {
                assert_eq!(
                    k,
                    h32("422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079"),
                    "{b:?}"
                );
            }
        }
        assert_eq!(
            k,
            h32("684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"),
            "{b:?}"
        );
        assert_eq!(
            differential::x25519_base_point(b, &alice),
            alice_pub,
            "{b:?}"
        );
        assert_eq!(differential::x25519_base_point(b, &bob), bob_pub, "{b:?}");
        assert_eq!(differential::x25519(b, &alice, &bob_pub), Some(shared));
        assert_eq!(differential::x25519(b, &bob, &alice_pub), Some(shared));
    }
}

/// Raw secrets are clamped at use, bit 255 of u is ignored, a
/// non-canonical u is reduced, and every small-order point gives `None`:
/// the same on every backend.
#[test]
fn x25519_edge_cases_agree_on_every_backend() {
    let mut rng = rng(10);
    let mut nine = [0u8; 32];
    nine[0] = 9;
    // 9 + p, the base point's non-canonical encoding.
    let nine_plus_p = h32("f6ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
    for _ in 0..16 {
        let mut secret = [0u8; 32];
        rand_core::Rng::fill_bytes(&mut rng, &mut secret);
        let mut clamped = secret;
        clamped[0] &= 248;
        clamped[31] &= 127;
        clamped[31] |= 64;
        let mut point = [0u8; 32];
        rand_core::Rng::fill_bytes(&mut rng, &mut point);
        point[31] &= 0x7f;
        let mut point_high = point;
        point_high[31] |= 0x80;
        let first = differential::x25519(Backend::ALL[0], &secret, &point);
        for &b in Backend::ALL {
            let base = differential::x25519_base_point(b, &secret);
            assert_eq!(differential::x25519(b, &secret, &nine).unwrap(), base);
            assert_eq!(
                differential::x25519(b, &secret, &nine_plus_p).unwrap(),
                base
            );
            assert_eq!(differential::x25519_base_point(b, &clamped), base);
            let got = differential::x25519(b, &secret, &point);
            assert_eq!(got, first, "{b:?}");
            assert_eq!(differential::x25519(b, &secret, &point_high), got, "{b:?}");
            assert_eq!(differential::x25519(b, &clamped, &point), got, "{b:?}");
            for p in small_order_encodings().into_iter().map(|p| p.u) {
                assert_eq!(differential::x25519(b, &secret, &p), None, "{b:?}");
            }
        }
    }
}

#[test]
fn every_backend_refuses_the_same_keys_and_ciphertexts() {
    let mut rng = rng(11);
    let key = PrivateKey::generate(&mut rng);
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut rng).unwrap();
    for &b in Backend::ALL {
        let private = key.to_bytes();
        assert_eq!(
            differential::load_private_key(b, &private).unwrap(),
            private
        );
        assert_eq!(
            differential::public_key(b, &private),
            Ok(key.public_key().to_bytes())
        );
        for point in small_order_encodings().into_iter().map(|p| p.u) {
            let mut bytes = key.public_key().to_bytes();
            bytes[..32].copy_from_slice(&point);
            assert_eq!(
                differential::load_public_key(b, &bytes).err(),
                Some(Error::Key(KeyError::X25519LowOrder))
            );
            let mut bad = ct;
            bad[..32].copy_from_slice(&point);
            assert_eq!(
                differential::decapsulate(b, &private, &bad).err(),
                Some(Error::Kem),
                "{b:?}"
            );
        }
        let mut bytes = key.public_key().to_bytes();
        bytes[32] = 0xff;
        bytes[33] |= 0x0f;
        assert_eq!(
            differential::load_public_key(b, &bytes).err(),
            Some(Error::Key(KeyError::MlKemEncapsulationKey))
        );
        let mut inconsistent = *key.to_bytes();
        inconsistent[1_000] ^= 1;
        assert_eq!(
            differential::load_private_key(b, &inconsistent).err(),
            Some(Error::Key(KeyError::Inconsistent))
        );
    }
}

/// The ML-KEM hook of `kem_backends` (used by the benches) is the key and
/// the decapsulation the library runs: on every backend, the encapsulation
/// key a private key stores and the ML-KEM half of its decapsulation.
#[test]
fn mlkem_hook_is_what_the_library_computes() {
    let seed = [0x21u8; 96];
    let key = PrivateKey::from_seed(&seed);
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut rng(3)).unwrap();
    let expected = hazmat::debug_decapsulate(&key, &ct).unwrap();
    let d_z: [u8; 64] = seed[32..].try_into().unwrap();
    let mlkem_ct: [u8; 1_088] = ct[32..].try_into().unwrap();
    for &b in Backend::ALL {
        let (ek, ss) = differential::mlkem_decapsulate(b, &d_z, &mlkem_ct);
        assert_eq!(ek[..], key.public_key().as_bytes()[32..], "{b:?}");
        assert_eq!(ss, expected.mlkem_shared_secret, "{b:?}");
    }
}

/// SURB keys wiped in place are all zero afterwards.
#[test]
fn surb_keys_zeroize() {
    use zeroize::Zeroize;
    let mut keys = SurbKeys::from_bytes(&[0x5c; 320]);
    keys.zeroize();
    assert_eq!(*keys.to_bytes(), [0u8; 320]);
}

/// libcrux's ML-KEM keys are expanded for its AVX2 code exactly when the
/// CPU has AVX2 and the build is not forced portable.
#[cfg(feature = "libcrux")]
#[test]
fn the_mlkem_path_is_the_one_the_build_and_cpu_allow() {
    #[cfg(target_arch = "x86_64")]
    let cpu = std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    let cpu = false;
    let expected = cpu && !cfg!(kemsphinx_backend = "portable");
    assert_eq!(differential::mlkem_avx2_active(), expected);
}
