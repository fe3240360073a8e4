//! The 256-bit width (VAES on AVX2 registers: two blocks per instruction).
//! A register holds the same block of two consecutive pairs `a`, `b`; a
//! step is four registers.

#![deny(unsafe_code)] // Only `crate::fast` (loads, stores, CPUID, dispatch) has any.

use core::arch::x86_64::{
    __m128i, __m256i, _mm_setzero_si128, _mm_xor_si128, _mm256_aesenc_epi128,
    _mm256_broadcastsi128_si256, _mm256_castsi256_si128, _mm256_extracti128_si256,
    _mm256_permute2x128_si256, _mm256_setzero_si256, _mm256_xor_si256,
};

use super::super::aesni::{self, Rk};
use super::super::{AsBlocks, Wiped, load, load2 as load_half, store, store2 as store_half};
use crate::block::{Blk, Parts, ZERO};
use crate::keys::Keys;
use crate::{Dir, Tweak};

/// A register: two blocks.
type V = __m256i;

/// Registers per step.
const R: usize = 4;

/// One step's pairs: per register, `[M_a, M_a′]` and `[M_b, M_b′]`.
type Step = [[[Blk; 2]; 2]; R];

/// A step of zeros.
const EMPTY: Step = [[[ZERO; 2]; 2]; R];

/// The zero register.
#[target_feature(enable = "avx2")]
#[inline]
fn zero() -> V {
    _mm256_setzero_si256()
}

/// `a ⊕ b`.
#[target_feature(enable = "avx2")]
#[inline]
fn xor(a: V, b: V) -> V {
    _mm256_xor_si256(a, b)
}

/// A block in both halves.
#[target_feature(enable = "avx2")]
#[inline]
fn splat(b: __m128i) -> V {
    _mm256_broadcastsi128_si256(b)
}

/// One AES round on both halves.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn aesenc(v: V, key: V) -> V {
    _mm256_aesenc_epi128(v, key)
}

/// Load a step for the first pass: `M_a M_b`, `M_a′ M_b′` per register.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn load1(st: &Step) -> ([V; R], [V; R]) {
    let (mut m, mut mp) = ([zero(); R], [zero(); R]);
    for (([a, b], m), mp) in st.iter().zip(&mut m).zip(&mut mp) {
        let (a, b) = (load_half(a), load_half(b));
        *m = _mm256_permute2x128_si256::<0x20>(a, b);
        *mp = _mm256_permute2x128_si256::<0x31>(a, b);
    }
    (m, mp)
}

/// Store the second pass's `C` and `C′` in pair order,
/// `C_a C_a′ | C_b C_b′`.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn store_c(st: &mut Step, c: &[V; R], cp: &[V; R]) {
    for (([[ca, cpa], [cb, cpb]], c), cp) in st.iter_mut().zip(c).zip(cp) {
        store(ca, _mm256_castsi256_si128(*c));
        store(cpa, _mm256_castsi256_si128(*cp));
        store(cb, _mm256_extracti128_si256::<1>(*c));
        store(cpb, _mm256_extracti128_si256::<1>(*cp));
    }
}

/// Whole steps of pairs (a multiple of eight).
fn as_steps(pairs: &mut [[Blk; 2]]) -> &mut [Step] {
    let (twos, _) = pairs.as_chunks_mut::<2>();
    let (steps, _) = twos.as_chunks_mut::<R>();
    steps
}

/// `(i mod 8)·L` for the eight pairs of a step, two per register.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn lane_l(k: &Keys) -> [V; R] {
    let (pairs, _) = k.lane_l.as_chunks::<2>();
    let mut ll = [zero(); R];
    for (l, p) in ll.iter_mut().zip(pairs) {
        *l = load_half(p);
    }
    ll
}

/// Fold the registers' checksums (both halves), taking only the first
/// `real` pairs of `tail`.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn fold(acc: &[V; R], tail: &[V; R], real: usize) -> __m128i {
    let mut x = _mm_setzero_si128();
    for a in acc {
        x = _mm_xor_si128(
            x,
            _mm_xor_si128(
                _mm256_castsi256_si128(*a),
                _mm256_extracti128_si256::<1>(*a),
            ),
        );
    }
    for (q, t) in tail.iter().enumerate() {
        if 2 * q < real {
            x = _mm_xor_si128(x, _mm256_castsi256_si128(*t));
        }
        if 2 * q + 1 < real {
            x = _mm_xor_si128(x, _mm256_extracti128_si256::<1>(*t));
        }
    }
    x
}

driver!("aes,avx2,vaes");
