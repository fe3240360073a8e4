//! AEZ-tiny (paper, Fig. 3, lines 210–216; deciphering Fig. 10, 610–616):
//! a balanced Feistel network over 1–31 byte strings.
//!
//! The string is split into bit halves `L ‖ R` of `n = 4·len` bits each
//! (for odd lengths the split falls in the middle of a byte). Each half is
//! held left-aligned in a `u128` (`n ≤ 124`), so truncation, `10*` padding
//! and concatenation are masks and shifts whose amounts depend only on the
//! public length.

use crate::Dir;
use crate::block::{Blk, Tiny, wipe};
use crate::keys::Keys;

/// The leftmost bit of a block, `10*` as a 128-bit string.
const MSB: u128 = 1 << 127;

impl Keys {
    /// `E(0,k)` on big-endian `u128` values.
    #[inline]
    fn e4u(&self, off: &Blk, x: u128) -> u128 {
        u128::from_be_bytes(self.e4(off, &x.to_be_bytes()))
    }

    /// The bit-flip that keeps short inputs from being restricted to even
    /// permutations (line 215 / 612), one `E(0,3)` call:
    /// `C ← C ⊕ (E(0,3)(Δ ⊕ (C0* ∨ 10*)) ∧ 10*)`.
    /// It only touches the first bit and reads every other bit, so it is its
    /// own inverse. `c` is the whole (< 128-bit) string, left-aligned.
    #[inline]
    fn tiny_flip(&self, delta: u128, c: u128) -> u128 {
        c ^ (self.e4u(&self.e0(3), delta ^ (c | MSB)) & MSB)
    }

    /// Encipher or decipher `buf` (1–31 bytes) in place with AEZ-tiny.
    pub(crate) fn tiny(&self, delta: &Blk, mut buf: Tiny<'_>, dir: Dir) {
        let mu = buf.bits(); // |M| in bits, 8 ≤ |M| ≤ 248
        // Half length in bits; 4 ≤ n ≤ 124, so every shift below is in range.
        let n = mu / 2;
        let mask = u128::MAX << (128 - n);
        let d = u128::from_be_bytes(*delta);

        // Round count k and the round function's tweak (lines 212–213):
        // E(0,6) for 16–31 bytes, E(0,7) (with more rounds) below that.
        let (rounds, off) = match mu {
            8 => (24u32, self.e0(7)),
            16 => (16, self.e0(7)),
            _ if mu < 128 => (10, self.e0(7)),
            _ => (8, self.e0(6)),
        };

        let mut bytes = [[0u8; 16]; 2];
        for (dst, src) in bytes.as_flattened_mut().iter_mut().zip(buf.bytes().iter()) {
            *dst = *src;
        }
        let [hi, lo] = bytes;
        let mut hi = u128::from_be_bytes(hi);
        let lo = u128::from_be_bytes(lo);

        if dir == Dir::Decipher && mu < 128 {
            hi = self.tiny_flip(d, hi);
        }

        let mut l = hi & mask;
        let mut r = ((hi << n) | (lo >> (128 - n))) & mask;
        // R10*: the padding bit sits right after the n bits of R.
        let pad = 1u128 << (127 - n);
        let mut round = |j: u32| {
            // R' ← L ⊕ E(0,6|7)(Δ ⊕ R10* ⊕ [j]₁₂₈)[1..n]; L ← R; R ← R'.
            let f = self.e4u(&off, d ^ r ^ pad ^ u128::from(j)) & mask;
            let r_new = l ^ f;
            l = r;
            r = r_new;
        };
        match dir {
            Dir::Encipher => (0..rounds).for_each(&mut round),
            Dir::Decipher => (0..rounds).rev().for_each(&mut round),
        }

        // Output R ‖ L.
        let mut out_hi = r | (l >> n);
        let out_lo = l << (128 - n);
        if dir == Dir::Encipher && mu < 128 {
            out_hi = self.tiny_flip(d, out_hi);
        }

        bytes = [out_hi.to_be_bytes(), out_lo.to_be_bytes()];
        for (dst, src) in buf.bytes().iter_mut().zip(bytes.as_flattened().iter()) {
            *dst = *src;
        }
        wipe(&mut bytes);
    }
}
