//! The Montgomery ladder of RFC 7748 §5 and the inversion `z^(p−2)`,
//! written once for every backend. The macro expands inside a backend's
//! module, over what that module defines:
//!
//! - `Fe`, a field element (of one lane or of all), with `add`, `sub`,
//!   `mul`, `sqr`, `mul_a24` (× 121665), `one()` and `zero()`;
//! - `Word`, one 64-bit word of the clamped scalar (of one lane or of
//!   all), and `Mask`, all ones or all zeros (per lane), with
//!   `bit(word, b)` (bit `b` of the word as a mask), `mask_xor`,
//!   `mask_none()` and `cswap(mask, &mut f, &mut g)`.
//!
//! `ladder!` expands the ladder and then `inversion!`, which needs only
//! `Fe`, `mul`, `sqr` and a function `ladder`: the AVX2 backend invokes it
//! alone, over a ladder of its own whose steps are generated assembly.
//!
//! The arguments are attributes for every generated function (the vector
//! backends' `#[target_feature]`). The loops run the same number of steps
//! for every scalar; the scalar's bits only reach `cswap`'s masks.

/// The inversion and `x25519` over a backend's `ladder` function (which
/// the AVX2 backend writes itself, as one generated block per step).
macro_rules! inversion {
    ($(#[$attr:meta])*) => {
        /// `f` squared `n` times.
        $(#[$attr])*
        fn sqr_n(f: Fe, n: u32) -> Fe {
            let mut f = f;
            for _ in 0..n {
                f = sqr(f);
            }
            f
        }

        /// `z^(p−2) = z^(2^255 − 21)`, which is `1/z` for `z ≠ 0` and 0
        /// for `z = 0` (so a point of small order, whose ladder ends with
        /// `z_2 = 0`, gives u = 0, as RFC 7748 requires). The chain of
        /// 254 squarings and 11 multiplications from the Curve25519 paper:
        /// each `zN_0` is `z^(2^N − 1)`.
        $(#[$attr])*
        fn invert(z: Fe) -> Fe {
            let z2 = sqr(z);
            let z9 = mul(sqr_n(z2, 2), z);
            let z11 = mul(z9, z2);
            let z5_0 = mul(sqr(z11), z9);
            let z10_0 = mul(sqr_n(z5_0, 5), z5_0);
            let z20_0 = mul(sqr_n(z10_0, 10), z10_0);
            let z40_0 = mul(sqr_n(z20_0, 20), z20_0);
            let z50_0 = mul(sqr_n(z40_0, 10), z10_0);
            let z100_0 = mul(sqr_n(z50_0, 50), z50_0);
            let z200_0 = mul(sqr_n(z100_0, 100), z100_0);
            let z250_0 = mul(sqr_n(z200_0, 50), z50_0);
            // 2^255 − 32 + 11 = p − 2.
            mul(sqr_n(z250_0, 5), z11)
        }

        /// `X25519(k, u)` as a field element (not yet reduced below p):
        /// the ladder, then `x_2 · z_2^(p−2)`.
        $(#[$attr])*
        fn x25519(k: &[Word; 4], u: Fe) -> Fe {
            let (x2, z2) = ladder(k, u);
            mul(x2, invert(z2))
        }
    };
}

macro_rules! ladder {
    ($(#[$attr:meta])*) => {
        /// RFC 7748 §5's ladder over the 255 bits of the clamped scalar
        /// `k` (bit 254 first): `(x_2, z_2)`, the projective u-coordinate
        /// of `k·P` for the point `P` of u-coordinate `x1`.
        $(#[$attr])*
        fn ladder(k: &[Word; 4], x1: Fe) -> (Fe, Fe) {
            let (mut x2, mut z2, mut x3, mut z3) = (one(), zero(), x1, one());
            let mut swap = mask_none();
            for (w, word) in k.iter().enumerate().rev() {
                // Bit 255 is not part of the ladder (clamping clears it).
                let top = if w == 3 { 62 } else { 63 };
                for i in (0..=top).rev() {
                    let kt = bit(*word, i);
                    swap = mask_xor(swap, kt);
                    cswap(swap, &mut x2, &mut x3);
                    cswap(swap, &mut z2, &mut z3);
                    swap = kt;
                    let a = add(x2, z2);
                    let aa = sqr(a);
                    let b = sub(x2, z2);
                    let bb = sqr(b);
                    let e = sub(aa, bb);
                    let c = add(x3, z3);
                    let d = sub(x3, z3);
                    let da = mul(d, a);
                    let cb = mul(c, b);
                    x3 = sqr(add(da, cb));
                    z3 = mul(x1, sqr(sub(da, cb)));
                    x2 = mul(aa, bb);
                    z2 = mul(e, add(aa, mul_a24(e)));
                }
            }
            cswap(swap, &mut x2, &mut x3);
            cswap(swap, &mut z2, &mut z3);
            (x2, z2)
        }

        inversion!($(#[$attr])*);
    };
}
