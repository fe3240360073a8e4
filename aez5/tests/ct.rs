//! Timing evidence, dudect style (Reparaz, Balasch, Verbauwhede, "Dude, is
//! my code constant time?", 2017): two classes of input, interleaved at
//! random, each call timed; then Welch's t-test on the two samples,
//! uncropped and cropped at 100 percentiles (dudect's
//! `1 - 0.5^(10(i+1)/100)`). The statistic is the largest |t|; dudect reads
//! |t| ≥ 4.5 as a probable leak.
//!
//! The classes are AEZ data: one fixed 10,188-byte message against fresh
//! random ones, on the implementation `Aez::new` picks (the fast path on a
//! CPU with AES-NI or VAES), and on each other implementation this CPU
//! has. Both classes prepare their input the same way (draw random bytes,
//! then copy either them or the fixed message), so only the data differs.
//!
//! CPU heavy (10^6 measurements per test), so ignored by default:
//!
//! ```sh
//! nice cargo test --release -p aez5 --test ct -- --ignored --nocapture --test-threads 1
//! ```
//!
//! `CT_MEASUREMENTS` overrides the count for a quick smoke run;
//! `CT_FIXED=control` runs an A/A control (fresh random data in both
//! classes).

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss
)]

use std::hint::black_box;
use std::time::Instant;

use aez5::{Aez, Backend};
use chacha20::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// The KEMSphinx payload size.
const LEN: usize = 10_188;
/// Measurements discarded first (caches, frequency scaling).
const WARM_UP: usize = 10_000;
/// dudect's threshold.
const THRESHOLD: f64 = 4.5;

fn measurements() -> usize {
    std::env::var("CT_MEASUREMENTS").map_or(1_000_000, |v| v.parse().unwrap())
}

/// Welch's t statistic accumulated online.
#[derive(Default, Clone, Copy)]
struct Welch {
    n: [f64; 2],
    mean: [f64; 2],
    m2: [f64; 2],
}

impl Welch {
    fn push(&mut self, class: usize, x: f64) {
        self.n[class] += 1.0;
        let delta = x - self.mean[class];
        self.mean[class] += delta / self.n[class];
        self.m2[class] += delta * (x - self.mean[class]);
    }

    fn t(&self) -> f64 {
        let var = |c: usize| self.m2[c] / (self.n[c] - 1.0);
        (self.mean[0] - self.mean[1]) / (var(0) / self.n[0] + var(1) / self.n[1]).sqrt()
    }
}

/// Time `op` on a fixed message (class 0) and on random messages
/// (class 1), randomly interleaved; print and return the largest |t| over
/// the uncropped and cropped tests.
///
/// Both classes prepare their input with the same code, writing the same
/// buffer: a ChaCha20 stream from a seed, the fixed one for class 0 and a
/// fresh one for class 1 (`CT_FIXED=control`: fresh for both, an A/A test
/// that shows what |t| the harness and the machine give when there is
/// nothing to find). An earlier version copied the two classes' inputs
/// from two different buffers; its A/A control reached |t| = 109.
fn fixed_vs_random(name: &str, op: impl Fn(&mut [u8])) -> f64 {
    const FIXED_SEED: u64 = 0xf1;
    let control = std::env::var("CT_FIXED").is_ok_and(|v| v == "control");
    let mut rng = ChaCha20Rng::seed_from_u64(0xc7);
    let mut buf = vec![0u8; LEN];
    let mut samples: Vec<(usize, u64)> = Vec::with_capacity(measurements());
    for i in 0..WARM_UP + measurements() {
        let class = (rng.next_u32() & 1) as usize;
        let fresh = rng.next_u64();
        let seed = if class == 0 && !control {
            FIXED_SEED
        } else {
            fresh
        };
        ChaCha20Rng::seed_from_u64(seed).fill_bytes(&mut buf);
        let start = Instant::now();
        op(black_box(&mut buf));
        let ns = start.elapsed().as_nanos() as u64;
        if i >= WARM_UP {
            samples.push((class, ns));
        }
    }
    let mut sorted: Vec<u64> = samples.iter().map(|s| s.1).collect();
    sorted.sort_unstable();
    let crops = (0..100).map(|i| {
        let p = 1.0 - 0.5f64.powf(10.0 * f64::from(i + 1) / 100.0);
        sorted[((sorted.len() as f64) * p) as usize]
    });
    let mut tests: Vec<(Option<u64>, Welch)> = std::iter::once(None)
        .chain(crops.map(Some))
        .map(|c| (c, Welch::default()))
        .collect();
    for &(class, ns) in &samples {
        for (crop, w) in &mut tests {
            if crop.is_none_or(|c| ns < c) {
                w.push(class, ns as f64);
            }
        }
    }
    let uncropped = tests[0].1;
    let (crop, worst, at) = tests
        .iter()
        .map(|(c, w)| (*c, w.t(), *w))
        .filter(|(_, t, _)| t.is_finite())
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap();
    println!(
        "{name}: {} + {} measurements, mean {:.0} / {:.0} ns, median {} ns; \
         |t| uncropped {:.2}, max |t| {:.2} (crop below {} ns: {} + {} samples, \
         mean {:.1} / {:.1} ns)",
        uncropped.n[0],
        uncropped.n[1],
        uncropped.mean[0],
        uncropped.mean[1],
        sorted[sorted.len() / 2],
        uncropped.t().abs(),
        worst.abs(),
        crop.map_or("none".into(), |c| c.to_string()),
        at.n[0],
        at.n[1],
        at.mean[0],
        at.mean[1],
    );
    worst.abs()
}

/// Encipher with the implementation `Aez::new` chooses.
#[test]
#[ignore = "timing: 10^6 AEZ calls"]
fn encipher_default_fixed_vs_random() {
    let aez = Aez::new(&[0x42; 48]);
    let name = format!("encipher ({:?}), fixed vs random", aez.backend());
    let t = fixed_vs_random(&name, |buf| aez.encipher(&[7; 16], buf));
    assert!(t < THRESHOLD);
}

/// Decipher with the implementation `Aez::new` chooses.
#[test]
#[ignore = "timing: 10^6 AEZ calls"]
fn decipher_default_fixed_vs_random() {
    let aez = Aez::new(&[0x42; 48]);
    let name = format!("decipher ({:?}), fixed vs random", aez.backend());
    let t = fixed_vs_random(&name, |buf| aez.decipher(&[7; 16], buf));
    assert!(t < THRESHOLD);
}

/// Encipher on every other implementation this CPU has.
#[test]
#[ignore = "timing: 10^6 AEZ calls per implementation"]
fn encipher_other_paths_fixed_vs_random() {
    let chosen = Aez::new(&[0; 48]).backend();
    for backend in [
        Backend::Vaes512,
        Backend::Vaes,
        Backend::AesNi,
        Backend::Portable,
    ] {
        let Some(aez) = Aez::with_backend(&[0x42; 48], backend).filter(|_| backend != chosen)
        else {
            continue;
        };
        let name = format!("encipher ({backend:?}), fixed vs random");
        let t = fixed_vs_random(&name, |buf| aez.encipher(&[7; 16], buf));
        assert!(t < THRESHOLD, "{backend:?}");
    }
}
