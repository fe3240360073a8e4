//! The Go AEZ's CC0 vectors (every layer: extract, hash, prf, encrypt and
//! decrypt with AD and τ) and long SPRP vectors from the same Go code, on
//! every implementation this CPU and build have.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use aez5::{Aez, Backend, extract};
use common::{aez, backends, cases, encrypt_file, hex, num};

#[test]
fn go_encrypt_no_ad() {
    assert_eq!(encrypt_file("encrypt_no_ad.json"), 4);
}

#[test]
fn go_encrypt_16_byte_key() {
    assert_eq!(encrypt_file("encrypt_16_byte_key.json"), 4);
}

#[test]
fn go_encrypt_33_byte_ad() {
    assert_eq!(encrypt_file("encrypt_33_byte_ad.json"), 4);
}

#[test]
fn go_extract() {
    let cases = cases("extract.json");
    for case in &cases {
        assert_eq!(&extract(&hex(case, "a"))[..], &hex(case, "b")[..]);
    }
    assert_eq!(cases.len(), 110);
}

#[test]
fn go_hash() {
    let cases = cases("hash.json");
    for backend in backends() {
        for case in &cases {
            let aez = aez(&hex(case, "k").try_into().unwrap(), backend);
            let data: Vec<Vec<u8>> = case["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| hex::decode(d.as_str().unwrap()).unwrap())
                .collect();
            let (nonce, ad) = data.split_first().unwrap();
            let ad: Vec<&[u8]> = ad.iter().map(Vec::as_slice).collect();
            let tau = u128::from(num(case, "tau"));
            assert_eq!(aez.hash(tau, nonce, &ad).to_vec(), hex(case, "v"));
        }
    }
    assert_eq!(cases.len(), 27);
}

#[test]
fn go_prf() {
    let cases = cases("prf.json");
    for backend in backends() {
        for case in &cases {
            let aez = aez(&hex(case, "k").try_into().unwrap(), backend);
            let mut out = vec![0xaa; usize::try_from(num(case, "tau")).unwrap()];
            aez.prf(&hex(case, "delta").try_into().unwrap(), &mut out);
            assert_eq!(out, hex(case, "r"));
        }
    }
    assert_eq!(cases.len(), 16);
}

/// Up to 16,150 bytes: many groups of eight pairs, every tail size class.
#[test]
fn go_sprp_long() {
    let cases = cases("sprp_go_reference.json");
    for backend in backends() {
        for case in &cases {
            let aez = aez(&hex(case, "key").try_into().unwrap(), backend);
            let nonce: [u8; 16] = hex(case, "nonce").try_into().unwrap();
            let (m, c) = (hex(case, "plaintext"), hex(case, "ciphertext"));
            let mut buf = m.clone();
            aez.encipher(&nonce, &mut buf);
            assert_eq!(buf, c, "{backend:?} |m| = {}", m.len());
            aez.decipher(&nonce, &mut buf);
            assert_eq!(buf, m, "{backend:?} |m| = {}", m.len());
        }
    }
    assert_eq!(cases.len(), 20);
}

/// The default choice matches the build: portable under the cfgs that
/// force it, otherwise the best the CPU has.
#[test]
fn default_backend() {
    let chosen = Aez::new(&[1; 48]).backend();
    eprintln!("default implementation: {chosen:?}");
    if cfg!(any(aes_backend = "soft", aez_backend = "portable")) || !cfg!(target_arch = "x86_64") {
        assert_eq!(chosen, Backend::Portable);
        assert!(Aez::with_backend(&[1; 48], Backend::AesNi).is_none());
        assert!(Aez::with_backend(&[1; 48], Backend::Vaes).is_none());
    } else {
        // The best this CPU has, by the standard library's detection.
        assert_eq!(Some(&chosen), common::expected().last());
    }
    if cfg!(aes_backend = "soft") {
        assert!(
            !aes::hardware_accelerated(),
            "aes_backend=\"soft\" not in effect"
        );
    }
}
