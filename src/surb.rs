//! Single-use reply blocks (SPEC.md §5.3–§5.5).
//!
//! A SURB is a header for a path back to its creator, the first hop's id and
//! a fresh payload key. Whoever holds it can send one reply without learning
//! the path; only the creator, with the matching [`SurbKeys`], can read it.

use core::fmt;

use rand_core::CryptoRng;
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::aez::Aez;
use crate::bytes::{split, split_mut, sub, sub_mut};
use crate::commands::{Expect, NodeId};
use crate::error::{Error, Input, array_mut, array_ref};
use crate::geometry::{
    ENCRYPTED_PAYLOAD_LEN, ENCRYPTED_REPLY_LEN, HEADER_LEN, HOPS, NODE_ID_LEN, PACKET_LEN,
    PAYLOAD_LEN, PAYLOAD_TAG_LEN, SPRP_IV_LEN, SPRP_KEY_BLOCK_LEN, SPRP_KEY_LEN, SURB_KEYS_LEN,
    SURB_LEN, VERSION_LEN,
};
use crate::header::{self, Path};

/// A 6,058-byte SURB: header ‖ first hop ‖ reply key ‖ reply IV.
///
/// It holds the reply's payload key, so whoever holds the SURB can write
/// the reply; it does not reveal the path or the reply's contents. It is
/// single-use: [`Surb::reply`] consumes it (a second reply on the same SURB
/// would carry the same header and be dropped as a replay at the first hop),
/// and its key is wiped when it is dropped. Not `Clone`, and compared only
/// through [`Surb::as_bytes`] if at all.
pub struct Surb(Zeroizing<[u8; SURB_LEN]>);

impl Surb {
    /// Accept a SURB's bytes (checking its header version).
    ///
    /// # Errors
    /// [`Error::Version`] if the header's version bytes are not `00 00`.
    pub fn from_bytes(bytes: &[u8; SURB_LEN]) -> Result<Self, Error> {
        if *sub::<0, VERSION_LEN, SURB_LEN>(bytes) != [0, 0] {
            return Err(Error::Version);
        }
        Ok(Self(Zeroizing::new(*bytes)))
    }

    /// The 6,058 bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8; SURB_LEN] {
        &self.0
    }

    /// The hop the reply must be sent to.
    #[must_use]
    pub fn first_hop(&self) -> NodeId {
        NodeId(*sub::<HEADER_LEN, NODE_ID_LEN, SURB_LEN>(&self.0))
    }

    /// Build the reply packet carrying `payload` into `out`, and return the
    /// hop to send it to. Deterministic: the SURB fixes every key. Consumes
    /// the SURB, which is good for one reply only.
    pub fn reply(self, payload: &[u8; PAYLOAD_LEN], out: &mut [u8; PACKET_LEN]) -> NodeId {
        let (head, body) = split_mut::<HEADER_LEN, ENCRYPTED_PAYLOAD_LEN, PACKET_LEN>(out);
        *head = *sub::<0, HEADER_LEN, SURB_LEN>(&self.0);
        let (tag, text) = split_mut::<PAYLOAD_TAG_LEN, PAYLOAD_LEN, ENCRYPTED_PAYLOAD_LEN>(body);
        tag.fill(0);
        *text = *payload;
        let key_block = sub::<{ HEADER_LEN + NODE_ID_LEN }, SPRP_KEY_BLOCK_LEN, SURB_LEN>(&self.0);
        let (key, iv) = split::<SPRP_KEY_LEN, SPRP_IV_LEN, SPRP_KEY_BLOCK_LEN>(key_block);
        Aez::new(key).encipher(iv, body);
        self.first_hop()
    }
}

impl TryFrom<&[u8]> for Surb {
    type Error = Error;

    fn try_from(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_bytes(array_ref(Input::Surb, bytes)?)
    }
}

impl fmt::Debug for Surb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Surb")
            .field("first_hop", &self.first_hop())
            .finish_non_exhaustive()
    }
}

/// The 320 bytes that decrypt a reply: the four hops' payload keys, last
/// hop first, then the reply's own key. Secret; zeroized on drop.
pub struct SurbKeys(Zeroizing<[u8; SURB_KEYS_LEN]>);

impl SurbKeys {
    /// Accept 320 key bytes.
    #[must_use]
    pub fn from_bytes(bytes: &[u8; SURB_KEYS_LEN]) -> Self {
        Self(Zeroizing::new(*bytes))
    }

    /// The 320 key bytes (secret).
    #[must_use]
    pub fn as_bytes(&self) -> &[u8; SURB_KEYS_LEN] {
        &self.0
    }

    /// Decrypt a reply in place and return the 10,156-byte payload.
    ///
    /// Re-applies the four hops' layers, then removes the reply's own and
    /// checks the zero tag. On a bad tag every layer is put back, so the
    /// buffer is unchanged.
    ///
    /// # Errors
    /// [`Error::PayloadTag`] if the reply is not for these keys or was
    /// modified.
    pub fn decrypt_reply<'a>(
        &self,
        reply: &'a mut [u8; ENCRYPTED_REPLY_LEN],
    ) -> Result<&'a [u8; PAYLOAD_LEN], Error> {
        let mut ciphers = self.blocks().map(|(key, iv)| (Aez::new(key), iv));
        let [hops @ .., (own, own_iv)] = &mut ciphers;
        for (aez, iv) in hops.iter() {
            aez.encipher(iv, reply);
        }
        own.decipher(own_iv, reply);
        let tag = sub::<0, PAYLOAD_TAG_LEN, ENCRYPTED_REPLY_LEN>(reply);
        if !bool::from(tag.ct_eq(&[0u8; PAYLOAD_TAG_LEN])) {
            own.encipher(own_iv, reply);
            for (aez, iv) in hops.iter().rev() {
                aez.decipher(iv, reply);
            }
            return Err(Error::PayloadTag);
        }
        Ok(sub::<PAYLOAD_TAG_LEN, PAYLOAD_LEN, ENCRYPTED_REPLY_LEN>(
            reply,
        ))
    }

    /// The five key blocks in the order they are applied.
    fn blocks(&self) -> [(&[u8; SPRP_KEY_LEN], &[u8; SPRP_IV_LEN]); HOPS + 1] {
        let b = &*self.0;
        [
            split(sub::<0, SPRP_KEY_BLOCK_LEN, SURB_KEYS_LEN>(b)),
            split(sub::<SPRP_KEY_BLOCK_LEN, SPRP_KEY_BLOCK_LEN, SURB_KEYS_LEN>(b)),
            split(sub::<
                { 2 * SPRP_KEY_BLOCK_LEN },
                SPRP_KEY_BLOCK_LEN,
                SURB_KEYS_LEN,
            >(b)),
            split(sub::<
                { 3 * SPRP_KEY_BLOCK_LEN },
                SPRP_KEY_BLOCK_LEN,
                SURB_KEYS_LEN,
            >(b)),
            split(sub::<
                { 4 * SPRP_KEY_BLOCK_LEN },
                SPRP_KEY_BLOCK_LEN,
                SURB_KEYS_LEN,
            >(b)),
        ]
    }
}

impl TryFrom<&[u8]> for SurbKeys {
    type Error = Error;

    fn try_from(bytes: &[u8]) -> Result<Self, Error> {
        array_ref(Input::SurbKeys, bytes).map(Self::from_bytes)
    }
}

impl fmt::Debug for SurbKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SurbKeys").finish_non_exhaustive()
    }
}

impl Zeroize for SurbKeys {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl ZeroizeOnDrop for SurbKeys {}

// The bytes are `Zeroizing`: the reply key is wiped on drop.
impl ZeroizeOnDrop for Surb {}

/// View a received buffer as an encrypted reply, refusing any other length.
///
/// # Errors
/// [`Error::Length`] naming [`Input::EncryptedReply`].
pub fn encrypted_reply_mut(bytes: &mut [u8]) -> Result<&mut [u8; ENCRYPTED_REPLY_LEN], Error> {
    array_mut(Input::EncryptedReply, bytes)
}

/// Create a SURB over `path` (back to its creator) and the keys that
/// decrypt the reply sent on it.
///
/// The terminal hop's commands must be `recipient` and `surb_reply`.
///
/// # Errors
/// [`Error::Command`] if a hop's commands cannot be created.
pub fn create_surb<R: CryptoRng + ?Sized>(
    rng: &mut R,
    path: &Path<'_>,
) -> Result<(Surb, SurbKeys), Error> {
    header::check_commands(path, Expect::Reply)?;
    let mut reply_key = Zeroizing::new([0u8; SPRP_KEY_BLOCK_LEN]);
    rng.fill_bytes(&mut reply_key[..]);
    let secrets = header::encapsulate_path(rng, path)?;
    assemble(path, &secrets, &reply_key)
}

/// [`create_surb`] from known encapsulations and reply key block.
///
/// For conformance tests only (see
/// [`create_packet_from_encapsulations`](crate::packet::create_packet_from_encapsulations)).
///
/// # Errors
/// As [`create_surb`].
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub fn create_surb_from_encapsulations(
    path: &Path<'_>,
    encapsulations: &[(crate::kem::Ciphertext, [u8; 32]); HOPS],
    reply_key: &[u8; SPRP_KEY_BLOCK_LEN],
) -> Result<(Surb, SurbKeys), Error> {
    header::check_commands(path, Expect::Reply)?;
    let secrets = encapsulations
        .each_ref()
        .map(|(ct, ss)| header::HopSecret::from_parts(ct, ss));
    assemble(path, &secrets, reply_key)
}

/// Lay out the SURB and its keys once the secrets are known.
fn assemble(
    path: &Path<'_>,
    secrets: &header::PathSecrets,
    reply_key: &[u8; SPRP_KEY_BLOCK_LEN],
) -> Result<(Surb, SurbKeys), Error> {
    let mut surb = Zeroizing::new([0u8; SURB_LEN]);
    header::build(
        path,
        secrets,
        Expect::Reply,
        sub_mut::<0, HEADER_LEN, SURB_LEN>(&mut surb),
    )?;
    let [first, ..] = path;
    *sub_mut::<HEADER_LEN, NODE_ID_LEN, SURB_LEN>(&mut surb) = first.id.0;
    *sub_mut::<{ HEADER_LEN + NODE_ID_LEN }, SPRP_KEY_BLOCK_LEN, SURB_LEN>(&mut surb) = *reply_key;

    let mut keys = Zeroizing::new([0u8; SURB_KEYS_LEN]);
    for (block, secret) in keys
        .chunks_exact_mut(SPRP_KEY_BLOCK_LEN)
        .zip(secrets.iter().rev())
    {
        let (key, iv) = block.split_at_mut(SPRP_KEY_LEN);
        key.copy_from_slice(secret.keys.sprp_key());
        iv.copy_from_slice(secret.keys.iv());
    }
    *sub_mut::<{ HOPS * SPRP_KEY_BLOCK_LEN }, SPRP_KEY_BLOCK_LEN, SURB_KEYS_LEN>(&mut keys) =
        *reply_key;
    Ok((Surb(surb), SurbKeys(keys)))
}
