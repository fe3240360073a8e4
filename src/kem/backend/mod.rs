//! The seam between the hybrid KEM and the code that computes its two
//! halves (SPEC.md §11).
//!
//! Everything above this module — the X25519 adapter, the combiner, the key
//! encodings, validation at load and zeroization of the stored secrets — is
//! written once, against the two traits below. A backend supplies
//! ML-KEM-768 ([`MlKem768`]) and X25519 ([`X25519`]) and nothing else; it
//! may choose code for the CPU at run time (libcrux's ML-KEM picks AVX2 or
//! portable code at key load; [`asm`] picks verified assembly or the
//! portable X25519).
//!
//! One backend is selected at compile time by Cargo features ([`Selected`]):
//!
//! - `rustcrypto` selects RustCrypto `ml-kem` and `x25519-dalek`, whatever
//!   else is enabled;
//! - otherwise `libcrux` selects `libcrux-ml-kem` and `libcrux-curve25519`,
//!   with X25519 on s2n-bignum's verified assembly (through graviola) when
//!   `x25519-asm` is on and the CPU has the instructions;
//! - neither is a compile error.
//!
//! `libcrux` is in the default features, so feature unification turns it
//! on in nearly every build that has a dependent keeping the defaults;
//! `rustcrypto` is on only if someone asked for it, so it wins. The other
//! backend, when compiled in, is used only by the `hazmat` differential
//! hooks ([`super::differential`]).

use zeroize::Zeroizing;

use crate::geometry::{MLKEM_CT_LEN, MLKEM_EK_LEN, MLKEM_SEED_LEN, X25519_LEN};

#[cfg(not(any(feature = "libcrux", feature = "rustcrypto")))]
compile_error!(
    "kemsphinx needs a KEM backend: enable the Cargo feature `libcrux` (the default) or \
     `rustcrypto`"
);

#[cfg(feature = "x25519-asm")]
#[cfg_attr(
    any(feature = "rustcrypto", not(feature = "libcrux")),
    allow(dead_code)
)]
pub(super) mod asm;
#[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
pub(super) mod batch;
#[cfg(feature = "libcrux")]
#[cfg_attr(feature = "rustcrypto", allow(dead_code))]
pub(super) mod libcrux;
#[cfg(feature = "rustcrypto")]
pub(super) mod rustcrypto;

/// The name of the X25519 batch path a batch unwrap takes in this process
/// (`"ifma"`, `"avx2"`, or `"scalar"`: the backend's X25519, a point at a
/// time; `"portable"` only when a tool chose that ladder).
#[cfg(feature = "hazmat")]
pub(super) fn x25519_batch_path() -> &'static str {
    #[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
    return batch::name();
    #[cfg(not(all(feature = "x25519-batch", target_arch = "x86_64")))]
    "scalar"
}

/// [`x25519_batch_path`] as it is when no tool has chosen a path:
/// `"ifma"`, `"avx2"` or `"scalar"`.
#[cfg(feature = "hazmat")]
pub(super) fn x25519_batch_path_automatic() -> &'static str {
    #[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
    return batch::automatic_name();
    #[cfg(not(all(feature = "x25519-batch", target_arch = "x86_64")))]
    "scalar"
}

/// ML-KEM-768 (FIPS 203) as the hybrid uses it: keys from their 64-byte
/// seed, encapsulation with given randomness, decapsulation with a key
/// expanded once.
pub(super) trait MlKem768 {
    /// An expanded decapsulation key (with its encapsulation key). Wipes
    /// itself on drop.
    type DecapsulationKey: Send + Sync;
    /// An expanded, validated encapsulation key.
    type EncapsulationKey: Clone + Send + Sync;

    /// `ML-KEM.KeyGen_internal(d, z)` from the seed `d ‖ z`.
    fn expand(seed: &[u8; MLKEM_SEED_LEN]) -> Self::DecapsulationKey;

    /// The encapsulation key of `dk`, serialised.
    fn encapsulation_key_bytes(dk: &Self::DecapsulationKey) -> [u8; MLKEM_EK_LEN];

    /// The encapsulation key of `dk`, expanded.
    fn encapsulation_key(dk: &Self::DecapsulationKey) -> Self::EncapsulationKey;

    /// Parse an encapsulation key, applying the FIPS 203 §7.2 modulus check
    /// (every coefficient below q). `None` if it fails.
    fn parse_encapsulation_key(bytes: &[u8; MLKEM_EK_LEN]) -> Option<Self::EncapsulationKey>;

    /// `ML-KEM.Encaps_internal(ek, m)`: ciphertext and shared secret.
    fn encapsulate(
        ek: &Self::EncapsulationKey,
        m: &[u8; 32],
    ) -> ([u8; MLKEM_CT_LEN], Zeroizing<[u8; 32]>);

    /// `ML-KEM.Decaps`: never fails (implicit rejection).
    fn decapsulate(dk: &Self::DecapsulationKey, ct: &[u8; MLKEM_CT_LEN]) -> Zeroizing<[u8; 32]>;
}

/// X25519 (RFC 7748) on raw secrets: the scalar is clamped and bit 255 of
/// the u-coordinate ignored at every use, and a non-canonical u is reduced.
pub(super) trait X25519 {
    /// `X25519(secret, 9)`.
    fn base_point(secret: &[u8; X25519_LEN]) -> [u8; X25519_LEN];

    /// `X25519(secret, point)`, or `None` when it is all zero (`point` has
    /// small order).
    fn shared_secret(
        secret: &[u8; X25519_LEN],
        point: &[u8; X25519_LEN],
    ) -> Option<Zeroizing<[u8; X25519_LEN]>>;
}

/// Whether a Diffie–Hellman output is all zero, that is, whether the peer's
/// point has small order: compared in constant time, then public (the
/// verdict depends on the point alone, and is returned as `Error::Kem`).
pub(super) fn all_zero(shared: &[u8; X25519_LEN]) -> bool {
    use subtle::ConstantTimeEq;
    crate::ct::verdict(shared.ct_eq(&[0u8; X25519_LEN]))
}

/// A backend: one implementation of each half.
pub(super) trait Backend {
    /// The ML-KEM-768 half.
    type MlKem: MlKem768;
    /// The X25519 half.
    type X25519: X25519;
}

/// The backend made of `M` and `X`.
pub(super) struct Pair<M, X>(core::marker::PhantomData<(M, X)>);

impl<M: MlKem768, X: X25519> Backend for Pair<M, X> {
    type MlKem = M;
    type X25519 = X;
}

/// The libcrux backend's X25519: verified assembly where the CPU has it
/// (feature `x25519-asm`), HACL\*'s portable code otherwise.
#[cfg(all(feature = "libcrux", feature = "x25519-asm"))]
#[cfg_attr(feature = "rustcrypto", allow(dead_code))]
pub(super) type LibcruxX25519 = asm::Verified<libcrux::Hacl>;
/// The libcrux backend's X25519: HACL\*'s portable code.
#[cfg(all(feature = "libcrux", not(feature = "x25519-asm")))]
#[cfg_attr(feature = "rustcrypto", allow(dead_code))]
pub(super) type LibcruxX25519 = libcrux::Hacl;

/// The libcrux backend as the library runs it.
#[cfg(feature = "libcrux")]
#[cfg_attr(feature = "rustcrypto", allow(dead_code))]
pub(super) type Libcrux = Pair<libcrux::MlKem, LibcruxX25519>;

/// The RustCrypto backend.
#[cfg(feature = "rustcrypto")]
pub(super) type RustCrypto = Pair<rustcrypto::MlKem, rustcrypto::Dalek>;

/// The backend the library runs on.
#[cfg(feature = "rustcrypto")]
pub(super) type Selected = RustCrypto;
/// The backend the library runs on.
#[cfg(all(feature = "libcrux", not(feature = "rustcrypto")))]
pub(super) type Selected = Libcrux;

/// The name of the selected backend.
#[cfg(feature = "rustcrypto")]
pub(super) const SELECTED: &str = "rustcrypto";
/// The name of the selected backend.
#[cfg(all(feature = "libcrux", not(feature = "rustcrypto")))]
pub(super) const SELECTED: &str = "libcrux";

/// Whether the libcrux backend's X25519 runs on verified assembly in this
/// process (feature `x25519-asm`, and a CPU with the instructions).
#[cfg(all(feature = "hazmat", feature = "x25519-asm", feature = "libcrux"))]
pub(super) fn x25519_asm_active() -> bool {
    asm::available()
}

/// Whether the libcrux backend's X25519 runs on verified assembly in this
/// process: never in this build.
#[cfg(all(
    feature = "hazmat",
    not(all(feature = "x25519-asm", feature = "libcrux"))
))]
pub(super) fn x25519_asm_active() -> bool {
    false
}
