//! Four points at once on AVX2: one point per 64-bit lane of a 256-bit
//! register, a field element as ten such registers in radix 2^25.5 (limb
//! `i` has weight `2^⌈25.5·i⌉`: 26 bits for even `i`, 25 for odd), so
//! that `vpmuludq` (32×32 → 64 bits per lane) multiplies limbs exactly and
//! a column of ten products fits in 64 bits.
//!
//! In a product, `a_i·b_j` lands on limb `i + j`, times 2 when `i` and `j`
//! are both odd (their weights then sum to one more than limb `i + j`'s),
//! and times 19 when `i + j ≥ 10` (2^255 ≡ 19): `b_j` is taken pre-scaled
//! as `19·b_j` and odd `a_i` as `2·a_i`.
//!
//! Bounds (even limbs / odd limbs): [`mul`], [`sqr`], [`mul_a24`] return
//! limbs below 2^26 / 2^25 + 2^16 ("carried"); [`add`] and [`sub`] are
//! not carried: from carried inputs, `add` returns below 2^27 / 2^26 + 2^17
//! and `sub` (`f + 2p − g`) below 3·2^26 / 3·2^25 + 2^16. A product of two
//! such values: `19·b_j` stays below 57·2^26 < 2^32 (what `vpmuludq`
//! reads), each term below 2^59.5, each column of ten below 2^63.

#![deny(unsafe_code)] // Only `super` (the dispatch) has any.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_extract_epi64, _mm256_mul_epu32,
    _mm256_set_epi64x, _mm256_set1_epi64x, _mm256_setzero_si256, _mm256_slli_epi64,
    _mm256_srli_epi64, _mm256_srlv_epi64, _mm256_sub_epi64, _mm256_xor_si256,
};

use crate::{Limbs, Words};

/// A field element of each of the four lanes.
type Fe = [__m256i; 10];
/// One 64-bit word of each lane's clamped scalar.
type Word = __m256i;
/// Per lane, all ones (swap) or all zeros (keep).
type Mask = __m256i;

const MASK26: u64 = (1 << 26) - 1;
const MASK25: u64 = (1 << 25) - 1;

/// `x` in every lane.
#[target_feature(enable = "avx2")]
#[inline]
fn splat(x: u64) -> __m256i {
    _mm256_set1_epi64x(x.cast_signed())
}

/// A row of four lanes (lane 0 lowest).
#[target_feature(enable = "avx2")]
#[inline]
fn load(row: &[u64; 4]) -> __m256i {
    let [a, b, c, d] = row.map(u64::cast_signed);
    _mm256_set_epi64x(d, c, b, a)
}

/// The four lanes of `v` (lane 0 first).
#[target_feature(enable = "avx2")]
#[inline]
fn store(v: __m256i) -> [u64; 4] {
    [
        _mm256_extract_epi64::<0>(v),
        _mm256_extract_epi64::<1>(v),
        _mm256_extract_epi64::<2>(v),
        _mm256_extract_epi64::<3>(v),
    ]
    .map(i64::cast_unsigned)
}

#[target_feature(enable = "avx2")]
#[inline]
fn one() -> Fe {
    let mut f = zero();
    f[0] = splat(1);
    f
}

#[target_feature(enable = "avx2")]
#[inline]
fn zero() -> Fe {
    [_mm256_setzero_si256(); 10]
}

#[target_feature(enable = "avx2")]
#[inline]
fn mask_none() -> Mask {
    _mm256_setzero_si256()
}

#[target_feature(enable = "avx2")]
#[inline]
fn mask_xor(a: Mask, b: Mask) -> Mask {
    _mm256_xor_si256(a, b)
}

/// Bit `i` of each lane's word (`i` is the loop counter, never secret),
/// as a mask: `0 − bit`.
#[target_feature(enable = "avx2")]
#[inline]
fn bit(word: Word, i: u32) -> Mask {
    let b = _mm256_and_si256(_mm256_srlv_epi64(word, splat(u64::from(i))), splat(1));
    _mm256_sub_epi64(_mm256_setzero_si256(), b)
}

/// Swaps `f` and `g` in the lanes where `mask` is all ones.
#[target_feature(enable = "avx2")]
#[inline]
fn cswap(mask: Mask, f: &mut Fe, g: &mut Fe) {
    for (a, b) in f.iter_mut().zip(g.iter_mut()) {
        let t = _mm256_and_si256(_mm256_xor_si256(*a, *b), mask);
        *a = _mm256_xor_si256(*a, t);
        *b = _mm256_xor_si256(*b, t);
    }
}

/// `f + g`, not carried.
#[target_feature(enable = "avx2")]
#[inline]
fn add(f: Fe, g: Fe) -> Fe {
    let mut h = f;
    for (h, g) in h.iter_mut().zip(g) {
        *h = _mm256_add_epi64(*h, g);
    }
    h
}

/// 2p in radix 2^25.5, limb by limb: each at least the bound of a
/// carried limb, so `f + 2p − g` does not wrap.
const TWO_P: [u64; 10] = [
    2 * (MASK26 - 18),
    2 * MASK25,
    2 * MASK26,
    2 * MASK25,
    2 * MASK26,
    2 * MASK25,
    2 * MASK26,
    2 * MASK25,
    2 * MASK26,
    2 * MASK25,
];

/// `f − g` as `f + 2p − g`, not carried (`g` carried).
#[target_feature(enable = "avx2")]
#[inline]
fn sub(f: Fe, g: Fe) -> Fe {
    let mut h = f;
    for ((h, g), t) in h.iter_mut().zip(g).zip(TWO_P) {
        *h = _mm256_sub_epi64(_mm256_add_epi64(*h, splat(t)), g);
    }
    h
}

/// Moves the bits of limb `i` above its width into limb `i + 1`.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::indexing_slicing)] // called with i ≤ 8 on an array of 10: fixed call sites, no data
fn carry_one(h: &mut Fe, i: usize) {
    let c = if i.is_multiple_of(2) {
        let c = _mm256_srli_epi64::<26>(h[i]);
        h[i] = _mm256_and_si256(h[i], splat(MASK26));
        c
    } else {
        let c = _mm256_srli_epi64::<25>(h[i]);
        h[i] = _mm256_and_si256(h[i], splat(MASK25));
        c
    };
    h[i + 1] = _mm256_add_epi64(h[i + 1], c);
}

/// Carries columns below 2^63 into carried limbs, in two interleaved
/// chains (0→1→2→3→4→5 and 4→5→6→7→8→9), then limb 9's carry (below
/// 2^38) ×19 into limb 0, and limb 0 into limb 1 once more.
#[target_feature(enable = "avx2")]
#[inline]
fn carry(mut h: Fe) -> Fe {
    for i in [0, 4, 1, 5, 2, 6, 3, 7, 4, 8] {
        carry_one(&mut h, i);
    }
    let c = _mm256_srli_epi64::<25>(h[9]);
    h[9] = _mm256_and_si256(h[9], splat(MASK25));
    let c19 = _mm256_add_epi64(
        _mm256_add_epi64(c, _mm256_slli_epi64::<1>(c)),
        _mm256_slli_epi64::<4>(c),
    );
    h[0] = _mm256_add_epi64(h[0], c19);
    carry_one(&mut h, 0);
    h
}

/// `f·g`: 100 products, scaled as the module describes, summed by limb.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::indexing_slicing)] // (i + j) % 10 < 10 indexes an array of 10: fixed loops, no data
fn mul(f: Fe, g: Fe) -> Fe {
    let mut g19 = g;
    for x in g19.iter_mut() {
        *x = _mm256_mul_epu32(*x, splat(19));
    }
    let mut f2 = f;
    for x in f2.iter_mut().skip(1).step_by(2) {
        *x = _mm256_add_epi64(*x, *x);
    }
    let mut h = zero();
    for i in 0..10 {
        for j in 0..10 {
            let a = if i % 2 == 1 && j % 2 == 1 {
                f2[i]
            } else {
                f[i]
            };
            let b = if i + j >= 10 { g19[j] } else { g[j] };
            let m = (i + j) % 10;
            h[m] = _mm256_add_epi64(h[m], _mm256_mul_epu32(a, b));
        }
    }
    carry(h)
}

/// `f²` (as [`mul`]).
#[target_feature(enable = "avx2")]
#[inline]
fn sqr(f: Fe) -> Fe {
    mul(f, f)
}

/// `f·121665`, carried (`f` below 2^32 per limb).
#[target_feature(enable = "avx2")]
#[inline]
fn mul_a24(f: Fe) -> Fe {
    let mut h = f;
    for x in h.iter_mut() {
        *x = _mm256_mul_epu32(*x, splat(121_665));
    }
    carry(h)
}

ladder!(#[target_feature(enable = "avx2")]);

/// `X25519` on four lanes: `k` the clamped scalars' words, `u` the
/// u-coordinates' radix-2^51 limbs (below 2^51, each split here into a
/// 26-bit and a 25-bit limb); out, the results as radix-2^51 limbs (below
/// 2^52, not yet reduced below p).
#[target_feature(enable = "avx2")]
pub(super) fn kernel(k: &Words<4>, u: &Limbs<4>) -> Limbs<4> {
    let z = _mm256_setzero_si256();
    let mut words = [z; 4];
    for (w, row) in words.iter_mut().zip(k) {
        *w = load(row);
    }
    let mut x1 = zero();
    for (pair, row) in x1.chunks_exact_mut(2).zip(u) {
        let l = load(row);
        if let [even, odd] = pair {
            *even = _mm256_and_si256(l, splat(MASK26));
            *odd = _mm256_srli_epi64::<26>(l);
        }
    }
    let r = x25519(&words, x1);
    let mut out = [[0; 4]; 5];
    for (row, pair) in out.iter_mut().zip(r.chunks_exact(2)) {
        if let [even, odd] = pair {
            *row = store(_mm256_add_epi64(*even, _mm256_slli_epi64::<26>(*odd)));
        }
    }
    out
}
