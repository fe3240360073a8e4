//! ML-KEM-768 (FIPS 203) through `libcrux-ml-kem` (SPEC.md §2.2, §11).
//!
//! libcrux is formally verified (functional correctness and secret
//! independence) and, in its "unpacked" form, keeps a key fully expanded:
//! the secret vector and the public matrix `Â` in NTT form. Decapsulation
//! then skips both the key parsing and the matrix sampling that dominate a
//! packed decapsulation (12 µs instead of 25 µs here; RustCrypto's `ml-kem`
//! takes 100 µs). The unpacked types are per instruction set, so this module
//! picks AVX2 or portable code once per key, at load time, from the CPU's
//! features; both compute the same function.
//!
//! libcrux offers no `Zeroize` for its key types. [`DecapsulationKey`]
//! overwrites its key pair with the empty one on drop and passes it through
//! `core::hint::black_box`, so the stores are not removed as dead.

use libcrux_ml_kem::mlkem768::{self as lc, MlKem768Ciphertext, MlKem768PublicKey};
use zeroize::Zeroizing;

use crate::geometry::{MLKEM_CT_LEN, MLKEM_EK_LEN, MLKEM_SEED_LEN};

/// Unpacked keys of the AVX2 code.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    pub(super) use libcrux_ml_kem::mlkem768::avx2::unpacked::*;
}

/// Unpacked keys of the portable code.
mod portable {
    pub(super) use libcrux_ml_kem::mlkem768::portable::unpacked::*;
}

/// Whether this CPU runs libcrux's AVX2 code. Building with
/// `--cfg kemsphinx_backend="portable"` forces the portable code, so CI can
/// test it on machines that have AVX2.
fn use_avx2() -> bool {
    cfg!(target_arch = "x86_64")
        && !cfg!(kemsphinx_backend = "portable")
        && libcrux_platform::simd256_support()
}

/// An expanded ML-KEM-768 key pair, ready to decapsulate.
pub(super) enum DecapsulationKey {
    /// Expanded for the AVX2 code.
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::MlKem768KeyPairUnpacked),
    /// Expanded for the portable code.
    Portable(portable::MlKem768KeyPairUnpacked),
}

/// An expanded ML-KEM-768 public key, ready to encapsulate.
#[derive(Clone)]
pub(super) enum EncapsulationKey {
    /// Expanded for the AVX2 code.
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::MlKem768PublicKeyUnpacked),
    /// Expanded for the portable code.
    Portable(portable::MlKem768PublicKeyUnpacked),
}

impl DecapsulationKey {
    /// `ML-KEM.KeyGen_internal(d, z)` from the 64-byte seed `d ‖ z`.
    pub(super) fn from_seed(seed: &[u8; MLKEM_SEED_LEN]) -> Self {
        #[cfg(target_arch = "x86_64")]
        if use_avx2() {
            return Self::Avx2(avx2::generate_key_pair(*seed));
        }
        Self::Portable(portable::generate_key_pair(*seed))
    }

    /// The encapsulation key, serialised (1,184 bytes).
    pub(super) fn encapsulation_key_bytes(&self) -> [u8; MLKEM_EK_LEN] {
        let pk: MlKem768PublicKey = match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(kp) => avx2::key_pair_serialized_public_key(kp),
            Self::Portable(kp) => portable::key_pair_serialized_public_key(kp),
        };
        *pk.as_slice()
    }

    /// The expanded encapsulation key.
    pub(super) fn encapsulation_key(&self) -> EncapsulationKey {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(kp) => EncapsulationKey::Avx2(kp.public_key().clone()),
            Self::Portable(kp) => EncapsulationKey::Portable(kp.public_key().clone()),
        }
    }

    /// `ML-KEM.Decaps`: never fails (implicit rejection).
    pub(super) fn decapsulate(&self, ct: &[u8; MLKEM_CT_LEN]) -> Zeroizing<[u8; 32]> {
        let ct = MlKem768Ciphertext::from(ct);
        Zeroizing::new(match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(kp) => avx2::decapsulate(kp, &ct),
            Self::Portable(kp) => portable::decapsulate(kp, &ct),
        })
    }
}

impl Drop for DecapsulationKey {
    fn drop(&mut self) {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(kp) => *kp = Default::default(),
            Self::Portable(kp) => *kp = Default::default(),
        }
        core::hint::black_box(self);
    }
}

impl EncapsulationKey {
    /// Parse an encapsulation key, applying the FIPS 203 §7.2 modulus check
    /// (every coefficient below q). `None` if it fails.
    pub(super) fn new(bytes: &[u8; MLKEM_EK_LEN]) -> Option<Self> {
        let pk = MlKem768PublicKey::from(bytes);
        if !lc::validate_public_key(&pk) {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        if use_avx2() {
            let mut unpacked = avx2::init_public_key();
            avx2::unpacked_public_key(&pk, &mut unpacked);
            return Some(Self::Avx2(unpacked));
        }
        let mut unpacked = portable::init_public_key();
        portable::unpacked_public_key(&pk, &mut unpacked);
        Some(Self::Portable(unpacked))
    }

    /// `ML-KEM.Encaps_internal(ek, m)`: ciphertext and shared secret.
    pub(super) fn encapsulate(&self, m: &[u8; 32]) -> ([u8; MLKEM_CT_LEN], Zeroizing<[u8; 32]>) {
        let (ct, ss) = match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(pk) => avx2::encapsulate(pk, *m),
            Self::Portable(pk) => portable::encapsulate(pk, *m),
        };
        (*ct.as_slice(), Zeroizing::new(ss))
    }
}
