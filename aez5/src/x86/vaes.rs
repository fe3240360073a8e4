//! AEZ-core's two passes on VAES (256-bit `vaesenc`: two blocks per
//! instruction), everything else shared with the AES-NI path.
//!
//! A register holds the same block of two consecutive pairs `a`, `b`. The
//! first pass loads `M_a M_a′ | M_b M_b′` as two registers, regroups them
//! into `M_a M_b` and `M_a′ M_b′`, and stores its results as `W_a W_b` and
//! `X_a X_b`, so the second pass loads them without regrouping; only its
//! outputs are put back into pair order, `C_a C_a′ | C_b C_b′`.

#![deny(unsafe_code)] // Only `super` (loads, stores, CPUID, dispatch) has any.

use core::arch::x86_64::{
    __m128i, __m256i, _mm_setzero_si128, _mm_xor_si128, _mm256_aesenc_epi128,
    _mm256_broadcastsi128_si256, _mm256_castsi256_si128, _mm256_extracti128_si256,
    _mm256_permute2x128_si256, _mm256_setzero_si256, _mm256_xor_si256,
};

use super::aesni::{self, Rk};
use super::{Wiped, load, load2, store, store2};
use crate::block::{Blk, Parts};
use crate::keys::Keys;
use crate::{Dir, Tweak};

/// Registers per step; each holds two pairs, so a step is the eight
/// pairs that share one `2^⌈i/8⌉·I`.
const Q: usize = 4;

/// Two consecutive pairs, `[M_a, M_a′]` and `[M_b, M_b′]`.
type Two = [[Blk; 2]; 2];

/// One step's pairs.
type Step = [Two; Q];

/// The subkeys, each in both halves of a register.
#[derive(Clone, Copy)]
struct Rk2 {
    i: __m256i,
    j: __m256i,
    l: __m256i,
}

/// `a ⊕ b`.
#[target_feature(enable = "avx2")]
#[inline]
fn xor(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}

/// A block in both halves.
#[target_feature(enable = "avx2")]
#[inline]
fn both(b: __m128i) -> __m256i {
    _mm256_broadcastsi128_si256(b)
}

/// `AES4(x_q) ⊕ last_q` on `Q` registers, round by round.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn aes4(rk: &Rk2, x: &mut [__m256i; Q], last: &[__m256i; Q]) {
    for key in [rk.j, rk.i, rk.l] {
        for v in x.iter_mut() {
            *v = _mm256_aesenc_epi128(*v, key);
        }
    }
    for (v, k) in x.iter_mut().zip(last) {
        *v = _mm256_aesenc_epi128(*v, *k);
    }
}

/// Load a step for the first pass: `M_a M_b`, `M_a′ M_b′` per register.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn load1(st: &Step) -> ([__m256i; Q], [__m256i; Q]) {
    let z = _mm256_setzero_si256();
    let (mut m, mut mp) = ([z; Q], [z; Q]);
    for (([a, b], m), mp) in st.iter().zip(&mut m).zip(&mut mp) {
        let (a, b) = (load2(a), load2(b));
        *m = _mm256_permute2x128_si256::<0x20>(a, b);
        *mp = _mm256_permute2x128_si256::<0x31>(a, b);
    }
    (m, mp)
}

/// Second pass over one step (see `aesni::pass2`); reads `W_a W_b`,
/// `X_a X_b` and stores `C_a C_a′ | C_b C_b′`.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn pass2(
    rk: &Rk2,
    off1: &[__m256i; Q],
    off2: &[__m256i; Q],
    st: &mut Step,
    acc: &mut [__m256i; Q],
) {
    let z = _mm256_setzero_si256();
    let (mut y, mut zz, mut t) = ([z; Q], [z; Q], *off2);
    aes4(rk, &mut t, &[z; Q]); // S′
    for ((([a, b], y), zz), (t, acc)) in st
        .iter()
        .zip(&mut y)
        .zip(&mut zz)
        .zip(t.iter_mut().zip(acc))
    {
        *y = xor(load2(a), *t);
        *zz = xor(load2(b), *t);
        *acc = xor(*acc, *y);
        *t = xor(*zz, rk.i); // E(0,0): offset I
    }
    let mut cp = t;
    aes4(rk, &mut cp, &y); // C′
    for ((t, cp), o) in t.iter_mut().zip(&cp).zip(off1) {
        *t = xor(*cp, *o);
    }
    aes4(rk, &mut t, &zz); // C
    for (([[ca, cpa], [cb, cpb]], c), cp) in st.iter_mut().zip(&t).zip(&cp) {
        store(ca, _mm256_castsi256_si128(*c));
        store(cpa, _mm256_castsi256_si128(*cp));
        store(cb, _mm256_extracti128_si256::<1>(*c));
        store(cpb, _mm256_extracti128_si256::<1>(*cp));
    }
}

/// The pairs of one call as steps, with the final partial step kept,
/// zero-padded, in `tail` for both passes (it holds the first pass's
/// regrouped output in between, so it cannot be copied back early).
struct Steps<'a, 'b> {
    full: &'a mut [Step],
    rest: &'a mut [[Blk; 2]],
    tail: &'b mut Step,
}

impl<'a, 'b> Steps<'a, 'b> {
    fn new(pairs: &'a mut [[Blk; 2]], tail: &'b mut Step) -> Self {
        let n = pairs.len() - pairs.len() % (2 * Q);
        let (full, rest) = pairs.split_at_mut(n);
        let (full, _) = full.as_chunks_mut::<2>();
        let (full, _) = full.as_chunks_mut::<Q>();
        for (t, r) in tail.as_flattened_mut().iter_mut().zip(rest.iter()) {
            *t = *r;
        }
        Self { full, rest, tail }
    }

    /// Copy the real pairs of `tail` back once both passes are done.
    fn finish(self) {
        for (r, t) in self.rest.iter_mut().zip(self.tail.as_flattened()) {
            *r = *t;
        }
    }
}

/// The `I`-multiple `2^⌈i/8⌉·I` of the next group of eight pairs.
struct Ipow(u128);

impl Ipow {
    /// The `E(1,i)` offsets `J ⊕ 2^⌈i/8⌉·I ⊕ (i mod 8)·L` of the next
    /// group (one step).
    #[target_feature(enable = "aes,avx2,vaes")]
    #[inline]
    fn offsets(&mut self, j: __m128i, ll: &[__m256i; Q]) -> [__m256i; Q] {
        let base = both(_mm_xor_si128(j, aesni::reg(self.0)));
        self.0 = crate::block::dbl128(self.0);
        let [l0, l1, l2, l3] = *ll;
        [xor(base, l0), xor(base, l1), xor(base, l2), xor(base, l3)]
    }
}

/// `(i mod 8)·L` for the eight pairs of a group, two per register.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn lane_l(k: &Keys) -> [__m256i; Q] {
    let (pairs, _) = k.lane_l.as_chunks::<2>();
    let z = _mm256_setzero_si256();
    let mut ll = [z; 4];
    for (l, p) in ll.iter_mut().zip(pairs) {
        *l = load2(p);
    }
    ll
}

/// Fold the registers' checksums (both halves), taking only the first
/// `real` pairs of `tail`.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn fold(acc: &[__m256i; Q], tail: &[__m256i; Q], real: usize) -> __m128i {
    let mut x = _mm_setzero_si128();
    for a in acc {
        x = _mm_xor_si128(
            x,
            _mm_xor_si128(
                _mm256_castsi256_si128(*a),
                _mm256_extracti128_si256::<1>(*a),
            ),
        );
    }
    for (q, t) in tail.iter().enumerate() {
        if 2 * q < real {
            x = _mm_xor_si128(x, _mm256_castsi256_si128(*t));
        }
        if 2 * q + 1 < real {
            x = _mm_xor_si128(x, _mm256_extracti128_si256::<1>(*t));
        }
    }
    x
}

/// First pass over one step (see `aesni::pass1`); stores `W_a W_b` and
/// `X_a X_b` in place of the two pairs.
#[target_feature(enable = "aes,avx2,vaes")]
#[inline]
fn pass1(rk: &Rk2, off: &[__m256i; Q], st: &mut Step, acc: &mut [__m256i; Q]) {
    let (m, mp) = load1(st);
    let mut t = mp;
    for (t, o) in t.iter_mut().zip(off) {
        *t = xor(*t, *o);
    }
    aes4(rk, &mut t, &m); // W
    for ([a, _], t) in st.iter_mut().zip(&mut t) {
        store2(a, *t);
        *t = xor(*t, rk.i); // E(0,0): offset I
    }
    aes4(rk, &mut t, &mp); // X
    for (([_, b], t), acc) in st.iter_mut().zip(&t).zip(acc) {
        store2(b, *t);
        *acc = xor(*acc, *t);
    }
}

/// The first pass over every pair; returns `X₁ ⊕ ⋯ ⊕ X_m`.
#[target_feature(enable = "aes,avx2,vaes")]
fn pass1_all(rk: &Rk2, rk1: &Rk, k: &Keys, s: &mut Steps<'_, '_>) -> __m128i {
    let ll = lane_l(k);
    let mut ip = Ipow(u128::from_be_bytes(k.i2));
    let z = _mm256_setzero_si256();
    let (mut acc, mut tacc) = ([z; Q], [z; Q]);
    // Each step's offsets are computed one step ahead, off the critical path.
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
#[target_feature(enable = "aes,avx2,vaes")]
fn pass2_all(rk: &Rk2, rk1: &Rk, k: &Keys, s: &mut Steps<'_, '_>, sv: __m128i) -> __m128i {
    let ll = lane_l(k);
    let mut ip = Ipow(u128::from_be_bytes(k.i2));
    let z = _mm256_setzero_si256();
    let (mut acc, mut tacc) = ([z; Q], [z; Q]);
    // E(2,i)'s offset is E(1,i)'s with 2·J for J; S is added in too.
    let d2 = both(_mm_xor_si128(sv, _mm_xor_si128(rk1.j, load(&k.j2))));
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

/// AEZ-core on VAES: encipher or decipher `buf` (at least 32 bytes) in
/// place under the tweak's `Δ`.
#[target_feature(enable = "aes,avx2,vaes")]
pub(super) fn crypt(k: &Keys, tweak: Tweak<'_>, buf: &mut [u8], dir: Dir) {
    let Some(Parts { pairs, mut ends }) = Parts::split(buf) else {
        return;
    };
    let rk1 = Rk::new(k);
    let rk = Rk2 {
        i: both(rk1.i),
        j: both(rk1.j),
        l: both(rk1.l),
    };
    let delta = aesni::delta(&rk1, k, tweak);
    let mut tail = Wiped([[[[0u8; 16]; 2]; 2]; Q]);
    let mut steps = Steps::new(pairs, &mut tail.0);
    let x = pass1_all(&rk, &rk1, k, &mut steps);
    let mid = aesni::before(&rk1, k, delta, &ends, x, dir);
    let y = pass2_all(&rk, &rk1, k, &mut steps, mid.s);
    steps.finish();
    aesni::after(&rk1, k, delta, &mut ends, &mid, y, dir);
}
