//! The scaled-down tweakable blockcipher `E(j,i)` of AEZ v5 (paper, Fig. 4,
//! lines 400–405), built from single AES rounds.
//!
//! * `j = -1`: `E(-1,i)(X) = AES10(X ⊕ i·L)` with round keys
//!   `(0, I, J, L, I, J, L, I, J, L, I)`.
//! * `j ≥ 0`: `E(j,i)(X) = AES4(X ⊕ j·J ⊕ 2^⌈i/8⌉·I ⊕ (i mod 8)·L)` with round
//!   keys `(0, J, I, L, 0)`.
//!
//! Both use full rounds (MixColumns included in the last round), which is
//! exactly `aesenc`, i.e. `aes::hazmat::cipher_round`. The leading whitening
//! key is all-zero, so the initial XOR is a no-op and the offset XOR done by
//! the callers is the only pre-whitening.

use aes::Block;
use aes::cipher::array::Array;
use aes::hazmat::{Block8, cipher_round, cipher_round_par};

use super::Aez;
use super::block::{Blk, ZERO, xor};

/// Eight all-zero round keys (the final AES4 round key).
pub(super) const ZERO8: Block8 = Array([Array(ZERO); 8]);

impl Aez {
    /// AES4 on one block (no offset applied).
    #[inline]
    pub(super) fn aes4(&self, x: &mut Blk) {
        let b: &mut Block = x.into();
        cipher_round(b, (&self.j).into());
        cipher_round(b, (&self.i).into());
        cipher_round(b, (&self.l).into());
        cipher_round(b, (&ZERO).into());
    }

    /// AES10 on one block (no offset applied).
    #[inline]
    pub(super) fn aes10(&self, x: &mut Blk) {
        let b: &mut Block = x.into();
        let (i, j, l): (&Block, &Block, &Block) =
            ((&self.i).into(), (&self.j).into(), (&self.l).into());
        for _ in 0..3 {
            cipher_round(b, i);
            cipher_round(b, j);
            cipher_round(b, l);
        }
        cipher_round(b, i);
    }

    /// AES4 on eight independent blocks at once (the round keys are the same
    /// for every lane; the per-lane tweak lives in the offsets the caller
    /// XORed in beforehand).
    #[inline]
    pub(super) fn aes4_par(&self, x: &mut Block8) {
        cipher_round_par(x, &self.j8.0);
        cipher_round_par(x, &self.i8.0);
        cipher_round_par(x, &self.l8.0);
        cipher_round_par(x, &ZERO8);
    }

    /// AES10 on eight independent blocks at once.
    #[inline]
    pub(super) fn aes10_par(&self, x: &mut Block8) {
        for _ in 0..3 {
            cipher_round_par(x, &self.i8.0);
            cipher_round_par(x, &self.j8.0);
            cipher_round_par(x, &self.l8.0);
        }
        cipher_round_par(x, &self.i8.0);
    }

    /// `AES4(x ⊕ off)`: one `E(j,i)` call with `j ≥ 0`, the offset for `(j,i)`
    /// supplied by the caller.
    #[inline]
    pub(super) fn e4(&self, off: &Blk, x: &Blk) -> Blk {
        let mut b = xor(x, off);
        self.aes4(&mut b);
        b
    }

    /// `AES10(x ⊕ off)`: one `E(-1,i)` call, `off = i·L`.
    #[inline]
    pub(super) fn e10(&self, off: &Blk, x: &Blk) -> Blk {
        let mut b = xor(x, off);
        self.aes10(&mut b);
        b
    }
}
