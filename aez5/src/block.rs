//! 128-bit blocks: XOR, AEZ's GF(2^128) scaling, `10*` padding, and the
//! split of an AEZ-core input into its parts (paper, Fig. 3, line 223).

use zeroize::Zeroize;

/// One 128-bit block, first byte = leftmost (most significant) bits.
pub(crate) type Blk = [u8; 16];

/// The all-zero block.
pub(crate) const ZERO: Blk = [0; 16];

/// Wipe blocks. `zeroize` wipes a slice of bytes with one `memset` behind
/// an optimization barrier, but an array of arrays byte by byte with
/// volatile stores (hundreds of stores for a key schedule), so every
/// wipe in this crate goes through here.
#[inline]
pub(crate) fn wipe(b: &mut [Blk]) {
    b.as_flattened_mut().zeroize();
}

/// `a ⊕ b`. Written bytewise so that LLVM turns it into one 128-bit vector
/// XOR (a `u128` would be split over two general-purpose registers).
#[inline(always)]
pub(crate) fn xor(a: &Blk, b: &Blk) -> Blk {
    let mut out = ZERO;
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x ^ y;
    }
    out
}

/// `a ← a ⊕ b`.
#[inline(always)]
pub(crate) fn xor_in(a: &mut Blk, b: &Blk) {
    *a = xor(a, b);
}

/// `2·x` on a big-endian `u128`: shift left one bit and, if the bit shifted
/// out was set, fold it back in with the constant 135 (x^7 + x^2 + x + 1).
/// Branch-free so that the cost does not depend on key bits.
#[inline(always)]
pub(crate) fn dbl128(x: u128) -> u128 {
    (x << 1) ^ ((x >> 127).wrapping_neg() & 0x87)
}

/// `2·X` for a block, as in the paper's notation section.
#[inline(always)]
pub(crate) fn dbl(x: &Blk) -> Blk {
    dbl128(u128::from_be_bytes(*x)).to_be_bytes()
}

/// `n·X` for an integer `n`, following the paper's recursive definition
/// (`2n·X = 2·(n·X)`, `(2n+1)·X = 2n·X ⊕ X`), evaluated from the top bit of
/// `n` down. `n` is a public tweak index, so looping over its bits is fine.
pub(crate) fn mul(n: usize, x: &Blk) -> Blk {
    let xv = u128::from_be_bytes(*x);
    let mut acc = 0u128;
    let top = usize::BITS - n.leading_zeros();
    for bit in (0..top).rev() {
        acc = dbl128(acc);
        if (n >> bit) & 1 == 1 {
            acc ^= xv;
        }
    }
    acc.to_be_bytes()
}

/// `X10*` for a string of fewer than 16 bytes: append a single 1 bit, then
/// zeros up to a full block. Longer input is truncated to 15 bytes (callers
/// never pass more).
#[inline]
pub(crate) fn pad10(x: &[u8]) -> Blk {
    let mut out = ZERO;
    let n = x.len().min(15);
    for (o, i) in out.iter_mut().zip(x.iter().take(n)) {
        *o = *i;
    }
    if let Some(b) = out.get_mut(n) {
        *b = 0x80;
    }
    out
}

/// `dst ← dst ⊕ src` over the shorter of the two; used where the paper
/// truncates a block to the length of a fragment.
#[inline]
pub(crate) fn xor_trunc(dst: &mut [u8], src: &Blk) {
    for (d, s) in dst.iter_mut().zip(src.iter()) {
        *d ^= *s;
    }
}

/// An AEZ-core input of 32 bytes or more, split the way the paper splits
/// it: `M₁ M₁′ ⋯ M_m M_m′ ‖ M_uv ‖ M_x M_y`, where the i-blocks come in `m`
/// full pairs, `M_uv` is the 0–31 leftover bytes and `M_x M_y` are always
/// the last 32 bytes. Every path (portable and fast) works on this view.
pub(crate) struct Parts<'a> {
    /// The `m` full pairs `[M_i, M_i′]`.
    pub(crate) pairs: &'a mut [[Blk; 2]],
    /// Everything else.
    pub(crate) ends: Ends<'a>,
}

/// The parts of an AEZ-core input outside the pairs.
pub(crate) struct Ends<'a> {
    /// `M_uv`.
    pub(crate) uv: Uv<'a>,
    /// `M_x`.
    pub(crate) x: &'a mut Blk,
    /// `M_y`.
    pub(crate) y: &'a mut Blk,
}

/// `M_uv`, the 0–31 bytes between the pairs and the xy-blocks, split the
/// way lines 223/623 of the paper split it.
pub(crate) enum Uv<'a> {
    /// `|M_uv| = 0`: no u- or v-terms at all.
    Empty,
    /// `1 ≤ |M_uv| ≤ 15` bytes: only `M_u`, padded with `10*`.
    Short(&'a mut [u8]),
    /// `16 ≤ |M_uv| ≤ 31` bytes: a full `M_u` and `M_v` of 0–15 bytes.
    /// `M_v` may be empty (exactly 16 bytes of `M_uv`): the pseudocode then
    /// still adds `E(0,5)(10*)`, and the published vectors agree.
    Full(&'a mut Blk, &'a mut [u8]),
}

impl<'a> Parts<'a> {
    /// The parts of `body ‖ x ‖ y`, an input of 32 bytes or more whose last
    /// two blocks are already split off (the dispatcher does that, so that
    /// the length is proved by the types: no AEZ-core routine can be handed
    /// a shorter input, and none has an early return).
    pub(crate) fn new(body: &'a mut [u8], x: &'a mut Blk, y: &'a mut Blk) -> Self {
        let (blocks, frag) = body.as_chunks_mut::<16>();
        let (pairs, odd) = blocks.as_chunks_mut::<2>();
        let uv = match (odd.first_mut(), frag.is_empty()) {
            (Some(u), _) => Uv::Full(u, frag),
            (None, false) => Uv::Short(frag),
            (None, true) => Uv::Empty,
        };
        Self {
            pairs,
            ends: Ends { uv, x, y },
        }
    }
}

/// An AEZ-tiny input: 1 to 31 bytes, checked when it is made, so that
/// AEZ-tiny itself has no length to refuse.
pub(crate) struct Tiny<'a> {
    bytes: &'a mut [u8],
    /// `|M|` in bits: 8 to 248.
    bits: u32,
}

impl<'a> Tiny<'a> {
    /// `buf` as an AEZ-tiny input, or `None` if it is empty or 32 bytes or
    /// longer.
    pub(crate) fn new(buf: &'a mut [u8]) -> Option<Self> {
        match u32::try_from(buf.len()) {
            Ok(len @ 1..32) => Some(Self {
                bytes: buf,
                bits: len * 8,
            }),
            _ => None,
        }
    }

    /// `|M|` in bits, 8 to 248.
    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }

    /// The bytes.
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        self.bytes
    }
}

impl Uv<'_> {
    /// The blocks AEZ-core enciphers with `E(0,4)` and `E(0,5)` in its
    /// checksums: `M_u` (or `M_u10*` when short) and `M_v10*`, or `None`
    /// where the paper has no such term.
    pub(crate) fn blocks(&self) -> [Option<Blk>; 2] {
        match self {
            Uv::Empty => [None, None],
            Uv::Short(u) => [Some(pad10(u)), None],
            Uv::Full(u, v) => [Some(**u), Some(pad10(v))],
        }
    }

    /// `C_u ← M_u ⊕ E(-1,4)(S)`, `C_v ← M_v ⊕ E(-1,5)(S)`, each truncated to
    /// the length of its fragment.
    pub(crate) fn mask(&mut self, eu: &Blk, ev: &Blk) {
        match self {
            Uv::Empty => {}
            Uv::Short(u) => xor_trunc(u, eu),
            Uv::Full(u, v) => {
                xor_in(u, eu);
                xor_trunc(v, ev);
            }
        }
    }
}
