//! The extracted key `I ‖ J ‖ L` and the few offsets derived from it once
//! per key instead of once per call (paper, Fig. 4, lines 400–405).

use zeroize::Zeroize;

use crate::block::{Blk, ZERO, dbl128, wipe, xor};

/// AEZ key material. Every field is secret; the owner ([`crate::Aez`])
/// wipes it on drop. Kept small: a mix node sets up a key per packet.
pub(crate) struct Keys {
    /// The three 128-bit subkeys.
    pub(crate) i: Blk,
    pub(crate) j: Blk,
    pub(crate) l: Blk,
    /// `2·I`: the `I`-multiple of the first group of eight block indices.
    pub(crate) i2: Blk,
    /// `2·J`: the `j = 2` part of the `E(2,i)` offsets.
    pub(crate) j2: Blk,
    /// `((p + 1) mod 8)·L` for lane `p` = `1·L, 2·L, …, 7·L, 0`: with groups
    /// of eight block indices starting at `i = 8g + 1`, lane `p` always has
    /// `i mod 8 = (p + 1) mod 8`. Also every `k·L` (see [`Keys::kl`]).
    pub(crate) lane_l: [Blk; 8],
    /// `4·J ⊕ 2·I ⊕ L`, the offset of `E(4,1)`: AEZ-hash of a 16-byte nonce.
    pub(crate) nonce_off: Blk,
    /// `3·J ⊕ 2·I ⊕ L`, the offset of `E(3,1)`: AEZ-hash of `[τ]₁₂₈`.
    pub(crate) tau_off: Blk,
}

impl Keys {
    /// Expand `I ‖ J ‖ L`.
    pub(crate) fn new(key: &[u8; 48]) -> Self {
        let mut k = Self {
            i: ZERO,
            j: ZERO,
            l: ZERO,
            i2: ZERO,
            j2: ZERO,
            lane_l: [ZERO; 8],
            nonce_off: ZERO,
            tau_off: ZERO,
        };
        let (subkeys, _) = key.as_chunks::<16>();
        for (d, s) in [&mut k.i, &mut k.j, &mut k.l].into_iter().zip(subkeys) {
            *d = *s;
        }
        let (i, j, l) = (be(&k.i), be(&k.j), be(&k.l));
        let (i2, j2) = (dbl128(i), dbl128(j));
        // n·L from the paper's recursion: 2n·L = 2·(n·L), (2n+1)·L = 2n·L ⊕ L.
        let (l2, l4) = (dbl128(l), dbl128(dbl128(l)));
        let l6 = dbl128(l2 ^ l);
        let kl = [l, l2, l2 ^ l, l4, l4 ^ l, l6, l6 ^ l, 0];
        for (d, s) in k.lane_l.iter_mut().zip(kl) {
            *d = s.to_be_bytes();
        }
        k.i2 = i2.to_be_bytes();
        k.j2 = j2.to_be_bytes();
        k.nonce_off = (dbl128(j2) ^ i2 ^ l).to_be_bytes();
        k.tau_off = (j2 ^ j ^ i2 ^ l).to_be_bytes();
        k
    }

    /// `k·L` for `0 ≤ k ≤ 7`: the offset of `E(-1,k)`.
    #[inline]
    pub(crate) fn kl(&self, k: usize) -> Blk {
        k.checked_sub(1)
            .and_then(|p| self.lane_l.get(p))
            .copied()
            .unwrap_or(ZERO)
    }

    /// The offset of `E(0,k)` for `0 ≤ k ≤ 7`: `I` for `k = 0`, else
    /// `2·I ⊕ k·L`.
    #[inline]
    pub(crate) fn e0(&self, k: usize) -> Blk {
        if k == 0 {
            self.i
        } else {
            xor(&self.i2, &self.kl(k))
        }
    }
}

/// A block as a big-endian number.
fn be(b: &Blk) -> u128 {
    u128::from_be_bytes(*b)
}

impl Zeroize for Keys {
    fn zeroize(&mut self) {
        for b in [
            &mut self.i,
            &mut self.j,
            &mut self.l,
            &mut self.i2,
            &mut self.j2,
            &mut self.nonce_off,
            &mut self.tau_off,
        ] {
            wipe(::core::slice::from_mut(b));
        }
        wipe(&mut self.lane_l);
    }
}
