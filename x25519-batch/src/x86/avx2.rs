//! Four points at once on AVX2: one point per 64-bit lane of a 256-bit
//! register, a field element as ten such registers in radix 2^25.5 (limb
//! `i` has weight `2^⌈25.5·i⌉`: 26 bits for even `i`, 25 for odd), so
//! that `vpmuludq` (32×32 → 64 bits per lane) multiplies limbs exactly and
//! a column of ten products fits in 64 bits.
//!
//! In a product, `a_i·b_j` lands on limb `i + j`, times 2 when `i` and `j`
//! are both odd (their weights then sum to one more than limb `i + j`'s),
//! and times 19 when `i + j ≥ 10` (2^255 ≡ 19): `b_j` is taken pre-scaled
//! as `19·b_j` and odd `a_i` as `2·a_i`. A square computes each cross
//! product once, from `2·a_i` (`4·a_i` when both limbs are odd).
//!
//! The field arithmetic is inline assembly that `gen/avx2.py` writes
//! (`avx2_asm.rs`): a multiplication keeps its ten column sums in
//! registers and reads its operands from memory, and a whole ladder step
//! is one block over a state in memory. Written with intrinsics, the same
//! arithmetic ran at half the speed: LLVM reassociated and spilled the
//! column sums and kept each multiplication an out-of-line call.
//!
//! Bounds (even limbs / odd limbs): products and squares return limbs
//! below 2^26 / 2^25 + 2^16 ("carried"); sums and differences are not
//! carried: from carried inputs, a sum is below 2^27 / 2^26 + 2^17 and a
//! difference (`f + 2p − g`) below 3·2^26 / 3·2^25 + 2^16. A product of two
//! such values: `19·b_j` stays below 57·2^26 < 2^32 and `4·a_i` below
//! 2^29 (what `vpmuludq` reads), each term below 2^59.5, each column of
//! ten below 2^63.

#![deny(unsafe_code)] // Only `super` (the dispatch) and `avx2_asm` have any.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_extract_epi64, _mm256_set_epi64x,
    _mm256_set1_epi64x, _mm256_setzero_si256, _mm256_slli_epi64, _mm256_srli_epi64,
    _mm256_srlv_epi64, _mm256_sub_epi64, _mm256_xor_si256,
};

use zeroize::{Zeroize, Zeroizing};

use super::avx2_asm as asm;
use crate::{Limbs, Words};

/// A field element of each of the four lanes.
type Fe = asm::Fe;
/// One 64-bit word of each lane's clamped scalar.
type Word = __m256i;
/// Per lane, all ones (swap) or all zeros (keep).
type Mask = __m256i;

const MASK26: u64 = (1 << 26) - 1;

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

/// `f·g`, carried (the generated block; `avx2_asm::mul`).
#[target_feature(enable = "avx2")]
#[inline]
fn mul(f: Fe, g: Fe) -> Fe {
    asm::mul(&f, &g)
}

/// `f²`, carried (the generated block; `avx2_asm::sqr`).
#[target_feature(enable = "avx2")]
#[inline]
fn sqr(f: Fe) -> Fe {
    asm::sqr(&f)
}

/// RFC 7748 §5's ladder over the 255 bits of the clamped scalars `k` (bit
/// 254 first), as `ladder.rs`'s but with each step one generated block
/// over a state in memory ([`asm::step`]): `(x_2, z_2)`, the projective
/// u-coordinate of `k·P` for the point `P` of u-coordinate `x1`.
#[target_feature(enable = "avx2")]
fn ladder(k: &[Word; 4], x1: Fe) -> (Fe, Fe) {
    let mut x1_19 = zero();
    for (t, x) in x1_19.iter_mut().zip(x1).skip(1) {
        // 19·u in two shifts and adds (u's limbs are below 2^26).
        *t = _mm256_add_epi64(
            _mm256_add_epi64(x, _mm256_slli_epi64::<1>(x)),
            _mm256_slli_epi64::<4>(x),
        );
    }
    // Wiped when the ladder returns: the points and masks are secret.
    let mut state = Zeroizing::new(asm::State::new([one(), zero(), x1, one()], x1, x1_19));
    let mut swap = mask_none();
    for (w, word) in k.iter().enumerate().rev() {
        // Bit 255 is not part of the ladder (clamping clears it).
        let top = if w == 3 { 62 } else { 63 };
        for i in (0..=top).rev() {
            let kt = bit(*word, i);
            state.swap = mask_xor(swap, kt);
            asm::step(&mut state);
            swap = kt;
        }
    }
    let (mut x2, mut z2, mut x3, mut z3) = (state.x2, state.z2, state.x3, state.z3);
    cswap(swap, &mut x2, &mut x3);
    cswap(swap, &mut z2, &mut z3);
    x3.zeroize();
    z3.zeroize();
    (x2, z2)
}

inversion!(#[target_feature(enable = "avx2")]);

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
