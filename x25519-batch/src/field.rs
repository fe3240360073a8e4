//! Arithmetic modulo p = 2^255 − 19 on one element at a time, in radix
//! 2^51 (five 64-bit limbs, products in 128 bits), and the conversions
//! every backend shares: the clamped scalar, a u-coordinate read from
//! bytes and a result written as bytes.
//!
//! An element is "loose": its limbs may exceed 51 bits by the amounts each
//! function states, and its value may exceed p; only [`to_bytes`] reduces
//! fully. No branch and no memory index depends on a limb's value.

use zeroize::Zeroizing;

/// An element of GF(p) in radix 2^51: `Σ f[i]·2^(51i)`.
pub(crate) type Fe = [u64; 5];

/// The low 51 bits.
pub(crate) const MASK51: u64 = (1 << 51) - 1;

/// The scalar of RFC 7748 §5, `decodeScalar25519`: the three low bits and
/// the top bit cleared, bit 254 set; as four little-endian words.
pub(crate) fn clamp(k: &[u8; 32]) -> Zeroizing<[u64; 4]> {
    let mut w = Zeroizing::new([0u64; 4]);
    for (word, chunk) in w.iter_mut().zip(k.chunks_exact(8)) {
        let mut eight = Zeroizing::new([0u8; 8]);
        eight.copy_from_slice(chunk);
        *word = u64::from_le_bytes(*eight);
    }
    let [w0, _, _, w3] = &mut *w;
    *w0 &= !7;
    *w3 &= !(1 << 63);
    *w3 |= 1 << 62;
    w
}

/// `decodeUCoordinate` of RFC 7748 §5: the top bit masked, the remaining
/// 255 bits as they are (a value up to 2^255 − 1, possibly ≥ p: the
/// arithmetic reduces it). Limbs below 2^51.
pub(crate) fn from_bytes(u: &[u8; 32]) -> Fe {
    let mut w = [0u64; 4];
    for (word, chunk) in w.iter_mut().zip(u.chunks_exact(8)) {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(chunk);
        *word = u64::from_le_bytes(eight);
    }
    let [w0, w1, w2, w3] = w;
    [
        w0 & MASK51,
        ((w0 >> 51) | (w1 << 13)) & MASK51,
        ((w1 >> 38) | (w2 << 26)) & MASK51,
        ((w2 >> 25) | (w3 << 39)) & MASK51,
        (w3 >> 12) & MASK51,
    ]
}

/// One pass of carries from each limb into the next, the top limb's
/// carry (weight 2^255 ≡ 19) into the bottom one. Limbs below 2^63 in;
/// out, limbs 1–4 below 2^51 and limb 0 below 2^51 + 19·2^12.
fn carry(f: &mut Fe) {
    let [f0, f1, f2, f3, f4] = f;
    *f1 += *f0 >> 51;
    *f0 &= MASK51;
    *f2 += *f1 >> 51;
    *f1 &= MASK51;
    *f3 += *f2 >> 51;
    *f2 &= MASK51;
    *f4 += *f3 >> 51;
    *f3 &= MASK51;
    *f0 += 19 * (*f4 >> 51);
    *f4 &= MASK51;
}

/// `encodeUCoordinate` of RFC 7748 §5: the value reduced into [0, p) and
/// written little-endian. Limbs below 2^62 in.
pub(crate) fn to_bytes(f: Zeroizing<Fe>) -> [u8; 32] {
    let mut h = f;
    carry(&mut h);
    // Now limb 0 < 2^51 + 2^17, the rest < 2^51; a second pass leaves every
    // limb below 2^51 except limb 0, which may reach 2^51 + 18 only if
    // limb 4 carried, so the value is below 2^255 + 19 < 2p.
    carry(&mut h);
    // q = 1 exactly when h ≥ p, i.e. when h + 19 ≥ 2^255.
    let [h0, h1, h2, h3, h4] = *h;
    let mut q = (h0 + 19) >> 51;
    q = (h1 + q) >> 51;
    q = (h2 + q) >> 51;
    q = (h3 + q) >> 51;
    q = (h4 + q) >> 51;
    // h − q·p = h + 19q − q·2^255: add 19q, carry, drop bit 255.
    let [h0, h1, h2, h3, h4] = &mut *h;
    *h0 += 19 * q;
    *h1 += *h0 >> 51;
    *h0 &= MASK51;
    *h2 += *h1 >> 51;
    *h1 &= MASK51;
    *h3 += *h2 >> 51;
    *h2 &= MASK51;
    *h4 += *h3 >> 51;
    *h3 &= MASK51;
    *h4 &= MASK51;
    let [h0, h1, h2, h3, h4] = *h;
    let w = Zeroizing::new([
        h0 | (h1 << 51),
        (h1 >> 13) | (h2 << 38),
        (h2 >> 26) | (h3 << 25),
        (h3 >> 39) | (h4 << 12),
    ]);
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(8).zip(w.iter()) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// `f + g`, no carries: limbs below 2^53 if both inputs' are below 2^52.
pub(crate) fn add(f: Fe, g: Fe) -> Fe {
    let mut h = f;
    for (h, g) in h.iter_mut().zip(g) {
        *h += g;
    }
    h
}

/// 2p in radix 2^51: every limb at least 2^52 − 38, so `f + 2p − g` does
/// not wrap for any `g` with limbs up to that.
const TWO_P: Fe = [
    2 * (MASK51 - 18),
    2 * MASK51,
    2 * MASK51,
    2 * MASK51,
    2 * MASK51,
];

/// `f − g` as `f + 2p − g`, no carries. `g`'s limbs at most 2^52 − 38
/// (a product's, or a carried value's); out, limbs below `f`'s + 2^52.
pub(crate) fn sub(f: Fe, g: Fe) -> Fe {
    let mut h = f;
    for ((h, g), t) in h.iter_mut().zip(g).zip(TWO_P) {
        *h = *h + t - g;
    }
    h
}

/// Carries 128-bit column sums (below 2^116) into 51-bit limbs: the top
/// carry comes back ×19 into limb 0, which carries once more into limb 1.
/// Out, limbs below 2^51 + 2^18.
#[allow(clippy::cast_possible_truncation)] // every cast is of a value masked to 51 bits or shifted below 2^64
fn reduce_wide(r: [u128; 5]) -> Fe {
    const M: u128 = MASK51 as u128;
    let [mut r0, mut r1, mut r2, mut r3, mut r4] = r;
    r1 += r0 >> 51;
    r0 &= M;
    r2 += r1 >> 51;
    r1 &= M;
    r3 += r2 >> 51;
    r2 &= M;
    r4 += r3 >> 51;
    r3 &= M;
    r0 += 19 * (r4 >> 51);
    r4 &= M;
    r1 += r0 >> 51;
    r0 &= M;
    [r0 as u64, r1 as u64, r2 as u64, r3 as u64, r4 as u64]
}

/// `f·g`. Inputs' limbs below 2^54; out, limbs below 2^51 + 2^18.
pub(crate) fn mul(f: Fe, g: Fe) -> Fe {
    let m = |a: u64, b: u64| u128::from(a) * u128::from(b);
    let [f0, f1, f2, f3, f4] = f;
    let [g0, g1, g2, g3, g4] = g;
    // Products of weight 2^255 or more come back ×19 (2^255 ≡ 19).
    let (g1_19, g2_19, g3_19, g4_19) = (19 * g1, 19 * g2, 19 * g3, 19 * g4);
    reduce_wide([
        m(f0, g0) + m(f1, g4_19) + m(f2, g3_19) + m(f3, g2_19) + m(f4, g1_19),
        m(f0, g1) + m(f1, g0) + m(f2, g4_19) + m(f3, g3_19) + m(f4, g2_19),
        m(f0, g2) + m(f1, g1) + m(f2, g0) + m(f3, g4_19) + m(f4, g3_19),
        m(f0, g3) + m(f1, g2) + m(f2, g1) + m(f3, g0) + m(f4, g4_19),
        m(f0, g4) + m(f1, g3) + m(f2, g2) + m(f3, g1) + m(f4, g0),
    ])
}

/// `f²`: [`mul`] with each cross product computed once and doubled.
pub(crate) fn sqr(f: Fe) -> Fe {
    let m = |a: u64, b: u64| u128::from(a) * u128::from(b);
    let [f0, f1, f2, f3, f4] = f;
    let (d0, d1, d2, d3) = (2 * f0, 2 * f1, 2 * f2, 2 * f3);
    let (f3_19, f4_19) = (19 * f3, 19 * f4);
    reduce_wide([
        m(f0, f0) + m(d1, f4_19) + m(d2, f3_19),
        m(d0, f1) + m(d2, f4_19) + m(f3, f3_19),
        m(d0, f2) + m(f1, f1) + m(d3, f4_19),
        m(d0, f3) + m(d1, f2) + m(f4, f4_19),
        m(d0, f4) + m(d1, f3) + m(f2, f2),
    ])
}

/// `f·a24` with a24 = 121665 (RFC 7748 §5, `(486662 − 2) / 4`). Inputs'
/// limbs below 2^54; out as [`mul`]'s.
pub(crate) fn mul_a24(f: Fe) -> Fe {
    let m = |a: u64| u128::from(a) * 121_665;
    let [f0, f1, f2, f3, f4] = f;
    reduce_wide([m(f0), m(f1), m(f2), m(f3), m(f4)])
}

/// Swaps `f` and `g` when `mask` is all ones, leaves them when it is
/// zero, with the same instructions either way.
pub(crate) fn cswap(mask: u64, f: &mut Fe, g: &mut Fe) {
    for (a, b) in f.iter_mut().zip(g.iter_mut()) {
        let t = (*a ^ *b) & mask;
        *a ^= t;
        *b ^= t;
    }
}
