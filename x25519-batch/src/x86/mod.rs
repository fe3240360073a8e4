//! The vector paths: the ladder on four points at once with AVX2
//! ([`avx2`]) or on eight with AVX-512 IFMA ([`ifma`]), chosen once per
//! process from CPUID.
//!
//! Each 64-bit lane holds one point's field elements and one scalar's
//! words; every instruction does the same to every lane, so no branch and
//! no memory address depends on a lane's data or on the scalar (the
//! scalar's bits become per-lane swap masks; see `ladder.rs`). Loads and
//! stores go through `set`/`extract` intrinsics from and to arrays, or,
//! in the AVX2 path's generated assembly ([`avx2_asm`]), through
//! pointers into arrays that the blocks stay inside.
//!
//! This module holds the crate's only `unsafe` code: the two calls into
//! `#[target_feature]` kernels in [`Fast::run`], and [`avx2_asm`]'s three
//! `asm!` blocks (each with its safety argument). A [`Fast`] value can
//! only be made by [`Fast::detect`] or [`Fast::select`], after the CPU
//! reported the features its variant needs, so those calls are sound.

mod avx2;
mod avx2_asm;
mod ifma;

use crate::{Backend, Scalars, drive};

// AVX2 with the OS saving the ymm registers (cpufeatures checks XCR0, and
// caches the answer: CPUID runs once per process).
cpufeatures::new!(cpuid_avx2, "avx2");
// AVX-512F, DQ (`vpmullq`, the reduction's ×19) and IFMA, with the OS
// saving the zmm state. Every CPU shipped with IFMA has DQ (Cannon Lake,
// Ice Lake, Tiger Lake, Rocket Lake, Sapphire Rapids and later Xeons;
// AMD Zen 4 and 5), so requiring DQ costs no real CPU the IFMA path; a
// hypervisor that hides DQ but shows IFMA gets the AVX2 path, which is
// correct, only slower.
cpufeatures::new!(cpuid_ifma, "avx512f", "avx512dq", "avx512ifma");

/// A vector path that this CPU supports (the only way to make one).
#[derive(Clone, Copy)]
pub(crate) struct Fast(Kind);

#[derive(Clone, Copy)]
enum Kind {
    Avx2,
    Ifma,
}

impl Fast {
    /// The widest vector path this CPU has: IFMA, else AVX2, else none.
    pub(crate) fn detect() -> Option<Self> {
        if cpuid_ifma::get() {
            Some(Self(Kind::Ifma))
        } else if cpuid_avx2::get() {
            Some(Self(Kind::Avx2))
        } else {
            None
        }
    }

    /// The vector path `backend`, if this CPU supports it.
    pub(crate) fn select(backend: Backend) -> Option<Self> {
        match backend {
            Backend::Avx2 if cpuid_avx2::get() => Some(Self(Kind::Avx2)),
            Backend::Ifma if cpuid_ifma::get() => Some(Self(Kind::Ifma)),
            _ => None,
        }
    }

    pub(crate) fn backend(self) -> Backend {
        match self.0 {
            Kind::Avx2 => Backend::Avx2,
            Kind::Ifma => Backend::Ifma,
        }
    }

    /// The batch on this path, in groups of its lane count.
    pub(crate) fn run(self, scalars: Scalars<'_>, points: &[[u8; 32]], out: &mut [[u8; 32]]) {
        match self.0 {
            Kind::Avx2 => drive::<4>(scalars, points, out, |k, u| {
                // SAFETY: a `Fast(Kind::Avx2)` exists only once
                // `cpuid_avx2` reported AVX2 and the OS's ymm support
                // (`detect`, `select`), which is all `avx2::kernel` needs.
                unsafe { avx2::kernel(k, u) }
            }),
            Kind::Ifma => drive::<8>(scalars, points, out, |k, u| {
                // SAFETY: a `Fast(Kind::Ifma)` exists only once
                // `cpuid_ifma` reported AVX-512F, AVX-512DQ, AVX-512 IFMA
                // and the OS's zmm support (`detect`, `select`), which is
                // all `ifma::kernel` needs (its `target_feature` set is
                // exactly those three).
                unsafe { ifma::kernel(k, u) }
            }),
        }
    }
}
