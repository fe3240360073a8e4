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

use crate::bytes::field;
use crate::geometry::layout::internal::kdf;
use crate::geometry::{
    KEM_CIPHERTEXT_LEN, MAC_LEN, REPLAY_TAG_LEN, SHARED_SECRET_LEN, SPRP_IV_LEN, SPRP_KEY_LEN,
    STREAM_KEY_LEN,
};
use crate::payload::Layer;

/// HKDF `info` of the Katzenpost KDF.
const KDF_INFO: &[u8] = b"katzenpost-kdf-v0-hkdf-sha256";
/// Bytes of key material expanded per hop (the last 32 are unused).
const KDF_OUTPUT_LEN: usize = kdf::OUTPUT_LEN;
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

    /// Header MAC key.
    fn mac_key(&self) -> &[u8; MAC_LEN] {
        field!(&*self.okm, kdf::MAC_KEY)
    }

    /// Header stream key.
    fn stream_key(&self) -> &[u8; STREAM_KEY_LEN] {
        field!(&*self.okm, kdf::STREAM_KEY)
    }

    /// Header stream IV; also the payload SPRP's nonce.
    fn iv(&self) -> &[u8; SPRP_IV_LEN] {
        field!(&*self.okm, kdf::STREAM_IV)
    }

    /// Payload SPRP key.
    fn sprp_key(&self) -> &[u8; SPRP_KEY_LEN] {
        field!(&*self.okm, kdf::SPRP_KEY)
    }

    /// This hop's payload layer: the SPRP key with the stream IV as nonce.
    pub(crate) fn layer(&self) -> Layer<'_> {
        Layer::new(self.sprp_key(), self.iv())
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

    /// HMAC-SHA256 of `msg` under the header MAC key.
    pub(crate) fn mac(&self, msg: &[u8]) -> [u8; MAC_LEN] {
        mac(self.mac_key(), msg)
    }

    /// Whether `tag` is the MAC of `msg`, compared in constant time.
    pub(crate) fn verify_mac(&self, msg: &[u8], tag: &[u8; MAC_LEN]) -> bool {
        let expected = Zeroizing::new(self.mac(msg));
        // Public: `unwrap` returns the verdict (`Error::Mac` or not).
        crate::ct::verdict(expected.ct_eq(tag))
    }
}

/// HMAC-SHA256 keyed with a 32-byte key.
///
/// HMAC pads keys shorter than the hash block with zeros (RFC 2104 §2), so
/// passing the padded 64-byte block is the same function through the
/// infallible constructor.
fn hmac_sha256(key: &[u8; MAC_LEN]) -> Hmac<Sha256> {
    let mut block = Zeroizing::new([0u8; HMAC_BLOCK_LEN]);
    for (b, k) in block.iter_mut().zip(key) {
        *b = *k;
    }
    <Hmac<Sha256> as KeyInit>::new((&*block).into())
}

/// HKDF-Expand (RFC 5869 §2.3) with SHA-256 for exactly 160 bytes:
/// `T(i) = HMAC(PRK, T(i-1) ‖ info ‖ i)`, five blocks, written straight
/// into a zeroizing buffer.
pub(crate) fn hkdf_expand(prk: &[u8; SHARED_SECRET_LEN]) -> Zeroizing<[u8; KDF_OUTPUT_LEN]> {
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

/// HMAC-SHA256 of `msg` under a 32-byte key.
pub(crate) fn mac(key: &[u8; MAC_LEN], msg: &[u8]) -> [u8; MAC_LEN] {
    let mut mac = hmac_sha256(key);
    mac.update(msg);
    mac.finalize().into_bytes().into()
}
