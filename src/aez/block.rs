//! 128-bit block helpers: XOR, GF(2^128) scaling as AEZ defines it, `10*`
//! padding, and a zeroizing eight-lane buffer for the parallel AES rounds.

use aes::hazmat::Block8;
use zeroize::Zeroize;

/// One 128-bit block, first byte = leftmost (most significant) bits.
pub(super) type Blk = [u8; 16];

/// The all-zero block.
pub(super) const ZERO: Blk = [0; 16];

/// `a ⊕ b`. Written bytewise so that LLVM turns it into one 128-bit vector
/// XOR (a `u128` would be split over two general-purpose registers).
#[inline(always)]
pub(super) fn xor(a: &Blk, b: &Blk) -> Blk {
    let mut out = ZERO;
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x ^ y;
    }
    out
}

/// `a ← a ⊕ b`.
#[inline(always)]
pub(super) fn xor_in(a: &mut Blk, b: &Blk) {
    *a = xor(a, b);
}

/// `2·x` on a big-endian `u128`: shift left one bit and, if the bit shifted
/// out was set, fold it back in with the constant 135 (x^7 + x^2 + x + 1).
/// Branch-free so that the cost does not depend on key bits.
#[inline(always)]
pub(super) fn dbl128(x: u128) -> u128 {
    (x << 1) ^ ((x >> 127).wrapping_neg() & 0x87)
}

/// `2·X` for a block, as in the paper's notation section.
#[inline(always)]
pub(super) fn dbl(x: &Blk) -> Blk {
    dbl128(u128::from_be_bytes(*x)).to_be_bytes()
}

/// `n·X` for an integer `n`, following the paper's recursive definition
/// (`2n·X = 2·(n·X)`, `(2n+1)·X = 2n·X ⊕ X`), evaluated from the top bit of
/// `n` down. `n` is a public tweak index, so looping over its bits is fine.
pub(super) fn mul(n: usize, x: &Blk) -> Blk {
    let xv = u128::from_be_bytes(*x);
    let mut acc = 0u128;
    let top = usize::BITS - n.leading_zeros();
    for bit in (0..top).rev() {
        acc = dbl128(acc);
        if (n >> bit) & 1 == 1 {
            acc ^= xv;
        }
    }
    acc.to_be_bytes()
}

/// `X10*` for a string of fewer than 16 bytes: append a single 1 bit, then
/// zeros up to a full block. Longer input is truncated to 15 bytes (callers
/// never pass more).
#[inline]
pub(super) fn pad10(x: &[u8]) -> Blk {
    let mut out = ZERO;
    let n = x.len().min(15);
    for (o, i) in out.iter_mut().zip(x.iter().take(n)) {
        *o = *i;
    }
    if let Some(b) = out.get_mut(n) {
        *b = 0x80;
    }
    out
}

/// `dst ← dst ⊕ src` over the shorter of the two; used where the paper
/// truncates a block to the length of a fragment.
#[inline]
pub(super) fn xor_trunc(dst: &mut [u8], src: &Blk) {
    for (d, s) in dst.iter_mut().zip(src.iter()) {
        *d ^= *s;
    }
}

/// Eight blocks processed together by `cipher_round_par`. They carry
/// key-dependent offsets and intermediate values, so every holder wipes
/// them: as a field of a `ZeroizeOnDrop` struct, or wrapped in `Zeroizing`
/// when standalone. (No `Drop` of its own, so that a containing struct's
/// wipe is not done twice.)
#[derive(Default)]
pub(super) struct Lanes(pub(super) Block8);

impl Lanes {
    /// Set every lane to `b` (a round key broadcast to all eight lanes).
    pub(super) fn fill(&mut self, b: &Blk) {
        for lane in &mut self.0 {
            lane.0 = *b;
        }
    }
}

impl Zeroize for Lanes {
    fn zeroize(&mut self) {
        for lane in &mut self.0 {
            lane.0.zeroize();
        }
    }
}
