//! SURBs, replies and reply decryption with fuzzer-chosen bytes and keys.
//!
//! - The slice boundary of SURBs, SURB keys and encrypted replies.
//! - A SURB loads iff its version bytes are `00 00`, and keeps its bytes.
//! - A reply is the SURB's header and the payload under the SURB's key,
//!   deterministically. With fuzzer-chosen keys for the four hops, removing
//!   their layers and decrypting with the matching SURB keys gives the
//!   payload back; with any one bit of those keys flipped it is refused and
//!   the buffer is unchanged.
//! - Arbitrary bytes as an encrypted reply: refused with the buffer
//!   unchanged, or accepted only if re-encrypting the payload gives them
//!   back.

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use aez5::Aez;
use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, HEADER_LEN, NODE_ID_LEN, PACKET_LEN, PAYLOAD_LEN, PAYLOAD_TAG_LEN,
    SPRP_KEY_BLOCK_LEN, SURB_KEYS_LEN, SURB_LEN,
};
use kemsphinx::{Error, Input, Surb, SurbKeys, encrypted_reply_mut};
use kemsphinx_fuzz::input::{HOP_KEYS_LEN, Reply};
use kemsphinx_fuzz::trip::decrypt;
use kemsphinx_fuzz::{check_length, padded};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let n = data.len();
    check_length(Surb::try_from(data), Input::Surb, SURB_LEN, n);
    check_length(SurbKeys::try_from(data), Input::SurbKeys, SURB_KEYS_LEN, n);
    let mut copy = data.to_vec();
    let reply = encrypted_reply_mut(&mut copy);
    check_length(reply, Input::EncryptedReply, ENCRYPTED_REPLY_LEN, n);

    let input = Reply::decode(data);
    let surb = match Surb::from_bytes(&input.surb) {
        Ok(surb) => surb,
        Err(e) => {
            assert_eq!(e, Error::Version);
            assert_ne!(input.surb[..2], [0, 0]);
            return;
        }
    };
    assert_eq!(input.surb[..2], [0, 0]);
    assert!(surb.as_bytes()[..] == input.surb[..]);
    assert_eq!(
        surb.first_hop().0[..],
        input.surb[HEADER_LEN..][..NODE_ID_LEN]
    );

    let payload = padded::<PAYLOAD_LEN>(&input.rest);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let first_hop = surb.first_hop();
    assert_eq!(surb.reply(&payload, &mut packet), first_hop);
    assert!(packet[..HEADER_LEN] == input.surb[..HEADER_LEN]);
    // `reply` consumes the SURB; the same bytes, parsed again, reply the same.
    let mut again = Box::new([0xffu8; PACKET_LEN]);
    Surb::from_bytes(&input.surb)
        .unwrap()
        .reply(&payload, &mut again);
    assert!(again == packet, "reply is not deterministic");

    let mut keys = surb_keys(&input);
    let mut hops_output = packet[HEADER_LEN..].to_vec();
    for block in input.hop_keys.chunks_exact(SPRP_KEY_BLOCK_LEN) {
        let (key, iv) = split(block);
        Aez::new(&key).decipher(&iv, &mut hops_output);
    }
    let decrypted = decrypt(&SurbKeys::from_bytes(&keys), &hops_output);
    assert!(decrypted.unwrap()[..] == payload[..]);

    let bit = usize::from(input.corrupt_bit) % (SURB_KEYS_LEN * 8);
    keys[bit / 8] ^= 1 << (bit % 8);
    let refused = decrypt(&SurbKeys::from_bytes(&keys), &hops_output);
    assert_eq!(refused, Err(Error::PayloadTag), "key bit {bit} flipped");
    keys[bit / 8] ^= 1 << (bit % 8);

    arbitrary_reply(&input, &keys);
});

/// The SURB keys matching the input: the hops' blocks last hop first, then
/// the SURB's own.
fn surb_keys(input: &Reply) -> [u8; SURB_KEYS_LEN] {
    let mut keys = [0u8; SURB_KEYS_LEN];
    let hop_blocks = input.hop_keys.chunks_exact(SPRP_KEY_BLOCK_LEN).rev();
    for (out, block) in keys.chunks_exact_mut(SPRP_KEY_BLOCK_LEN).zip(hop_blocks) {
        out.copy_from_slice(block);
    }
    keys[HOP_KEYS_LEN..].copy_from_slice(&input.surb[HEADER_LEN + NODE_ID_LEN..]);
    keys
}

fn split(block: &[u8]) -> ([u8; 48], [u8; 16]) {
    (
        block[..48].try_into().unwrap(),
        block[48..].try_into().unwrap(),
    )
}

fn arbitrary_reply(input: &Reply, keys: &[u8; SURB_KEYS_LEN]) {
    let bytes = padded::<ENCRYPTED_REPLY_LEN>(&input.rest);
    let Ok(payload) = decrypt(&SurbKeys::from_bytes(keys), &bytes[..]) else {
        return;
    };
    let mut rebuilt = vec![0u8; PAYLOAD_TAG_LEN];
    rebuilt.extend_from_slice(&payload);
    let blocks: Vec<_> = keys.chunks_exact(SPRP_KEY_BLOCK_LEN).map(split).collect();
    let (own, hops) = blocks.split_last().unwrap();
    Aez::new(&own.0).encipher(&own.1, &mut rebuilt);
    for (key, iv) in hops.iter().rev() {
        Aez::new(key).decipher(iv, &mut rebuilt);
    }
    assert!(
        rebuilt[..] == bytes[..],
        "accepted a reply it did not produce"
    );
}
