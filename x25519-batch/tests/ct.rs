//! Timing evidence, dudect style (Reparaz, Balasch, Verbauwhede, "Dude, is
//! my code constant time?", 2017), as `aez5/tests/ct.rs` does it: two
//! classes of input, interleaved at random, each call timed; then Welch's
//! t-test on the two samples, uncropped and cropped at 100 percentiles
//! (dudect's `1 - 0.5^(10(i+1)/100)`). The statistic is the largest |t|;
//! dudect reads |t| ≥ 4.5 as a probable leak.
//!
//! Each measurement is one group of lanes (8 points on IFMA, 4 on AVX2,
//! 1 on the portable path), on every backend this CPU has:
//!
//! - key: the all-zero scalar (clamped to 2^254: a single set bit, so the
//!   ladder's swap mask changes twice in 255 steps; an input any caller
//!   can pass, as X25519 takes any 32 bytes) against fresh random
//!   scalars, under one fixed set of random points;
//! - points: `u = 0` in every lane (a small-order point, whose ladder ends
//!   in `z = 0` and an inversion of zero) against fresh random points,
//!   under one fixed random scalar.
//!
//! As in dudect, the inputs of each chunk of 1,000 measurements are
//! prepared first, with the same code for both classes (random bytes
//! drawn, then the fixed class's overwritten with the fixed value), and
//! then timed by a loop that does the same for every input, so that only
//! the data differs. This is the evidence for the IFMA path, which
//! valgrind cannot run. CPU heavy, so ignored by default:
//!
//! ```sh
//! nice cargo test --release -p x25519-batch --test ct -- --ignored --nocapture --test-threads 1
//! ```
//!
//! `CT_MEASUREMENTS` overrides the count (200,000 per test and backend);
//! `CT_BACKEND` (`portable`, `avx2`, `ifma`) measures one backend only;
//! `CT_POINTS=random` makes the points test's fixed class a fixed group of
//! random points instead of `u = 0`, `CT_KEY=random` the key test's a
//! fixed random scalar instead of zero (to tell an effect of the zero data
//! from one of fixing the input at all), and `CT_KEY=alternating` the
//! scalar `0x55…`, which swaps at every ladder step;
//! `CT_FIXED=control` runs an A/A control (fresh random data in both
//! classes), which shows what |t| the harness and the machine give when
//! there is nothing to find.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss
)]

mod common;

use std::hint::black_box;
use std::time::Instant;

use chacha20::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use x25519_batch::{Backend, mul_batch_on};

/// Measurements discarded first (caches, frequency scaling).
const WARM_UP: usize = 2_000;
/// dudect's threshold.
const THRESHOLD: f64 = 4.5;

fn measurements() -> usize {
    std::env::var("CT_MEASUREMENTS").map_or(200_000, |v| v.parse().unwrap())
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

    /// The standard error of the difference of the means.
    fn se(&self) -> f64 {
        let var = |c: usize| self.m2[c] / (self.n[c] - 1.0);
        (var(0) / self.n[0] + var(1) / self.n[1]).sqrt()
    }

    fn t(&self) -> f64 {
        (self.mean[0] - self.mean[1]) / self.se()
    }
}

/// Measurements whose inputs are prepared together, before any of them is
/// timed.
const CHUNK: usize = 1_000;

/// Times `op` on inputs of `len` bytes, each the fixed value (class 0) or
/// fresh random bytes (class 1), the classes randomly interleaved; prints
/// and returns the largest |t| over the uncropped and cropped tests.
///
/// As dudect does, the inputs of a chunk are all prepared first (every
/// one drawn at random, then the fixed class's overwritten), and only then
/// timed, one after the other, by a loop that does the same for every
/// input. Preparing each input just before timing it, with code that
/// differs by class, showed up in the times: on the Zen 4 EPYC an A/A
/// test whose class 0 merely seeded an RNG before its timer gave |t| 5.6
/// and 6.9, and with that harness the IFMA path seemed to tell the
/// all-zero scalar from random ones in one build and not in another of
/// the same kernel (README, "Safety and side channels").
fn fixed_vs_random(name: &str, len: usize, fixed: &[u8], mut op: impl FnMut(&[u8])) -> f64 {
    let control = std::env::var("CT_FIXED").is_ok_and(|v| v == "control");
    let mut rng = ChaCha20Rng::seed_from_u64(0xc7);
    let total = WARM_UP + measurements();
    let mut classes = [0usize; CHUNK];
    let mut inputs = vec![0u8; CHUNK * len];
    let mut times = [0u64; CHUNK];
    let mut samples: Vec<(usize, u64)> = Vec::with_capacity(measurements());
    let mut done = 0;
    while done < total {
        rng.fill_bytes(&mut inputs);
        for (class, input) in classes.iter_mut().zip(inputs.chunks_exact_mut(len)) {
            *class = (rng.next_u32() & 1) as usize;
            if *class == 0 && !control {
                input.copy_from_slice(fixed);
            }
        }
        let n = CHUNK.min(total - done);
        for (t, input) in times.iter_mut().zip(inputs.chunks_exact(len)).take(n) {
            let start = Instant::now();
            op(black_box(input));
            *t = start.elapsed().as_nanos() as u64;
        }
        for (i, (&class, &t)) in classes.iter().zip(&times).take(n).enumerate() {
            if done + i >= WARM_UP {
                samples.push((class, t));
            }
        }
        done += n;
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
        "{name}{}: {} + {} measurements, mean {:.0} / {:.0} ns, median {} ns; \
         |t| uncropped {:.2}, max |t| {:.2} (crop below {} ns: {} + {} samples, \
         mean {:.1} / {:.1} ns, difference {:+.1} ± {:.1} ns at 2 s.e.)",
        if control { " [A/A control]" } else { "" },
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
        at.mean[0] - at.mean[1],
        2.0 * at.se(),
    );
    worst.abs()
}

/// A group of `b.lanes()` fixed random points.
fn fixed_points(b: Backend) -> Vec<[u8; 32]> {
    let mut rng = ChaCha20Rng::seed_from_u64(0x9011);
    (0..b.lanes())
        .map(|_| {
            let mut u = [0u8; 32];
            rng.fill_bytes(&mut u);
            u
        })
        .collect()
}

/// The backends to measure: every one this CPU has, or the one named by
/// `CT_BACKEND` (`portable`, `avx2`, `ifma`).
fn backends() -> Vec<Backend> {
    let only = std::env::var("CT_BACKEND").ok();
    common::all()
        .into_iter()
        .filter(|b| {
            only.as_ref()
                .is_none_or(|o| format!("{b:?}").eq_ignore_ascii_case(o))
        })
        .collect()
}

/// The key test's fixed scalar and its name: all zero unless `CT_KEY` says
/// `random` (a fixed random-looking scalar) or `alternating` (`0x55…`,
/// whose clamped bits alternate, so the ladder swaps at every step, where
/// the all-zero scalar's swaps only after its first step and its last).
fn fixed_key() -> ([u8; 32], &'static str) {
    match std::env::var("CT_KEY").as_deref() {
        Ok("random") => ([0x6b; 32], " (fixed 0x6b…)"),
        Ok("alternating") => ([0x55; 32], " (fixed 0x55…)"),
        _ => ([0; 32], ""),
    }
}

#[test]
#[ignore = "timing: 200,000 groups per backend"]
fn key_fixed_vs_random() {
    let mut worst = vec![];
    for b in backends() {
        let points = fixed_points(b);
        let mut out = vec![[0u8; 32]; b.lanes()];
        let (fixed, which) = fixed_key();
        let t = fixed_vs_random(&format!("{b:?} key{which}"), 32, &fixed, |k| {
            let k: &[u8; 32] = k.try_into().unwrap();
            mul_batch_on(b, k, &points, &mut out).unwrap().unwrap();
            black_box(&out);
        });
        worst.push((b, t));
    }
    for (b, t) in worst {
        assert!(t < THRESHOLD, "{b:?}: |t| = {t:.2}");
    }
}

#[test]
#[ignore = "timing: 200,000 groups per backend"]
fn points_fixed_vs_random() {
    let mut worst = vec![];
    for b in backends() {
        let k = [0x3c; 32];
        let len = 32 * b.lanes();
        let mut out = vec![[0u8; 32]; b.lanes()];
        let random_fixed = std::env::var("CT_POINTS").is_ok_and(|v| v == "random");
        let fixed: Vec<u8> = if random_fixed {
            fixed_points(b).concat()
        } else {
            vec![0; len]
        };
        let name = format!(
            "{b:?} points{}",
            if random_fixed { " (fixed random)" } else { "" }
        );
        let t = fixed_vs_random(&name, len, &fixed, |bytes| {
            let mut points = [[0u8; 32]; 8];
            for (p, c) in points.iter_mut().zip(bytes.chunks_exact(32)) {
                p.copy_from_slice(c);
            }
            mul_batch_on(b, &k, &points[..b.lanes()], &mut out)
                .unwrap()
                .unwrap();
            black_box(&out);
        });
        worst.push((b, t));
    }
    for (b, t) in worst {
        assert!(t < THRESHOLD, "{b:?}: |t| = {t:.2}");
    }
}
