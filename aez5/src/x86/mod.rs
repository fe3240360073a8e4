//! The fast paths: AEZ-core with its whole state in registers, on AES-NI
//! ([`aesni`], eight blocks in flight), 256-bit VAES ([`vaes::w256`], two
//! blocks per instruction) or 512-bit VAES ([`vaes::w512`], four; one
//! driver, [`vaes`], for both widths), chosen once per
//! process from CPUID. AEZ-tiny, AEZ-hash of associated data and AEZ-prf
//! stay on the portable code (they are not on the hot path); the hash of a
//! 16-byte nonce and the AES4/AES10 calls around AEZ-core's two passes run
//! here, on AES-NI.
//!
//! No table lookups and no branches on data: `aesenc` is constant time, the
//! loops and the handling of a final partial group depend only on the
//! length.
//!
//! This module holds the crate's only `unsafe` code, in small blocks: the
//! 128-, 256- and 512-bit unaligned loads and stores (from and to
//! references of exactly the right size), one CPUID read, and
//! [`Fast::crypt`], the one place that calls into `#[target_feature]` code.
//! A [`Fast`] value can only be made by [`Fast::detect`] or
//! [`Fast::select`], after the CPU reported the features its variant
//! needs, so that call is sound.

mod aesni;
mod vaes;

use core::arch::x86_64::{
    __cpuid_count, __m128i, __m256i, __m512i, _mm_loadu_si128, _mm_storeu_si128,
    _mm256_loadu_si256, _mm256_storeu_si256, _mm512_loadu_si512, _mm512_storeu_si512,
};
use core::sync::atomic::{AtomicU8, Ordering};

use crate::block::{Blk, Parts, wipe};
use crate::keys::Keys;
use crate::{Backend, Dir, Tweak};

// AES-NI (SSE2 is part of the x86-64 baseline).
cpufeatures::new!(cpuid_aes, "aes");
// AVX2 with the OS saving the ymm registers. `cpufeatures` 0.3 would check
// VAES too, but only together with the AVX-512 (zmm) register state, which
// CPUs with VAES but no AVX-512 (AMD Zen 3) do not have; VAES itself is
// read from CPUID below.
cpufeatures::new!(cpuid_avx2, "avx2");
// AVX-512F and VAES, with the OS saving the zmm state.
cpufeatures::new!(cpuid_vaes512, "avx512f", "vaes");

/// Detected capabilities, cached: `KNOWN` once detection has run.
static CAPS: AtomicU8 = AtomicU8::new(0);
const KNOWN: u8 = 1;
const AESNI: u8 = 2;
const VAES: u8 = 4;
const VAES512: u8 = 8;

/// The capabilities of this CPU (CPUID is slow, and traps in a VM: it runs
/// once per process).
fn caps() -> u8 {
    let known = CAPS.load(Ordering::Relaxed);
    if known & KNOWN != 0 {
        return known;
    }
    let mut caps = KNOWN;
    if cpuid_aes::get() {
        caps |= AESNI;
        if cpuid_avx2::get() && vaes_bit() {
            caps |= VAES;
            if cpuid_vaes512::get() {
                caps |= VAES512;
            }
        }
    }
    CAPS.store(caps, Ordering::Relaxed);
    caps
}

/// CPUID leaf 7 (sub-leaf 0), ECX bit 9: VAES. Only asked once AVX2 was
/// found, which is in the same leaf, so the leaf exists.
#[allow(unused_unsafe)] // `__cpuid_count` is a safe function in newer Rust
fn vaes_bit() -> bool {
    // SAFETY: CPUID exists on every x86-64 CPU (and the leaf was just
    // read for AVX2); it has no memory effects.
    let leaf7 = unsafe { __cpuid_count(7, 0) };
    leaf7.ecx & (1 << 9) != 0
}

/// A fast path that this CPU supports (the only way to make one).
#[derive(Clone, Copy)]
pub(crate) struct Fast(Kind);

#[derive(Clone, Copy)]
enum Kind {
    AesNi,
    Vaes,
    Vaes512,
}

impl Fast {
    /// The best fast path for this CPU: 512-bit VAES, else 256-bit VAES,
    /// else AES-NI, else none.
    pub(crate) fn detect() -> Option<Self> {
        let caps = caps();
        if caps & VAES512 != 0 {
            Some(Self(Kind::Vaes512))
        } else if caps & VAES != 0 {
            Some(Self(Kind::Vaes))
        } else if caps & AESNI != 0 {
            Some(Self(Kind::AesNi))
        } else {
            None
        }
    }

    /// The fast path `backend`, if this CPU supports it.
    pub(crate) fn select(backend: Backend) -> Option<Self> {
        let caps = caps();
        match backend {
            Backend::AesNi if caps & AESNI != 0 => Some(Self(Kind::AesNi)),
            Backend::Vaes if caps & VAES != 0 => Some(Self(Kind::Vaes)),
            Backend::Vaes512 if caps & VAES512 != 0 => Some(Self(Kind::Vaes512)),
            _ => None,
        }
    }

    pub(crate) fn backend(self) -> Backend {
        match self.0 {
            Kind::AesNi => Backend::AesNi,
            Kind::Vaes => Backend::Vaes,
            Kind::Vaes512 => Backend::Vaes512,
        }
    }

    /// AEZ-core over an input of 32 bytes or more.
    pub(crate) fn crypt(self, keys: &Keys, tweak: Tweak<'_>, parts: Parts<'_>, dir: Dir) {
        match self.0 {
            // SAFETY: `Kind::AesNi` is only made after CPUID reported
            // AES-NI (`caps`), the one feature `aesni::crypt` enables beyond
            // the x86-64 baseline.
            Kind::AesNi => unsafe { aesni::crypt(keys, tweak, parts, dir) },
            // SAFETY: `Kind::Vaes` is only made after CPUID reported
            // AES-NI, AVX2 (with the OS saving ymm state) and VAES, the
            // features `vaes::w256::crypt` enables.
            Kind::Vaes => unsafe { vaes::w256::crypt(keys, tweak, parts, dir) },
            // SAFETY: `Kind::Vaes512` is only made after CPUID reported all
            // of the above and AVX-512F (with the OS saving zmm state), the
            // features `vaes::w512::crypt` enables.
            Kind::Vaes512 => unsafe { vaes::w512::crypt(keys, tweak, parts, dir) },
        }
    }
}

/// A block in a register: byte `k` of the block in byte `k` of the lane.
#[inline(always)]
fn load(b: &Blk) -> __m128i {
    // SAFETY: `b` is 16 readable bytes, and the unaligned load has no
    // alignment requirement; SSE2 is part of the x86-64 baseline.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

/// The inverse of [`load`].
#[inline(always)]
fn store(b: &mut Blk, v: __m128i) {
    // SAFETY: `b` is 16 writable bytes, and the unaligned store has no
    // alignment requirement; SSE2 is part of the x86-64 baseline.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) }
}

/// Two blocks in a 256-bit register, the first in the low half.
#[target_feature(enable = "avx")]
#[inline]
fn load2(b: &[Blk; 2]) -> __m256i {
    // SAFETY: `b` is 32 readable bytes (arrays have no padding), and the
    // unaligned load has no alignment requirement; AVX is enabled for this
    // function.
    unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
}

/// The inverse of [`load2`].
#[target_feature(enable = "avx")]
#[inline]
fn store2(b: &mut [Blk; 2], v: __m256i) {
    // SAFETY: `b` is 32 writable bytes (arrays have no padding), and the
    // unaligned store has no alignment requirement; AVX is enabled for this
    // function.
    unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), v) }
}

/// Four blocks in a 512-bit register, the first in the lowest lane.
#[target_feature(enable = "avx512f")]
#[inline]
fn load4(b: &[Blk; 4]) -> __m512i {
    // SAFETY: `b` is 64 readable bytes (arrays have no padding), and the
    // unaligned load has no alignment requirement; AVX-512F is enabled for
    // this function.
    unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
}

/// The inverse of [`load4`].
#[target_feature(enable = "avx512f")]
#[inline]
fn store4(b: &mut [Blk; 4], v: __m512i) {
    // SAFETY: `b` is 64 writable bytes (arrays have no padding), and the
    // unaligned store has no alignment requirement; AVX-512F is enabled for
    // this function.
    unsafe { _mm512_storeu_si512(b.as_mut_ptr().cast(), v) }
}

/// A stack buffer of blocks (a zero-padded partial group and its
/// intermediate values, or keystream-like masks), wiped when dropped.
struct Wiped<T: AsBlocks>(T);

impl<T: AsBlocks> Drop for Wiped<T> {
    fn drop(&mut self) {
        wipe(self.0.blocks());
    }
}

/// Arrays of blocks, seen as one slice of blocks.
trait AsBlocks {
    fn blocks(&mut self) -> &mut [Blk];
}

impl<const N: usize> AsBlocks for [Blk; N] {
    fn blocks(&mut self) -> &mut [Blk] {
        self
    }
}

impl<const N: usize> AsBlocks for [[Blk; 2]; N] {
    fn blocks(&mut self) -> &mut [Blk] {
        self.as_flattened_mut()
    }
}

impl<const N: usize> AsBlocks for [[[Blk; 2]; 2]; N] {
    fn blocks(&mut self) -> &mut [Blk] {
        self.as_flattened_mut().as_flattened_mut()
    }
}

impl<const N: usize> AsBlocks for [[[Blk; 4]; 2]; N] {
    fn blocks(&mut self) -> &mut [Blk] {
        self.as_flattened_mut().as_flattened_mut()
    }
}
