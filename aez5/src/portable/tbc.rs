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
use zeroize::Zeroize;

use crate::block::{Blk, ZERO, wipe, xor};
use crate::keys::Keys;

/// Eight all-zero round keys (the final AES4 round key).
const ZERO8: Block8 = Array([Array(ZERO); 8]);

/// Eight blocks processed together by `cipher_round_par`. They carry
/// key-dependent offsets and intermediate values, so every holder wipes
/// them: as a field of a wiped struct, or wrapped in `Zeroizing` when
/// standalone. (No `Drop` of its own, so that a containing struct's wipe
/// is not done twice.)
#[derive(Default)]
pub(crate) struct Lanes(pub(crate) Block8);

impl Lanes {
    /// Every lane set to `b` (a round key broadcast to all eight lanes).
    fn splat(b: &Blk) -> Self {
        Self(Array([Array(*b); 8]))
    }
}

impl Zeroize for Lanes {
    fn zeroize(&mut self) {
        for lane in &mut self.0 {
            wipe(::core::slice::from_mut(&mut lane.0));
        }
    }
}

/// `I`, `J`, `L` broadcast to eight lanes, as round keys for
/// `cipher_round_par`. Built per call (the fast paths have no use for it).
#[derive(Default, Zeroize)]
pub(crate) struct Bcast {
    i8: Lanes,
    j8: Lanes,
    l8: Lanes,
}

impl Bcast {
    pub(crate) fn new(k: &Keys) -> Self {
        Self {
            i8: Lanes::splat(&k.i),
            j8: Lanes::splat(&k.j),
            l8: Lanes::splat(&k.l),
        }
    }

    /// AES4 on eight independent blocks at once (the round keys are the
    /// same for every lane; the per-lane tweak lives in the offsets the
    /// caller XORed in beforehand).
    #[inline]
    pub(crate) fn aes4_par(&self, x: &mut Block8) {
        cipher_round_par(x, &self.j8.0);
        cipher_round_par(x, &self.i8.0);
        cipher_round_par(x, &self.l8.0);
        cipher_round_par(x, &ZERO8);
    }

    /// AES4 on the lanes of several groups, round by round across groups,
    /// so that independent groups keep the AES units busy.
    #[inline(always)]
    pub(crate) fn aes4_groups(&self, lanes: &mut [Lanes]) {
        for rk in [&self.j8, &self.i8, &self.l8] {
            for l in lanes.iter_mut() {
                cipher_round_par(&mut l.0, &rk.0);
            }
        }
        for l in lanes.iter_mut() {
            cipher_round_par(&mut l.0, &ZERO8);
        }
    }

    /// AES10 on eight independent blocks at once.
    #[inline]
    pub(crate) fn aes10_par(&self, x: &mut Block8) {
        for _ in 0..3 {
            cipher_round_par(x, &self.i8.0);
            cipher_round_par(x, &self.j8.0);
            cipher_round_par(x, &self.l8.0);
        }
        cipher_round_par(x, &self.i8.0);
    }
}

impl Keys {
    /// AES4 on one block (no offset applied).
    #[inline]
    pub(crate) fn aes4(&self, x: &mut Blk) {
        let b: &mut Block = x.into();
        cipher_round(b, (&self.j).into());
        cipher_round(b, (&self.i).into());
        cipher_round(b, (&self.l).into());
        cipher_round(b, (&ZERO).into());
    }

    /// AES10 on one block (no offset applied).
    #[inline]
    pub(crate) fn aes10(&self, x: &mut Blk) {
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

    /// `AES4(x ⊕ off)`: one `E(j,i)` call with `j ≥ 0`, the offset for `(j,i)`
    /// supplied by the caller.
    #[inline]
    pub(crate) fn e4(&self, off: &Blk, x: &Blk) -> Blk {
        let mut b = xor(x, off);
        self.aes4(&mut b);
        b
    }

    /// `AES10(x ⊕ off)`: one `E(-1,i)` call, `off = i·L`.
    #[inline]
    pub(crate) fn e10(&self, off: &Blk, x: &Blk) -> Blk {
        let mut b = xor(x, off);
        self.aes10(&mut b);
        b
    }
}
