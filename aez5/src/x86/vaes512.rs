//! AEZ-core's two passes on 512-bit VAES (`vaesenc` on four blocks per
//! instruction, AVX-512), everything else shared with the AES-NI path.
//! The same layout as `vaes`, four pairs per register: the first pass
//! regroups `M_a M_a′ M_b M_b′ | M_c M_c′ M_d M_d′` into `M_a M_b M_c M_d`
//! and `M_a′ M_b′ M_c′ M_d′`, stores `W_a…W_d` and `X_a…X_d` in their
//! place, and the second pass puts its outputs back into pair order.

#![deny(unsafe_code)] // Only `super` (loads, stores, CPUID, dispatch) has any.

use core::arch::x86_64::{
    __m128i, __m512i, _mm_setzero_si128, _mm_xor_si128, _mm512_aesenc_epi128,
    _mm512_broadcast_i32x4, _mm512_castsi512_si128, _mm512_extracti32x4_epi32,
    _mm512_permutex2var_epi64, _mm512_set_epi64, _mm512_setzero_si512, _mm512_shuffle_i64x2,
    _mm512_xor_si512,
};

use super::aesni::{self, Rk};
use super::{Wiped, load, load4, store4};
use crate::block::{Blk, Parts};
use crate::keys::Keys;
use crate::{Dir, Tweak};

/// Registers per step; each holds four pairs, so a step is the eight
/// pairs that share one `2^⌈i/8⌉·I` (two groups per step measured no
/// faster).
const Z: usize = 2;

/// Four consecutive pairs, `[M_a, M_a′, M_b, M_b′]` and `[M_c, …, M_d′]`.
type Four = [[Blk; 4]; 2];

/// One step's pairs.
pub(super) type Step = [Four; Z];

/// The subkeys, each in all four lanes of a register.
#[derive(Clone, Copy)]
struct Rk4 {
    i: __m512i,
    j: __m512i,
    l: __m512i,
}

/// `a ⊕ b`.
#[target_feature(enable = "avx512f")]
#[inline]
fn xor(a: __m512i, b: __m512i) -> __m512i {
    _mm512_xor_si512(a, b)
}

/// A block in all four lanes.
#[target_feature(enable = "avx512f")]
#[inline]
fn all4(b: __m128i) -> __m512i {
    _mm512_broadcast_i32x4(b)
}

/// `AES4(x_q) ⊕ last_q` on `Z` registers, round by round.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn aes4(rk: &Rk4, x: &mut [__m512i; Z], last: &[__m512i; Z]) {
    for key in [rk.j, rk.i, rk.l] {
        for v in x.iter_mut() {
            *v = _mm512_aesenc_epi128(*v, key);
        }
    }
    for (v, k) in x.iter_mut().zip(last) {
        *v = _mm512_aesenc_epi128(*v, *k);
    }
}

/// First pass over one step (see `aesni::pass1`); stores `W_a…W_d` and
/// `X_a…X_d` in place of each four pairs.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn pass1(rk: &Rk4, off: &[__m512i; Z], st: &mut Step, acc: &mut [__m512i; Z]) {
    let z = _mm512_setzero_si512();
    let (mut m, mut mp, mut t) = ([z; Z], [z; Z], [z; Z]);
    for ((([a, b], m), mp), (t, o)) in st
        .iter()
        .zip(&mut m)
        .zip(&mut mp)
        .zip(t.iter_mut().zip(off))
    {
        let (a, b) = (load4(a), load4(b));
        // Lanes 0 and 2 of each half are the M blocks, 1 and 3 the M′.
        *m = _mm512_shuffle_i64x2::<0x88>(a, b);
        *mp = _mm512_shuffle_i64x2::<0xdd>(a, b);
        *t = xor(*mp, *o);
    }
    aes4(rk, &mut t, &m); // W
    for ([a, _], t) in st.iter_mut().zip(&mut t) {
        store4(a, *t);
        *t = xor(*t, rk.i); // E(0,0): offset I
    }
    aes4(rk, &mut t, &mp); // X
    for (([_, b], t), acc) in st.iter_mut().zip(&t).zip(acc) {
        store4(b, *t);
        *acc = xor(*acc, *t);
    }
}

/// Second pass over one step (see `aesni::pass2`); reads `W_a…W_d`,
/// `X_a…X_d` and stores `C_a C_a′ C_b C_b′ | C_c C_c′ C_d C_d′`.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn pass2(
    rk: &Rk4,
    off1: &[__m512i; Z],
    off2: &[__m512i; Z],
    st: &mut Step,
    acc: &mut [__m512i; Z],
) {
    let z = _mm512_setzero_si512();
    let (mut y, mut zz, mut t) = ([z; Z], [z; Z], *off2);
    aes4(rk, &mut t, &[z; Z]); // S′
    for ((([a, b], y), zz), (t, acc)) in st
        .iter()
        .zip(&mut y)
        .zip(&mut zz)
        .zip(t.iter_mut().zip(acc))
    {
        *y = xor(load4(a), *t);
        *zz = xor(load4(b), *t);
        *acc = xor(*acc, *y);
        *t = xor(*zz, rk.i); // E(0,0): offset I
    }
    let mut cp = t;
    aes4(rk, &mut cp, &y); // C′
    for ((t, cp), o) in t.iter_mut().zip(&cp).zip(off1) {
        *t = xor(*cp, *o);
    }
    aes4(rk, &mut t, &zz); // C
    // Interleave C and C′ back into pairs (64-bit lane indices; C′ is
    // the second operand, lanes 8–15).
    let lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    let hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    for (([a, b], c), cp) in st.iter_mut().zip(&t).zip(&cp) {
        store4(a, _mm512_permutex2var_epi64(*c, lo, *cp));
        store4(b, _mm512_permutex2var_epi64(*c, hi, *cp));
    }
}

/// The pairs of one call as steps, with the final partial step kept,
/// zero-padded, in `tail` for both passes.
struct Steps<'a, 'b> {
    full: &'a mut [Step],
    rest: &'a mut [[Blk; 2]],
    tail: &'b mut Step,
}

impl<'a, 'b> Steps<'a, 'b> {
    fn new(pairs: &'a mut [[Blk; 2]], tail: &'b mut Step) -> Self {
        let n = pairs.len() - pairs.len() % (4 * Z);
        let (full, rest) = pairs.split_at_mut(n);
        let (full, _) = full.as_flattened_mut().as_chunks_mut::<4>();
        let (full, _) = full.as_chunks_mut::<2>();
        let (full, _) = full.as_chunks_mut::<Z>();
        let t = tail.as_flattened_mut().as_flattened_mut();
        for (t, r) in t.iter_mut().zip(rest.as_flattened()) {
            *t = *r;
        }
        Self { full, rest, tail }
    }

    /// Copy the real pairs of `tail` back once both passes are done.
    fn finish(self) {
        let t = self.tail.as_flattened().as_flattened();
        for (r, t) in self.rest.as_flattened_mut().iter_mut().zip(t) {
            *r = *t;
        }
    }
}

/// The `I`-multiple `2^⌈i/8⌉·I` of the next group of eight pairs.
struct Ipow(u128);

impl Ipow {
    /// The `E(1,i)` offsets `J ⊕ 2^⌈i/8⌉·I ⊕ (i mod 8)·L` of the next
    /// group (one step).
    #[target_feature(enable = "aes,avx2,vaes,avx512f")]
    #[inline]
    fn offsets(&mut self, j: __m128i, ll: &[__m512i; 2]) -> [__m512i; Z] {
        let b0 = all4(_mm_xor_si128(j, aesni::reg(self.0)));
        self.0 = crate::block::dbl128(self.0);
        let [l0, l1] = *ll;
        [xor(b0, l0), xor(b0, l1)]
    }
}

/// `(i mod 8)·L` for the eight pairs of a group, four per register.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn lane_l(k: &Keys) -> [__m512i; 2] {
    let (quads, _) = k.lane_l.as_chunks::<4>();
    let z = _mm512_setzero_si512();
    let mut ll = [z; 2];
    for (l, q) in ll.iter_mut().zip(quads) {
        *l = load4(q);
    }
    ll
}

/// The four blocks of a register.
#[target_feature(enable = "avx512f")]
#[inline]
fn lanes(v: __m512i) -> [__m128i; 4] {
    [
        _mm512_castsi512_si128(v),
        _mm512_extracti32x4_epi32::<1>(v),
        _mm512_extracti32x4_epi32::<2>(v),
        _mm512_extracti32x4_epi32::<3>(v),
    ]
}

/// Fold the registers' checksums (all lanes), taking only the first
/// `real` pairs of `tail`.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
#[inline]
fn fold(acc: &[__m512i; Z], tail: &[__m512i; Z], real: usize) -> __m128i {
    let mut sum = _mm512_setzero_si512();
    for a in acc {
        sum = xor(sum, *a);
    }
    let mut x = _mm_setzero_si128();
    for l in lanes(sum) {
        x = _mm_xor_si128(x, l);
    }
    for (p, l) in tail.iter().flat_map(|t| lanes(*t)).enumerate() {
        if p < real {
            x = _mm_xor_si128(x, l);
        }
    }
    x
}

/// The first pass over every pair; returns `X₁ ⊕ ⋯ ⊕ X_m`.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
fn pass1_all(rk: &Rk4, rk1: &Rk, k: &Keys, s: &mut Steps<'_, '_>) -> __m128i {
    let ll = lane_l(k);
    let mut ip = Ipow(u128::from_be_bytes(k.i2));
    let z = _mm512_setzero_si512();
    let (mut acc, mut tacc) = ([z; Z], [z; Z]);
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
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
fn pass2_all(rk: &Rk4, rk1: &Rk, k: &Keys, s: &mut Steps<'_, '_>, sv: __m128i) -> __m128i {
    let ll = lane_l(k);
    let mut ip = Ipow(u128::from_be_bytes(k.i2));
    let z = _mm512_setzero_si512();
    let (mut acc, mut tacc) = ([z; Z], [z; Z]);
    // E(2,i)'s offset is E(1,i)'s with 2·J for J; S is added in too.
    let d2 = all4(_mm_xor_si128(sv, _mm_xor_si128(rk1.j, load(&k.j2))));
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

/// AEZ-core on 512-bit VAES: encipher or decipher `buf` (at least 32
/// bytes) in place under the tweak's `Δ`.
#[target_feature(enable = "aes,avx2,vaes,avx512f")]
pub(super) fn crypt(k: &Keys, tweak: Tweak<'_>, buf: &mut [u8], dir: Dir) {
    let Some(Parts { pairs, mut ends }) = Parts::split(buf) else {
        return;
    };
    let rk1 = Rk::new(k);
    let rk = Rk4 {
        i: all4(rk1.i),
        j: all4(rk1.j),
        l: all4(rk1.l),
    };
    let delta = aesni::delta(&rk1, k, tweak);
    let mut tail = Wiped([[[[0u8; 16]; 4]; 2]; Z]);
    let mut steps = Steps::new(pairs, &mut tail.0);
    let x = pass1_all(&rk, &rk1, k, &mut steps);
    let mid = aesni::before(&rk1, k, delta, &ends, x, dir);
    let y = pass2_all(&rk, &rk1, k, &mut steps, mid.s);
    steps.finish();
    aesni::after(&rk1, k, delta, &mut ends, &mid, y, dir);
}
