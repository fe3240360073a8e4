//! Single-use reply blocks (SPEC.md §5.3–§5.5).
//!
//! A SURB is a header for a path back to its creator, the first hop's id and
//! a fresh payload key. Whoever holds it can send one reply without learning
//! the path; only the creator, with the matching [`SurbKeys`], can read it.

use core::fmt;

use rand_core::CryptoRng;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::bytes::{field, field_mut, split_mut};
use crate::commands::{NodeId, Terminal};
use crate::error::{Error, Input, array_mut, array_ref};
use crate::geometry::layout::internal::{self, surb_keys};
use crate::geometry::layout::{packet, surb as at};
use crate::geometry::{
    ENCRYPTED_REPLY_LEN, HEADER_LEN, HOPS, PACKET_LEN, PAYLOAD_LEN, SPRP_KEY_BLOCK_LEN,
    SURB_KEYS_LEN, SURB_LEN,
};
use crate::header::{self, Areas, Path, PathSecrets};
use crate::payload::{self, LayerKey};

/// A 6,058-byte SURB: header ‖ first hop ‖ reply key ‖ reply IV.
///
/// It holds the reply's payload key, so whoever holds the SURB can write
/// the reply; it does not reveal the path or the reply's contents. It is
/// single-use: [`Surb::reply`] consumes it (a second reply on the same SURB
/// would carry the same header and be dropped as a replay at the first hop),
/// and its key is wiped when it is dropped. Not `Clone`, and compared only
/// through [`Surb::as_bytes`] if at all.
pub struct Surb([u8; SURB_LEN]);

impl Surb {
    /// Accept a SURB's bytes (checking its header version).
    ///
    /// # Errors
    /// [`Error::Version`] if the header's version bytes are not `00 00`.
    pub fn from_bytes(bytes: &[u8; SURB_LEN]) -> Result<Self, Error> {
        if *field!(bytes, packet::VERSION) != internal::VERSION {
            return Err(Error::Version);
        }
        Ok(Self(*bytes))
    }

    /// The 6,058 bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8; SURB_LEN] {
        &self.0
    }

    /// The hop the reply must be sent to.
    #[must_use]
    pub fn first_hop(&self) -> NodeId {
        NodeId(*field!(&self.0, at::FIRST_HOP))
    }

    /// Build the reply packet carrying `payload` into `out`, and return the
    /// hop to send it to. Deterministic: the SURB fixes every key. Consumes
    /// the SURB, which is good for one reply only.
    pub fn reply(self, payload: &[u8; PAYLOAD_LEN], out: &mut [u8; PACKET_LEN]) -> NodeId {
        let (head, body) = split_mut::<HEADER_LEN, ENCRYPTED_REPLY_LEN, PACKET_LEN>(out);
        *head = *field!(&self.0, at::HEADER);
        let key = LayerKey::from_block(field!(&self.0, at::REPLY_KEY_BLOCK));
        payload::seal(payload, [key.layer()], body);
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

/// The keys that decrypt a reply: the four hops' payload layer keys, last
/// hop first, then the reply's own. Secret; zeroized on drop. Stored and
/// loaded as 320 bytes (five 64-byte key blocks) by
/// [`SurbKeys::to_bytes`] and [`SurbKeys::from_bytes`], for a client that
/// keeps them across restarts.
pub struct SurbKeys {
    hops: [LayerKey; HOPS],
    own: LayerKey,
}

impl SurbKeys {
    /// Accept 320 key bytes.
    ///
    /// Infallible, unlike [`Surb::from_bytes`]: every 320 bytes are five
    /// valid key blocks (nothing in them can be checked), whereas a SURB
    /// carries a version field that must be `00 00`. The length is the
    /// type's; from a slice, `TryFrom<&[u8]>` refuses any other length.
    #[must_use]
    pub fn from_bytes(bytes: &[u8; SURB_KEYS_LEN]) -> Self {
        Self {
            hops: [
                LayerKey::from_block(field!(bytes, surb_keys::hop(0))),
                LayerKey::from_block(field!(bytes, surb_keys::hop(1))),
                LayerKey::from_block(field!(bytes, surb_keys::hop(2))),
                LayerKey::from_block(field!(bytes, surb_keys::hop(3))),
            ],
            own: LayerKey::from_block(field!(bytes, surb_keys::OWN)),
        }
    }

    /// The 320 key bytes (secret: zeroized when dropped).
    #[must_use]
    pub fn to_bytes(&self) -> Zeroizing<[u8; SURB_KEYS_LEN]> {
        let mut out = Zeroizing::new([0u8; SURB_KEYS_LEN]);
        let [h0, h1, h2, h3] = &self.hops;
        h0.write_block(field_mut!(&mut *out, surb_keys::hop(0)));
        h1.write_block(field_mut!(&mut *out, surb_keys::hop(1)));
        h2.write_block(field_mut!(&mut *out, surb_keys::hop(2)));
        h3.write_block(field_mut!(&mut *out, surb_keys::hop(3)));
        self.own.write_block(field_mut!(&mut *out, surb_keys::OWN));
        out
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
        payload::open_reply(
            self.hops.each_ref().map(LayerKey::layer),
            self.own.layer(),
            reply,
        )?;
        Ok(payload::contents(reply))
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
        self.hops.iter_mut().for_each(Zeroize::zeroize);
        self.own.zeroize();
    }
}

// Every key block wipes itself on drop.
impl ZeroizeOnDrop for SurbKeys {}

/// Wipes the reply key block, the SURB's one secret: the header and the
/// first hop are what the reply carries in clear. (Wiping all 6,058 bytes,
/// a volatile write per byte, cost more than the rest of a reply.)
impl Drop for Surb {
    fn drop(&mut self) {
        field_mut!(&mut self.0, at::REPLY_KEY_BLOCK).zeroize();
    }
}

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
    let areas = Areas::new(path, Terminal::Reply)?;
    let mut reply_key = Zeroizing::new([0u8; SPRP_KEY_BLOCK_LEN]);
    rng.fill_bytes(&mut reply_key[..]);
    let secrets = header::encapsulate_path(rng, path)?;
    Ok(assemble(path, &areas, &secrets, &reply_key))
}

/// Lay out the SURB and its keys once the areas, secrets and reply key
/// block are known.
pub(crate) fn assemble(
    path: &Path<'_>,
    areas: &Areas,
    secrets: &PathSecrets,
    reply_key: &[u8; SPRP_KEY_BLOCK_LEN],
) -> (Surb, SurbKeys) {
    // Built in place: the key block is wiped when the `Surb` is dropped.
    let mut surb = Surb([0u8; SURB_LEN]);
    header::build(areas, secrets, field_mut!(&mut surb.0, at::HEADER));
    let [first, ..] = path;
    *field_mut!(&mut surb.0, at::FIRST_HOP) = first.id.0;
    *field_mut!(&mut surb.0, at::REPLY_KEY_BLOCK) = *reply_key;
    // The hops' layers in the order a reply is decrypted: last hop first.
    let [s0, s1, s2, s3] = secrets;
    let keys = SurbKeys {
        hops: [s3, s2, s1, s0].map(|s| LayerKey::from_layer(s.keys.layer())),
        own: LayerKey::from_block(reply_key),
    };
    (surb, keys)
}
