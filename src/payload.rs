//! The payload and its layers (SPEC.md §5.2, §5.4, §5.5, §6).
//!
//! A payload travels as `tag ‖ payload`, the 32-byte tag all zero, under
//! one AEZ layer per hop (a SURB reply under one more, the reply key's).
//! Every place that adds, removes or checks a layer goes through this
//! module, so the tag rule lives here once: the tag is checked in constant
//! time after the last layer comes off, and when it is not zero the layers
//! removed are put back, so the caller's buffer is as it was.

use subtle::ConstantTimeEq;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::bytes::{field, field_mut};
use crate::error::Error;
use crate::geometry::layout::internal::key_block;
use crate::geometry::layout::payload;
use crate::geometry::{
    ENCRYPTED_PAYLOAD_LEN, PAYLOAD_LEN, PAYLOAD_TAG_LEN, SPRP_IV_LEN, SPRP_KEY_BLOCK_LEN,
    SPRP_KEY_LEN,
};
use aez5::Aez;

/// An enciphered payload: tag ‖ payload under one or more layers.
pub(crate) type Body = [u8; ENCRYPTED_PAYLOAD_LEN];

/// One layer's key, borrowed: the AEZ key and the nonce it is used with.
#[derive(Clone, Copy)]
pub(crate) struct Layer<'k> {
    key: &'k [u8; SPRP_KEY_LEN],
    nonce: &'k [u8; SPRP_IV_LEN],
}

impl<'k> Layer<'k> {
    /// A layer keyed by `key`, with `nonce`.
    pub(crate) fn new(key: &'k [u8; SPRP_KEY_LEN], nonce: &'k [u8; SPRP_IV_LEN]) -> Self {
        Self { key, nonce }
    }

    /// Put this layer on.
    pub(crate) fn add(self, body: &mut Body) {
        Aez::new(self.key).encipher(self.nonce, body);
    }

    /// Take this layer off (a forwarding hop, or a SURB reply's terminal
    /// hop, which cannot check the tag).
    pub(crate) fn remove(self, body: &mut Body) {
        Aez::new(self.key).decipher(self.nonce, body);
    }

    /// Take off the last layer and check the tag; on a bad tag, put the
    /// layer back.
    ///
    /// # Errors
    /// [`Error::PayloadTag`], with `body` unchanged.
    pub(crate) fn open(self, body: &mut Body) -> Result<(), Error> {
        let aez = Aez::new(self.key);
        aez.decipher(self.nonce, body);
        // Public: the caller gets the verdict (`Error::PayloadTag` or not).
        if crate::ct::verdict(field!(body, payload::TAG).ct_eq(&[0u8; PAYLOAD_TAG_LEN])) {
            return Ok(());
        }
        aez.encipher(self.nonce, body);
        Err(Error::PayloadTag)
    }
}

/// An owned layer key as SURBs and SURB keys store it: key ‖ nonce, 64
/// bytes. Wiped on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub(crate) struct LayerKey {
    key: [u8; SPRP_KEY_LEN],
    nonce: [u8; SPRP_IV_LEN],
}

impl LayerKey {
    /// Read a 64-byte key block.
    pub(crate) fn from_block(block: &[u8; SPRP_KEY_BLOCK_LEN]) -> Self {
        Self {
            key: *field!(block, key_block::KEY),
            nonce: *field!(block, key_block::NONCE),
        }
    }

    /// Copy a borrowed layer key.
    pub(crate) fn from_layer(layer: Layer<'_>) -> Self {
        Self {
            key: *layer.key,
            nonce: *layer.nonce,
        }
    }

    /// Write the 64-byte key block.
    pub(crate) fn write_block(&self, out: &mut [u8; SPRP_KEY_BLOCK_LEN]) {
        *field_mut!(out, key_block::KEY) = self.key;
        *field_mut!(out, key_block::NONCE) = self.nonce;
    }

    /// The layer this key stands for.
    pub(crate) fn layer(&self) -> Layer<'_> {
        Layer::new(&self.key, &self.nonce)
    }
}

/// Write `0^32 ‖ payload` into `body` and put on `layers`, first given
/// innermost (SPEC.md §5.2, §5.4).
pub(crate) fn seal<'k>(
    payload: &[u8; PAYLOAD_LEN],
    layers: impl IntoIterator<Item = Layer<'k>>,
    body: &mut Body,
) {
    field_mut!(body, payload::TAG).fill(0);
    *field_mut!(body, payload::BODY) = *payload;
    for layer in layers {
        layer.add(body);
    }
}

/// The payload of a body whose tag [`Layer::open`] has checked.
pub(crate) fn contents(body: &Body) -> &[u8; PAYLOAD_LEN] {
    field!(body, payload::BODY)
}

/// Decrypt a SURB reply in place (SPEC.md §5.5): put on again the `hops`'
/// layers (the hops took them off), then open the reply's own layer. On a
/// bad tag every layer is put back.
///
/// # Errors
/// [`Error::PayloadTag`], with `body` unchanged.
pub(crate) fn open_reply<const N: usize>(
    hops: [Layer<'_>; N],
    own: Layer<'_>,
    body: &mut Body,
) -> Result<(), Error> {
    for layer in hops {
        layer.add(body);
    }
    own.open(body).inspect_err(|_| {
        for layer in hops.iter().rev() {
            layer.remove(body);
        }
    })
}
