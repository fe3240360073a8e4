//! AEZ-core (paper, Fig. 3, lines 220–233; deciphering Fig. 10, 620–633)
//! for inputs of 32 bytes or more, in place, on the portable round function.
//!
//! Deciphering is the same algorithm with the xy-tweaks swapped:
//! `(0,1) ↔ (0,2)` and `(-1,1) ↔ (-1,2)`.
//!
//! Both passes over the pairs work on groups of eight pairs: pair index
//! `i = 8g + 1 + p` sits in lane `p`, so its offset
//! `j·J ⊕ 2^⌈i/8⌉·I ⊕ (i mod 8)·L` is a per-group `j·J ⊕ 2^(g+1)·I` (one
//! doubling per group) plus a per-lane `((p+1) mod 8)·L` fixed at key setup,
//! and the eight AES4 calls of one step are independent and run through one
//! `cipher_round_par` per round.
//!
//! Cost per pair: five AES4 (`E(1,i)`, `E(0,0)` in the first pass; `E(2,i)`,
//! `E(0,0)`, `E(1,i)` in the second), i.e. 20 AES rounds per 32 bytes, or
//! 2.5 `cipher_round_par` calls per pair. Those calls (each loading eight
//! blocks and eight round keys, and storing the blocks back) dominate the
//! running time; the fast paths in `crate::x86` keep all of it in
//! registers instead.

use zeroize::Zeroize;

use super::tbc::{Bcast, Lanes};
use crate::Dir;
use crate::block::{Blk, Ends, Parts, ZERO, dbl128, wipe, xor, xor_in};
use crate::keys::Keys;

/// Number of 8-pair groups whose AES rounds are interleaved. Each
/// `cipher_round_par` call depends on the previous round of the same group;
/// alternating between independent groups keeps the AES units busy while a
/// group's previous round is still in flight.
const GROUPS: usize = 4;

/// Eight consecutive pairs `[M_i, M_i′]`: one lane each.
type Group = [[Blk; 2]; 8];

/// Key- and data-dependent working state, wiped when the call returns.
#[derive(Default)]
struct Scratch {
    work: Work,
    /// Zero-padded copy of a final partial group of pairs.
    tail: Group,
}

/// The part of [`Scratch`] the passes operate on.
#[derive(Default)]
struct Work {
    /// `I`, `J`, `L` as eight-lane round keys.
    rk: Bcast,
    /// Eight AES lanes per group in flight.
    lanes: [Lanes; GROUPS],
    /// `2^⌈i/8⌉·I` for each group in flight.
    ipows: [Blk; GROUPS],
    /// `2^⌈i/8⌉·I` for the next group.
    ipow: Blk,
    /// `X = X₁ ⊕ ⋯ ⊕ X_m (⊕ X_u ⊕ X_v)`, the first-pass checksum.
    x: Blk,
    /// `Y = Y₁ ⊕ ⋯ ⊕ Y_m (⊕ Y_u ⊕ Y_v)`, the second-pass checksum.
    y: Blk,
    /// `S_x`, `S_y` and `S = S_x ⊕ S_y`.
    sx: Blk,
    sy: Blk,
    s: Blk,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let w = &mut self.work;
        w.rk.zeroize();
        w.lanes.zeroize();
        wipe(&mut w.ipows);
        for b in [
            &mut w.ipow,
            &mut w.x,
            &mut w.y,
            &mut w.sx,
            &mut w.sy,
            &mut w.s,
        ] {
            wipe(::core::slice::from_mut(b));
        }
        wipe(self.tail.as_flattened_mut());
    }
}

impl Work {
    /// Assign `I`-multiples to the next `n` groups (at most `GROUPS`).
    #[inline(always)]
    fn advance(&mut self, n: usize) {
        // Doubling chain kept in a register (round-tripping each step
        // through memory stalls on store forwarding).
        let mut v = u128::from_be_bytes(self.ipow);
        for ip in self.ipows.iter_mut().take(n) {
            *ip = v.to_be_bytes();
            v = dbl128(v);
        }
        self.ipow = v.to_be_bytes();
    }
}

impl Keys {
    /// Run `pass` over all pairs, up to `GROUPS` full groups at a time. A
    /// final partial group is copied into a zero-padded full group (the
    /// padding lanes are computed and thrown away), so `pass` only ever sees
    /// whole groups; it is told how many pairs of the last group are real.
    #[inline(always)]
    fn for_groups(
        &self,
        pairs: &mut [[Blk; 2]],
        st: &mut Scratch,
        mut pass: impl FnMut(&mut [Group], usize, &mut Work),
    ) {
        st.work.ipow = self.i2;
        let (groups, rest) = pairs.as_chunks_mut::<8>();
        for run in groups.chunks_mut(GROUPS) {
            pass(run, 8, &mut st.work);
        }
        if !rest.is_empty() {
            st.tail = [[ZERO; 2]; 8];
            for (t, r) in st.tail.iter_mut().zip(rest.iter()) {
                *t = *r;
            }
            pass(
                ::core::slice::from_mut(&mut st.tail),
                rest.len(),
                &mut st.work,
            );
            for (r, t) in rest.iter_mut().zip(st.tail.iter()) {
                *r = *t;
            }
        }
    }

    /// First pass over a run of groups: `W_i ← M_i ⊕ E(1,i)(M_i′)`,
    /// `X_i ← M_i′ ⊕ E(0,0)(W_i)`, stored over `M_i`, `M_i′`; the first
    /// `real` pairs of the last group are summed into `st.x`.
    #[inline(always)]
    fn pass1(&self, run: &mut [Group], real: usize, st: &mut Work) {
        st.advance(run.len());
        let (lanes, _) = st.lanes.split_at_mut(run.len().min(GROUPS));
        // E(1,i)(M_i′): offset J ⊕ 2^⌈i/8⌉·I ⊕ (i mod 8)·L.
        for ((group, gl), ip) in run.iter().zip(lanes.iter_mut()).zip(&st.ipows) {
            let base = xor(&self.j, ip);
            for ((lane, [_, mp]), ll) in gl.0.iter_mut().zip(group).zip(&self.lane_l) {
                lane.0 = xor(mp, &xor(&base, ll));
            }
        }
        st.rk.aes4_groups(lanes);
        for (group, gl) in run.iter_mut().zip(lanes.iter_mut()) {
            for (lane, [m, _]) in gl.0.iter_mut().zip(group.iter_mut()) {
                *m = xor(m, &lane.0); // W_i
                // E(0,0)(W_i): offset 0·J ⊕ 2⁰·I ⊕ 0·L = I.
                lane.0 = xor(m, &self.i);
            }
        }
        st.rk.aes4_groups(lanes);
        let last = run.len().saturating_sub(1);
        let mut x = st.x;
        for (g, (group, gl)) in run.iter_mut().zip(lanes.iter()).enumerate() {
            let n = if g == last { real } else { 8 };
            for (k, (lane, [_, mp])) in gl.0.iter().zip(group.iter_mut()).enumerate() {
                *mp = xor(mp, &lane.0); // X_i
                if k < n {
                    xor_in(&mut x, mp);
                }
            }
        }
        st.x = x;
    }

    /// Second pass over a run of groups: `S′ ← E(2,i)(S)`, `Y_i ← W_i ⊕ S′`,
    /// `Z_i ← X_i ⊕ S′`, `C_i′ ← Y_i ⊕ E(0,0)(Z_i)`,
    /// `C_i ← Z_i ⊕ E(1,i)(C_i′)`; real `Y_i` are summed into `st.y`.
    #[inline(always)]
    fn pass2(&self, run: &mut [Group], real: usize, st: &mut Work) {
        st.advance(run.len());
        let (lanes, _) = st.lanes.split_at_mut(run.len().min(GROUPS));
        // E(2,i)(S): offset 2·J ⊕ 2^⌈i/8⌉·I ⊕ (i mod 8)·L.
        for (gl, ip) in lanes.iter_mut().zip(&st.ipows) {
            let base = xor(&st.s, &xor(&self.j2, ip));
            for (lane, ll) in gl.0.iter_mut().zip(&self.lane_l) {
                lane.0 = xor(&base, ll);
            }
        }
        st.rk.aes4_groups(lanes);
        let last = run.len().saturating_sub(1);
        let mut y = st.y;
        for (g, (group, gl)) in run.iter_mut().zip(lanes.iter_mut()).enumerate() {
            let n = if g == last { real } else { 8 };
            for (k, (lane, [w, x])) in gl.0.iter_mut().zip(group.iter_mut()).enumerate() {
                *w = xor(w, &lane.0); // Y_i
                *x = xor(x, &lane.0); // Z_i
                if k < n {
                    xor_in(&mut y, w);
                }
                lane.0 = xor(x, &self.i); // E(0,0)(Z_i)
            }
        }
        st.y = y;
        st.rk.aes4_groups(lanes);
        for ((group, gl), ip) in run.iter_mut().zip(lanes.iter_mut()).zip(&st.ipows) {
            let base = xor(&self.j, ip);
            for ((lane, [y, _]), ll) in gl.0.iter_mut().zip(group.iter_mut()).zip(&self.lane_l) {
                *y = xor(y, &lane.0); // C_i′
                lane.0 = xor(y, &xor(&base, ll)); // E(1,i)(C_i′)
            }
        }
        st.rk.aes4_groups(lanes);
        for (group, gl) in run.iter_mut().zip(lanes.iter()) {
            for (lane, [c, z]) in gl.0.iter().zip(group.iter_mut()) {
                let ci = xor(z, &lane.0); // C_i
                *z = *c;
                *c = ci;
            }
        }
    }

    /// Encipher (or decipher) an input of 32 bytes or more in place.
    pub(crate) fn core(&self, delta: &Blk, parts: Parts<'_>, dir: Dir) {
        let Parts {
            pairs,
            ends:
                Ends {
                    mut uv,
                    x: mx,
                    y: my,
                },
        } = parts;
        // The only direction-dependent tweaks: (0,1)/(0,2) and (-1,1)/(-1,2).
        let (e01, e02) = (self.e0(1), self.e0(2));
        let (l1, l2, l4, l5) = (self.kl(1), self.kl(2), self.kl(4), self.kl(5));
        let (e0a, e0b, l_a, l_b) = match dir {
            Dir::Encipher => (&e01, &e02, &l1, &l2),
            Dir::Decipher => (&e02, &e01, &l2, &l1),
        };

        let mut scratch = Scratch::default();
        scratch.work.rk = Bcast::new(self);
        self.for_groups(pairs, &mut scratch, |run, real, w| self.pass1(run, real, w));
        let st = &mut scratch.work;

        // X ← X ⊕ E(0,4)(M_u…) ⊕ E(0,5)(M_v10*);  S_x ← M_x ⊕ Δ ⊕ X ⊕ E(0,1)(M_y)
        let ey = self.uv_xy_aes4(&uv.blocks(), my, e0a, st, Sum::X);
        st.sx = xor(&xor(mx, delta), &xor(&st.x, &ey));
        // S_y ← M_y ⊕ E(-1,1)(S_x);  S ← S_x ⊕ S_y
        st.sy = xor(my, &self.e10(l_a, &st.sx));
        st.s = xor(&st.sx, &st.sy);

        self.for_groups(pairs, &mut scratch, |run, real, w| self.pass2(run, real, w));
        let st = &mut scratch.work;

        // One 8-lane AES10 for E(-1,4)(S), E(-1,5)(S), E(-1,2)(S_y).
        let [lane, ..] = &mut st.lanes;
        let [a, b, c, ..] = &mut lane.0.0;
        a.0 = xor(&st.s, &l4);
        b.0 = xor(&st.s, &l5);
        c.0 = xor(&st.sy, l_b);
        st.rk.aes10_par(&mut lane.0);
        let [a, b, c, ..] = &lane.0.0;
        // C_u ← M_u ⊕ E(-1,4)(S);  C_v ← M_v ⊕ E(-1,5)(S), truncated
        uv.mask(&a.0, &b.0);
        // C_y ← S_x ⊕ E(-1,2)(S_y)
        *my = xor(&st.sx, &c.0);

        // Y ← Y ⊕ E(0,4)(C_u…) ⊕ E(0,5)(C_v10*);  C_x ← S_y ⊕ Δ ⊕ Y ⊕ E(0,2)(C_y)
        let ey = self.uv_xy_aes4(&uv.blocks(), my, e0b, st, Sum::Y);
        *mx = xor(&xor(&st.sy, delta), &xor(&st.y, &ey));
    }

    /// One 8-lane AES4 for the three independent calls around the xy-blocks:
    /// lane 0 `E(0,1 or 2)(y)`, lane 1 `E(0,4)(u)` (`u10*` if `u` is short),
    /// lane 2 `E(0,5)(v10*)`. The u/v terms that exist are added into the
    /// checksum `sum`; the y term is returned.
    fn uv_xy_aes4(
        &self,
        uv: &[Option<Blk>; 2],
        y: &Blk,
        off_y: &Blk,
        st: &mut Work,
        sum: Sum,
    ) -> Blk {
        let (e04, e05) = (self.e0(4), self.e0(5));
        let [lane, ..] = &mut st.lanes;
        let [l0, l1, l2, ..] = &mut lane.0.0;
        l0.0 = xor(y, off_y);
        let [u, v] = uv;
        l1.0 = xor(u.as_ref().unwrap_or(&ZERO), &e04);
        l2.0 = xor(v.as_ref().unwrap_or(&ZERO), &e05);
        st.rk.aes4_par(&mut lane.0);
        let [l0, l1, l2, ..] = &lane.0.0;
        let acc = match sum {
            Sum::X => &mut st.x,
            Sum::Y => &mut st.y,
        };
        for (t, e) in uv.iter().zip([&l1.0, &l2.0]) {
            if t.is_some() {
                xor_in(acc, e);
            }
        }
        l0.0
    }
}

/// Which checksum `uv_xy_aes4` adds into.
#[derive(Clone, Copy)]
enum Sum {
    X,
    Y,
}
