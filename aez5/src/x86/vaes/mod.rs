//! AEZ-core's two passes on VAES, one driver for both register widths:
//! [`w256`] (256-bit `vaesenc`, two blocks per instruction, AVX2) and
//! [`w512`] (512-bit, four blocks per instruction, AVX-512F). Everything
//! else (the nonce hash, the AES4 and AES10 calls on the xy- and uv-blocks
//! between and after the passes) is shared with the AES-NI path.
//!
//! A register holds the same block of consecutive pairs: the first pass
//! loads a step's pairs `M_a M_a′ | M_b M_b′ | …`, regroups them into
//! `M_a M_b …` and `M_a′ M_b′ …`, and stores its results as `W_a W_b …` and
//! `X_a X_b …` in their place, so that the second pass loads them without
//! regrouping; only its outputs are put back into pair order,
//! `C_a C_a′ | C_b C_b′ | …`. A step is the eight pairs that share one
//! `2^⌈i/8⌉·I`.
//!
//! [`driver!`] writes the two passes, their loops and `crypt` once; each
//! width module gives it the few things that depend on the width:
//!
//! - `V`, the register type, and `R`, the registers per step;
//! - `Step`, the eight pairs of a step as the width groups them, and
//!   `EMPTY`, a step of zeros;
//! - `zero`, `xor`, `splat` (a block in every lane) and `aesenc`;
//! - `load_half` / `store_half`, one register's blocks;
//! - `load1` (a step regrouped for the first pass), `store_c` (the second
//!   pass's outputs put back in pair order), `as_steps`, `lane_l` (the
//!   `(i mod 8)·L` of a step) and `fold` (the checksums' lanes XORed, with
//!   only the real pairs of a partial step).

#![deny(unsafe_code)] // Only `super` (loads, stores, CPUID, dispatch) has any.

/// The width-independent half of a VAES path, written into the module that
/// invokes it, with `$features` the `target_feature`s of that width.
macro_rules! driver {
    ($features:literal) => {
        /// The subkeys, each in every lane of a register.
        #[derive(Clone, Copy)]
        struct RkV {
            i: V,
            j: V,
            l: V,
        }

        /// `AES4(x_q) ⊕ last_q` on a step's registers, round by round.
        #[target_feature(enable = $features)]
        #[inline]
        fn aes4(rk: &RkV, x: &mut [V; R], last: &[V; R]) {
            for key in [rk.j, rk.i, rk.l] {
                for v in x.iter_mut() {
                    *v = aesenc(*v, key);
                }
            }
            for (v, k) in x.iter_mut().zip(last) {
                *v = aesenc(*v, *k);
            }
        }

        /// First pass over one step (see `aesni::pass1`); stores the `W`
        /// and `X` blocks of each register's pairs in their place.
        #[target_feature(enable = $features)]
        #[inline]
        fn pass1(rk: &RkV, off: &[V; R], st: &mut Step, acc: &mut [V; R]) {
            let (m, mp) = load1(st);
            let mut t = mp;
            for (t, o) in t.iter_mut().zip(off) {
                *t = xor(*t, *o);
            }
            aes4(rk, &mut t, &m); // W
            for ([a, _], t) in st.iter_mut().zip(&mut t) {
                store_half(a, *t);
                *t = xor(*t, rk.i); // E(0,0): offset I
            }
            aes4(rk, &mut t, &mp); // X
            for (([_, b], t), acc) in st.iter_mut().zip(&t).zip(acc) {
                store_half(b, *t);
                *acc = xor(*acc, *t);
            }
        }

        /// Second pass over one step (see `aesni::pass2`); reads the `W`
        /// and `X` blocks and stores `C_a C_a′ | C_b C_b′ | …`.
        #[target_feature(enable = $features)]
        #[inline]
        fn pass2(rk: &RkV, off1: &[V; R], off2: &[V; R], st: &mut Step, acc: &mut [V; R]) {
            let z = zero();
            let (mut y, mut zz, mut t) = ([z; R], [z; R], *off2);
            aes4(rk, &mut t, &[z; R]); // S′
            for ((([a, b], y), zz), (t, acc)) in st
                .iter()
                .zip(&mut y)
                .zip(&mut zz)
                .zip(t.iter_mut().zip(acc))
            {
                *y = xor(load_half(a), *t);
                *zz = xor(load_half(b), *t);
                *acc = xor(*acc, *y);
                *t = xor(*zz, rk.i); // E(0,0): offset I
            }
            let mut cp = t;
            aes4(rk, &mut cp, &y); // C′
            for ((t, cp), o) in t.iter_mut().zip(&cp).zip(off1) {
                *t = xor(*cp, *o);
            }
            aes4(rk, &mut t, &zz); // C
            store_c(st, &t, &cp);
        }

        /// The pairs of one call as steps, with the final partial step
        /// kept, zero-padded, in `tail` for both passes (it holds the first
        /// pass's regrouped output in between, so it cannot be copied back
        /// early).
        struct Steps<'a, 'b> {
            full: &'a mut [Step],
            rest: &'a mut [[Blk; 2]],
            tail: &'b mut Step,
        }

        impl<'a, 'b> Steps<'a, 'b> {
            fn new(pairs: &'a mut [[Blk; 2]], tail: &'b mut Step) -> Self {
                let n = pairs.len() - pairs.len() % 8;
                let (full, rest) = pairs.split_at_mut(n);
                for (t, r) in tail.blocks().iter_mut().zip(rest.as_flattened()) {
                    *t = *r;
                }
                Self {
                    full: as_steps(full),
                    rest,
                    tail,
                }
            }

            /// Copy the real pairs of `tail` back once both passes are done.
            fn finish(self) {
                for (r, t) in self
                    .rest
                    .as_flattened_mut()
                    .iter_mut()
                    .zip(self.tail.blocks())
                {
                    *r = *t;
                }
            }
        }

        /// The `I`-multiple `2^⌈i/8⌉·I` of the next step.
        struct Ipow(u128);

        impl Ipow {
            /// The `E(1,i)` offsets `J ⊕ 2^⌈i/8⌉·I ⊕ (i mod 8)·L` of the
            /// next step.
            #[target_feature(enable = $features)]
            #[inline]
            fn offsets(&mut self, j: __m128i, ll: &[V; R]) -> [V; R] {
                let base = splat(_mm_xor_si128(j, aesni::reg(self.0)));
                self.0 = crate::block::dbl128(self.0);
                let mut off = *ll;
                for o in &mut off {
                    *o = xor(base, *o);
                }
                off
            }
        }

        /// The first pass over every pair; returns `X₁ ⊕ ⋯ ⊕ X_m`.
        #[target_feature(enable = $features)]
        fn pass1_all(rk: &RkV, rk1: &Rk, k: &Keys, s: &mut Steps<'_, '_>) -> __m128i {
            let ll = lane_l(k);
            let mut ip = Ipow(u128::from_be_bytes(k.i2));
            let (mut acc, mut tacc) = ([zero(); R], [zero(); R]);
            // Each step's offsets are computed one step ahead, off the
            // critical path.
            let mut off = ip.offsets(rk1.j, &ll);
            for st in s.full.iter_mut() {
                let next = ip.offsets(rk1.j, &ll);
                pass1(rk, &off, st, &mut acc);
                off = next;
            }
            if !s.rest.is_empty() {
                pass1(rk, &off, s.tail, &mut tacc);
            }
            fold(&acc, &tacc, s.rest.len())
        }

        /// The second pass over every pair; returns `Y₁ ⊕ ⋯ ⊕ Y_m`.
        #[target_feature(enable = $features)]
        fn pass2_all(rk: &RkV, rk1: &Rk, k: &Keys, s: &mut Steps<'_, '_>, sv: __m128i) -> __m128i {
            let ll = lane_l(k);
            let mut ip = Ipow(u128::from_be_bytes(k.i2));
            let (mut acc, mut tacc) = ([zero(); R], [zero(); R]);
            // E(2,i)'s offset is E(1,i)'s with 2·J for J; S is added in too.
            let d2 = splat(_mm_xor_si128(sv, _mm_xor_si128(rk1.j, load(&k.j2))));
            let mut off = ip.offsets(rk1.j, &ll);
            for st in s.full.iter_mut() {
                let next = ip.offsets(rk1.j, &ll);
                pass2(rk, &off, &off.map(|o| xor(o, d2)), st, &mut acc);
                off = next;
            }
            if !s.rest.is_empty() {
                pass2(rk, &off, &off.map(|o| xor(o, d2)), s.tail, &mut tacc);
            }
            fold(&acc, &tacc, s.rest.len())
        }

        /// AEZ-core on this width: encipher or decipher an input of 32
        /// bytes or more in place under the tweak's `Δ`.
        #[target_feature(enable = $features)]
        pub(in crate::fast) fn crypt(k: &Keys, tweak: Tweak<'_>, parts: Parts<'_>, dir: Dir) {
            let Parts { pairs, mut ends } = parts;
            let rk1 = Rk::new(k);
            let rk = RkV {
                i: splat(rk1.i),
                j: splat(rk1.j),
                l: splat(rk1.l),
            };
            let delta = aesni::delta(&rk1, k, tweak);
            let mut tail = Wiped(EMPTY);
            let mut steps = Steps::new(pairs, &mut tail.0);
            let x = pass1_all(&rk, &rk1, k, &mut steps);
            let mid = aesni::before(&rk1, k, delta, &ends, x, dir);
            let y = pass2_all(&rk, &rk1, k, &mut steps, mid.s);
            steps.finish();
            aesni::after(&rk1, k, delta, &mut ends, &mid, y, dir);
        }
    };
}

pub(super) mod w256;
pub(super) mod w512;
