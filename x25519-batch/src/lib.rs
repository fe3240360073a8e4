#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]

// The Montgomery ladder of RFC 7748 §5 and the inversion, written once as
// a macro over each backend's field arithmetic.
#[macro_use]
mod ladder;
mod field;
mod portable;

/// The vector paths (AVX2, AVX-512 IFMA): the only module with `unsafe`.
/// Built on x86-64 unless `--cfg x25519_backend="portable"` asks for the
/// portable code alone; otherwise an empty stand-in.
#[cfg(all(target_arch = "x86_64", not(x25519_backend = "portable")))]
#[allow(unsafe_code)]
#[path = "x86/mod.rs"]
mod fast;
#[cfg(not(all(target_arch = "x86_64", not(x25519_backend = "portable"))))]
#[path = "nofast.rs"]
mod fast;

use zeroize::Zeroizing;

/// The implementation that computes a batch; see [`backend`]. All of them
/// compute the same function, RFC 7748's `X25519(k, u)`, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// One point at a time, radix 2^51 with 64×64→128-bit products
    /// (every CPU; the reference the others are tested against).
    Portable,
    /// Four points at once, one per 64-bit lane of a 256-bit register,
    /// radix 2^25.5 with `vpmuludq` (x86-64 with AVX2).
    Avx2,
    /// Eight points at once, one per 64-bit lane of a 512-bit register,
    /// 51-bit limbs multiplied with `vpmadd52luq`/`vpmadd52huq` (x86-64
    /// with AVX-512F, AVX-512DQ and AVX-512 IFMA: Intel since Ice Lake,
    /// AMD Zen 4; every CPU with IFMA has DQ).
    Ifma,
}

impl Backend {
    /// Every backend, portable first: the list tests and benches walk.
    pub const ALL: [Backend; 3] = [Backend::Portable, Backend::Avx2, Backend::Ifma];

    /// Points computed per pass of the ladder: a batch is cut into groups
    /// of this many, the last one padded.
    pub const fn lanes(self) -> usize {
        match self {
            Backend::Portable => 1,
            Backend::Avx2 => 4,
            Backend::Ifma => 8,
        }
    }
}

/// The slices given to [`mul_batch`] or [`mul_each`] differ in length:
/// nothing was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LengthMismatch;

impl core::fmt::Display for LengthMismatch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("scalars, points and outputs differ in length")
    }
}

impl core::error::Error for LengthMismatch {}

/// The backend [`mul_batch`] and [`mul_each`] use on this CPU: the widest
/// one it has (IFMA, else AVX2, else portable), detected once per process.
pub fn backend() -> Backend {
    Path::detect().backend()
}

/// `out[i] = X25519(scalar, points[i])` for every `i`, as RFC 7748 §5
/// defines it: the scalar clamped, the top bit of each u-coordinate
/// ignored, non-canonical u-coordinates (`p ≤ u < 2^255`) reduced, and an
/// all-zero result for points of small order (checking for it is the
/// caller's business, in constant time).
///
/// One scalar for many points is a mix node's case (its private key, one
/// ephemeral key per packet); the points are computed in groups of
/// [`Backend::lanes`] on [`backend`].
///
/// # Errors
///
/// [`LengthMismatch`] if `points` and `out` differ in length (then `out`
/// is left as it was).
pub fn mul_batch(
    scalar: &[u8; 32],
    points: &[[u8; 32]],
    out: &mut [[u8; 32]],
) -> Result<(), LengthMismatch> {
    Path::detect().run(Scalars::One(scalar), points, out)
}

/// `out[i] = X25519(scalars[i], points[i])` for every `i`, with the same
/// semantics as [`mul_batch`]: one scalar per point, as a client building
/// several packets has (each lane of the vector paths has its own scalar,
/// so this costs what [`mul_batch`] does).
///
/// # Errors
///
/// [`LengthMismatch`] if the three slices are not all of one length (then
/// `out` is left as it was).
pub fn mul_each(
    scalars: &[[u8; 32]],
    points: &[[u8; 32]],
    out: &mut [[u8; 32]],
) -> Result<(), LengthMismatch> {
    if scalars.len() != points.len() {
        return Err(LengthMismatch);
    }
    Path::detect().run(Scalars::Each(scalars), points, out)
}

/// Like [`mul_each`], on the given backend, or `None` if this CPU or build
/// does not have it. For tests and benchmarks that compare the backends in
/// one process.
///
/// # Errors
///
/// As [`mul_each`].
#[doc(hidden)]
pub fn mul_each_on(
    backend: Backend,
    scalars: &[[u8; 32]],
    points: &[[u8; 32]],
    out: &mut [[u8; 32]],
) -> Option<Result<(), LengthMismatch>> {
    let path = Path::select(backend)?;
    if scalars.len() != points.len() {
        return Some(Err(LengthMismatch));
    }
    Some(path.run(Scalars::Each(scalars), points, out))
}

/// Like [`mul_batch`], on the given backend, or `None` if this CPU or
/// build does not have it (see [`mul_each_on`]).
///
/// # Errors
///
/// As [`mul_batch`].
#[doc(hidden)]
pub fn mul_batch_on(
    backend: Backend,
    scalar: &[u8; 32],
    points: &[[u8; 32]],
    out: &mut [[u8; 32]],
) -> Option<Result<(), LengthMismatch>> {
    Some(Path::select(backend)?.run(Scalars::One(scalar), points, out))
}

/// Which scalars a batch uses.
#[derive(Clone, Copy)]
enum Scalars<'a> {
    /// One for every point.
    One(&'a [u8; 32]),
    /// One per point (its length checked against the points').
    Each(&'a [[u8; 32]]),
}

impl<'a> Scalars<'a> {
    /// The scalar of point `i`.
    fn get(self, i: usize) -> Option<&'a [u8; 32]> {
        match self {
            Scalars::One(k) => Some(k),
            Scalars::Each(ks) => ks.get(i),
        }
    }
}

/// Which code computes a batch.
#[derive(Clone, Copy)]
enum Path {
    Portable,
    Fast(fast::Fast),
}

impl Path {
    /// The widest path this CPU and build support.
    fn detect() -> Self {
        fast::Fast::detect().map_or(Path::Portable, Path::Fast)
    }

    /// The path for `backend`, if this CPU and build support it.
    fn select(backend: Backend) -> Option<Self> {
        match backend {
            Backend::Portable => Some(Path::Portable),
            _ => fast::Fast::select(backend).map(Path::Fast),
        }
    }

    fn backend(self) -> Backend {
        match self {
            Path::Portable => Backend::Portable,
            Path::Fast(f) => f.backend(),
        }
    }

    /// Checks the lengths, then hands the batch to the path's kernel in
    /// groups of its lane count.
    fn run(
        self,
        scalars: Scalars<'_>,
        points: &[[u8; 32]],
        out: &mut [[u8; 32]],
    ) -> Result<(), LengthMismatch> {
        if points.len() != out.len() {
            return Err(LengthMismatch);
        }
        match self {
            Path::Portable => drive::<1>(scalars, points, out, portable::kernel),
            Path::Fast(f) => f.run(scalars, points, out),
        }
        Ok(())
    }
}

/// One group's clamped scalars, as four little-endian 64-bit words per
/// lane, word-major (`k[w][lane]`): what a vector register of one word
/// across the lanes is loaded from.
pub(crate) type Words<const L: usize> = [[u64; L]; 4];

/// One group's field elements in radix 2^51, limb-major (`u[i][lane]`).
pub(crate) type Limbs<const L: usize> = [[u64; L]; 5];

/// The scalar bytes a padding lane gets: lanes past the end of a batch
/// compute `X25519(0, 9)`, and the result is dropped. Public constants,
/// so padding reveals nothing but the batch's length.
const PAD_SCALAR: [u8; 32] = [0; 32];
/// The u-coordinate of a padding lane (the base point).
const PAD_POINT: [u8; 32] = {
    let mut u = [0; 32];
    u[0] = 9;
    u
};

/// Runs `kernel` over `points` in groups of `L` (the last one padded),
/// writing each lane's result to `out`. The caller has checked that the
/// lengths match. Scalar copies are wiped when each group is done.
fn drive<const L: usize>(
    scalars: Scalars<'_>,
    points: &[[u8; 32]],
    out: &mut [[u8; 32]],
    kernel: impl Fn(&Words<L>, &Limbs<L>) -> Limbs<L>,
) {
    for (g, (pts, outs)) in points.chunks(L).zip(out.chunks_mut(L)).enumerate() {
        let mut k = Zeroizing::new([[0u64; L]; 4]);
        let mut u = [[0u64; L]; 5];
        for lane in 0..L {
            let i = g * L + lane;
            let (kb, ub) = match (pts.get(lane), scalars.get(i)) {
                (Some(ub), Some(kb)) => (kb, ub),
                _ => (&PAD_SCALAR, &PAD_POINT),
            };
            let kw = field::clamp(kb);
            set_column(&mut k, lane, &kw);
            set_column(&mut u, lane, &field::from_bytes(ub));
        }
        let r = Zeroizing::new(kernel(&k, &u));
        for (lane, o) in outs.iter_mut().enumerate() {
            *o = field::to_bytes(column(&r, lane));
        }
    }
}

/// Writes `col` into column `lane` of `m` (nothing if `lane ≥ L`).
fn set_column<const L: usize, const R: usize>(m: &mut [[u64; L]; R], lane: usize, col: &[u64; R]) {
    for (row, v) in m.iter_mut().zip(col) {
        if let Some(x) = row.get_mut(lane) {
            *x = *v;
        }
    }
}

/// Column `lane` of `m` (zeros if `lane ≥ L`).
fn column<const L: usize, const R: usize>(m: &[[u64; L]; R], lane: usize) -> Zeroizing<[u64; R]> {
    let mut col = Zeroizing::new([0; R]);
    for (x, row) in col.iter_mut().zip(m) {
        *x = row.get(lane).copied().unwrap_or(0);
    }
    col
}
