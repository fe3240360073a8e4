//! Properties of the public API that need no vectors: decipher inverts
//! encipher at every length class, the cipher is wide-block, the nonce
//! matters, errors are reported and buffers wiped, and nothing prints a
//! key.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

use aez5::{Aez, Error};

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(151).wrapping_add(seed))
        .collect()
}

/// Every length up to 600 (all AEZ-tiny sizes, every u/v split, up to 18
/// pairs: two groups of eight and a partial one), lengths around later
/// group boundaries, and the packet sizes.
fn lengths() -> impl Iterator<Item = usize> {
    (0..=600)
        .chain((1000..1400).step_by(13))
        .chain([2080, 4096, 4127, 4128, 4129, 10188, 16118, 16150])
}

mod common;
use common::all as implementations;

#[test]
fn decipher_inverts_encipher() {
    let key: [u8; 48] = std::array::from_fn(|i| i as u8 ^ 0x5a);
    let nonce = [7u8; 16];
    for aez in implementations(&key) {
        for len in lengths() {
            let m = pattern(len, 3);
            let mut buf = m.clone();
            aez.encipher(&nonce, &mut buf);
            if len >= 2 {
                assert_ne!(
                    buf,
                    m,
                    "{:?} len {len}: ciphertext = plaintext",
                    aez.backend()
                );
            }
            aez.decipher(&nonce, &mut buf);
            assert_eq!(buf, m, "{:?} len {len}", aez.backend());
        }
    }
}

#[test]
fn every_input_bit_matters() {
    // A wide-block cipher: flipping any single input bit changes bytes at
    // both ends of the output (a few bits, a few lengths).
    for aez in implementations(&[0x42; 48]) {
        let nonce = [1u8; 16];
        for len in [33usize, 48, 64, 100, 300, 10188] {
            let m = pattern(len, 9);
            let mut base = m.clone();
            aez.encipher(&nonce, &mut base);
            for bit in [0, len * 4, len * 8 - 1] {
                let mut m2 = m.clone();
                m2[bit / 8] ^= 1 << (bit % 8);
                aez.encipher(&nonce, &mut m2);
                let what = format!("{:?} len {len} bit {bit}", aez.backend());
                assert_ne!(base[..16], m2[..16], "{what}: first block unchanged");
                assert_ne!(
                    base[len - 16..],
                    m2[len - 16..],
                    "{what}: last block unchanged"
                );
            }
        }
    }
}

#[test]
fn nonce_changes_output() {
    for aez in implementations(&[0x11; 48]) {
        for len in [1usize, 15, 16, 31, 32, 100, 10188] {
            let mut a = pattern(len, 0);
            let mut b = a.clone();
            aez.encipher(&[0; 16], &mut a);
            aez.encipher(&[1; 16], &mut b);
            assert_ne!(a, b, "{:?} len {len}", aez.backend());
        }
    }
}

#[test]
fn empty_input_is_a_no_op() {
    let mut empty: [u8; 0] = [];
    Aez::new(&[3; 48]).encipher(&[4; 16], &mut empty);
    Aez::new(&[3; 48]).decipher(&[4; 16], &mut empty);
}

#[test]
fn encrypt_errors_and_wipes() {
    let aez = Aez::from_key(b"a key of any length");
    // encrypt: the buffer must hold τ bytes; too short leaves it alone.
    let mut short = *b"abc";
    assert_eq!(aez.encrypt(b"n", &[], 4, &mut short), Err(Error::TooShort));
    assert_eq!(&short, b"abc");
    // decrypt: shorter than τ is inauthentic, and wiped.
    assert_eq!(
        aez.decrypt(b"n", &[], 4, &mut short),
        Err(Error::Inauthentic)
    );
    assert_eq!(short, [0; 3]);
    // A round trip with AD, then a wrong AD, nonce or τ is refused.
    let mut buf = *b"attack at dawn\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    aez.encrypt(b"nonce", &[b"ad"], 16, &mut buf).unwrap();
    let ct = buf;
    assert_eq!(
        aez.decrypt(b"nonce", &[b"ad"], 16, &mut buf).unwrap(),
        b"attack at dawn"
    );
    for (nonce, ad, tau) in [
        (&b"nonce"[..], &[&b"AD"[..]][..], 16),
        (b"nonce", &[], 16),
        (b"nonce", &[b"ad", b""], 16),
        (b"Nonce", &[b"ad"], 16),
        (b"nonce", &[b"ad"], 17),
    ] {
        let mut buf = ct;
        assert_eq!(
            aez.decrypt(nonce, ad, tau, &mut buf),
            Err(Error::Inauthentic)
        );
        assert_eq!(buf, [0; 30], "not wiped");
    }
    // The empty message: the ciphertext is AEZ-prf, checked the same way.
    let mut tag = [0u8; 16];
    aez.encrypt(b"n", &[], 16, &mut tag).unwrap();
    let mut prf = [0u8; 16];
    aez.prf(&aez.hash(128, b"n", &[]), &mut prf);
    assert_eq!(tag, prf);
    assert_eq!(aez.decrypt(b"n", &[], 16, &mut tag).unwrap(), b"");
    tag = prf;
    tag[15] ^= 1;
    assert_eq!(
        aez.decrypt(b"n", &[], 16, &mut tag),
        Err(Error::Inauthentic)
    );
    assert_eq!(tag, [0; 16]);
    assert_eq!(
        Error::Inauthentic.to_string(),
        "AEZ: ciphertext is not authentic"
    );
}

#[test]
fn tau_zero_without_ad_is_the_sprp() {
    let key = [0x24; 48];
    let aez = Aez::new(&key);
    for len in [0usize, 1, 31, 32, 33, 1000] {
        let m = pattern(len, 1);
        let mut a = m.clone();
        aez.encipher(&[5; 16], &mut a);
        let mut b = m.clone();
        Aez::from_key(&key)
            .encrypt(&[5; 16], &[], 0, &mut b)
            .unwrap();
        assert_eq!(a, b, "len {len}");
    }
}

#[test]
fn debug_hides_key() {
    let aez = Aez::new(&[0xab; 48]);
    let s = format!("{aez:?}");
    assert_eq!(s, format!("Aez {{ backend: {:?}, .. }}", aez.backend()));
    assert!(!s.contains("171"), "a key byte (0xab = 171) printed");
}

/// `Aez::zeroize` wipes every key-derived value: the instance then holds
/// the keys of the all-zero key (all of them linear in `I`, `J`, `L`, so
/// all zero), and enciphers as a fresh instance on 48 zero bytes does, on
/// every path.
#[test]
fn zeroize_wipes_the_keys() {
    use zeroize::Zeroize;
    for mut aez in implementations(&[0x5a; 48]) {
        let zero = Aez::with_backend(&[0; 48], aez.backend()).unwrap();
        aez.zeroize();
        for len in [1, 16, 31, 32, 100, 1000] {
            let (mut a, mut b) = (pattern(len, 9), pattern(len, 9));
            aez.encipher(&[3; 16], &mut a);
            zero.encipher(&[3; 16], &mut b);
            assert_eq!(a, b, "{:?}, length {len}", aez.backend());
        }
    }
}
