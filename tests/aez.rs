//! Structural properties that do not need vectors: decipher inverts
//! encipher at every length class, and the helpers never panic.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

use kemsphinx::aez::{Aez, AezError, decrypt_full, encrypt_full};

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(151).wrapping_add(seed))
        .collect()
}

/// Every length up to 300 (all AEZ-tiny sizes, every u/v split, up to eight
/// pairs), lengths around the multi-group boundaries, and the packet sizes.
fn lengths() -> impl Iterator<Item = usize> {
    (0..=300)
        .chain((1000..1400).step_by(13))
        .chain([511, 512, 513, 1056, 1057, 1088, 2080, 4096, 10188, 16150])
}

#[test]
fn decipher_inverts_encipher() {
    let mut key = [0u8; 48];
    key.iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = i as u8 ^ 0x5a);
    let aez = Aez::new(&key);
    let nonce = [7u8; 16];
    for len in lengths() {
        let m = pattern(len, 3);
        let mut buf = m.clone();
        aez.encipher(&nonce, &mut buf);
        if len >= 2 {
            assert_ne!(buf, m, "len {len}: ciphertext equals plaintext");
        }
        aez.decipher(&nonce, &mut buf);
        assert_eq!(buf, m, "len {len}");
    }
}

#[test]
fn every_input_bit_matters() {
    // A wide-block cipher: flipping any single input bit changes bytes at
    // both ends of the output (checked on a few bits, for a few lengths).
    let aez = Aez::new(&[0x42; 48]);
    let nonce = [1u8; 16];
    for len in [33usize, 48, 64, 100, 300] {
        let m = pattern(len, 9);
        let mut base = m.clone();
        aez.encipher(&nonce, &mut base);
        for bit in [0, len * 4, len * 8 - 1] {
            let mut m2 = m.clone();
            m2[bit / 8] ^= 1 << (bit % 8);
            aez.encipher(&nonce, &mut m2);
            assert_ne!(base[0], m2[0], "len {len} bit {bit}: first byte unchanged");
            assert_ne!(
                base[len - 1],
                m2[len - 1],
                "len {len} bit {bit}: last byte unchanged"
            );
        }
    }
}

#[test]
fn nonce_changes_output() {
    let aez = Aez::new(&[0x11; 48]);
    for len in [1usize, 15, 16, 31, 32, 100] {
        let mut a = pattern(len, 0);
        let mut b = a.clone();
        aez.encipher(&[0; 16], &mut a);
        aez.encipher(&[1; 16], &mut b);
        assert_ne!(a, b, "len {len}");
    }
}

#[test]
fn full_api_length_errors() {
    let mut out = [0u8; 4];
    assert_eq!(
        encrypt_full(b"k", b"n", &[], 2, b"abc", &mut out),
        Err(AezError)
    );
    assert_eq!(
        decrypt_full(b"k", b"n", &[], 8, b"abc", &mut out),
        Err(AezError)
    );
    assert_eq!(
        decrypt_full(b"k", b"n", &[], 1, b"abc", &mut out),
        Err(AezError)
    );
    let mut ct = [0u8; 5];
    encrypt_full(b"k", b"n", &[b"ad"], 2, b"abc", &mut ct).unwrap();
    let mut pt = [0u8; 5];
    decrypt_full(b"k", b"n", &[b"ad"], 2, &ct, &mut pt).unwrap();
    assert_eq!(&pt[..3], b"abc");
    assert!(decrypt_full(b"k", b"n", &[b"AD"], 2, &ct, &mut pt).is_err());
}

#[test]
fn debug_hides_key() {
    let s = format!("{:?}", Aez::new(&[0xab; 48]));
    assert_eq!(s, "Aez { .. }");
}

#[test]
fn report_backend() {
    // Not a check: shows which AES backend this run exercised (the suite is
    // meant to be run both normally and with `--cfg aes_backend="soft"`).
    eprintln!("aes hardware accelerated: {}", aes::hardware_accelerated());
    if cfg!(aes_backend = "soft") {
        assert!(!aes::hardware_accelerated());
    }
}
