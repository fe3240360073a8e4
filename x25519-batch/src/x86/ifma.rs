//! Eight points at once on AVX-512 IFMA: one point per 64-bit lane of a
//! 512-bit register, a field element as five such registers.
//!
//! Limbs are radix 2^51, as in [`crate::field`], but held loosely: the
//! multiplier (`vpmadd52luq`/`vpmadd52huq`) reads the low 52 bits of each
//! operand, so every operand of [`mul`] only has to be below 2^52, and one
//! parallel carry after each product, sum or difference keeps it there.
//! The 52-bit product halves sit one bit off the 51-bit limb grid: the high
//! half of `a_i·b_j` has weight `2^(51(i+j)+52) = 2·2^(51(i+j+1))`, so the
//! high sums are doubled before they are added in. The products' high
//! columns come back onto the low ones ×19 with `vpmullq` (AVX-512DQ,
//! which every CPU with AVX-512 IFMA has; `super` checks for all three).
//!
//! Bounds (every limb): [`mul`] takes limbs below 2^52 and returns them
//! below 2^51 + 2^14; [`add`] and [`sub`] take limbs below 2^52 (`sub`'s
//! second operand at most 2^52 − 38) and return them below 2^51 + 2^6;
//! [`mul_a24`] returns limbs below 2^52 + 2^19, and only feeds [`add`],
//! which takes limbs up to 2^62.

#![deny(unsafe_code)] // Only `super` (the dispatch) has any.

use core::arch::x86_64::{
    __m512i, _mm256_extract_epi64, _mm512_add_epi64, _mm512_and_si512, _mm512_extracti64x4_epi64,
    _mm512_madd52hi_epu64, _mm512_madd52lo_epu64, _mm512_mullo_epi64, _mm512_set_epi64,
    _mm512_set1_epi64, _mm512_setzero_si512, _mm512_slli_epi64, _mm512_srli_epi64,
    _mm512_srlv_epi64, _mm512_sub_epi64, _mm512_xor_si512,
};

use crate::field::MASK51;
use zeroize::Zeroizing;

use crate::{Limbs, Words};

/// A field element of each of the eight lanes.
type Fe = [__m512i; 5];
/// One 64-bit word of each lane's clamped scalar.
type Word = __m512i;
/// Per lane, all ones (swap) or all zeros (keep).
type Mask = __m512i;

/// `x` in every lane.
#[target_feature(enable = "avx512f")]
#[inline]
fn splat(x: u64) -> __m512i {
    _mm512_set1_epi64(x.cast_signed())
}

/// A row of eight lanes (lane 0 lowest).
#[target_feature(enable = "avx512f")]
#[inline]
fn load(row: &[u64; 8]) -> __m512i {
    let [a, b, c, d, e, f, g, h] = row.map(u64::cast_signed);
    _mm512_set_epi64(h, g, f, e, d, c, b, a)
}

/// The eight lanes of `v` (lane 0 first).
#[target_feature(enable = "avx512f")]
#[inline]
fn store(v: __m512i) -> [u64; 8] {
    let lo = _mm512_extracti64x4_epi64::<0>(v);
    let hi = _mm512_extracti64x4_epi64::<1>(v);
    [
        _mm256_extract_epi64::<0>(lo),
        _mm256_extract_epi64::<1>(lo),
        _mm256_extract_epi64::<2>(lo),
        _mm256_extract_epi64::<3>(lo),
        _mm256_extract_epi64::<0>(hi),
        _mm256_extract_epi64::<1>(hi),
        _mm256_extract_epi64::<2>(hi),
        _mm256_extract_epi64::<3>(hi),
    ]
    .map(i64::cast_unsigned)
}

#[target_feature(enable = "avx512f")]
#[inline]
fn one() -> Fe {
    let z = _mm512_setzero_si512();
    [splat(1), z, z, z, z]
}

#[target_feature(enable = "avx512f")]
#[inline]
fn zero() -> Fe {
    [_mm512_setzero_si512(); 5]
}

#[target_feature(enable = "avx512f")]
#[inline]
fn mask_none() -> Mask {
    _mm512_setzero_si512()
}

#[target_feature(enable = "avx512f")]
#[inline]
fn mask_xor(a: Mask, b: Mask) -> Mask {
    _mm512_xor_si512(a, b)
}

/// Bit `i` of each lane's word (`i` is the loop counter, never secret),
/// as a mask: `0 − bit`.
#[target_feature(enable = "avx512f")]
#[inline]
fn bit(word: Word, i: u32) -> Mask {
    let b = _mm512_and_si512(_mm512_srlv_epi64(word, splat(u64::from(i))), splat(1));
    _mm512_sub_epi64(_mm512_setzero_si512(), b)
}

/// Swaps `f` and `g` in the lanes where `mask` is all ones.
#[target_feature(enable = "avx512f")]
#[inline]
fn cswap(mask: Mask, f: &mut Fe, g: &mut Fe) {
    for (a, b) in f.iter_mut().zip(g.iter_mut()) {
        let t = _mm512_and_si512(_mm512_xor_si512(*a, *b), mask);
        *a = _mm512_xor_si512(*a, t);
        *b = _mm512_xor_si512(*b, t);
    }
}

/// One parallel carry: each limb keeps its low 51 bits and takes the
/// carry of the one below; limb 4's carry (weight 2^255 ≡ 19) goes to
/// limb 0 as `19·c`, by the multiplier. Limbs below 2^62 in (so each
/// carry is below 2^11); out, below 2^51 + 2^16.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
fn carry(r: Fe) -> Fe {
    let m = splat(MASK51);
    let [r0, r1, r2, r3, r4] = r;
    let (c0, c1, c2, c3, c4) = (
        _mm512_srli_epi64::<51>(r0),
        _mm512_srli_epi64::<51>(r1),
        _mm512_srli_epi64::<51>(r2),
        _mm512_srli_epi64::<51>(r3),
        _mm512_srli_epi64::<51>(r4),
    );
    [
        _mm512_madd52lo_epu64(_mm512_and_si512(r0, m), c4, splat(19)),
        _mm512_add_epi64(_mm512_and_si512(r1, m), c0),
        _mm512_add_epi64(_mm512_and_si512(r2, m), c1),
        _mm512_add_epi64(_mm512_and_si512(r3, m), c2),
        _mm512_add_epi64(_mm512_and_si512(r4, m), c3),
    ]
}

/// `f + g`, carried.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
fn add(f: Fe, g: Fe) -> Fe {
    let mut h = f;
    for (h, g) in h.iter_mut().zip(g) {
        *h = _mm512_add_epi64(*h, g);
    }
    carry(h)
}

/// 2p in radix 2^51, limb by limb.
const TWO_P: [u64; 5] = [
    2 * (MASK51 - 18),
    2 * MASK51,
    2 * MASK51,
    2 * MASK51,
    2 * MASK51,
];

/// `f − g` as `f + 2p − g`, carried.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
fn sub(f: Fe, g: Fe) -> Fe {
    let mut h = f;
    for ((h, g), t) in h.iter_mut().zip(g).zip(TWO_P) {
        *h = _mm512_sub_epi64(_mm512_add_epi64(*h, splat(t)), g);
    }
    carry(h)
}

/// `19·x` for `x` below 2^59 (so `19·x` below 2^64: the low 64 bits
/// that `vpmullq` keeps are the whole product), in one `vpmullq`
/// (AVX-512DQ). Spelled as shifts and adds (`x + 2x + 16x`) without DQ,
/// the compiler built a 64-bit multiplication out of two `vpmuludq` and
/// their carries instead, and a group of 8 took about 57.5 µs rather than
/// 49.9 µs on the Zen 4 EPYC (README, "Performance"). Its operands are
/// secret-dependent like every limb's; the multipliers' timing is argued,
/// and measured, in the README ("Safety and side channels").
#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn times19(x: __m512i) -> __m512i {
    _mm512_mullo_epi64(x, splat(19))
}

/// `f·g`: the 25 limb products' low halves summed by position into `lo`,
/// their high halves into `hi` (each sum of at most five terms below
/// 2^52, so below 2^55), then column `m` is `lo[m] + 2·hi[m−1]` (below
/// 2^56), columns 5–9 come back ×19 onto 0–4 (below 2^61), and one
/// parallel carry.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
#[inline]
#[allow(clippy::indexing_slicing)] // i + j ≤ 8 and m ≤ 8 index arrays of 9: fixed loops, no data
fn mul(f: Fe, g: Fe) -> Fe {
    let z = _mm512_setzero_si512();
    let (mut lo, mut hi) = ([z; 9], [z; 9]);
    for (i, a) in f.iter().enumerate() {
        for (j, b) in g.iter().enumerate() {
            lo[i + j] = _mm512_madd52lo_epu64(lo[i + j], *a, *b);
            hi[i + j] = _mm512_madd52hi_epu64(hi[i + j], *a, *b);
        }
    }
    // col[m] = lo[m] + 2·hi[m − 1], m = 0..=9 (lo[9] = 0, hi[−1] = 0).
    let mut col = [z; 10];
    col[0] = lo[0];
    for m in 1..9 {
        col[m] = _mm512_add_epi64(lo[m], _mm512_slli_epi64::<1>(hi[m - 1]));
    }
    col[9] = _mm512_slli_epi64::<1>(hi[8]);
    let mut r = [z; 5];
    for k in 0..5 {
        r[k] = _mm512_add_epi64(col[k], times19(col[k + 5]));
    }
    carry(r)
}

/// `f²` with each cross product computed once: 15 limb products instead
/// of 25. The halves land in three sums by position, each with its own
/// weight on the 51-bit grid: `d[m]`, the low halves of the squares (×1);
/// `x[m]`, the low halves of the cross products and the high halves of
/// the squares of position `m − 1` (×2); `y[m]`, the high halves of the
/// cross products (×4, at position `m + 1`). Each holds at most three
/// terms below 2^52, so column `m = d[m] + 2·x[m] + 4·y[m−1]` stays below
/// 2^56, as in [`mul`], and the rest is [`mul`]'s.
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
#[inline]
#[allow(clippy::indexing_slicing)] // i + j ≤ 8, 2i + 1 ≤ 9 and m ≤ 9 index arrays of 10: fixed loops, no data
fn sqr(f: Fe) -> Fe {
    let z = _mm512_setzero_si512();
    let (mut d, mut x, mut y) = ([z; 10], [z; 10], [z; 10]);
    for (i, a) in f.iter().enumerate() {
        d[2 * i] = _mm512_madd52lo_epu64(d[2 * i], *a, *a);
        x[2 * i + 1] = _mm512_madd52hi_epu64(x[2 * i + 1], *a, *a);
        for (j, b) in f.iter().enumerate().skip(i + 1) {
            x[i + j] = _mm512_madd52lo_epu64(x[i + j], *a, *b);
            y[i + j] = _mm512_madd52hi_epu64(y[i + j], *a, *b);
        }
    }
    let mut col = [z; 10];
    col[0] = d[0];
    for m in 1..10 {
        col[m] = _mm512_add_epi64(
            _mm512_add_epi64(d[m], _mm512_slli_epi64::<1>(x[m])),
            _mm512_slli_epi64::<2>(y[m - 1]),
        );
    }
    let mut r = [z; 5];
    for k in 0..5 {
        r[k] = _mm512_add_epi64(col[k], times19(col[k + 5]));
    }
    carry(r)
}

/// `f·121665`: each limb's product split into its low 52 bits (weight
/// `2^(51k)`) and its high part (below 2^18, weight `2·2^(51(k+1))`; limb
/// 4's comes back ×2·19 onto limb 0). Not carried: only [`add`] takes it.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
fn mul_a24(f: Fe) -> Fe {
    let z = _mm512_setzero_si512();
    let a24 = splat(121_665);
    let [f0, f1, f2, f3, f4] = f;
    let lo = |x| _mm512_madd52lo_epu64(z, x, a24);
    let hi = |x| _mm512_madd52hi_epu64(z, x, a24);
    let two_hi = |x| _mm512_slli_epi64::<1>(hi(x));
    [
        _mm512_madd52lo_epu64(lo(f0), hi(f4), splat(38)),
        _mm512_add_epi64(lo(f1), two_hi(f0)),
        _mm512_add_epi64(lo(f2), two_hi(f1)),
        _mm512_add_epi64(lo(f3), two_hi(f2)),
        _mm512_add_epi64(lo(f4), two_hi(f3)),
    ]
}

ladder!(#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]);

/// `X25519` on eight lanes: `k` the clamped scalars' words, `u` the
/// u-coordinates' limbs (below 2^51); out, the results' limbs (below
/// 2^52, not yet reduced below p).
#[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
pub(super) fn kernel(k: &Words<8>, u: &Limbs<8>) -> Limbs<8> {
    let z = _mm512_setzero_si512();
    // The scalars' words and the results are wiped when the kernel
    // returns (copies left in registers or spilled are not).
    let mut words = Zeroizing::new([z; 4]);
    for (w, row) in words.iter_mut().zip(k) {
        *w = load(row);
    }
    let mut x1 = [z; 5];
    for (l, row) in x1.iter_mut().zip(u) {
        *l = load(row);
    }
    let r = Zeroizing::new(x25519(&words, x1));
    (*r).map(|v| store(v))
}
