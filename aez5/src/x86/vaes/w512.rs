//! The 512-bit width (VAES on AVX-512 registers: four blocks per
//! instruction). A register holds the same block of four consecutive pairs
//! `a`…`d`; a step is two registers (two steps per group measured no
//! faster).

#![deny(unsafe_code)] // Only `crate::fast` (loads, stores, CPUID, dispatch) has any.

use core::arch::x86_64::{
    __m128i, __m512i, _mm_setzero_si128, _mm_xor_si128, _mm512_aesenc_epi128,
    _mm512_broadcast_i32x4, _mm512_castsi512_si128, _mm512_extracti32x4_epi32,
    _mm512_permutex2var_epi64, _mm512_set_epi64, _mm512_setzero_si512, _mm512_shuffle_i64x2,
    _mm512_xor_si512,
};

use super::super::aesni::{self, Rk};
use super::super::{AsBlocks, Wiped, load, load4 as load_half, store4 as store_half};
use crate::block::{Blk, Parts, ZERO};
use crate::keys::Keys;
use crate::{Dir, Tweak};

/// A register: four blocks.
type V = __m512i;

/// Registers per step.
const R: usize = 2;

/// One step's pairs: per register, `[M_a, M_a′, M_b, M_b′]` and
/// `[M_c, …, M_d′]`.
type Step = [[[Blk; 4]; 2]; R];

/// A step of zeros.
const EMPTY: Step = [[[ZERO; 4]; 2]; R];

/// The zero register.
#[target_feature(enable = "avx512f")]
#[inline]
fn zero() -> V {
    _mm512_setzero_si512()
}

/// `a ⊕ b`.
#[target_feature(enable = "avx512f")]
#[inline]
fn xor(a: V, b: V) -> V {
    _mm512_xor_si512(a, b)
}

/// A block in all four lanes.
#[target_feature(enable = "avx512f")]
#[inline]
fn splat(b: __m128i) -> V {
    _mm512_broadcast_i32x4(b)
}

/// One AES round on all four lanes.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn aesenc(v: V, key: V) -> V {
    _mm512_aesenc_epi128(v, key)
}

/// Load a step for the first pass: `M_a…M_d`, `M_a′…M_d′` per register.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn load1(st: &Step) -> ([V; R], [V; R]) {
    let (mut m, mut mp) = ([zero(); R], [zero(); R]);
    for (([a, b], m), mp) in st.iter().zip(&mut m).zip(&mut mp) {
        let (a, b) = (load_half(a), load_half(b));
        // Lanes 0 and 2 of each half are the M blocks, 1 and 3 the M′.
        *m = _mm512_shuffle_i64x2::<0x88>(a, b);
        *mp = _mm512_shuffle_i64x2::<0xdd>(a, b);
    }
    (m, mp)
}

/// Store the second pass's `C` and `C′` in pair order,
/// `C_a C_a′ C_b C_b′ | C_c C_c′ C_d C_d′`.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn store_c(st: &mut Step, c: &[V; R], cp: &[V; R]) {
    // Interleave C and C′ back into pairs (64-bit lane indices; C′ is
    // the second operand, lanes 8–15).
    let lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    let hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    for (([a, b], c), cp) in st.iter_mut().zip(c).zip(cp) {
        store_half(a, _mm512_permutex2var_epi64(*c, lo, *cp));
        store_half(b, _mm512_permutex2var_epi64(*c, hi, *cp));
    }
}

/// Whole steps of pairs (a multiple of eight).
fn as_steps(pairs: &mut [[Blk; 2]]) -> &mut [Step] {
    let (quads, _) = pairs.as_flattened_mut().as_chunks_mut::<4>();
    let (halves, _) = quads.as_chunks_mut::<2>();
    let (steps, _) = halves.as_chunks_mut::<R>();
    steps
}

/// `(i mod 8)·L` for the eight pairs of a step, four per register.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn lane_l(k: &Keys) -> [V; R] {
    let (quads, _) = k.lane_l.as_chunks::<4>();
    let mut ll = [zero(); R];
    for (l, q) in ll.iter_mut().zip(quads) {
        *l = load_half(q);
    }
    ll
}

/// The four blocks of a register.
#[target_feature(enable = "avx512f")]
#[inline]
fn lanes(v: V) -> [__m128i; 4] {
    [
        _mm512_castsi512_si128(v),
        _mm512_extracti32x4_epi32::<1>(v),
        _mm512_extracti32x4_epi32::<2>(v),
        _mm512_extracti32x4_epi32::<3>(v),
    ]
}

/// Fold the registers' checksums (all lanes), taking only the first
/// `real` pairs of `tail`.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn fold(acc: &[V; R], tail: &[V; R], real: usize) -> __m128i {
    let mut sum = zero();
    for a in acc {
        sum = xor(sum, *a);
    }
    let mut x = _mm_setzero_si128();
    for l in lanes(sum) {
        x = _mm_xor_si128(x, l);
    }
    for (p, l) in tail.iter().flat_map(|t| lanes(*t)).enumerate() {
        if p < real {
            x = _mm_xor_si128(x, l);
        }
    }
    x
}

driver!("aes,avx2,vaes,avx512f");
