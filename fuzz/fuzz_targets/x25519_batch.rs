//! `x25519-batch` against `x25519-dalek`, point by point: a scalar and up
//! to 17 u-coordinates (every lane position and partial group of the
//! 8-lane IFMA and 4-lane AVX2 ladders), on every backend this CPU has,
//! with one scalar for the batch and with one scalar per point. Any input:
//! unclamped scalars, non-canonical u, points of small order.

#![no_main]

use libfuzzer_sys::fuzz_target;
use x25519_batch::{Backend, mul_batch_on, mul_each_on};

fuzz_target!(|data: &[u8]| {
    let Some((scalar, rest)) = data.split_first_chunk::<32>() else {
        return;
    };
    let points: Vec<[u8; 32]> = rest
        .chunks_exact(32)
        .take(17)
        .filter_map(|c| c.try_into().ok())
        .collect();
    // One scalar per point: the scalar with its first byte varied.
    let scalars: Vec<[u8; 32]> = (0..points.len())
        .map(|i| {
            let mut s = *scalar;
            s[0] ^= u8::try_from(i).unwrap_or(0);
            s
        })
        .collect();
    let one: Vec<[u8; 32]> = points
        .iter()
        .map(|p| x25519_dalek::x25519(*scalar, *p))
        .collect();
    let each: Vec<[u8; 32]> = scalars
        .iter()
        .zip(&points)
        .map(|(s, p)| x25519_dalek::x25519(*s, *p))
        .collect();
    for backend in Backend::ALL {
        let mut out = vec![[0xa5u8; 32]; points.len()];
        if let Some(r) = mul_batch_on(backend, scalar, &points, &mut out) {
            assert!(r.is_ok());
            assert_eq!(out, one, "{backend:?}, one scalar");
        }
        if let Some(r) = mul_each_on(backend, &scalars, &points, &mut out) {
            assert!(r.is_ok());
            assert_eq!(out, each, "{backend:?}, a scalar per point");
        }
    }
});
