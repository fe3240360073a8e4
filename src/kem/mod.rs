//! The hybrid KEM `MLKEM768-X25519` with the split-PRF combiner (SPEC.md §2).
//!
//! Components in wire order: X25519 through the hashed-ElGamal adapter, then
//! ML-KEM-768 (FIPS 203). Key and ciphertext encodings are the reference's:
//!
//! | item        | layout                                              |
//! | ----------- | --------------------------------------------------- |
//! | public key  | X25519 public (32) ‖ ML-KEM encapsulation key (1,184) |
//! | private key | X25519 secret (32) ‖ ML-KEM encapsulation key (1,184) ‖ ML-KEM seed d‖z (64) |
//! | ciphertext  | X25519 ephemeral (32) ‖ ML-KEM ciphertext (1,088)     |
//!
//! A [`PrivateKey`] is validated and expanded once, when it is loaded; every
//! decapsulation then reuses the expanded ML-KEM key and the cached X25519
//! public key (the reference re-derives both for every packet).
//!
//! The two halves are computed by one backend chosen at compile time
//! ([`BACKEND`]; Cargo features `libcrux`, the default, and `rustcrypto`;
//! SPEC.md §11). Everything in this module — the adapter, the combiner,
//! the encodings, validation and zeroization — is the same for each.

mod backend;
pub(crate) mod blake2;
pub(crate) mod combiner;
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub mod differential;
mod x25519;

use core::fmt;

use rand_core::CryptoRng;
use subtle::{Choice, ConstantTimeEq};
use zeroize::{ZeroizeOnDrop, Zeroizing};

use self::backend::{Backend, MlKem768, Selected, X25519 as _};
use crate::bytes::{split, split_mut, sub, sub_mut};
use crate::error::{Error, Input, KeyError, array_ref};
use crate::geometry::{
    KEM_CIPHERTEXT_LEN, KEY_SEED_LEN, MLKEM_CT_LEN, MLKEM_EK_LEN, MLKEM_SEED_LEN, PRIVATE_KEY_LEN,
    PUBLIC_KEY_LEN, SHARED_SECRET_LEN, X25519_LEN,
};

/// The KEM backend this build runs on: `"libcrux"` or `"rustcrypto"`.
///
/// Chosen at compile time by Cargo features: `rustcrypto` if it is enabled
/// (even together with `libcrux`, which the default features turn on),
/// `libcrux` otherwise. See SPEC.md §11.
pub const BACKEND: &str = backend::SELECTED;

/// A KEM ciphertext as it sits in a header.
// Public only through `hazmat` (as `KemCiphertext`).
#[cfg_attr(not(feature = "hazmat"), allow(unreachable_pub))]
pub type Ciphertext = [u8; KEM_CIPHERTEXT_LEN];

/// The 32-byte hybrid shared secret. Zeroized on drop; never printed.
// Public only through `hazmat`.
#[cfg_attr(not(feature = "hazmat"), allow(unreachable_pub))]
pub struct SharedSecret(Zeroizing<[u8; SHARED_SECRET_LEN]>);

impl SharedSecret {
    /// The secret bytes.
    #[must_use]
    #[cfg_attr(not(feature = "hazmat"), allow(unreachable_pub))]
    pub fn as_bytes(&self) -> &[u8; SHARED_SECRET_LEN] {
        &self.0
    }
}

impl ConstantTimeEq for SharedSecret {
    fn ct_eq(&self, other: &Self) -> Choice {
        self.0.ct_eq(&*other.0)
    }
}

impl fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedSecret").finish_non_exhaustive()
    }
}

impl ZeroizeOnDrop for SharedSecret {}

/// A validated `MLKEM768-X25519` public key.
///
/// Loading checks the ML-KEM encapsulation key against FIPS 203 (every
/// coefficient below q) and refuses an X25519 key of small order.
#[derive(Clone)]
pub struct PublicKey {
    core: PublicCore<Selected>,
}

impl PublicKey {
    /// Parse and validate the 1,216-byte encoding.
    ///
    /// # Errors
    /// [`Error::Key`] if either half is refused.
    pub fn from_bytes(bytes: &[u8; PUBLIC_KEY_LEN]) -> Result<Self, Error> {
        PublicCore::from_bytes(bytes).map(|core| Self { core })
    }

    /// The 1,216-byte encoding.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; PUBLIC_KEY_LEN] {
        self.core.bytes
    }

    /// Borrow the 1,216-byte encoding.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8; PUBLIC_KEY_LEN] {
        &self.core.bytes
    }

    /// Encapsulate a fresh shared secret to this key.
    ///
    /// # Errors
    /// [`Error::Kem`] only if the X25519 exchange is non-contributory, which
    /// a key that passed [`PublicKey::from_bytes`] cannot cause.
    pub(crate) fn encapsulate<R: CryptoRng + ?Sized>(
        &self,
        rng: &mut R,
    ) -> Result<(Ciphertext, SharedSecret), Error> {
        let mut x25519_ephemeral = Zeroizing::new([0u8; X25519_LEN]);
        let mut mlkem_m = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(&mut x25519_ephemeral[..]);
        rng.fill_bytes(&mut mlkem_m[..]);
        self.core.encapsulate_with(&x25519_ephemeral, &mlkem_m)
    }

    /// Encapsulate with explicit randomness: the X25519 ephemeral secret and
    /// the ML-KEM message `m`.
    ///
    /// For test vectors only (feature `hazmat`). Reusing either value for
    /// two encapsulations breaks the KEM; [`PublicKey::encapsulate`] is the
    /// API.
    ///
    /// # Errors
    /// As [`PublicKey::encapsulate`].
    #[cfg(feature = "hazmat")]
    #[doc(hidden)]
    pub(crate) fn encapsulate_deterministic(
        &self,
        x25519_ephemeral: &[u8; X25519_LEN],
        mlkem_m: &[u8; 32],
    ) -> Result<(Ciphertext, SharedSecret), Error> {
        self.core.encapsulate_with(x25519_ephemeral, mlkem_m)
    }
}

impl TryFrom<&[u8]> for PublicKey {
    type Error = Error;

    fn try_from(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_bytes(array_ref(Input::PublicKey, bytes)?)
    }
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.core.bytes == other.core.bytes
    }
}

impl Eq for PublicKey {}

/// Hashes the 1,216-byte encoding, as `==` compares it, so a public key can
/// key a map (a node's directory of peers). A public key is public: neither
/// needs to run in constant time.
impl core::hash::Hash for PublicKey {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.core.bytes.hash(state);
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey(")?;
        for b in self.core.bytes.iter().take(8) {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…)")
    }
}

/// A loaded `MLKEM768-X25519` private key, ready to decapsulate.
///
/// Expanded once at load; zeroized on drop; never printed. `Send + Sync`:
/// one loaded key can serve many threads.
pub struct PrivateKey {
    secret: SecretCore<Selected>,
    public: PublicKey,
}

impl PrivateKey {
    /// Generate a key pair from `rng` (a fresh 96-byte seed, derived as the
    /// reference derives seeds).
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut seed = Zeroizing::new([0u8; KEY_SEED_LEN]);
        rng.fill_bytes(&mut seed[..]);
        Self::from_seed(&seed)
    }

    /// Derive a key pair from a 96-byte seed exactly as the reference's
    /// `DeriveKeyPair` does: `seed[32..96]` is the ML-KEM `d ‖ z`; the X25519
    /// secret is the first 32 bytes of an unbounded BLAKE2Xb over
    /// `BLAKE2b-256(seed[0..32])`.
    #[must_use]
    pub fn from_seed(seed: &[u8; KEY_SEED_LEN]) -> Self {
        Self::wrap(SecretCore::from_seed(seed))
    }

    /// Load the 1,280-byte encoding, refusing a key whose stored ML-KEM
    /// encapsulation key is not the one its seed derives.
    ///
    /// # Errors
    /// [`Error::Key`] with [`KeyError::Inconsistent`].
    pub fn from_bytes(bytes: &[u8; PRIVATE_KEY_LEN]) -> Result<Self, Error> {
        SecretCore::from_bytes(bytes).map(Self::wrap)
    }

    /// The key from its expanded halves.
    fn wrap((secret, core): (SecretCore<Selected>, PublicCore<Selected>)) -> Self {
        Self {
            secret,
            public: PublicKey { core },
        }
    }

    /// The 1,280-byte encoding (secret: zeroized when dropped).
    #[must_use]
    pub fn to_bytes(&self) -> Zeroizing<[u8; PRIVATE_KEY_LEN]> {
        self.secret.to_bytes(&self.public.core)
    }

    /// The matching public key.
    #[must_use]
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// Check that this key is the one behind `published`, the public key
    /// the node announced (in its PKI descriptor, say).
    ///
    /// Call it after loading a key from disk. Loading checks the ML-KEM
    /// half against its seed, but any 32 bytes are an X25519 secret: a key
    /// file damaged there loads without error and silently yields another
    /// public key, and every packet built for the published one would then
    /// fail its MAC. Public data only, so a plain comparison.
    ///
    /// # Errors
    /// [`Error::Key`] with [`KeyError::NotPublished`] if the public keys differ.
    pub fn check_public_key(&self, published: &PublicKey) -> Result<(), Error> {
        if self.public == *published {
            Ok(())
        } else {
            Err(KeyError::NotPublished.into())
        }
    }

    /// Decapsulate a KEM ciphertext.
    ///
    /// ML-KEM never fails (a wrong ciphertext gives a pseudo-random secret,
    /// FIPS 203 implicit rejection); X25519 fails on a small-order point.
    ///
    /// # Errors
    /// [`Error::Kem`] if the X25519 half is a point of small order.
    pub(crate) fn decapsulate(&self, ct: &Ciphertext) -> Result<SharedSecret, Error> {
        self.secret
            .decapsulate_traced(&self.public.core, ct)
            .map(|(ss, _)| ss)
    }

    /// The X25519 half of [`decapsulate`](Self::decapsulate) for a batch
    /// of ciphertexts' ephemeral keys at once, the first `count` of
    /// `ephemerals`: each Diffie–Hellman output, `None` where it is all
    /// zero (and past `count`).
    /// [`decapsulate_with`](Self::decapsulate_with) finishes each.
    pub(crate) fn diffie_hellman_batch<const N: usize>(
        &self,
        ephemerals: &[[u8; X25519_LEN]; N],
        count: usize,
    ) -> [Option<Zeroizing<[u8; X25519_LEN]>>; N] {
        #[cfg(all(feature = "x25519-batch", target_arch = "x86_64"))]
        if let Some(shared) = backend::batch::shared_secrets(&self.secret.x25519, ephemerals, count)
        {
            return shared;
        }
        let mut lane = 0;
        ephemerals.each_ref().map(|point| {
            lane += 1;
            if lane > count {
                return None;
            }
            <Selected as Backend>::X25519::shared_secret(&self.secret.x25519, point)
        })
    }

    /// [`decapsulate`](Self::decapsulate) with the X25519 Diffie–Hellman
    /// output of `ct`'s ephemeral key given (from
    /// [`diffie_hellman_batch`](Self::diffie_hellman_batch)).
    ///
    /// # Errors
    /// [`Error::Kem`] if `dh` is `None` (a point of small order).
    pub(crate) fn decapsulate_with(
        &self,
        ct: &Ciphertext,
        dh: Option<&[u8; X25519_LEN]>,
    ) -> Result<SharedSecret, Error> {
        let (ct_x, ct_m) = split_ciphertext(ct);
        let (x_pub, _) = split_public(&self.public.core.bytes);
        let ss_x = x25519::finish_decapsulate(dh, x_pub, ct_x)?;
        self.secret.finish(ss_x, ct_x, ct_m).map(|(ss, _)| ss)
    }
}

impl TryFrom<&[u8]> for PrivateKey {
    type Error = Error;

    fn try_from(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_bytes(array_ref(Input::PrivateKey, bytes)?)
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrivateKey")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

// Every secret field wipes itself on drop (see `SecretCore`); the public
// half needs no wiping.
impl ZeroizeOnDrop for PrivateKey {}

/// The expanded ML-KEM decapsulation key of backend `B`.
type DecapsulationKeyOf<B> = <<B as Backend>::MlKem as MlKem768>::DecapsulationKey;
/// The expanded ML-KEM encapsulation key of backend `B`.
type EncapsulationKeyOf<B> = <<B as Backend>::MlKem as MlKem768>::EncapsulationKey;

/// A validated public key on backend `B`: its encoding and its ML-KEM half
/// expanded.
struct PublicCore<B: Backend> {
    bytes: [u8; PUBLIC_KEY_LEN],
    mlkem: EncapsulationKeyOf<B>,
}

impl<B: Backend> Clone for PublicCore<B> {
    fn clone(&self) -> Self {
        Self {
            bytes: self.bytes,
            mlkem: self.mlkem.clone(),
        }
    }
}

impl<B: Backend> PublicCore<B> {
    /// Parse and validate (see [`PublicKey::from_bytes`]).
    fn from_bytes(bytes: &[u8; PUBLIC_KEY_LEN]) -> Result<Self, Error> {
        let (x25519, ek) = split_public(bytes);
        if x25519::is_low_order::<B::X25519>(x25519) {
            return Err(KeyError::X25519LowOrder.into());
        }
        let mlkem = B::MlKem::parse_encapsulation_key(ek)
            .ok_or(Error::Key(KeyError::MlKemEncapsulationKey))?;
        Ok(Self {
            bytes: *bytes,
            mlkem,
        })
    }

    /// Both components' encapsulations from their randomness, combined.
    fn encapsulate_with(
        &self,
        x25519_ephemeral: &[u8; X25519_LEN],
        mlkem_m: &[u8; 32],
    ) -> Result<(Ciphertext, SharedSecret), Error> {
        let (x_pub, _) = split_public(&self.bytes);
        let (ct_x, ss_x) = x25519::encapsulate::<B::X25519>(x25519_ephemeral, x_pub)?;
        let (ct_m, ss_m) = B::MlKem::encapsulate(&self.mlkem, mlkem_m);
        let (ss, _) = combiner::combine(&ss_x, &ct_x, &ss_m, &ct_m);
        let mut ct = [0u8; KEM_CIPHERTEXT_LEN];
        let (ct_x_out, ct_m_out) = ct.split_at_mut(X25519_LEN);
        ct_x_out.copy_from_slice(&ct_x);
        ct_m_out.copy_from_slice(&ct_m);
        Ok((ct, SharedSecret(ss)))
    }
}

/// The secret half of a key pair on backend `B`, expanded. Every field
/// wipes itself on drop: the X25519 secret and the ML-KEM seed are
/// `Zeroizing`, the expanded ML-KEM key is the backend's own type, which
/// zeroizes or overwrites itself (see the backend modules).
struct SecretCore<B: Backend> {
    x25519: x25519::Secret,
    mlkem: DecapsulationKeyOf<B>,
    mlkem_seed: Zeroizing<[u8; MLKEM_SEED_LEN]>,
}

impl<B: Backend> SecretCore<B> {
    /// Derive a key pair from a seed (see [`PrivateKey::from_seed`]).
    fn from_seed(seed: &[u8; KEY_SEED_LEN]) -> (Self, PublicCore<B>) {
        let (x_seed, mlkem_seed) = split::<X25519_LEN, MLKEM_SEED_LEN, KEY_SEED_LEN>(seed);
        let digest = blake2::blake2b_256(&[x_seed]);
        let x_secret =
            blake2::blake2xb_prefix::<X25519_LEN>(&[], &digest[..], blake2::XOF_LENGTH_UNKNOWN, 64);
        Self::assemble(x_secret, mlkem_seed)
    }

    /// Load an encoding (see [`PrivateKey::from_bytes`]).
    fn from_bytes(bytes: &[u8; PRIVATE_KEY_LEN]) -> Result<(Self, PublicCore<B>), Error> {
        let x_secret = Zeroizing::new(*sub::<0, X25519_LEN, PRIVATE_KEY_LEN>(bytes));
        let stored_ek = sub::<X25519_LEN, MLKEM_EK_LEN, PRIVATE_KEY_LEN>(bytes);
        let d_z = sub::<{ X25519_LEN + MLKEM_EK_LEN }, MLKEM_SEED_LEN, PRIVATE_KEY_LEN>(bytes);
        let (secret, public) = Self::assemble(x_secret, d_z);
        if public.bytes.get(X25519_LEN..) != Some(&stored_ek[..]) {
            return Err(KeyError::Inconsistent.into());
        }
        Ok((secret, public))
    }

    /// Expand both secrets and compute the public key next to them.
    fn assemble(
        x25519: x25519::Secret,
        mlkem_seed: &[u8; MLKEM_SEED_LEN],
    ) -> (Self, PublicCore<B>) {
        let mlkem = B::MlKem::expand(mlkem_seed);
        let mut bytes = [0u8; PUBLIC_KEY_LEN];
        let (x_out, ek_out) = split_mut::<X25519_LEN, MLKEM_EK_LEN, PUBLIC_KEY_LEN>(&mut bytes);
        *x_out = x25519::public_key::<B::X25519>(&x25519);
        *ek_out = B::MlKem::encapsulation_key_bytes(&mlkem);
        // Public: a key pair's public half is what the node publishes.
        crate::ct::declassify(&mut bytes);
        let public = PublicCore {
            bytes,
            mlkem: B::MlKem::encapsulation_key(&mlkem),
        };
        let secret = Self {
            x25519,
            mlkem,
            mlkem_seed: Zeroizing::new(*mlkem_seed),
        };
        (secret, public)
    }

    /// The 1,280-byte encoding, with `public` this key's public half.
    fn to_bytes(&self, public: &PublicCore<B>) -> Zeroizing<[u8; PRIVATE_KEY_LEN]> {
        let mut out = Zeroizing::new([0u8; PRIVATE_KEY_LEN]);
        *sub_mut::<0, X25519_LEN, PRIVATE_KEY_LEN>(&mut out) = *self.x25519;
        *sub_mut::<X25519_LEN, MLKEM_EK_LEN, PRIVATE_KEY_LEN>(&mut out) =
            *split::<X25519_LEN, MLKEM_EK_LEN, PUBLIC_KEY_LEN>(&public.bytes).1;
        *sub_mut::<{ X25519_LEN + MLKEM_EK_LEN }, MLKEM_SEED_LEN, PRIVATE_KEY_LEN>(&mut out) =
            *self.mlkem_seed;
        out
    }

    /// Decapsulate and keep every intermediate value (`public` is this
    /// key's public half).
    fn decapsulate_traced(
        &self,
        public: &PublicCore<B>,
        ct: &Ciphertext,
    ) -> Result<(SharedSecret, Trace), Error> {
        let (ct_x, ct_m) = split_ciphertext(ct);
        let (x_pub, _) = split_public(&public.bytes);
        let ss_x = x25519::decapsulate::<B::X25519>(&self.x25519, x_pub, ct_x)?;
        self.finish(ss_x, ct_x, ct_m)
    }

    /// Decapsulation once the X25519 half is done: the ML-KEM half and
    /// the combiner.
    fn finish(
        &self,
        ss_x: Zeroizing<[u8; 32]>,
        ct_x: &[u8; X25519_LEN],
        ct_m: &[u8; MLKEM_CT_LEN],
    ) -> Result<(SharedSecret, Trace), Error> {
        let ss_m = B::MlKem::decapsulate(&self.mlkem, ct_m);
        let (ss, combined) = combiner::combine(&ss_x, ct_x, &ss_m, ct_m);
        Ok((
            SharedSecret(ss),
            Trace {
                ss_x,
                ss_m,
                combined,
            },
        ))
    }
}

/// Intermediate values of one decapsulation (read only by the `hazmat`
/// conformance hook).
#[cfg_attr(not(feature = "hazmat"), allow(dead_code))]
struct Trace {
    ss_x: Zeroizing<[u8; 32]>,
    ss_m: Zeroizing<[u8; 32]>,
    combined: combiner::Intermediates,
}

/// Intermediate values of a decapsulation, for conformance debugging only.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub struct DebugIntermediates {
    /// X25519 adapter output.
    pub x25519_adapter_shared_secret: [u8; 32],
    /// ML-KEM shared secret.
    pub mlkem_shared_secret: [u8; 32],
    /// Split-PRF key of the X25519 half.
    pub splitprf_key_x25519: [u8; 32],
    /// Split-PRF key of the ML-KEM half.
    pub splitprf_key_mlkem: [u8; 32],
    /// Split-PRF hash of the X25519 half.
    pub splitprf_hash_x25519: [u8; 32],
    /// Split-PRF hash of the ML-KEM half.
    pub splitprf_hash_mlkem: [u8; 32],
    /// The hybrid shared secret.
    pub shared_secret: [u8; 32],
}

/// Decapsulate and expose every intermediate secret. Conformance tooling
/// only: it copies secrets out of their zeroizing wrappers.
///
/// # Errors
/// As [`PrivateKey::decapsulate`].
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub(crate) fn debug_decapsulate(
    key: &PrivateKey,
    ct: &Ciphertext,
) -> Result<DebugIntermediates, Error> {
    key.secret
        .decapsulate_traced(&key.public.core, ct)
        .map(DebugIntermediates::from_trace)
}

#[cfg(feature = "hazmat")]
impl DebugIntermediates {
    /// Copy a decapsulation's values out of their zeroizing wrappers.
    fn from_trace((ss, t): (SharedSecret, Trace)) -> Self {
        Self {
            x25519_adapter_shared_secret: *t.ss_x,
            mlkem_shared_secret: *t.ss_m,
            splitprf_key_x25519: *t.combined.key_x25519,
            splitprf_key_mlkem: *t.combined.key_mlkem,
            splitprf_hash_x25519: *t.combined.hash_x25519,
            splitprf_hash_mlkem: *t.combined.hash_mlkem,
            shared_secret: *ss.as_bytes(),
        }
    }
}

/// Split a public key into its X25519 and ML-KEM halves.
fn split_public(bytes: &[u8; PUBLIC_KEY_LEN]) -> (&[u8; X25519_LEN], &[u8; MLKEM_EK_LEN]) {
    split(bytes)
}

/// Split a ciphertext into its X25519 and ML-KEM halves.
fn split_ciphertext(ct: &Ciphertext) -> (&[u8; X25519_LEN], &[u8; MLKEM_CT_LEN]) {
    split(ct)
}
