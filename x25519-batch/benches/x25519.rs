//! X25519 in batches of 1, 4, 8 and 16 points under one scalar, on each
//! backend this CPU has, and beside them one point at a time on the
//! scalar implementations kemsphinx has: x25519-dalek's `x25519`, HACL*'s
//! ladder (libcrux-curve25519) and s2n-bignum's assembly (graviola, on
//! x86-64 with the features it needs). Divan reports the time of a whole batch and (its items counter)
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

/// HACL*'s ladder (libcrux-curve25519), one call per point.
#[divan::bench(args = SIZES)]
fn hacl(b: Bencher, n: usize) {
    let pts = points(n);
    let mut out = [0u8; 32];
    b.counter(ItemsCount::new(n)).bench_local(|| {
        for u in &pts {
            libcrux_curve25519::hacl::scalarmult(&mut out, black_box(&SCALAR), u);
            black_box(&out);
        }
    });
}

/// s2n-bignum's X25519 assembly through graviola, one call per point
/// (kemsphinx's `x25519-asm` path), where the CPU has what it asserts.
#[cfg(target_arch = "x86_64")]
#[divan::bench(args = SIZES)]
fn s2n_bignum(b: Bencher, n: usize) {
    use graviola::key_agreement::x25519::{PublicKey, StaticPrivateKey};
    let needs = [
        std::arch::is_x86_feature_detected!("aes"),
        std::arch::is_x86_feature_detected!("pclmulqdq"),
        std::arch::is_x86_feature_detected!("bmi1"),
        std::arch::is_x86_feature_detected!("bmi2"),
        std::arch::is_x86_feature_detected!("adx"),
        std::arch::is_x86_feature_detected!("avx"),
        std::arch::is_x86_feature_detected!("avx2"),
    ];
    if needs.contains(&false) {
        eprintln!("s2n-bignum: CPU lacks a feature graviola asserts, skipped");
        return;
    }
    let pts: Vec<PublicKey> = points(n).iter().map(PublicKey::from_array).collect();
    b.counter(ItemsCount::new(n)).bench_local(|| {
        for u in &pts {
            let key = StaticPrivateKey::from_array(black_box(&SCALAR));
            black_box(key.diffie_hellman(u).map(|s| s.0).ok());
        }
    });
}
