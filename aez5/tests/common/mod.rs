//! What the tests share: the implementations this CPU must have, for the
//! tests that compare them, and the vector files of `tests/data/` with the
//! full-AEZ encryption runner.
//! Which ones exist is read here from the standard library's own feature
//! detection, not from the crate, so that a path the crate fails to offer
//! on a CPU that has it fails these tests instead of leaving them with
//! fewer paths to compare.

#![allow(dead_code)]

use aez5::{Aez, Backend, Error, extract};
use serde_json::Value;

/// Every implementation this CPU and build must have, portable first.
pub(crate) fn expected() -> Vec<Backend> {
    // Only x86-64 with its fast paths compiled in adds to the list.
    #[allow(unused_mut)]
    let mut have = vec![Backend::Portable];
    #[cfg(all(
        target_arch = "x86_64",
        not(aes_backend = "soft"),
        not(aez_backend = "portable")
    ))]
    if std::arch::is_x86_feature_detected!("aes") {
        have.push(Backend::AesNi);
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("vaes")
        {
            have.push(Backend::Vaes);
            if std::arch::is_x86_feature_detected!("avx512f") {
                have.push(Backend::Vaes512);
            }
        }
    }
    have
}

/// An instance on each of [`expected`]; panics if the crate refuses one of
/// them or offers one that is not expected.
pub(crate) fn all(key: &[u8; 48]) -> Vec<Aez> {
    let expected = expected();
    for b in [Backend::AesNi, Backend::Vaes, Backend::Vaes512] {
        if !expected.contains(&b) {
            assert!(
                Aez::with_backend(key, b).is_none(),
                "{b:?} offered, but this CPU or build lacks it"
            );
        }
    }
    expected
        .into_iter()
        .map(|b| {
            let aez = Aez::with_backend(key, b)
                .unwrap_or_else(|| panic!("{b:?} refused, but this CPU and build have it"));
            assert_eq!(aez.backend(), b);
            aez
        })
        .collect()
}

/// The cases of a vector file in `tests/data/`.
pub(crate) fn cases(name: &str) -> Vec<Value> {
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

pub(crate) fn hex(case: &Value, field: &str) -> Vec<u8> {
    hex::decode(case[field].as_str().unwrap()).unwrap()
}

pub(crate) fn num(case: &Value, field: &str) -> u64 {
    case[field].as_u64().unwrap()
}

/// Every implementation this CPU and build must have (a missing one fails).
pub(crate) fn backends() -> Vec<Backend> {
    let have: Vec<Backend> = all(&[0; 48]).iter().map(Aez::backend).collect();
    eprintln!("implementations tested: {have:?}");
    have
}

pub(crate) fn aez(key: &[u8; 48], backend: Backend) -> Aez {
    let aez = Aez::with_backend(key, backend).unwrap();
    assert_eq!(aez.backend(), backend);
    aez
}

/// Full AEZ encryption and decryption; returns the number of cases.
pub(crate) fn encrypt_file(name: &str) -> usize {
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
