//! The `aez5` crate: every implementation this CPU has (portable, AES-NI,
//! VAES) computes the same function, at every length 0..=16,150.
//!
//! Input: key 48 ‖ nonce 16 ‖ τ byte ‖ AD byte ‖ rest. The AD byte `a`
//! means no associated data if 0, else one string of the first `a - 1`
//! bytes of the rest; the message is what follows (at most 16,150 bytes).
//! Every fast path the CPU has (by the standard library's detection) must
//! be offered. Asserted, for each fast path against the portable path: the same
//! encipher and decipher output, decipher inverts encipher; full AEZ with
//! τ = byte mod 33 and the AD gives the same ciphertext, decrypts back, and
//! refuses one flipped bit (wiping the buffer) when τ ≥ 8 bytes (with a
//! shorter authenticator a forgery passes with probability 2^-8τ, which a
//! fuzzer finds).

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use aez5::{Aez, Backend, Error};
use kemsphinx_fuzz::input::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let (key, nonce) = (r.array::<48>(), r.array::<16>());
    let tau = usize::from(r.byte() % 33);
    let ad_byte = usize::from(r.byte());
    let rest = r.rest();
    let (ad, m) = rest.split_at((ad_byte.saturating_sub(1)).min(rest.len()));
    let ad: &[&[u8]] = if ad_byte == 0 { &[] } else { &[ad] };
    let m = &m[..m.len().min(16_150)];

    let portable = Aez::with_backend(&key, Backend::Portable).unwrap();
    let (c0, d0) = (
        crypt(&portable, &nonce, m, true),
        crypt(&portable, &nonce, m, false),
    );
    let e0 = encrypt(&portable, &nonce, ad, tau, m);
    for backend in [Backend::AesNi, Backend::Vaes, Backend::Vaes512] {
        let Some(aez) = Aez::with_backend(&key, backend) else {
            assert!(
                !cpu_has(backend),
                "{backend:?} refused, but this CPU has it"
            );
            continue;
        };
        assert_eq!(crypt(&aez, &nonce, m, true), c0, "{backend:?} encipher");
        assert_eq!(crypt(&aez, &nonce, &c0, false), m, "{backend:?} decipher");
        assert_eq!(crypt(&aez, &nonce, m, false), d0, "{backend:?} decipher");
        let mut c = encrypt(&aez, &nonce, ad, tau, m);
        assert_eq!(c, e0, "{backend:?} encrypt");
        assert_eq!(aez.decrypt(&nonce, ad, tau, &mut c).unwrap(), m);
        if tau >= 8 {
            let mut forged = e0.clone();
            let bit = m.len() % (forged.len() * 8);
            forged[bit / 8] ^= 1 << (bit % 8);
            let r = aez.decrypt(&nonce, ad, tau, &mut forged);
            assert_eq!(r, Err(Error::Inauthentic), "{backend:?} forgery");
            assert!(forged.iter().all(|b| *b == 0), "{backend:?} not wiped");
        }
    }
});

/// Whether this CPU has what `backend` needs, by the standard library's
/// detection rather than the crate's: a fast path the CPU has must be
/// compared, not skipped. (The target is built as the fuzz script builds
/// it, without the cfgs that force the portable path.)
fn cpu_has(backend: Backend) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let aes = has!("aes");
        let vaes = aes && has!("avx2") && has!("vaes");
        match backend {
            Backend::AesNi => aes,
            Backend::Vaes => vaes,
            Backend::Vaes512 => vaes && has!("avx512f"),
            _ => true,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = backend;
        false
    }
}

fn crypt(aez: &Aez, nonce: &[u8; 16], m: &[u8], encipher: bool) -> Vec<u8> {
    let mut buf = m.to_vec();
    if encipher {
        aez.encipher(nonce, &mut buf);
    } else {
        aez.decipher(nonce, &mut buf);
    }
    buf
}

fn encrypt(aez: &Aez, nonce: &[u8], ad: &[&[u8]], tau: usize, m: &[u8]) -> Vec<u8> {
    let mut buf = m.to_vec();
    buf.resize(m.len() + tau, 0);
    aez.encrypt(nonce, ad, tau, &mut buf).unwrap();
    buf
}
