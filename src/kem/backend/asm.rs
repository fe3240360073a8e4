//! X25519 on s2n-bignum's formally verified assembly, through `graviola`
//! (feature `x25519-asm`; SPEC.md §11), where the CPU has the instructions
//! it needs, and on a portable implementation `P` everywhere else.
//!
//! graviola asserts its CPU features at every entry point and panics
//! without them, and its x86_64 X25519 code also uses BMI2 (`mulx`), which
//! that assertion does not cover. So this module checks every feature
//! itself, once per process, and only then calls graviola: on a CPU
//! without them, or on any other architecture, or when built with
//! `--cfg kemsphinx_backend="portable"`, [`Verified`] is exactly `P`.
//!
//! Nor in builds with debug assertions: there graviola's feature check
//! also reads an environment variable per feature at every call (so it
//! allocates, on the packet path) and panics if one of them disables a
//! feature the CPU has. Release builds have neither behaviour.
//!
//! s2n-bignum's X25519 is RFC 7748's function on raw secrets, like `P`:
//! it clamps the scalar, ignores bit 255 of u and reduces a non-canonical
//! u; graviola reports an all-zero result (a small-order point) as an
//! error. Its key and shared-secret types wipe themselves on drop.

use core::marker::PhantomData;

use zeroize::Zeroizing;

use super::X25519;
use crate::geometry::X25519_LEN;

/// X25519 on verified assembly when [`available`], on `P` otherwise.
pub(in crate::kem) struct Verified<P>(PhantomData<P>);

impl<P: X25519> X25519 for Verified<P> {
    fn base_point(secret: &[u8; X25519_LEN]) -> [u8; X25519_LEN] {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        if available() {
            return s2n::base_point(secret);
        }
        P::base_point(secret)
    }

    fn shared_secret(
        secret: &[u8; X25519_LEN],
        point: &[u8; X25519_LEN],
    ) -> Option<Zeroizing<[u8; X25519_LEN]>> {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        if available() {
            return s2n::shared_secret(secret, point);
        }
        P::shared_secret(secret, point)
    }
}

/// Whether this process runs X25519 on the verified assembly: decided once,
/// from the CPU's features; never with debug assertions (see the module
/// documentation) nor on other architectures, where nothing but the
/// `hazmat` hooks asks.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]
pub(in crate::kem) fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        !cfg!(kemsphinx_backend = "portable") && !cfg!(debug_assertions) && cpu_has_features()
    })
}

/// Every feature graviola asserts on x86_64 (AES, PCLMULQDQ, BMI1, ADX,
/// AVX, AVX2), and BMI2, which its X25519 code uses.
#[cfg(target_arch = "x86_64")]
fn cpu_has_features() -> bool {
    std::arch::is_x86_feature_detected!("aes")
        && std::arch::is_x86_feature_detected!("pclmulqdq")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("adx")
        && std::arch::is_x86_feature_detected!("avx")
        && std::arch::is_x86_feature_detected!("avx2")
}

/// Every feature graviola asserts on aarch64 (NEON, AES, PMULL, SHA2).
#[cfg(target_arch = "aarch64")]
fn cpu_has_features() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
        && std::arch::is_aarch64_feature_detected!("aes")
        && std::arch::is_aarch64_feature_detected!("pmull")
        && std::arch::is_aarch64_feature_detected!("sha2")
}

/// No verified assembly for this architecture.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[allow(dead_code)]
fn cpu_has_features() -> bool {
    false
}

/// The calls into graviola; only ever reached when [`available`].
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod s2n {
    use graviola::key_agreement::x25519::{PublicKey, StaticPrivateKey};
    use zeroize::Zeroizing;

    use crate::geometry::X25519_LEN;

    /// `X25519(secret, 9)`.
    pub(super) fn base_point(secret: &[u8; X25519_LEN]) -> [u8; X25519_LEN] {
        StaticPrivateKey::from_array(secret).public_key().as_bytes()
    }

    /// `X25519(secret, point)`, `None` if all zero.
    pub(super) fn shared_secret(
        secret: &[u8; X25519_LEN],
        point: &[u8; X25519_LEN],
    ) -> Option<Zeroizing<[u8; X25519_LEN]>> {
        let shared = StaticPrivateKey::from_array(secret)
            .diffie_hellman(&PublicKey::from_array(point))
            .ok()?;
        Some(Zeroizing::new(shared.0))
    }
}
