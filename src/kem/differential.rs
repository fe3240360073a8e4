//! Every KEM backend compiled into this build, side by side, for
//! differential testing (feature `hazmat`; hidden). The fuzz target
//! `kem_differential` and the proptest `kem_backends` derive keys from the
//! same seeds on each and require identical keys, shared secrets and
//! errors.
//!
//! The keys here run the same code as [`super::PrivateKey`] and
//! [`super::PublicKey`] (the adapter, the combiner, the encodings and
//! validation are generic over the backend); only the backend differs.
//! Never use them outside tests.

use zeroize::Zeroizing;

use super::backend::{self as seam, MlKem768, X25519};
use super::{
    Ciphertext, DebugIntermediates, PublicCore, SecretCore, SharedSecret, X25519_LEN, backend,
};
use crate::error::Error;
use crate::geometry::{KEY_SEED_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN};

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

/// Every backend compiled in.
#[cfg(all(feature = "libcrux", feature = "rustcrypto"))]
const ALL: [Backend; 3] = [
    Backend::Libcrux,
    Backend::LibcruxPortable,
    Backend::RustCrypto,
];
/// Every backend compiled in.
#[cfg(all(feature = "libcrux", not(feature = "rustcrypto")))]
const ALL: [Backend; 2] = [Backend::Libcrux, Backend::LibcruxPortable];
/// Every backend compiled in.
#[cfg(all(not(feature = "libcrux"), feature = "rustcrypto"))]
const ALL: [Backend; 1] = [Backend::RustCrypto];

impl Backend {
    /// Every backend compiled into this build.
    pub const ALL: &'static [Self] = &ALL;

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

/// The backend types behind each name.
#[cfg(feature = "libcrux")]
type LibcruxPortable = seam::Pair<seam::libcrux::MlKemPortable, seam::libcrux::Hacl>;

/// A backend type with its variants of [`AnyPair`] and [`AnyPublic`].
trait Named: seam::Backend + Sized {
    /// The key pair as an [`AnyPair`].
    fn pair(s: SecretCore<Self>, p: PublicCore<Self>) -> AnyPair;
    /// The public key as an [`AnyPublic`].
    fn public(p: PublicCore<Self>) -> AnyPublic;
}

/// [`Named`] for the backend type `$ty`, variant `$v`.
macro_rules! named {
    ($ty:ty, $v:ident) => {
        impl Named for $ty {
            fn pair(s: SecretCore<Self>, p: PublicCore<Self>) -> AnyPair {
                AnyPair::$v(s, p)
            }
            fn public(p: PublicCore<Self>) -> AnyPublic {
                AnyPublic::$v(p)
            }
        }
    };
}

#[cfg(feature = "libcrux")]
named!(backend::Libcrux, Libcrux);
#[cfg(feature = "libcrux")]
named!(LibcruxPortable, LibcruxPortable);
#[cfg(feature = "rustcrypto")]
named!(backend::RustCrypto, RustCrypto);

/// Run `$body` with `$B` the backend type named by `$backend`.
macro_rules! with_backend {
    ($backend:expr, $B:ident => $body:expr) => {
        match $backend {
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
    };
}

/// A key pair on one backend.
enum AnyPair {
    #[cfg(feature = "libcrux")]
    Libcrux(SecretCore<backend::Libcrux>, PublicCore<backend::Libcrux>),
    #[cfg(feature = "libcrux")]
    LibcruxPortable(SecretCore<LibcruxPortable>, PublicCore<LibcruxPortable>),
    #[cfg(feature = "rustcrypto")]
    RustCrypto(
        SecretCore<backend::RustCrypto>,
        PublicCore<backend::RustCrypto>,
    ),
}

/// Run `$body` with `$s` and `$p` the secret and public halves of `$pair`.
macro_rules! with_pair {
    ($pair:expr, ($s:ident, $p:ident) => $body:expr) => {
        match $pair {
            #[cfg(feature = "libcrux")]
            AnyPair::Libcrux($s, $p) => $body,
            #[cfg(feature = "libcrux")]
            AnyPair::LibcruxPortable($s, $p) => $body,
            #[cfg(feature = "rustcrypto")]
            AnyPair::RustCrypto($s, $p) => $body,
        }
    };
}

/// A public key on one backend.
enum AnyPublic {
    #[cfg(feature = "libcrux")]
    Libcrux(PublicCore<backend::Libcrux>),
    #[cfg(feature = "libcrux")]
    LibcruxPortable(PublicCore<LibcruxPortable>),
    #[cfg(feature = "rustcrypto")]
    RustCrypto(PublicCore<backend::RustCrypto>),
}

/// A private key loaded on one backend.
pub struct BackendPrivateKey(AnyPair);

impl BackendPrivateKey {
    /// As [`super::PrivateKey::from_seed`], on `backend`.
    #[must_use]
    pub fn from_seed(backend: Backend, seed: &[u8; KEY_SEED_LEN]) -> Self {
        Self(with_backend!(backend, B => {
            let (s, p) = SecretCore::<B>::from_seed(seed);
            B::pair(s, p)
        }))
    }

    /// As [`super::PrivateKey::from_bytes`], on `backend`.
    ///
    /// # Errors
    /// As [`super::PrivateKey::from_bytes`].
    pub fn from_bytes(backend: Backend, bytes: &[u8; PRIVATE_KEY_LEN]) -> Result<Self, Error> {
        with_backend!(backend, B => {
            let (s, p) = SecretCore::<B>::from_bytes(bytes)?;
            Ok(Self(B::pair(s, p)))
        })
    }

    /// The 1,280-byte encoding.
    #[must_use]
    pub fn to_bytes(&self) -> Zeroizing<[u8; PRIVATE_KEY_LEN]> {
        with_pair!(&self.0, (s, p) => s.to_bytes(p))
    }

    /// The public key's 1,216-byte encoding.
    #[must_use]
    pub fn public_key_bytes(&self) -> [u8; PUBLIC_KEY_LEN] {
        with_pair!(&self.0, (_s, p) => p.bytes)
    }

    /// As [`super::PrivateKey::decapsulate`].
    ///
    /// # Errors
    /// As [`super::PrivateKey::decapsulate`].
    pub fn decapsulate(&self, ct: &Ciphertext) -> Result<SharedSecret, Error> {
        with_pair!(&self.0, (s, p) => s.decapsulate_traced(p, ct).map(|(ss, _)| ss))
    }

    /// As [`super::debug_decapsulate`].
    ///
    /// # Errors
    /// As [`super::PrivateKey::decapsulate`].
    pub fn debug_decapsulate(&self, ct: &Ciphertext) -> Result<DebugIntermediates, Error> {
        with_pair!(&self.0, (s, p) => {
            s.decapsulate_traced(p, ct).map(DebugIntermediates::from_trace)
        })
    }
}

/// A public key loaded on one backend.
pub struct BackendPublicKey(AnyPublic);

impl BackendPublicKey {
    /// As [`super::PublicKey::from_bytes`], on `backend`.
    ///
    /// # Errors
    /// As [`super::PublicKey::from_bytes`].
    pub fn from_bytes(backend: Backend, bytes: &[u8; PUBLIC_KEY_LEN]) -> Result<Self, Error> {
        with_backend!(backend, B => {
            let p = PublicCore::<B>::from_bytes(bytes)?;
            Ok(Self(B::public(p)))
        })
    }

    /// The 1,216-byte encoding.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; PUBLIC_KEY_LEN] {
        match &self.0 {
            #[cfg(feature = "libcrux")]
            AnyPublic::Libcrux(p) => p.bytes,
            #[cfg(feature = "libcrux")]
            AnyPublic::LibcruxPortable(p) => p.bytes,
            #[cfg(feature = "rustcrypto")]
            AnyPublic::RustCrypto(p) => p.bytes,
        }
    }

    /// As [`super::PublicKey::encapsulate_deterministic`].
    ///
    /// # Errors
    /// As [`super::PublicKey::encapsulate`].
    pub fn encapsulate_deterministic(
        &self,
        x25519_ephemeral: &[u8; X25519_LEN],
        mlkem_m: &[u8; 32],
    ) -> Result<(Ciphertext, SharedSecret), Error> {
        match &self.0 {
            #[cfg(feature = "libcrux")]
            AnyPublic::Libcrux(p) => p.encapsulate_with(x25519_ephemeral, mlkem_m),
            #[cfg(feature = "libcrux")]
            AnyPublic::LibcruxPortable(p) => p.encapsulate_with(x25519_ephemeral, mlkem_m),
            #[cfg(feature = "rustcrypto")]
            AnyPublic::RustCrypto(p) => p.encapsulate_with(x25519_ephemeral, mlkem_m),
        }
    }
}

/// `X25519(secret, point)` on `backend`'s X25519, or `None` when it is all
/// zero.
#[must_use]
pub fn x25519(
    backend: Backend,
    secret: &[u8; X25519_LEN],
    point: &[u8; X25519_LEN],
) -> Option<[u8; X25519_LEN]> {
    with_backend!(backend, B => {
        <B as seam::Backend>::X25519::shared_secret(secret, point).map(|s| *s)
    })
}

/// `X25519(secret, 9)` on `backend`'s X25519.
#[must_use]
pub fn x25519_base_point(backend: Backend, secret: &[u8; X25519_LEN]) -> [u8; X25519_LEN] {
    with_backend!(backend, B => <B as seam::Backend>::X25519::base_point(secret))
}

/// ML-KEM-768 on `backend`: the encapsulation key that the seed `d ‖ z`
/// derives, and the decapsulation of `ct` with that key.
#[must_use]
pub fn mlkem_decapsulate(
    backend: Backend,
    seed: &[u8; 64],
    ct: &[u8; crate::geometry::MLKEM_CT_LEN],
) -> ([u8; crate::geometry::MLKEM_EK_LEN], [u8; 32]) {
    with_backend!(backend, B => {
        let dk = <B as seam::Backend>::MlKem::expand(seed);
        (
            <B as seam::Backend>::MlKem::encapsulation_key_bytes(&dk),
            *<B as seam::Backend>::MlKem::decapsulate(&dk, ct),
        )
    })
}

/// Whether [`Backend::Libcrux`] expands ML-KEM keys for libcrux's AVX2 code
/// in this process (x86_64 with AVX2, not forced portable with
/// `--cfg kemsphinx_backend="portable"`); otherwise its portable code.
#[cfg(feature = "libcrux")]
#[must_use]
pub fn mlkem_avx2_active() -> bool {
    seam::libcrux::use_avx2()
}

/// Whether [`Backend::Libcrux`] runs X25519 on verified assembly in this
/// process: the features `libcrux` and `x25519-asm` are on, the CPU has
/// every instruction the assembly needs, and the build is neither forced
/// portable (`--cfg kemsphinx_backend="portable"`) nor built with debug
/// assertions. The public types use it
/// exactly when this holds and libcrux is the selected backend.
#[must_use]
pub fn x25519_asm_active() -> bool {
    seam::x25519_asm_active()
}
