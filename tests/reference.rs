//! Two of the reference's cases, shipped with the package: a forward packet
//! made by the Katzenpost reference unwrapped hop by hop, and a reply built
//! by us from the reference's SURB, unwrapped and decrypted. Every replay
//! tag, command and next packet must match what the reference computed.
//!
//! `tests/data/reference.json` is a cut of the repository's full vector
//! sets (`vectors/reference/`, run by `tests/conformance.rs` and `kemsphinx
//! verify`), written by `vectors/package_subset.py`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN, SURB_KEYS_LEN, SURB_LEN};
use kemsphinx::{
    Action, Command, NodeId, PrivateKey, RecipientId, Surb, SurbId, SurbKeys, replay_tag, unwrap,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn data() -> Value {
    let text = include_str!("data/reference.json");
    serde_json::from_str(text).unwrap()
}

fn bytes(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

fn array<const N: usize>(v: &Value) -> [u8; N] {
    bytes(v).try_into().unwrap()
}

fn keys(case: &Value) -> Vec<PrivateKey> {
    let keys = case["private_keys"].as_array().unwrap();
    keys.iter()
        .map(|k| PrivateKey::try_from(&bytes(k)[..]).unwrap())
        .collect()
}

/// One command from the reference's wire encoding, written out here by
/// hand (the library's encoder is not public API).
fn command(hex: &Value) -> Command {
    let b = bytes(hex);
    match (b[0], b.len()) {
        (0x01, 65) => Command::NextNodeHop {
            id: NodeId(b[1..33].try_into().unwrap()),
            mac: b[33..65].try_into().unwrap(),
        },
        (0x02, 33) => Command::Recipient(RecipientId(b[1..33].try_into().unwrap())),
        (0x03, 17) => Command::SurbReply(SurbId(b[1..17].try_into().unwrap())),
        (0x80, 5) => Command::NodeDelay(u32::from_be_bytes(b[1..5].try_into().unwrap())),
        _ => panic!("unexpected command {b:02x?}"),
    }
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Unwrap `packet` at each of the four hops, checking what each returns
/// against the reference, and hand the terminal action to `last`.
fn walk(case: &Value, packet: &mut [u8; PACKET_LEN], last: impl FnOnce(Action<'_>)) {
    let keys = keys(case);
    let ids: Vec<[u8; 32]> = case["node_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(array)
        .collect();
    let hops = case["hops"].as_array().unwrap();
    let mut last = Some(last);
    for (i, (key, hop)) in keys.iter().zip(hops).enumerate() {
        assert_eq!(
            sha256(packet),
            hop["packet_sha256"].as_str().unwrap(),
            "packet at hop {i}"
        );
        let tag = replay_tag(packet);
        let out = unwrap(key, packet).unwrap_or_else(|e| panic!("hop {i}: {e}"));
        assert_eq!(out.replay_tag, tag, "hop {i}");
        assert_eq!(out.replay_tag.0, array(&hop["replay_tag"]), "hop {i}");
        let want: Vec<Command> = hop["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(command)
            .collect();
        let got: Vec<Command> = out.commands.iter().copied().collect();
        assert_eq!(got, want, "commands at hop {i}");
        match out.action {
            Action::Forward { next_hop, delay } => {
                assert!(i < 3, "hop {i} forwards");
                assert_eq!(next_hop, NodeId(ids[i + 1]), "hop {i}");
                assert_eq!(delay, out.commands.delay(), "hop {i}");
            }
            action => {
                assert_eq!(i, 3, "only the last hop ends the route");
                last.take().unwrap()(action);
            }
        }
    }
    assert!(last.is_none(), "the last hop ended the route");
}

#[test]
fn forward_packet_from_the_reference() {
    let case = &data()["forward"];
    let mut packet: Box<[u8; PACKET_LEN]> = bytes(&case["packet"]).try_into().unwrap();
    let want: [u8; PAYLOAD_LEN] = array(&case["payload"]);
    walk(case, &mut packet, |action| match action {
        Action::Deliver { payload, .. } => assert!(payload[..] == want[..], "payload"),
        other => panic!("{other:?}"),
    });
}

#[test]
fn reply_to_the_references_surb() {
    let case = &data()["surb"];
    let surb = Surb::from_bytes(&array::<SURB_LEN>(&case["surb"])).unwrap();
    let ids: Vec<[u8; 32]> = case["node_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(array)
        .collect();
    assert_eq!(surb.first_hop(), NodeId(ids[0]));

    // The reply is deterministic, so ours must be the reference's packet.
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let reply: Box<[u8; PAYLOAD_LEN]> = bytes(&case["reply_payload"]).try_into().unwrap();
    assert_eq!(surb.reply(&reply, &mut packet), NodeId(ids[0]));

    let keys = SurbKeys::from_bytes(&array::<SURB_KEYS_LEN>(&case["surb_keys"]));
    let want = bytes(&case["decrypted_reply"]);
    let encrypted = case["encrypted_reply_sha256"].as_str().unwrap();
    walk(case, &mut packet, |action| match action {
        Action::SurbReply {
            encrypted_reply, ..
        } => {
            assert_eq!(sha256(encrypted_reply), encrypted, "encrypted reply");
            let mut reply = *encrypted_reply;
            assert!(
                keys.decrypt_reply(&mut reply).unwrap()[..] == want[..],
                "decrypted reply"
            );
        }
        other => panic!("{other:?}"),
    });
}
