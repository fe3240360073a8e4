//! AEZ over 10,188 bytes (the KEMSphinx payload layer) on each
//! implementation this CPU has, against AES-256-CTR (`aes` 0.9 + `ctr`
//! 0.10) over the same bytes.
//!
//! ```sh
//! cargo bench -p aez5 --bench aez
//! ```

use aes::Aes256;
use aez5::{Aez, Backend};
use ctr::Ctr128BE;
use ctr::cipher::{KeyIvInit, StreamCipher};
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// The payload size this crate is tuned for.
const LEN: usize = 10_188;

/// The implementations, by name (divan's arguments).
const IMPLS: &[&str] = &["vaes512", "vaes", "aes-ni", "portable"];

fn backend(name: &str) -> Backend {
    match name {
        "vaes512" => Backend::Vaes512,
        "vaes" => Backend::Vaes,
        "aes-ni" => Backend::AesNi,
        _ => Backend::Portable,
    }
}

/// An instance on `name`, or `None` (bench skipped) if this CPU or build
/// does not have it.
fn aez(name: &str) -> Option<Aez> {
    let aez = Aez::with_backend(&[8; 48], backend(name));
    if aez.is_none() {
        eprintln!("{name}: not available here, skipped");
    }
    aez
}

/// Encipher 10,188 bytes (key already set up).
#[divan::bench(args = IMPLS)]
fn encipher(b: Bencher, name: &str) {
    let Some(aez) = aez(name) else { return };
    let mut buf = vec![0u8; LEN];
    b.counter(BytesCount::new(LEN))
        .bench_local(|| aez.encipher(black_box(&[9; 16]), black_box(&mut buf)));
}

/// Decipher 10,188 bytes (key already set up).
#[divan::bench(args = IMPLS)]
fn decipher(b: Bencher, name: &str) {
    let Some(aez) = aez(name) else { return };
    let mut buf = vec![0u8; LEN];
    b.counter(BytesCount::new(LEN))
        .bench_local(|| aez.decipher(black_box(&[9; 16]), black_box(&mut buf)));
}

/// Key setup from 48 bytes and one encipher, as a mix node does per hop.
#[divan::bench(args = IMPLS)]
fn new_encipher(b: Bencher, name: &str) {
    let be = backend(name);
    if aez(name).is_none() {
        return;
    }
    let mut buf = vec![0u8; LEN];
    b.counter(BytesCount::new(LEN)).bench_local(|| {
        let Some(aez) = Aez::with_backend(black_box(&[8; 48]), be) else {
            return;
        };
        aez.encipher(black_box(&[9; 16]), black_box(&mut buf));
    });
}

/// Key setup alone (plus the drop, which wipes it).
#[divan::bench]
fn new() -> Aez {
    Aez::new(black_box(&[8; 48]))
}

/// AES-256-CTR over the same 10,188 bytes, key setup included: the
/// yardstick.
#[divan::bench]
fn aes256_ctr(b: Bencher) {
    let mut buf = vec![0u8; LEN];
    b.counter(BytesCount::new(LEN)).bench_local(|| {
        let mut c = Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into());
        c.apply_keystream(black_box(&mut buf));
    });
}
