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

use aez5::{Aez, Backend, Error, extract};
use serde_json::Value;

/// The cases of a vector file in `tests/data/`.
fn cases(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    match v {
        Value::Array(cases) => cases,
        Value::Object(mut o) => match o.remove("cases") {
            Some(Value::Array(cases)) => cases,
            _ => panic!("{name}: no cases"),
        },
        _ => panic!("{name}: not a vector file"),
    }
}

fn hex(case: &Value, field: &str) -> Vec<u8> {
    hex::decode(case[field].as_str().unwrap()).unwrap()
}

fn num(case: &Value, field: &str) -> u64 {
    case[field].as_u64().unwrap()
}

mod common;

/// Every implementation this CPU and build must have (a missing one fails).
fn backends() -> Vec<Backend> {
    let have: Vec<Backend> = common::all(&[0; 48]).iter().map(Aez::backend).collect();
    eprintln!("implementations tested: {have:?}");
    have
}

fn aez(key: &[u8; 48], backend: Backend) -> Aez {
    let aez = Aez::with_backend(key, backend).unwrap();
    assert_eq!(aez.backend(), backend);
    aez
}

/// Full AEZ encryption and decryption; returns the number of cases.
fn encrypt_file(name: &str) -> usize {
    let cases = cases(name);
    for backend in backends() {
        for (n, case) in cases.iter().enumerate() {
            let aez = aez(&extract(&hex(case, "k")), backend);
            let (nonce, m, c) = (hex(case, "nonce"), hex(case, "m"), hex(case, "c"));
            let ad: Vec<Vec<u8>> = case["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| hex::decode(d.as_str().unwrap()).unwrap())
                .collect();
            let ad: Vec<&[u8]> = ad.iter().map(Vec::as_slice).collect();
            let tau = usize::try_from(num(case, "tau")).unwrap();
            let what = format!(
                "{name} case {n} ({backend:?}, |m| = {}, τ = {tau})",
                m.len()
            );

            let mut buf = m.clone();
            buf.resize(m.len() + tau, 0xee); // the τ bytes' contents are ignored
            aez.encrypt(&nonce, &ad, tau, &mut buf).unwrap();
            assert_eq!(buf, c, "{what}: encrypt");
            assert_eq!(
                aez.decrypt(&nonce, &ad, tau, &mut buf).unwrap(),
                &m[..],
                "{what}: decrypt"
            );

            // Any flipped ciphertext bit is refused when there is an
            // authenticator, and the buffer is wiped.
            if tau > 0 {
                for bit in [0, c.len() * 4, c.len() * 8 - 1] {
                    let mut forged = c.clone();
                    forged[bit / 8] ^= 1 << (bit % 8);
                    let r = aez.decrypt(&nonce, &ad, tau, &mut forged);
                    assert_eq!(r, Err(Error::Inauthentic), "{what}: bit {bit} accepted");
                    assert!(forged.iter().all(|b| *b == 0), "{what}: not wiped");
                }
            }
            // With τ = 0 and no AD, encrypt is the SPRP `encipher`.
            if tau == 0 && ad.is_empty() && nonce.len() == 16 {
                let mut buf = m.clone();
                aez.encipher(nonce.as_slice().try_into().unwrap(), &mut buf);
                assert_eq!(buf, c, "{what}: encipher");
            }
        }
    }
    cases.len()
}

#[test]
fn go_encrypt() {
    assert_eq!(encrypt_file("encrypt.json"), 1024);
}

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
