//! X25519 in batches of 1, 4, 8 and 16 points under one scalar, on each
//! backend this CPU has, and x25519-dalek's one-point `x25519` beside
//! them. Divan reports the time of a whole batch and (its items counter)
//! scalar multiplications per second; the time of one is the median ÷ n.
//!
//! ```sh
//! cargo bench -p x25519-batch --bench x25519
//! ```

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use x25519_batch::{Backend, mul_batch_on};

fn main() {
    divan::main();
}

/// Batch sizes.
const SIZES: &[usize] = &[1, 4, 8, 16];

/// A scalar (any 32 bytes: X25519 clamps it).
const SCALAR: [u8; 32] = [0x5a; 32];

/// `n` distinct u-coordinates.
fn points(n: usize) -> Vec<[u8; 32]> {
    (0..n)
        .map(|i| {
            let mut u = [0x33; 32];
            u[0] = u8::try_from(i).unwrap_or(0);
            u[31] &= 0x7f;
            u
        })
        .collect()
}

/// One batch of `n` on `backend`, or skipped if this CPU lacks it.
fn run(b: Bencher, backend: Backend, n: usize) {
    let pts = points(n);
    let mut out = vec![[0; 32]; n];
    if mul_batch_on(backend, &SCALAR, &pts, &mut out).is_none() {
        eprintln!("{backend:?}: not available here, skipped");
        return;
    }
    b.counter(ItemsCount::new(n))
        .bench_local(|| mul_batch_on(backend, black_box(&SCALAR), black_box(&pts), &mut out));
}

#[divan::bench(args = SIZES)]
fn portable(b: Bencher, n: usize) {
    run(b, Backend::Portable, n);
}

#[divan::bench(args = SIZES)]
fn avx2(b: Bencher, n: usize) {
    run(b, Backend::Avx2, n);
}

#[divan::bench(args = SIZES)]
fn ifma(b: Bencher, n: usize) {
    run(b, Backend::Ifma, n);
}

/// x25519-dalek 3.0's `x25519`, one call per point.
#[divan::bench(args = SIZES)]
fn dalek(b: Bencher, n: usize) {
    let pts = points(n);
    b.counter(ItemsCount::new(n)).bench_local(|| {
        for u in &pts {
            black_box(x25519_dalek::x25519(black_box(SCALAR), *u));
        }
    });
}
