//! Property tests (proptest) of the five promises at the packet boundary:
//!
//! 1. random keys, commands and payloads round-trip through forward
//!    packets and SURB replies;
//! 2. one flipped bit in any region of a packet (version, the KEM
//!    ciphertext's X25519 half or ML-KEM half, each routing block, the MAC,
//!    the payload), at any hop, is refused with the right error at the
//!    right hop; payload bits at the terminal hop or by the SURB's creator;
//! 3. every wrong length is refused by every slice entry point;
//! 4. the buffer is unchanged on every error;
//! 5. reply decryption with any one wrong key block fails.
//!
//! Fewer cases in debug builds, where ML-KEM and AEZ run unoptimised.
//! `PROPTEST_CASES` overrides the counts (`proptest!` applies the
//! `PROPTEST_*` variables on top of each `proptest_config`, and
//! `proptest_cases_sets_the_number_of_cases` checks that it does), for a
//! long run: `PROPTEST_CASES=10000 cargo test --release --test props`.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
mod props_support;

use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, NODE_ID_LEN, PACKET_LEN, PAYLOAD_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN,
    RECIPIENT_ID_LEN, SPRP_KEY_BLOCK_LEN, SURB_ID_LEN, SURB_KEYS_LEN, SURB_LEN,
};
use kemsphinx::{
    Error, Input, NodeId, PrivateKey, PublicKey, RecipientId, Surb, SurbId, SurbKeys,
    create_packet, create_surb, encrypted_reply_mut, packet_mut, payload_ref,
};
use props_support::{
    Outcome, Region, any_commands, build, fixed_nodes, lengths, random_nodes, region, spec, walk,
};
use proptest::prelude::*;
use proptest::sample::Index;
use rand_core::Rng;

/// Cases per property, unless `PROPTEST_CASES` is set.
const CASES: u32 = if cfg!(debug_assertions) { 8 } else { 256 };

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// The number of cases a property with `config(CASES)` runs is
/// `PROPTEST_CASES` when that is set, else `CASES`: a long run really runs
/// longer, and a default run what this file says.
#[test]
fn proptest_cases_sets_the_number_of_cases() {
    let ran = std::cell::Cell::new(0u32);
    proptest!(config(CASES), |(_byte in any::<u8>())| {
        ran.set(ran.get() + 1);
    });
    let want = std::env::var("PROPTEST_CASES").map_or(CASES, |v| v.parse().unwrap());
    println!("{} cases run, {want} wanted", ran.get());
    assert_eq!(ran.get(), want);
}

proptest! {
    #![proptest_config(config(CASES))]

    /// 1. Fresh keys, commands and payload: every hop forwards to the next
    /// with its delay; the terminal delivers the payload, or hands over a
    /// reply that the SURB's creator decrypts to it.
    #[test]
    fn round_trip(spec in spec(), surb in any::<bool>(), keys_seed in any::<u64>()) {
        let nodes = random_nodes(keys_seed);
        let built = build(&nodes, &spec, surb);
        let outcomes = walk(&nodes, 0, built.packet.clone(), &built);
        prop_assert_eq!(outcomes, built.expected_walk(&nodes, 0));
    }

    /// 2. One bit flipped in `region` of the packet as hop `hop` receives it.
    #[test]
    fn single_bit_flips(
        spec in spec(),
        surb in any::<bool>(),
        hop in 0..4usize,
        region in region(),
        bit in any::<Index>(),
    ) {
        let nodes = fixed_nodes();
        let built = build(nodes, &spec, surb);
        let mut packet = built.packet_at(nodes, hop);
        let range = region.range();
        let bit = range.start * 8 + bit.index(range.len() * 8);
        packet[bit / 8] ^= 1 << (bit % 8);
        let outcomes = walk(nodes, hop, packet, &built);
        let honest = built.expected_walk(nodes, hop);
        let expected = match region {
            Region::Version => vec![Outcome::Failed(Error::Version)],
            Region::Payload if surb => {
                let mut w = honest;
                w.pop();
                w.push(Outcome::ReplyRefused(Error::PayloadTag));
                w
            }
            Region::Payload => {
                let mut w = honest;
                *w.last_mut().unwrap() = Outcome::Failed(Error::PayloadTag);
                w
            }
            _ => vec![Outcome::Failed(Error::Mac)],
        };
        prop_assert_eq!(outcomes, expected, "bit {} in {:?} at hop {}", bit, region, hop);
    }

    /// 4. Several bytes overwritten anywhere, at any hop: every hop either
    /// accepts or refuses with the buffer unchanged (`unwrap_at` checks);
    /// a modified packet is never delivered.
    #[test]
    fn overwritten_packets_leave_the_buffer_unchanged(
        spec in spec(),
        surb in any::<bool>(),
        hop in 0..4usize,
        writes in prop::collection::vec((0..PACKET_LEN, any::<u8>()), 1..8),
    ) {
        let nodes = fixed_nodes();
        let built = build(nodes, &spec, surb);
        let mut packet = built.packet_at(nodes, hop);
        let before = packet.clone();
        for (at, value) in writes {
            packet[at] = value;
        }
        let outcomes = walk(nodes, hop, packet.clone(), &built);
        let honest = built.expected_walk(nodes, hop);
        prop_assert_eq!(packet == before, outcomes == honest);
    }

    /// 4. Random bytes as a reply, and creation with random commands:
    /// refusals leave every buffer as it was.
    #[test]
    fn refused_replies_and_creations_change_nothing(
        spec in spec(),
        reply_seed in any::<u64>(),
        hop in 0..4usize,
        commands in any_commands(),
    ) {
        let nodes = fixed_nodes();
        let built = build(nodes, &spec, true);
        let mut reply = Box::new([0u8; ENCRYPTED_REPLY_LEN]);
        common::rng(reply_seed).fill_bytes(&mut reply[..]);
        let before = reply.clone();
        let keys = built.surb_keys.as_ref().unwrap();
        prop_assert_eq!(keys.decrypt_reply(&mut reply).err(), Some(Error::PayloadTag));
        prop_assert_eq!(&reply, &before);

        let mut cmds = built.commands.clone();
        cmds[hop] = commands;
        let path = common::path(nodes, &cmds);
        let mut out = Box::new([0x5au8; PACKET_LEN]);
        let mut rng = common::rng(reply_seed);
        if let Err(e) = create_packet(&mut rng, &path, &built.payload, &mut out) {
            prop_assert!(matches!(e, Error::Command(_)));
            prop_assert!(out.iter().all(|&b| b == 0x5a), "written on error");
        }
        if let Err(e) = create_surb(&mut rng, &path) {
            prop_assert!(matches!(e, Error::Command(_)));
        }
    }

    /// 5. One bit of any key block (hop keys or the reply's own, key or
    /// nonce part) flipped: refused, unchanged, and the right keys still
    /// decrypt the same buffer.
    #[test]
    fn reply_decryption_with_a_wrong_key_block_fails(
        spec in spec(),
        block in 0..5usize,
        bit in 0..SPRP_KEY_BLOCK_LEN * 8,
    ) {
        let nodes = fixed_nodes();
        let built = build(nodes, &spec, true);
        let mut reply = built.encrypted_reply(nodes);
        let before = reply.clone();
        let mut wrong = *built.surb_keys.as_ref().unwrap().to_bytes();
        let bit = block * SPRP_KEY_BLOCK_LEN * 8 + bit;
        wrong[bit / 8] ^= 1 << (bit % 8);
        let result = SurbKeys::from_bytes(&wrong).decrypt_reply(&mut reply).map(|p| p.to_vec());
        prop_assert_eq!(result, Err(Error::PayloadTag));
        prop_assert_eq!(&reply, &before);
        let payload = built.surb_keys.as_ref().unwrap().decrypt_reply(&mut reply).unwrap();
        prop_assert_eq!(&payload[..], &built.payload[..]);
    }
}

proptest! {
    #![proptest_config(config(if cfg!(debug_assertions) { 64 } else { 512 }))]

    /// 3. Every slice entry point refuses every other length with
    /// `Error::Length { input, expected, got }`.
    #[test]
    fn every_wrong_length_is_refused(len in lengths()) {
        let mut bytes = vec![0u8; len];
        let cases: [(Input, usize, Option<Error>); 10] = [
            (Input::Packet, PACKET_LEN, packet_mut(&mut bytes).err()),
            (Input::Payload, PAYLOAD_LEN, payload_ref(&bytes).err()),
            (Input::EncryptedReply, ENCRYPTED_REPLY_LEN, encrypted_reply_mut(&mut bytes).err()),
            (Input::Surb, SURB_LEN, Surb::try_from(&bytes[..]).err()),
            (Input::SurbKeys, SURB_KEYS_LEN, SurbKeys::try_from(&bytes[..]).err()),
            (Input::PublicKey, PUBLIC_KEY_LEN, PublicKey::try_from(&bytes[..]).err()),
            (Input::PrivateKey, PRIVATE_KEY_LEN, PrivateKey::try_from(&bytes[..]).err()),
            (Input::NodeId, NODE_ID_LEN, NodeId::try_from(&bytes[..]).err()),
            (Input::RecipientId, RECIPIENT_ID_LEN, RecipientId::try_from(&bytes[..]).err()),
            (Input::SurbId, SURB_ID_LEN, SurbId::try_from(&bytes[..]).err()),
        ];
        for (input, expected, error) in cases {
            if len != expected {
                prop_assert_eq!(error, Some(Error::Length { input, expected, got: len }));
            } else {
                let length_error = matches!(error, Some(Error::Length { .. }));
                prop_assert!(!length_error, "{} of the right length refused", input);
            }
        }
    }
}

/// The regions of property 2 tile the packet exactly.
#[test]
fn regions_tile_the_packet() {
    let mut next = 0;
    for r in props_support::ALL_REGIONS {
        assert_eq!(r.range().start, next, "{r:?}");
        next = r.range().end;
    }
    assert_eq!(next, PACKET_LEN);
}
