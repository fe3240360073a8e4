//! Everything a hop does after the KEM, at the speed of symmetric crypto:
//! the input names the hop's shared secret and a packet (with flags that
//! let it give the hop's routing block and payload in plaintext and have
//! the MAC recomputed, see `Keyed`), and the packet is unwrapped through
//! `hazmat::unwrap_with_shared_secret`. Every outcome must match the
//! independent model (`src/model.rs`, the same one the other unwrap
//! targets use): version, MAC (recomputed with the `hmac` crate), commands,
//! the outgoing packet byte for byte, the delivered payload or reply, and
//! the buffer unchanged on every error.

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use kemsphinx_fuzz::input::Keyed;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    Keyed::decode(data).check();
});
