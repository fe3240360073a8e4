//! The extracted key `I ‖ J ‖ L` and every offset derived from it once per
//! key instead of once per call (paper, Fig. 4, lines 400–405).

use zeroize::Zeroize;

use crate::block::{Blk, ZERO, dbl, mul, wipe, xor};

/// AEZ key material. Every field is secret; the owner ([`crate::Aez`])
/// wipes it on drop.
pub(crate) struct Keys {
    /// The three 128-bit subkeys.
    pub(crate) i: Blk,
    pub(crate) j: Blk,
    pub(crate) l: Blk,
    /// `2·I`: the `I`-multiple of the first group of eight block indices.
    pub(crate) i2: Blk,
    /// `2·J`: the `j = 2` part of the `E(2,i)` offsets.
    pub(crate) j2: Blk,
    /// `k·L` for `k = 0..8`: the `E(-1,k)` offsets.
    pub(crate) lmul: [Blk; 8],
    /// `((p + 1) mod 8)·L` for lane `p`: with groups of eight block indices
    /// starting at `i = 8g + 1`, lane `p` always has `i mod 8 = (p + 1) mod 8`.
    pub(crate) lane_l: [Blk; 8],
    /// Offsets of `E(0,k)` for `k = 0..8`: `I` for `k = 0`, else `2·I ⊕ k·L`.
    pub(crate) e0: [Blk; 8],
    /// `E(3,1)([0]₁₂₈)`, the AEZ-hash term of `τ = 0`, which every call
    /// without expansion would otherwise recompute.
    pub(crate) tau0: Blk,
    /// `4·J ⊕ 2·I ⊕ L`, the offset of `E(4,1)`: AEZ-hash of a 16-byte nonce.
    pub(crate) nonce_off: Blk,
}

impl Keys {
    /// Expand `I ‖ J ‖ L`. Built in place so that the subkeys do not linger
    /// in stray locals.
    pub(crate) fn new(key: &[u8; 48]) -> Self {
        let mut k = Self {
            i: ZERO,
            j: ZERO,
            l: ZERO,
            i2: ZERO,
            j2: ZERO,
            lmul: [ZERO; 8],
            lane_l: [ZERO; 8],
            e0: [ZERO; 8],
            tau0: ZERO,
            nonce_off: ZERO,
        };
        let subkeys = k.i.iter_mut().chain(k.j.iter_mut()).chain(k.l.iter_mut());
        for (d, s) in subkeys.zip(key.iter()) {
            *d = *s;
        }
        k.i2 = dbl(&k.i);
        k.j2 = dbl(&k.j);
        for (n, m) in k.lmul.iter_mut().enumerate() {
            *m = mul(n, &k.l);
        }
        for (p, m) in k.lane_l.iter_mut().enumerate() {
            *m = mul((p + 1) % 8, &k.l);
        }
        // E(0,0): 0·J ⊕ 2⁰·I ⊕ 0·L = I;  E(0,k), 1 ≤ k ≤ 7: 2¹·I ⊕ k·L.
        for (n, (e, m)) in k.e0.iter_mut().zip(k.lmul.iter()).enumerate() {
            *e = if n == 0 { k.i } else { xor(&k.i2, m) };
        }
        // E(4,1): 4·J ⊕ 2¹·I ⊕ 1·L.
        k.nonce_off = xor(&xor(&mul(4, &k.j), &k.i2), &k.l);
        // E(3,1)([0]₁₂₈): τ = 0 is a single full block hashed under j = 3.
        k.tau0 = k.hash_component(3, &ZERO);
        k
    }
}

impl Zeroize for Keys {
    fn zeroize(&mut self) {
        for b in [
            &mut self.i,
            &mut self.j,
            &mut self.l,
            &mut self.i2,
            &mut self.j2,
            &mut self.tau0,
            &mut self.nonce_off,
        ] {
            wipe(::core::slice::from_mut(b));
        }
        wipe(&mut self.lmul);
        wipe(&mut self.lane_l);
        wipe(&mut self.e0);
    }
}
