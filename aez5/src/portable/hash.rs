//! AEZ-hash (paper, Fig. 4, lines 300–306) and AEZ-prf (lines 310–312).

use zeroize::Zeroizing;

use super::tbc::{Bcast, Lanes};
use crate::block::{Blk, ZERO, dbl, mul, pad10, xor, xor_in};
use crate::keys::Keys;

impl Keys {
    /// `Δ = AEZ-hash(K, T)` for `T = ([τ]₁₂₈, nonce, ad[0], ad[1], …)`, with τ
    /// in bits. Component `t` (1-based) of the tweak vector is hashed under
    /// `j = t + 2`: τ under 3, the nonce under 4, `ad[k]` under `5 + k`.
    pub(crate) fn hash_bits(&self, tau_bits: u128, nonce: &[u8], ad: &[&[u8]]) -> Blk {
        let mut delta = self.hash_component(3, &tau_bits.to_be_bytes());
        xor_in(&mut delta, &self.hash_component(4, nonce));
        for (k, a) in ad.iter().enumerate() {
            xor_in(&mut delta, &self.hash_component(k.saturating_add(5), a));
        }
        delta
    }

    /// `Δ_t` for one tweak component `Z₁ ⋯ Z_ℓ` hashed under `j`:
    /// `E(j,1)(Z₁) ⊕ ⋯ ⊕ E(j,ℓ)(Z_ℓ)` when the last block is full, otherwise
    /// the last (partial, possibly empty) block is replaced by
    /// `E(j,0)(Z_ℓ10*)`. An empty component therefore hashes to `E(j,0)(10*)`.
    pub(crate) fn hash_component(&self, j: usize, data: &[u8]) -> Blk {
        let jj = mul(j, &self.j);
        let (blocks, rem) = data.as_chunks::<16>();
        let mut acc = ZERO;
        // Only materialised (and later wiped) when a component has two or
        // more full blocks; the common 16-byte nonce takes the single path.
        let mut par: Option<Zeroizing<(Bcast, Lanes)>> = None;
        let [ll1, ..] = &self.lane_l;
        // 2^⌈i/8⌉·I for the current group of eight indices i = 8g+1 … 8g+8.
        let mut ipow = self.i2;
        for batch in blocks.chunks(8) {
            let base = xor(&jj, &ipow);
            if let [z] = batch {
                // E(j,i)(Z_i) for a lone block (i = 8g + 1, so i mod 8 = 1).
                xor_in(&mut acc, &self.e4(&xor(&base, ll1), z));
            } else {
                // E(j,i)(Z_i) for up to eight consecutive i at once.
                let (rk, lanes) = &mut **par
                    .get_or_insert_with(|| Zeroizing::new((Bcast::new(self), Lanes::default())));
                for ((lane, z), ll) in lanes.0.iter_mut().zip(batch).zip(&self.lane_l) {
                    lane.0 = xor(z, &xor(&base, ll));
                }
                rk.aes4_par(&mut lanes.0);
                for lane in lanes.0.iter().take(batch.len()) {
                    xor_in(&mut acc, &lane.0);
                }
            }
            ipow = dbl(&ipow);
        }
        if !rem.is_empty() || data.is_empty() {
            // E(j,0)(Z_ℓ10*): offset j·J ⊕ I.
            xor_in(&mut acc, &self.e4(&xor(&jj, &self.i), &pad10(rem)));
        }
        acc
    }

    /// AEZ-prf, XORed into `out`:
    /// `out ← out ⊕ (E(-1,3)(Δ) ‖ E(-1,3)(Δ ⊕ [1]₁₂₈) ‖ ⋯)[..out.len()]`,
    /// eight counter blocks per parallel AES10.
    #[cfg(feature = "full")]
    pub(crate) fn prf_xor(&self, delta: &Blk, out: &mut [u8]) {
        let base = xor(delta, &self.kl(3));
        let mut ctr: u128 = 0;
        let mut par = Zeroizing::new((Bcast::new(self), Lanes::default()));
        let (rk, lanes) = &mut *par;
        for chunk in out.chunks_mut(128) {
            for lane in lanes.0.iter_mut() {
                lane.0 = xor(&base, &ctr.to_be_bytes());
                ctr = ctr.wrapping_add(1);
            }
            rk.aes10_par(&mut lanes.0);
            for (o, lane) in chunk.chunks_mut(16).zip(lanes.0.iter()) {
                for (b, k) in o.iter_mut().zip(lane.0.iter()) {
                    *b ^= *k;
                }
            }
        }
    }
}
