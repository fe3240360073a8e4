//! Per-hop keys and the symmetric primitives they key (SPEC.md §3).
//!
//! One KEM shared secret per hop expands (HKDF-SHA256, Expand only) into the
//! header MAC key, the header stream key and IV, and the payload SPRP key.
//! The replay tag needs no key at all: it is a hash of the KEM ciphertext,
//! so a mix can look it up before doing any public-key work.

use aes::Aes256;
use ctr::Ctr128BE;
use ctr::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256, Sha512_256};
use subtle::ConstantTimeEq;
use zeroize::{ZeroizeOnDrop, Zeroizing};

use crate::aez::Aez;
use crate::bytes::sub;
use crate::geometry::{
    KEM_CIPHERTEXT_LEN, MAC_LEN, REPLAY_TAG_LEN, SHARED_SECRET_LEN, SPRP_IV_LEN, SPRP_KEY_LEN,
};

/// HKDF `info` of the Katzenpost KDF.
const KDF_INFO: &[u8] = b"katzenpost-kdf-v0-hkdf-sha256";
/// Bytes of key material expanded per hop (the last 32 are unused).
pub(crate) const KDF_OUTPUT_LEN: usize = 160;
/// SHA-256 output, the HKDF block.
const HASH_LEN: usize = 32;
/// SHA-256 block, the HMAC key block.
const HMAC_BLOCK_LEN: usize = 64;

/// Header stream cipher: AES-256, 128-bit big-endian counter (Go's
/// `cipher.NewCTR`, wrap-around included).
pub(crate) type HeaderStream = Ctr128BE<Aes256>;

/// The key set of one hop, derived from its KEM shared secret.
/// Zeroized on drop; never printed.
pub(crate) struct HopKeys {
    okm: Zeroizing<[u8; KDF_OUTPUT_LEN]>,
}

impl ZeroizeOnDrop for HopKeys {}

impl HopKeys {
    /// `HKDF-SHA256-Expand(PRK = shared secret, info, 160)`.
    pub(crate) fn derive(shared_secret: &[u8; SHARED_SECRET_LEN]) -> Self {
        Self {
            okm: hkdf_expand(shared_secret),
        }
    }

    /// Header MAC key, `okm[0..32)`.
    pub(crate) fn mac_key(&self) -> &[u8; MAC_LEN] {
        sub::<0, MAC_LEN, KDF_OUTPUT_LEN>(&self.okm)
    }

    /// Header stream key, `okm[32..64)`.
    pub(crate) fn stream_key(&self) -> &[u8; 32] {
        sub::<32, 32, KDF_OUTPUT_LEN>(&self.okm)
    }

    /// Header stream IV, `okm[64..80)`; also the payload SPRP's nonce.
    pub(crate) fn iv(&self) -> &[u8; SPRP_IV_LEN] {
        sub::<64, SPRP_IV_LEN, KDF_OUTPUT_LEN>(&self.okm)
    }

    /// Payload SPRP key, `okm[80..128)`.
    pub(crate) fn sprp_key(&self) -> &[u8; SPRP_KEY_LEN] {
        sub::<80, SPRP_KEY_LEN, KDF_OUTPUT_LEN>(&self.okm)
    }

    /// The header keystream generator, positioned at `offset`.
    pub(crate) fn stream_at(&self, offset: usize) -> HeaderStream {
        let mut stream = HeaderStream::new(self.stream_key().into(), self.iv().into());
        stream.seek(offset);
        stream
    }

    /// XOR the header keystream, from `offset` on, into `buf`.
    pub(crate) fn apply_stream(&self, offset: usize, buf: &mut [u8]) {
        self.stream_at(offset).apply_keystream(buf);
    }

    /// The payload SPRP of this hop.
    pub(crate) fn sprp(&self) -> Aez {
        Aez::new(self.sprp_key())
    }

    /// HMAC-SHA256 over the concatenation of `parts`.
    pub(crate) fn mac(&self, parts: &[&[u8]]) -> [u8; MAC_LEN] {
        let mut mac = hmac_sha256(self.mac_key());
        for part in parts {
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    /// Whether `tag` is the MAC of `msg`, compared in constant time.
    pub(crate) fn verify_mac(&self, msg: &[u8], tag: &[u8; MAC_LEN]) -> bool {
        let expected = Zeroizing::new(self.mac(&[msg]));
        expected.ct_eq(tag).into()
    }
}

/// HMAC-SHA256 keyed with a 32-byte key.
///
/// HMAC pads keys shorter than the hash block with zeros (RFC 2104 §2), so
/// passing the padded 64-byte block is the same function through the
/// infallible constructor.
fn hmac_sha256(key: &[u8; 32]) -> Hmac<Sha256> {
    let mut block = Zeroizing::new([0u8; HMAC_BLOCK_LEN]);
    for (b, k) in block.iter_mut().zip(key) {
        *b = *k;
    }
    <Hmac<Sha256> as KeyInit>::new((&*block).into())
}

/// HKDF-Expand (RFC 5869 §2.3) with SHA-256 for exactly 160 bytes:
/// `T(i) = HMAC(PRK, T(i-1) ‖ info ‖ i)`, five blocks, written straight
/// into a zeroizing buffer.
fn hkdf_expand(prk: &[u8; SHARED_SECRET_LEN]) -> Zeroizing<[u8; KDF_OUTPUT_LEN]> {
    let base = hmac_sha256(prk);
    let mut okm = Zeroizing::new([0u8; KDF_OUTPUT_LEN]);
    let mut previous: Zeroizing<[u8; HASH_LEN]> = Zeroizing::new([0; HASH_LEN]);
    for (counter, block) in (1u8..).zip(okm.chunks_exact_mut(HASH_LEN)) {
        let mut mac = base.clone();
        if counter > 1 {
            mac.update(&previous[..]);
        }
        mac.update(KDF_INFO);
        mac.update(&[counter]);
        *previous = mac.finalize().into_bytes().into();
        block.copy_from_slice(&previous[..]);
    }
    okm
}

/// SHA-512/256 of a KEM ciphertext: the replay tag a mix remembers.
pub(crate) fn replay_tag(kem_ciphertext: &[u8; KEM_CIPHERTEXT_LEN]) -> [u8; REPLAY_TAG_LEN] {
    Sha512_256::digest(kem_ciphertext).into()
}

/// The 160-byte KDF output for `ikm`, for conformance vectors.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub fn debug_kdf(ikm: &[u8; SHARED_SECRET_LEN]) -> Zeroizing<[u8; KDF_OUTPUT_LEN]> {
    hkdf_expand(ikm)
}

/// The header keystream for `key` and `iv`, for conformance vectors.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub fn debug_keystream(key: &[u8; 32], iv: &[u8; SPRP_IV_LEN], out: &mut [u8]) {
    out.fill(0);
    HeaderStream::new(key.into(), iv.into()).apply_keystream(out);
}

/// HMAC-SHA256 of `msg` under a 32-byte header MAC key, for conformance
/// vectors.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
#[must_use]
pub fn debug_mac(key: &[u8; MAC_LEN], msg: &[u8]) -> [u8; MAC_LEN] {
    let mut mac = hmac_sha256(key);
    mac.update(msg);
    mac.finalize().into_bytes().into()
}
