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

use zeroize::Zeroizing;

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

/// Moves the bits of `lo` above its lowest `BITS` into `hi`.
#[target_feature(enable = "avx2")]
#[inline]
fn carry_into<const BITS: i32>(lo: &mut __m256i, hi: &mut __m256i) {
    let c = _mm256_srli_epi64::<BITS>(*lo);
    *lo = _mm256_and_si256(*lo, splat((1u64 << BITS) - 1));
    *hi = _mm256_add_epi64(*hi, c);
}

/// Carries columns below 2^63 into carried limbs, in two interleaved
/// chains (0→1→2→3→4→5 and 4→5→6→7→8→9), then limb 9's carry (below
/// 2^38) ×19 into limb 0, and limb 0 into limb 1 once more.
#[target_feature(enable = "avx2")]
#[inline]
fn carry(h: Fe) -> Fe {
    let [
        mut h0,
        mut h1,
        mut h2,
        mut h3,
        mut h4,
        mut h5,
        mut h6,
        mut h7,
        mut h8,
        mut h9,
    ] = h;
    carry_into::<26>(&mut h0, &mut h1);
    carry_into::<26>(&mut h4, &mut h5);
    carry_into::<25>(&mut h1, &mut h2);
    carry_into::<25>(&mut h5, &mut h6);
    carry_into::<26>(&mut h2, &mut h3);
    carry_into::<26>(&mut h6, &mut h7);
    carry_into::<25>(&mut h3, &mut h4);
    carry_into::<25>(&mut h7, &mut h8);
    carry_into::<26>(&mut h4, &mut h5);
    carry_into::<26>(&mut h8, &mut h9);
    let c = _mm256_srli_epi64::<25>(h9);
    h9 = _mm256_and_si256(h9, splat(MASK25));
    let c19 = _mm256_add_epi64(
        _mm256_add_epi64(c, _mm256_slli_epi64::<1>(c)),
        _mm256_slli_epi64::<4>(c),
    );
    h0 = _mm256_add_epi64(h0, c19);
    carry_into::<26>(&mut h0, &mut h1);
    [h0, h1, h2, h3, h4, h5, h6, h7, h8, h9]
}

/// `f·g`: 100 products, scaled as the module describes, summed by limb
/// (written out term by term, so that every limb stays in a register).
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::many_single_char_names)]
fn mul(f: Fe, g: Fe) -> Fe {
    let m = |x, y| _mm256_mul_epu32(x, y);
    let a = |x, y| _mm256_add_epi64(x, y);
    let [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9] = f;
    let [f2_1, f2_3, f2_5, f2_7, f2_9] = [f1, f3, f5, f7, f9].map(|x| a(x, x));
    let [g0, g1, g2, g3, g4, g5, g6, g7, g8, g9] = g;
    let n19 = splat(19);
    let [
        g19_1,
        g19_2,
        g19_3,
        g19_4,
        g19_5,
        g19_6,
        g19_7,
        g19_8,
        g19_9,
    ] = [g1, g2, g3, g4, g5, g6, g7, g8, g9].map(|x| m(x, n19));
    carry([
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(
                                    a(a(m(f0, g0), m(f2_1, g19_9)), m(f2, g19_8)),
                                    m(f2_3, g19_7),
                                ),
                                m(f4, g19_6),
                            ),
                            m(f2_5, g19_5),
                        ),
                        m(f6, g19_4),
                    ),
                    m(f2_7, g19_3),
                ),
                m(f8, g19_2),
            ),
            m(f2_9, g19_1),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g1), m(f1, g0)), m(f2, g19_9)), m(f3, g19_8)),
                                m(f4, g19_7),
                            ),
                            m(f5, g19_6),
                        ),
                        m(f6, g19_5),
                    ),
                    m(f7, g19_4),
                ),
                m(f8, g19_3),
            ),
            m(f9, g19_2),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g2), m(f2_1, g1)), m(f2, g0)), m(f2_3, g19_9)),
                                m(f4, g19_8),
                            ),
                            m(f2_5, g19_7),
                        ),
                        m(f6, g19_6),
                    ),
                    m(f2_7, g19_5),
                ),
                m(f8, g19_4),
            ),
            m(f2_9, g19_3),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g3), m(f1, g2)), m(f2, g1)), m(f3, g0)),
                                m(f4, g19_9),
                            ),
                            m(f5, g19_8),
                        ),
                        m(f6, g19_7),
                    ),
                    m(f7, g19_6),
                ),
                m(f8, g19_5),
            ),
            m(f9, g19_4),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g4), m(f2_1, g3)), m(f2, g2)), m(f2_3, g1)),
                                m(f4, g0),
                            ),
                            m(f2_5, g19_9),
                        ),
                        m(f6, g19_8),
                    ),
                    m(f2_7, g19_7),
                ),
                m(f8, g19_6),
            ),
            m(f2_9, g19_5),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g5), m(f1, g4)), m(f2, g3)), m(f3, g2)),
                                m(f4, g1),
                            ),
                            m(f5, g0),
                        ),
                        m(f6, g19_9),
                    ),
                    m(f7, g19_8),
                ),
                m(f8, g19_7),
            ),
            m(f9, g19_6),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g6), m(f2_1, g5)), m(f2, g4)), m(f2_3, g3)),
                                m(f4, g2),
                            ),
                            m(f2_5, g1),
                        ),
                        m(f6, g0),
                    ),
                    m(f2_7, g19_9),
                ),
                m(f8, g19_8),
            ),
            m(f2_9, g19_7),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g7), m(f1, g6)), m(f2, g5)), m(f3, g4)),
                                m(f4, g3),
                            ),
                            m(f5, g2),
                        ),
                        m(f6, g1),
                    ),
                    m(f7, g0),
                ),
                m(f8, g19_9),
            ),
            m(f9, g19_8),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g8), m(f2_1, g7)), m(f2, g6)), m(f2_3, g5)),
                                m(f4, g4),
                            ),
                            m(f2_5, g3),
                        ),
                        m(f6, g2),
                    ),
                    m(f2_7, g1),
                ),
                m(f8, g0),
            ),
            m(f2_9, g19_9),
        ),
        a(
            a(
                a(
                    a(
                        a(
                            a(
                                a(a(a(m(f0, g9), m(f1, g8)), m(f2, g7)), m(f3, g6)),
                                m(f4, g5),
                            ),
                            m(f5, g4),
                        ),
                        m(f6, g3),
                    ),
                    m(f7, g2),
                ),
                m(f8, g1),
            ),
            m(f9, g0),
        ),
    ])
}

/// `f²` with each cross product `f_i·f_j` (`i < j`) computed once and
/// doubled: 55 products instead of 100. A product's factor is 2 (cross)
/// × 2 (both limbs odd) × 19 (wrapped past limb 9), taken from `2·f_i`
/// and `f_j`, `2·f_j`, `19·f_j` or, for an odd `f_j` only, `38·f_j`
/// (below 38·(3·2^25 + 2^16) < 2^32). Each column is the same sum as
/// [`mul`]'s, so within its bound. Written out term by term.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::many_single_char_names)]
fn sqr(f: Fe) -> Fe {
    let m = |x, y| _mm256_mul_epu32(x, y);
    let a = |x, y| _mm256_add_epi64(x, y);
    let [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9] = f;
    let [f2_0, f2_1, f2_2, f2_3, f2_4, f2_5, f2_6, f2_7, f2_8, f2_9] = f.map(|x| a(x, x));
    let n19 = splat(19);
    let [f19_5, f19_6, f19_7, f19_8, f19_9] = [f5, f6, f7, f8, f9].map(|x| m(x, n19));
    let n38 = splat(38);
    let [f38_7, f38_9] = [f7, f9].map(|x| m(x, n38));
    carry([
        a(
            a(
                a(
                    a(a(m(f0, f0), m(f2_1, f38_9)), m(f2_2, f19_8)),
                    m(f2_3, f38_7),
                ),
                m(f2_4, f19_6),
            ),
            m(f2_5, f19_5),
        ),
        a(
            a(
                a(a(m(f2_0, f1), m(f2_2, f19_9)), m(f2_3, f19_8)),
                m(f2_4, f19_7),
            ),
            m(f2_5, f19_6),
        ),
        a(
            a(
                a(
                    a(a(m(f2_0, f2), m(f2_1, f1)), m(f2_3, f38_9)),
                    m(f2_4, f19_8),
                ),
                m(f2_5, f38_7),
            ),
            m(f6, f19_6),
        ),
        a(
            a(
                a(a(m(f2_0, f3), m(f2_1, f2)), m(f2_4, f19_9)),
                m(f2_5, f19_8),
            ),
            m(f2_6, f19_7),
        ),
        a(
            a(
                a(a(a(m(f2_0, f4), m(f2_1, f2_3)), m(f2, f2)), m(f2_5, f38_9)),
                m(f2_6, f19_8),
            ),
            m(f2_7, f19_7),
        ),
        a(
            a(a(a(m(f2_0, f5), m(f2_1, f4)), m(f2_2, f3)), m(f2_6, f19_9)),
            m(f2_7, f19_8),
        ),
        a(
            a(
                a(a(a(m(f2_0, f6), m(f2_1, f2_5)), m(f2_2, f4)), m(f2_3, f3)),
                m(f2_7, f38_9),
            ),
            m(f8, f19_8),
        ),
        a(
            a(a(a(m(f2_0, f7), m(f2_1, f6)), m(f2_2, f5)), m(f2_3, f4)),
            m(f2_8, f19_9),
        ),
        a(
            a(
                a(a(a(m(f2_0, f8), m(f2_1, f2_7)), m(f2_2, f6)), m(f2_3, f2_5)),
                m(f4, f4),
            ),
            m(f2_9, f19_9),
        ),
        a(
            a(a(a(m(f2_0, f9), m(f2_1, f8)), m(f2_2, f7)), m(f2_3, f6)),
            m(f2_4, f5),
        ),
    ])
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
    // The scalars' words and the results are wiped when the kernel
    // returns (copies left in registers or spilled are not).
    let mut words = Zeroizing::new([z; 4]);
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
    let r = Zeroizing::new(x25519(&words, x1));
    let mut out = [[0; 4]; 5];
    for (row, pair) in out.iter_mut().zip(r.chunks_exact(2)) {
        if let [even, odd] = pair {
            *row = store(_mm256_add_epi64(*even, _mm256_slli_epi64::<26>(*odd)));
        }
    }
    out
}
