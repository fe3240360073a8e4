//! The libcrux backend (feature `libcrux`, the default): ML-KEM-768 from
//! `libcrux-ml-kem` and X25519 from `libcrux-curve25519` (HACL\*), both
//! formally verified (SPEC.md §11).
//!
//! libcrux's ML-KEM, in its "unpacked" form, keeps a key fully expanded:
//! the secret vector and the public matrix `Â` in NTT form. Decapsulation
//! then skips both the key parsing and the matrix sampling that dominate a
//! packed decapsulation (12 µs instead of 25 µs here; RustCrypto's `ml-kem`
//! takes 100 µs). The unpacked types are per instruction set, so [`MlKem`]
//! picks the code once per key, at load time: AVX2 on x86_64 CPUs that have
//! it, NEON on aarch64 (where libcrux takes it as always present), portable
//! code otherwise; all compute the same function.
//!
//! libcrux offers no `Zeroize` for its key types. [`DecapsulationKey`]
//! overwrites its key pair with the empty one on drop and passes it through
//! `core::hint::black_box`, so the stores are not removed as dead.

use libcrux_ml_kem::mlkem768::{self as lc, MlKem768Ciphertext, MlKem768PublicKey};
use zeroize::Zeroizing;

use super::{MlKem768, X25519};
use crate::geometry::{MLKEM_CT_LEN, MLKEM_EK_LEN, MLKEM_SEED_LEN, X25519_LEN};

/// Unpacked keys of the AVX2 code.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    pub(super) use libcrux_ml_kem::mlkem768::avx2::unpacked::*;
}

/// Unpacked keys of the NEON code.
#[cfg(target_arch = "aarch64")]
mod neon {
    pub(super) use libcrux_ml_kem::mlkem768::neon::unpacked::*;
}

/// Unpacked keys of the portable code.
mod portable {
    pub(super) use libcrux_ml_kem::mlkem768::portable::unpacked::*;
}

/// Which of libcrux's ML-KEM implementations a key is expanded for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::kem) enum Code {
    /// AVX2 (x86_64).
    Avx2,
    /// NEON (aarch64).
    Neon,
    /// Portable Rust.
    Portable,
}

/// The fastest code this CPU runs: AVX2 where the CPU has it, NEON on
/// aarch64 (libcrux-platform's `simd128_support`, true on every aarch64),
/// portable otherwise. Building with `--cfg kemsphinx_backend="portable"`
/// forces the portable code, so CI can test it on machines that have the
/// others.
pub(in crate::kem) fn fast_code() -> Code {
    if cfg!(kemsphinx_backend = "portable") {
        Code::Portable
    } else if cfg!(target_arch = "x86_64") && libcrux_platform::simd256_support() {
        Code::Avx2
    } else if cfg!(target_arch = "aarch64") && libcrux_platform::simd128_support() {
        Code::Neon
    } else {
        Code::Portable
    }
}

/// ML-KEM-768 on libcrux, AVX2 where the CPU has it.
pub(in crate::kem) struct MlKem;

/// ML-KEM-768 on libcrux's portable code only (the `hazmat` differential
/// hooks compare it with the dispatching [`MlKem`]).
#[cfg_attr(not(feature = "hazmat"), allow(dead_code))]
pub(in crate::kem) struct MlKemPortable;

/// An expanded ML-KEM-768 key pair, ready to decapsulate.
pub(in crate::kem) enum DecapsulationKey {
    /// Expanded for the AVX2 code.
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::MlKem768KeyPairUnpacked),
    /// Expanded for the NEON code.
    #[cfg(target_arch = "aarch64")]
    Neon(neon::MlKem768KeyPairUnpacked),
    /// Expanded for the portable code.
    Portable(portable::MlKem768KeyPairUnpacked),
}

/// An expanded ML-KEM-768 public key, ready to encapsulate.
#[derive(Clone)]
pub(in crate::kem) enum EncapsulationKey {
    /// Expanded for the AVX2 code.
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::MlKem768PublicKeyUnpacked),
    /// Expanded for the NEON code.
    #[cfg(target_arch = "aarch64")]
    Neon(neon::MlKem768PublicKeyUnpacked),
    /// Expanded for the portable code.
    Portable(portable::MlKem768PublicKeyUnpacked),
}

impl DecapsulationKey {
    /// `ML-KEM.KeyGen_internal(d, z)`, for `code` (portable if this target
    /// has no such code).
    fn expand(seed: &[u8; MLKEM_SEED_LEN], code: Code) -> Self {
        match code {
            #[cfg(target_arch = "x86_64")]
            Code::Avx2 => Self::Avx2(avx2::generate_key_pair(*seed)),
            #[cfg(target_arch = "aarch64")]
            Code::Neon => Self::Neon(neon::generate_key_pair(*seed)),
            _ => Self::Portable(portable::generate_key_pair(*seed)),
        }
    }

    /// The encapsulation key, serialised (1,184 bytes).
    fn encapsulation_key_bytes(&self) -> [u8; MLKEM_EK_LEN] {
        let pk: MlKem768PublicKey = match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(kp) => avx2::key_pair_serialized_public_key(kp),
            #[cfg(target_arch = "aarch64")]
            Self::Neon(kp) => neon::key_pair_serialized_public_key(kp),
            Self::Portable(kp) => portable::key_pair_serialized_public_key(kp),
        };
        *pk.as_slice()
    }

    /// The expanded encapsulation key.
    fn encapsulation_key(&self) -> EncapsulationKey {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(kp) => EncapsulationKey::Avx2(kp.public_key().clone()),
            #[cfg(target_arch = "aarch64")]
            Self::Neon(kp) => EncapsulationKey::Neon(kp.public_key().clone()),
            Self::Portable(kp) => EncapsulationKey::Portable(kp.public_key().clone()),
        }
    }

    /// `ML-KEM.Decaps`.
    fn decapsulate(&self, ct: &[u8; MLKEM_CT_LEN]) -> Zeroizing<[u8; 32]> {
        let ct = MlKem768Ciphertext::from(ct);
        Zeroizing::new(match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(kp) => avx2::decapsulate(kp, &ct),
            #[cfg(target_arch = "aarch64")]
            Self::Neon(kp) => neon::decapsulate(kp, &ct),
            Self::Portable(kp) => portable::decapsulate(kp, &ct),
        })
    }
}

impl Drop for DecapsulationKey {
    fn drop(&mut self) {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(kp) => *kp = Default::default(),
            #[cfg(target_arch = "aarch64")]
            Self::Neon(kp) => *kp = Default::default(),
            Self::Portable(kp) => *kp = Default::default(),
        }
        core::hint::black_box(self);
    }
}

impl EncapsulationKey {
    /// Parse with the modulus check; expanded for `code`.
    fn parse(bytes: &[u8; MLKEM_EK_LEN], code: Code) -> Option<Self> {
        let pk = MlKem768PublicKey::from(bytes);
        if !lc::validate_public_key(&pk) {
            return None;
        }
        Some(match code {
            #[cfg(target_arch = "x86_64")]
            Code::Avx2 => {
                let mut unpacked = avx2::init_public_key();
                avx2::unpacked_public_key(&pk, &mut unpacked);
                Self::Avx2(unpacked)
            }
            #[cfg(target_arch = "aarch64")]
            Code::Neon => {
                let mut unpacked = neon::init_public_key();
                neon::unpacked_public_key(&pk, &mut unpacked);
                Self::Neon(unpacked)
            }
            _ => {
                let mut unpacked = portable::init_public_key();
                portable::unpacked_public_key(&pk, &mut unpacked);
                Self::Portable(unpacked)
            }
        })
    }

    /// `ML-KEM.Encaps_internal(ek, m)`.
    fn encapsulate(&self, m: &[u8; 32]) -> ([u8; MLKEM_CT_LEN], Zeroizing<[u8; 32]>) {
        let (ct, ss) = match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(pk) => avx2::encapsulate(pk, *m),
            #[cfg(target_arch = "aarch64")]
            Self::Neon(pk) => neon::encapsulate(pk, *m),
            Self::Portable(pk) => portable::encapsulate(pk, *m),
        };
        (*ct.as_slice(), Zeroizing::new(ss))
    }
}

/// The trait on both flavours: they differ only in which code a key is
/// expanded for.
macro_rules! impl_mlkem {
    ($ty:ty, $code:expr) => {
        impl MlKem768 for $ty {
            type DecapsulationKey = DecapsulationKey;
            type EncapsulationKey = EncapsulationKey;

            fn expand(seed: &[u8; MLKEM_SEED_LEN]) -> DecapsulationKey {
                DecapsulationKey::expand(seed, $code)
            }

            fn encapsulation_key_bytes(dk: &DecapsulationKey) -> [u8; MLKEM_EK_LEN] {
                dk.encapsulation_key_bytes()
            }

            fn encapsulation_key(dk: &DecapsulationKey) -> EncapsulationKey {
                dk.encapsulation_key()
            }

            fn parse_encapsulation_key(bytes: &[u8; MLKEM_EK_LEN]) -> Option<EncapsulationKey> {
                EncapsulationKey::parse(bytes, $code)
            }

            fn encapsulate(
                ek: &EncapsulationKey,
                m: &[u8; 32],
            ) -> ([u8; MLKEM_CT_LEN], Zeroizing<[u8; 32]>) {
                ek.encapsulate(m)
            }

            fn decapsulate(dk: &DecapsulationKey, ct: &[u8; MLKEM_CT_LEN]) -> Zeroizing<[u8; 32]> {
                dk.decapsulate(ct)
            }
        }
    };
}

impl_mlkem!(MlKem, fast_code());
impl_mlkem!(MlKemPortable, Code::Portable);

/// X25519 on `libcrux-curve25519` (HACL\*, portable 64-bit code).
pub(in crate::kem) struct Hacl;

impl X25519 for Hacl {
    fn base_point(secret: &[u8; X25519_LEN]) -> [u8; X25519_LEN] {
        let mut public = [0u8; X25519_LEN];
        libcrux_curve25519::secret_to_public(&mut public, secret);
        public
    }

    fn shared_secret(
        secret: &[u8; X25519_LEN],
        point: &[u8; X25519_LEN],
    ) -> Option<Zeroizing<[u8; X25519_LEN]>> {
        let mut shared = Zeroizing::new([0u8; X25519_LEN]);
        // HACL*'s ladder; the all-zero test (a point of small order) is
        // ours, as `ecdh` would branch on its own copy of the verdict,
        // which the constant-time check cannot see declassified.
        libcrux_curve25519::hacl::scalarmult(&mut shared[..], secret, point);
        (!super::all_zero(&shared)).then_some(shared)
    }
}
