//! The RustCrypto backend (feature `rustcrypto`): ML-KEM-768 from `ml-kem`
//! and X25519 from `x25519-dalek`, the crates the design names (SPEC.md
//! §11). Both are `no_std` without an allocator here (`ml-kem` without its
//! `alloc` feature keeps its keys inline).
//!
//! Keys wipe themselves through the crates' own `zeroize` support:
//! `ml_kem::DecapsulationKey` zeroizes its secret vector and seed on drop,
//! and the X25519 secret is handed to `x25519-dalek` as a `StaticSecret`,
//! which zeroizes on drop, as does its `SharedSecret`. `ml-kem`'s key types
//! never leave this module (they print their public half only, but nothing
//! here prints them).

use ml_kem::array::Array;
use ml_kem::kem::{Decapsulate, KeyExport};
use ml_kem::{B32, MlKem768 as Params, Seed};
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::{Zeroize, Zeroizing};

use super::{MlKem768, X25519};
use crate::geometry::{MLKEM_CT_LEN, MLKEM_EK_LEN, MLKEM_SEED_LEN, X25519_LEN};

/// ML-KEM-768 on RustCrypto `ml-kem`.
pub(in crate::kem) struct MlKem;

impl MlKem768 for MlKem {
    type DecapsulationKey = ml_kem::DecapsulationKey<Params>;
    type EncapsulationKey = ml_kem::EncapsulationKey<Params>;

    fn expand(seed: &[u8; MLKEM_SEED_LEN]) -> Self::DecapsulationKey {
        let mut seed = Seed::from(*seed);
        let dk = Self::DecapsulationKey::from_seed(seed);
        seed.zeroize();
        dk
    }

    fn encapsulation_key_bytes(dk: &Self::DecapsulationKey) -> [u8; MLKEM_EK_LEN] {
        dk.encapsulation_key().to_bytes().into()
    }

    fn encapsulation_key(dk: &Self::DecapsulationKey) -> Self::EncapsulationKey {
        dk.encapsulation_key().clone()
    }

    fn parse_encapsulation_key(bytes: &[u8; MLKEM_EK_LEN]) -> Option<Self::EncapsulationKey> {
        // `new` applies the FIPS 203 §7.2 modulus check.
        Self::EncapsulationKey::new(<&Array<u8, _>>::from(bytes)).ok()
    }

    fn encapsulate(
        ek: &Self::EncapsulationKey,
        m: &[u8; 32],
    ) -> ([u8; MLKEM_CT_LEN], Zeroizing<[u8; 32]>) {
        let (ct, mut ss) = ek.encapsulate_deterministic(<&B32>::from(m));
        let out = Zeroizing::new(ss.into());
        ss.zeroize();
        (ct.into(), out)
    }

    fn decapsulate(dk: &Self::DecapsulationKey, ct: &[u8; MLKEM_CT_LEN]) -> Zeroizing<[u8; 32]> {
        let mut ss = dk.decapsulate(<&Array<u8, _>>::from(ct));
        let out = Zeroizing::new(ss.into());
        ss.zeroize();
        out
    }
}

/// X25519 on `x25519-dalek` (Montgomery ladder for a shared secret,
/// precomputed Edwards tables for the base point).
pub(in crate::kem) struct Dalek;

impl X25519 for Dalek {
    fn base_point(secret: &[u8; X25519_LEN]) -> [u8; X25519_LEN] {
        PublicKey::from(&StaticSecret::from(*secret)).to_bytes()
    }

    fn shared_secret(
        secret: &[u8; X25519_LEN],
        point: &[u8; X25519_LEN],
    ) -> Option<Zeroizing<[u8; X25519_LEN]>> {
        let shared = StaticSecret::from(*secret).diffie_hellman(&PublicKey::from(*point));
        // All zero exactly when `point` has small order.
        let shared = Zeroizing::new(shared.to_bytes());
        (!super::all_zero(&shared)).then_some(shared)
    }
}
