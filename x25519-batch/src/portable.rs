//! The portable backend: the ladder on one point at a time, in radix 2^51
//! ([`crate::field`]). Every CPU has it; the vector backends are tested
//! against it.

use crate::field::{self, Fe};
use crate::{Limbs, Words};

/// One word of the clamped scalar.
type Word = u64;
/// All ones (swap) or all zeros (keep).
type Mask = u64;

use field::{add, cswap, mul, mul_a24, sqr, sub};

fn one() -> Fe {
    [1, 0, 0, 0, 0]
}

fn zero() -> Fe {
    [0; 5]
}

fn mask_none() -> Mask {
    0
}

fn mask_xor(a: Mask, b: Mask) -> Mask {
    a ^ b
}

/// Bit `b` of `word` (`b` is the loop counter, never secret) as a mask.
fn bit(word: Word, b: u32) -> Mask {
    0u64.wrapping_sub((word >> b) & 1)
}

ladder!();

/// The kernel [`crate::drive`] runs for each point: one lane.
pub(crate) fn kernel(k: &Words<1>, u: &Limbs<1>) -> Limbs<1> {
    let [[k0], [k1], [k2], [k3]] = *k;
    let words = zeroize::Zeroizing::new([k0, k1, k2, k3]);
    let [[u0], [u1], [u2], [u3], [u4]] = *u;
    let [r0, r1, r2, r3, r4] = x25519(&words, [u0, u1, u2, u3, u4]);
    [[r0], [r1], [r2], [r3], [r4]]
}
