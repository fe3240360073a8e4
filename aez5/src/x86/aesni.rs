//! AEZ-core on AES-NI (paper, Fig. 3, lines 220–233 and 620–633), with the
//! round keys `I`, `J`, `L` and eight pairs' blocks in registers: each
//! AES4 is four `aesenc` in a row, eight independent ones interleaved.
//!
//! Also the pieces the VAES paths share: the nonce hash, and the AES4 and
//! AES10 calls on the xy- and uv-blocks between and after the two passes.
//!
//! `aesenc` ends with the XOR of its round key, and AES4's last round key
//! is zero, so `AES4(x) ⊕ v` is AES4 with `v` as its last round key: every
//! `W_i ← M_i ⊕ E(…)`-style step costs no separate XOR.

#![deny(unsafe_code)] // Only `super` (loads, stores, CPUID, dispatch) has any.

use core::arch::x86_64::{
    __m128i, _mm_aesenc_si128, _mm_set_epi64x, _mm_setzero_si128, _mm_xor_si128,
};

use super::{Wiped, load, store};
use crate::block::{Blk, Ends, Parts, ZERO};
use crate::keys::Keys;
use crate::{Dir, Tweak};

/// Pairs per group: one lane each, and one `2^⌈i/8⌉·I` per group.
const LANES: usize = 8;

/// Eight consecutive pairs `[M_i, M_i′]`.
type Group = [[Blk; 2]; LANES];

/// The subkeys in registers.
#[derive(Clone, Copy)]
pub(super) struct Rk {
    pub(super) i: __m128i,
    pub(super) j: __m128i,
    pub(super) l: __m128i,
}

impl Rk {
    #[inline(always)]
    pub(super) fn new(k: &Keys) -> Self {
        Self {
            i: load(&k.i),
            j: load(&k.j),
            l: load(&k.l),
        }
    }
}

/// `a ⊕ b`.
#[target_feature(enable = "sse2")]
#[inline]
fn xor(a: __m128i, b: __m128i) -> __m128i {
    _mm_xor_si128(a, b)
}

/// A big-endian `u128` block value in a register (see [`load`]).
#[target_feature(enable = "sse2")]
#[inline]
#[allow(clippy::cast_possible_truncation)] // splitting into the two halves
pub(super) fn reg(v: u128) -> __m128i {
    let (hi, lo) = ((v >> 64) as u64, v as u64);
    _mm_set_epi64x(lo.swap_bytes() as i64, hi.swap_bytes() as i64)
}

/// The first three rounds of AES4 (round keys `J`, `I`, `L`) on `N` lanes,
/// round by round.
#[target_feature(enable = "aes")]
#[inline]
fn rounds3<const N: usize>(rk: &Rk, x: &mut [__m128i; N]) {
    for key in [rk.j, rk.i, rk.l] {
        for v in x.iter_mut() {
            *v = _mm_aesenc_si128(*v, key);
        }
    }
}

/// `AES4(x_n) ⊕ last_n` on `N` lanes.
#[target_feature(enable = "aes")]
#[inline]
fn aes4<const N: usize>(rk: &Rk, x: &mut [__m128i; N], last: &[__m128i; N]) {
    rounds3(rk, x);
    for (v, k) in x.iter_mut().zip(last) {
        *v = _mm_aesenc_si128(*v, *k);
    }
}

/// AES10 (round keys `I, J, L, I, J, L, I, J, L, I`) on `N` lanes.
#[target_feature(enable = "aes")]
#[inline]
fn aes10<const N: usize>(rk: &Rk, x: &mut [__m128i; N]) {
    for key in [rk.i, rk.j, rk.l, rk.i, rk.j, rk.l, rk.i, rk.j, rk.l, rk.i] {
        for v in x.iter_mut() {
            *v = _mm_aesenc_si128(*v, key);
        }
    }
}

/// `Δ = AEZ-hash(K, T)`: for a nonce alone, `E(3,1)([0]₁₂₈) ⊕ E(4,1)(N)`
/// (two AES4 side by side).
#[target_feature(enable = "aes")]
#[inline]
pub(super) fn delta(rk: &Rk, k: &Keys, tweak: Tweak<'_>) -> __m128i {
    match tweak {
        Tweak::Nonce(n) => {
            let z = _mm_setzero_si128();
            let mut x = [xor(load(n), load(&k.nonce_off)), load(&k.tau_off)];
            aes4(rk, &mut x, &[z, z]);
            let [e4, e3] = x;
            xor(e4, e3)
        }
        Tweak::Delta(d) => load(d),
    }
}

/// `S_x`, `S_y` and `S = S_x ⊕ S_y`, which tie the two passes together.
pub(super) struct Mid {
    sx: __m128i,
    sy: __m128i,
    pub(super) s: __m128i,
}

/// The offset bases `(J ⊕ 2^⌈i/8⌉·I)` of a group, the `I`-multiple doubled
/// once per group; starts at `2·I` (`i = 1 … 8`).
struct Ipow(u128);

impl Ipow {
    fn new(k: &Keys) -> Self {
        Self(u128::from_be_bytes(k.i2))
    }

    /// `2^⌈i/8⌉·I` for the next group, in a register.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn next(&mut self) -> __m128i {
        let v = reg(self.0);
        self.0 = crate::block::dbl128(self.0);
        v
    }
}

/// First pass over one group: `W_i ← M_i ⊕ E(1,i)(M_i′)`,
/// `X_i ← M_i′ ⊕ E(0,0)(W_i)`, stored over `M_i`, `M_i′`, and `X_i` added
/// into the lane's checksum. `off[p]` is the `E(1,i)` offset of lane `p`.
#[target_feature(enable = "aes")]
#[inline]
fn pass1(rk: &Rk, off: &[__m128i; LANES], g: &mut Group, acc: &mut [__m128i; LANES]) {
    let z = _mm_setzero_si128();
    let (mut m, mut mp, mut t) = ([z; LANES], [z; LANES], [z; LANES]);
    for ((([a, b], m), mp), (t, o)) in g.iter().zip(&mut m).zip(&mut mp).zip(t.iter_mut().zip(off))
    {
        *m = load(a);
        *mp = load(b);
        *t = xor(*mp, *o);
    }
    aes4(rk, &mut t, &m); // W_i
    for ([a, _], t) in g.iter_mut().zip(&mut t) {
        store(a, *t);
        *t = xor(*t, rk.i); // E(0,0): offset I
    }
    aes4(rk, &mut t, &mp); // X_i
    for (([_, b], t), acc) in g.iter_mut().zip(&t).zip(acc) {
        store(b, *t);
        *acc = xor(*acc, *t);
    }
}

/// Second pass over one group: `S′ ← E(2,i)(S)`, `Y_i ← W_i ⊕ S′`,
/// `Z_i ← X_i ⊕ S′`, `C_i′ ← Y_i ⊕ E(0,0)(Z_i)`, `C_i ← Z_i ⊕ E(1,i)(C_i′)`,
/// stored as `C_i ‖ C_i′`, and `Y_i` added into the lane's checksum.
/// `off1[p]`, `off2[p]` are lane `p`'s `E(1,i)` and `S ⊕ E(2,i)` offsets.
#[target_feature(enable = "aes")]
#[inline]
fn pass2(
    rk: &Rk,
    off1: &[__m128i; LANES],
    off2: &[__m128i; LANES],
    g: &mut Group,
    acc: &mut [__m128i; LANES],
) {
    let z = _mm_setzero_si128();
    let (mut y, mut zz, mut t) = ([z; LANES], [z; LANES], *off2);
    aes4(rk, &mut t, &[z; LANES]); // S′
    for ((([a, b], y), zz), (t, acc)) in
        g.iter().zip(&mut y).zip(&mut zz).zip(t.iter_mut().zip(acc))
    {
        *y = xor(load(a), *t);
        *zz = xor(load(b), *t);
        *acc = xor(*acc, *y);
        *t = xor(*zz, rk.i); // E(0,0): offset I
    }
    aes4(rk, &mut t, &y); // C_i′
    for (([_, b], t), o) in g.iter_mut().zip(&mut t).zip(off1) {
        store(b, *t);
        *t = xor(*t, *o);
    }
    aes4(rk, &mut t, &zz); // C_i
    for ([a, _], t) in g.iter_mut().zip(&t) {
        store(a, *t);
    }
}

/// The pairs of one call, with a final partial group kept, zero-padded, in
/// `tail` for both passes (the padding lanes are computed and ignored).
struct Groups<'a, 'b> {
    full: &'a mut [Group],
    rest: &'a mut [[Blk; 2]],
    tail: &'b mut Group,
}

impl<'a, 'b> Groups<'a, 'b> {
    fn new(pairs: &'a mut [[Blk; 2]], tail: &'b mut Group) -> Self {
        let (full, rest) = pairs.as_chunks_mut::<LANES>();
        for (t, r) in tail.iter_mut().zip(rest.iter()) {
            *t = *r;
        }
        Self { full, rest, tail }
    }

    /// Copy the real pairs of `tail` back once both passes are done.
    fn finish(self) {
        for (r, t) in self.rest.iter_mut().zip(self.tail.iter()) {
            *r = *t;
        }
    }
}

/// Fold the lanes' checksums, taking the first `real` lanes of `tail`.
#[target_feature(enable = "sse2")]
#[inline]
fn fold(acc: &[__m128i; LANES], tail: &[__m128i; LANES], real: usize) -> __m128i {
    let mut x = _mm_setzero_si128();
    for a in acc {
        x = xor(x, *a);
    }
    for t in tail.iter().take(real) {
        x = xor(x, *t);
    }
    x
}

/// Lane `p`'s `((p+1) mod 8)·L`, in registers.
#[inline(always)]
fn lane_l(k: &Keys) -> [__m128i; LANES] {
    k.lane_l.map(|b| load(&b))
}

/// The first pass over every pair; returns `X₁ ⊕ ⋯ ⊕ X_m`.
#[target_feature(enable = "aes")]
fn pass1_all(rk: &Rk, k: &Keys, gs: &mut Groups<'_, '_>) -> __m128i {
    let ll = lane_l(k);
    let mut ip = Ipow::new(k);
    let z = _mm_setzero_si128();
    let (mut acc, mut tacc) = ([z; LANES], [z; LANES]);
    let offsets = |ip: &mut Ipow| {
        let base = xor(rk.j, ip.next());
        ll.map(|l| xor(base, l))
    };
    // Each group's offsets are computed one group ahead, off the critical
    // path.
    let mut off = offsets(&mut ip);
    for g in gs.full.iter_mut() {
        let next = offsets(&mut ip);
        pass1(rk, &off, g, &mut acc);
        off = next;
    }
    if !gs.rest.is_empty() {
        pass1(rk, &off, gs.tail, &mut tacc);
    }
    fold(&acc, &tacc, gs.rest.len())
}

/// The second pass over every pair; returns `Y₁ ⊕ ⋯ ⊕ Y_m`.
#[target_feature(enable = "aes")]
fn pass2_all(rk: &Rk, k: &Keys, gs: &mut Groups<'_, '_>, s: __m128i) -> __m128i {
    let ll = lane_l(k);
    let mut ip = Ipow::new(k);
    let z = _mm_setzero_si128();
    let (mut acc, mut tacc) = ([z; LANES], [z; LANES]);
    // E(2,i)'s offset is E(1,i)'s with 2·J for J; S is added in too.
    let d2 = xor(s, xor(rk.j, load(&k.j2)));
    let offsets = |ip: &mut Ipow| {
        let base = xor(rk.j, ip.next());
        let off1 = ll.map(|l| xor(base, l));
        (off1, off1.map(|o| xor(o, d2)))
    };
    let mut off = offsets(&mut ip);
    for g in gs.full.iter_mut() {
        let next = offsets(&mut ip);
        pass2(rk, &off.0, &off.1, g, &mut acc);
        off = next;
    }
    if !gs.rest.is_empty() {
        pass2(rk, &off.0, &off.1, gs.tail, &mut tacc);
    }
    fold(&acc, &tacc, gs.rest.len())
}

/// The xy/uv step of AEZ-core in both passes' places (lines 224–225 and
/// 229–231): one AES4 each, in parallel, on `y ⊕ E(0,1|2)`-offset, `u` (or
/// `u10*`) and `v10*`. Returns the y term and the sum of the u/v terms
/// that the paper has for this split.
#[target_feature(enable = "aes")]
#[inline]
fn uv_xy(rk: &Rk, k: &Keys, uv: &[Option<Blk>; 2], y: __m128i, off_y: &Blk) -> (__m128i, __m128i) {
    let [u, v] = uv;
    let z = _mm_setzero_si128();
    let mut x = [
        xor(y, load(off_y)),
        xor(load(u.as_ref().unwrap_or(&ZERO)), load(&k.e0(4))),
        xor(load(v.as_ref().unwrap_or(&ZERO)), load(&k.e0(5))),
    ];
    aes4(rk, &mut x, &[z; 3]);
    let [ey, eu, ev] = x;
    let mut sum = z;
    for (t, e) in uv.iter().zip([eu, ev]) {
        if t.is_some() {
            sum = xor(sum, e);
        }
    }
    (ey, sum)
}

/// Between the passes (lines 224–227): `S_x ← M_x ⊕ Δ ⊕ X ⊕ E(0,1)(M_y)`
/// (X with its u/v terms), `S_y ← M_y ⊕ E(-1,1)(S_x)`, `S ← S_x ⊕ S_y`.
/// Deciphering swaps `(0,1) ↔ (0,2)` and `(-1,1) ↔ (-1,2)`.
#[target_feature(enable = "aes")]
pub(super) fn before(rk: &Rk, k: &Keys, delta: __m128i, p: &Ends<'_>, x: __m128i, dir: Dir) -> Mid {
    let (e0a, l_a) = match dir {
        Dir::Encipher => (k.e0(1), k.kl(1)),
        Dir::Decipher => (k.e0(2), k.kl(2)),
    };
    let my = load(p.y);
    let (ey, uv) = uv_xy(rk, k, &p.uv.blocks(), my, &e0a);
    let sx = xor(xor(load(p.x), delta), xor(xor(x, uv), ey));
    let mut t = [xor(sx, load(&l_a))];
    aes10(rk, &mut t);
    let [e] = t;
    let sy = xor(my, e);
    Mid {
        sx,
        sy,
        s: xor(sx, sy),
    }
}

/// After the passes (lines 228–232): `C_u`, `C_v` from `E(-1,4)(S)`,
/// `E(-1,5)(S)`; `C_y ← S_x ⊕ E(-1,2)(S_y)`;
/// `C_x ← S_y ⊕ Δ ⊕ Y ⊕ E(0,2)(C_y)` (Y with its u/v terms).
#[target_feature(enable = "aes")]
pub(super) fn after(
    rk: &Rk,
    k: &Keys,
    delta: __m128i,
    p: &mut Ends<'_>,
    mid: &Mid,
    y: __m128i,
    dir: Dir,
) {
    let (e0b, l_b) = match dir {
        Dir::Encipher => (k.e0(2), k.kl(2)),
        Dir::Decipher => (k.e0(1), k.kl(1)),
    };
    let mut t = [
        xor(mid.s, load(&k.kl(4))),
        xor(mid.s, load(&k.kl(5))),
        xor(mid.sy, load(&l_b)),
    ];
    aes10(rk, &mut t);
    let [eu, ev, ey] = t;
    let mut masks = Wiped([ZERO; 2]);
    let [mu, mv] = &mut masks.0;
    store(mu, eu);
    store(mv, ev);
    p.uv.mask(mu, mv);
    let cy = xor(mid.sx, ey);
    store(p.y, cy);
    let (ey, uv) = uv_xy(rk, k, &p.uv.blocks(), cy, &e0b);
    store(p.x, xor(xor(mid.sy, delta), xor(xor(y, uv), ey)));
}

/// AEZ-core on AES-NI: encipher or decipher an input of 32 bytes or more
/// in place under the tweak's `Δ`.
#[target_feature(enable = "aes")]
pub(super) fn crypt(k: &Keys, tweak: Tweak<'_>, parts: Parts<'_>, dir: Dir) {
    let Parts { pairs, mut ends } = parts;
    let rk = Rk::new(k);
    let delta = delta(&rk, k, tweak);
    let mut tail = Wiped([[ZERO; 2]; LANES]);
    let mut gs = Groups::new(pairs, &mut tail.0);
    let x = pass1_all(&rk, k, &mut gs);
    let mid = before(&rk, k, delta, &ends, x, dir);
    let y = pass2_all(&rk, k, &mut gs, mid.s);
    gs.finish();
    after(&rk, k, delta, &mut ends, &mid, y, dir);
}
