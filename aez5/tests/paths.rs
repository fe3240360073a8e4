//! Every implementation computes the same function: the fast paths this
//! CPU has (AES-NI, VAES) against the portable path, on random keys,
//! nonces and lengths 0..=16,150, and, for full AEZ, random key lengths,
//! nonces, associated data and τ. (Under `--cfg aes_backend="soft"` or
//! `--cfg aez_backend="portable"` only the portable path exists, and these
//! tests check it against itself: that is what those configurations run
//! the vector tests for.)

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

use proptest::prelude::*;

/// The longest input compared: one KEMSphinx packet.
const MAX: usize = 16_150;

mod common;
use common::all;

/// `len` bytes from a seed (xorshift), so that long inputs cost proptest
/// nothing to generate or shrink.
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Lengths: anything up to 16,150, with the boundaries of AEZ-tiny, of the
/// u/v split and of groups of eight pairs drawn often.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        0..=MAX,
        0usize..=600,
        (0usize..64, 0usize..32).prop_map(|(g, r)| g * 256 + r),
        (0usize..64, 0usize..4).prop_map(|(g, r)| (g * 256 + 224 + r * 8).min(MAX)),
        Just(10_188),
        Just(MAX),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The SPRP: encipher and decipher agree on every implementation.
    #[test]
    fn encipher_agrees(key in any::<[u8; 48]>(), nonce in any::<[u8; 16]>(),
                       len in length(), seed in any::<u64>()) {
        let m = bytes(len, seed);
        let aezs = all(&key);
        let mut c0 = m.clone();
        aezs[0].encipher(&nonce, &mut c0);
        for aez in &aezs[1..] {
            let mut c = m.clone();
            aez.encipher(&nonce, &mut c);
            prop_assert_eq!(&c, &c0, "{:?} encipher, len {}", aez.backend(), len);
            aez.decipher(&nonce, &mut c);
            prop_assert_eq!(&c, &m, "{:?} decipher, len {}", aez.backend(), len);
            // Deciphering as a primitive of its own (not only as the
            // inverse of this implementation's encipher).
            let mut d = m.clone();
            aez.decipher(&nonce, &mut d);
            let mut d0 = m.clone();
            aezs[0].decipher(&nonce, &mut d0);
            prop_assert_eq!(&d, &d0, "{:?} decipher of random data, len {}", aez.backend(), len);
        }
    }

    /// Full AEZ: key extraction, AD, τ, and the authenticated mode.
    #[test]
    fn encrypt_agrees(key in prop::collection::vec(any::<u8>(), 0..80),
                      nonce in prop::collection::vec(any::<u8>(), 0..40),
                      ad in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..70), 0..4),
                      tau in prop_oneof![Just(0usize), Just(16), 0usize..40],
                      len in prop_oneof![0usize..700, length()], seed in any::<u64>()) {
        let ad: Vec<&[u8]> = ad.iter().map(Vec::as_slice).collect();
        let m = bytes(len, seed);
        let aezs = all(&aez5::extract(&key));
        let mut c0 = m.clone();
        c0.resize(len + tau, 0);
        aezs[0].encrypt(&nonce, &ad, tau, &mut c0).unwrap();
        for aez in &aezs[1..] {
            let mut c = m.clone();
            c.resize(len + tau, 0);
            aez.encrypt(&nonce, &ad, tau, &mut c).unwrap();
            prop_assert_eq!(&c, &c0, "{:?} encrypt, len {} tau {}", aez.backend(), len, tau);
            prop_assert_eq!(aez.decrypt(&nonce, &ad, tau, &mut c).unwrap(), &m[..]);
        }
        // The Δ of (τ, N, A) agrees too.
        for aez in &aezs[1..] {
            let bits = 8 * tau as u128;
            prop_assert_eq!(aez.hash(bits, &nonce, &ad), aezs[0].hash(bits, &nonce, &ad));
        }
    }
}
