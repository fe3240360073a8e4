//! Every KEM backend compiled into this build, side by side, for
//! differential testing (feature `hazmat`; hidden). The fuzz target
//! `kem_differential` and the proptest `kem_backends` derive keys from the
//! same seeds on each and require identical keys, shared secrets and
//! errors.
//!
//! Stateless: each function takes a [`Backend`] and encodings, loads what
//! it needs on that backend, runs one operation and returns encodings, so
//! that nothing backend-typed outlives a call. The code behind each is the
//! code behind [`super::PrivateKey`] and [`super::PublicKey`] (the adapter,
//! the combiner, the encodings and validation are generic over the
//! backend); only the backend differs. Never use them outside tests.

use zeroize::Zeroizing;

use super::backend::{self as seam, MlKem768, X25519};
use super::{
    Ciphertext, DebugIntermediates, PublicCore, SecretCore, SharedSecret, X25519_LEN, backend,
};
use crate::error::Error;
use crate::geometry::{KEY_SEED_LEN, MLKEM_CT_LEN, MLKEM_EK_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN};

/// A KEM backend compiled into this build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// libcrux as the library runs it: ML-KEM on AVX2 and X25519 on
    /// verified assembly where the CPU has them (and feature `x25519-asm`
    /// is on), portable code otherwise.
    #[cfg(feature = "libcrux")]
    Libcrux,
    /// libcrux's portable code only: portable ML-KEM and HACL\*'s portable
    /// X25519, whatever the CPU.
    #[cfg(feature = "libcrux")]
    LibcruxPortable,
    /// RustCrypto `ml-kem` and `x25519-dalek`.
    #[cfg(feature = "rustcrypto")]
    RustCrypto,
}

impl Backend {
    /// Every backend compiled into this build.
    pub const ALL: &'static [Self] = &[
        #[cfg(feature = "libcrux")]
        Self::Libcrux,
        #[cfg(feature = "libcrux")]
        Self::LibcruxPortable,
        #[cfg(feature = "rustcrypto")]
        Self::RustCrypto,
    ];

    /// The backend [`super::PrivateKey`] and [`super::PublicKey`] run on.
    #[cfg(feature = "rustcrypto")]
    pub const SELECTED: Self = Self::RustCrypto;
    /// The backend [`super::PrivateKey`] and [`super::PublicKey`] run on.
    #[cfg(all(feature = "libcrux", not(feature = "rustcrypto")))]
    pub const SELECTED: Self = Self::Libcrux;

    /// A short name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "libcrux")]
            Self::Libcrux => "libcrux",
            #[cfg(feature = "libcrux")]
            Self::LibcruxPortable => "libcrux-portable",
            #[cfg(feature = "rustcrypto")]
            Self::RustCrypto => "rustcrypto",
        }
    }
}

/// libcrux's portable ML-KEM with HACL\*'s portable X25519.
#[cfg(feature = "libcrux")]
type LibcruxPortable = seam::Pair<seam::libcrux::MlKemPortable, seam::libcrux::Hacl>;

/// Each `fn name(args) -> T { B => body }` becomes
/// `pub fn name(backend: Backend, args) -> T`, running `body` with `B` the
/// backend type that `backend` names.
macro_rules! per_backend {
    ($(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty { $B:ident => $body:expr }
    )*) => {$(
        $(#[$attr])*
        pub fn $name(backend: Backend, $($arg: $ty),*) -> $ret {
            match backend {
                #[cfg(feature = "libcrux")]
                Backend::Libcrux => {
                    type $B = backend::Libcrux;
                    $body
                }
                #[cfg(feature = "libcrux")]
                Backend::LibcruxPortable => {
                    type $B = LibcruxPortable;
                    $body
                }
                #[cfg(feature = "rustcrypto")]
                Backend::RustCrypto => {
                    type $B = backend::RustCrypto;
                    $body
                }
            }
        }
    )*};
}

per_backend! {
    /// The encoding of [`super::PrivateKey::from_seed`]`(seed)`, derived
    /// on `backend`.
    #[must_use]
    fn private_key(seed: &[u8; KEY_SEED_LEN]) -> Zeroizing<[u8; PRIVATE_KEY_LEN]> {
        B => {
            let (s, p) = SecretCore::<B>::from_seed(seed);
            s.to_bytes(&p)
        }
    }

    /// [`super::PrivateKey::from_bytes`] on `backend`, encoded again.
    ///
    /// # Errors
    /// As [`super::PrivateKey::from_bytes`].
    fn load_private_key(
        bytes: &[u8; PRIVATE_KEY_LEN],
    ) -> Result<Zeroizing<[u8; PRIVATE_KEY_LEN]>, Error> {
        B => SecretCore::<B>::from_bytes(bytes).map(|(s, p)| s.to_bytes(&p))
    }

    /// The public key of a private key encoding, loaded on `backend`.
    ///
    /// # Errors
    /// As [`super::PrivateKey::from_bytes`].
    fn public_key(private: &[u8; PRIVATE_KEY_LEN]) -> Result<[u8; PUBLIC_KEY_LEN], Error> {
        B => SecretCore::<B>::from_bytes(private).map(|(_, p)| p.bytes)
    }

    /// [`super::PublicKey::from_bytes`] on `backend`, encoded again.
    ///
    /// # Errors
    /// As [`super::PublicKey::from_bytes`].
    fn load_public_key(bytes: &[u8; PUBLIC_KEY_LEN]) -> Result<[u8; PUBLIC_KEY_LEN], Error> {
        B => PublicCore::<B>::from_bytes(bytes).map(|p| p.bytes)
    }

    /// `hazmat::encapsulate_deterministic` to the public key
    /// `public`, loaded on `backend`.
    ///
    /// # Errors
    /// As [`super::PublicKey::from_bytes`] and
    /// `hazmat::encapsulate`.
    fn encapsulate_deterministic(
        public: &[u8; PUBLIC_KEY_LEN],
        x25519_ephemeral: &[u8; X25519_LEN],
        mlkem_m: &[u8; 32],
    ) -> Result<(Ciphertext, SharedSecret), Error> {
        B => PublicCore::<B>::from_bytes(public)?.encapsulate_with(x25519_ephemeral, mlkem_m)
    }

    /// `hazmat::decapsulate` with the private key `private`,
    /// loaded on `backend`.
    ///
    /// # Errors
    /// As [`super::PrivateKey::from_bytes`] and
    /// `hazmat::decapsulate`.
    fn decapsulate(private: &[u8; PRIVATE_KEY_LEN], ct: &Ciphertext) -> Result<SharedSecret, Error> {
        B => {
            let (s, p) = SecretCore::<B>::from_bytes(private)?;
            s.decapsulate_traced(&p, ct).map(|(ss, _)| ss)
        }
    }

    /// `hazmat::debug_decapsulate` with the private key `private`, loaded
    /// on `backend`.
    ///
    /// # Errors
    /// As [`decapsulate`].
    fn debug_decapsulate(
        private: &[u8; PRIVATE_KEY_LEN],
        ct: &Ciphertext,
    ) -> Result<DebugIntermediates, Error> {
        B => {
            let (s, p) = SecretCore::<B>::from_bytes(private)?;
            s.decapsulate_traced(&p, ct).map(DebugIntermediates::from_trace)
        }
    }

    /// `X25519(secret, point)` on `backend`'s X25519, or `None` when it is
    /// all zero.
    #[must_use]
    fn x25519(
        secret: &[u8; X25519_LEN],
        point: &[u8; X25519_LEN],
    ) -> Option<[u8; X25519_LEN]> {
        B => <B as seam::Backend>::X25519::shared_secret(secret, point).map(|s| *s)
    }

    /// `X25519(secret, 9)` on `backend`'s X25519.
    #[must_use]
    fn x25519_base_point(secret: &[u8; X25519_LEN]) -> [u8; X25519_LEN] {
        B => <B as seam::Backend>::X25519::base_point(secret)
    }

    /// ML-KEM-768 on `backend`: the encapsulation key that the seed `d ‖ z`
    /// derives, and the decapsulation of `ct` with that key.
    #[must_use]
    fn mlkem_decapsulate(
        seed: &[u8; 64],
        ct: &[u8; MLKEM_CT_LEN],
    ) -> ([u8; MLKEM_EK_LEN], [u8; 32]) {
        B => {
            let dk = <B as seam::Backend>::MlKem::expand(seed);
            (
                <B as seam::Backend>::MlKem::encapsulation_key_bytes(&dk),
                *<B as seam::Backend>::MlKem::decapsulate(&dk, ct),
            )
        }
    }
}

/// Whether [`Backend::Libcrux`] expands ML-KEM keys for libcrux's AVX2 code
/// in this process (x86_64 with AVX2, not forced portable with
/// `--cfg kemsphinx_backend="portable"`); otherwise its portable code.
#[cfg(feature = "libcrux")]
#[must_use]
pub fn mlkem_avx2_active() -> bool {
    seam::libcrux::fast_code() == seam::libcrux::Code::Avx2
}

/// Whether [`Backend::Libcrux`] expands ML-KEM keys for libcrux's NEON code
/// in this process (aarch64, not forced portable with
/// `--cfg kemsphinx_backend="portable"`).
#[cfg(feature = "libcrux")]
#[must_use]
pub fn mlkem_neon_active() -> bool {
    seam::libcrux::fast_code() == seam::libcrux::Code::Neon
}

/// Whether the `libcrux` backend runs X25519 on verified assembly in this
/// process: the features `libcrux` and `x25519-asm` are on, the CPU has
/// every instruction the assembly needs, and the build is neither forced
/// portable (`--cfg kemsphinx_backend="portable"`) nor built with debug
/// assertions. The public types use it exactly when this holds and libcrux
/// is the selected backend.
#[must_use]
pub fn x25519_asm_active() -> bool {
    seam::x25519_asm_active()
}

/// The X25519 path a batch unwrap (`unwrap_batch`) takes in this process:
/// `"ifma"` or `"avx2"` (the `x25519-batch` crate's vector code, feature
/// `x25519-batch`, x86_64), or `"scalar"` (the selected backend's X25519, a
/// point at a time); after `set_x25519_batch_path` (x86_64), the path chosen
/// there (`"portable"` for `x25519-batch`'s portable ladder).
#[must_use]
pub fn x25519_batch_path() -> &'static str {
    seam::x25519_batch_path()
}

/// The path [`x25519_batch_path`] names when no path is chosen
/// (`set_x25519_batch_path`, x86_64): the one this CPU and build pick, `"ifma"`,
/// `"avx2"` or `"scalar"`, whatever another thread has chosen meanwhile.
#[must_use]
pub fn x25519_batch_path_automatic() -> &'static str {
    seam::x25519_batch_path_automatic()
}

/// Make every batch unwrap in this process compute its X25519 halves on
/// `backend` of `x25519-batch`, whatever the CPU would pick, or with
/// `None` go back to the automatic choice. For benchmarks and tests of a
/// path this CPU does not take by itself (AVX2 on a CPU with AVX-512
/// IFMA): process-wide, so it changes the path of every thread's batches
/// until set again. Results are the same on every path; only the time
/// differs. Batches under three points still go to the KEM backend's
/// X25519 one at a time.
///
/// # Errors
///
/// [`X25519BatchPathUnavailable`] if this CPU or build lacks `backend`
/// ([`x25519_batch_path_available`]); the choice is then left as it was.
#[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
pub fn set_x25519_batch_path(
    backend: Option<x25519_batch::Backend>,
) -> Result<(), X25519BatchPathUnavailable> {
    if seam::batch::choose(backend) {
        Ok(())
    } else {
        Err(X25519BatchPathUnavailable)
    }
}

/// Whether [`set_x25519_batch_path`] accepts `backend` in this process:
/// the CPU has its instructions and the build is not forced portable
/// (`--cfg kemsphinx_backend="portable"`, where only
/// `x25519_batch::Backend::Portable` is).
#[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
#[must_use]
pub fn x25519_batch_path_available(backend: x25519_batch::Backend) -> bool {
    seam::batch::available(backend)
}

/// [`set_x25519_batch_path`] was given a backend this CPU or build does
/// not have; nothing changed.
#[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct X25519BatchPathUnavailable;

#[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
impl core::fmt::Display for X25519BatchPathUnavailable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("this CPU or build does not have that x25519-batch backend")
    }
}

#[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
impl core::error::Error for X25519BatchPathUnavailable {}
