//! Four-hop round trips with random keys, commands and payloads from a
//! seeded RNG: forward packets, SURBs and replies.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{commands, deliver_to, nodes, path, payload, reply_to, rng};
use kemsphinx::geometry::{PACKET_LEN, SURB_LEN};
use kemsphinx::{
    Action, Command, RecipientId, ReplayTag, Surb, SurbId, create_packet, create_surb, replay_tag,
    unwrap,
};
use rand_core::Rng;

/// What the terminal hop handed over.
#[derive(Debug)]
enum Terminal {
    Deliver(RecipientId, Vec<u8>),
    Reply(RecipientId, SurbId, Vec<u8>),
}

/// Unwrap a packet through all four nodes, checking each forward hop, and
/// return what the terminal hop hands over.
fn walk(nodes: &[common::Node], packet: &mut [u8; PACKET_LEN], delays: [u32; 3]) -> Terminal {
    let mut tags: Vec<ReplayTag> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        let tag = replay_tag(packet);
        assert!(!tags.contains(&tag), "replay tags repeat along the path");
        tags.push(tag);
        let out = unwrap(&node.key, packet).unwrap_or_else(|e| panic!("hop {i}: {e}"));
        assert_eq!(out.replay_tag, tag);
        assert_eq!(
            format!("{tag:?}"),
            format!("ReplayTag({})", hex::encode(tag.0))
        );
        let terminal = match out.action {
            Action::Forward { next_hop, delay } => {
                assert!(i < 3, "terminal hop forwarded");
                assert_eq!(next_hop, nodes[i + 1].id);
                assert_eq!(delay, Some(delays[i]));
                assert_eq!(out.commands.len(), 2);
                assert!((1..=4).contains(&out.commands.len()));
                continue;
            }
            Action::Deliver { recipient, payload } => {
                Terminal::Deliver(recipient, payload.to_vec())
            }
            Action::SurbReply {
                recipient,
                surb_id,
                encrypted_reply,
            } => Terminal::Reply(recipient, surb_id, encrypted_reply.to_vec()),
        };
        assert_eq!(i, 3, "hop {i} ended the path");
        return terminal;
    }
    panic!("no terminal action");
}

#[test]
fn forward_packets_deliver_their_payload() {
    for seed in 0..8 {
        let mut rng = rng(seed);
        let nodes = nodes(&mut rng);
        let delays = [rng.next_u32(), rng.next_u32(), rng.next_u32()];
        let mut recipient = [0u8; 32];
        rng.fill_bytes(&mut recipient);
        let cmds = commands(delays, deliver_to(recipient));
        let payload = payload(&mut rng);
        let mut packet = Box::new([0u8; PACKET_LEN]);
        create_packet(&mut rng, &path(&nodes, &cmds), &payload, &mut packet).unwrap();
        match walk(&nodes, &mut packet, delays) {
            Terminal::Deliver(r, delivered) => {
                assert_eq!(r.0, recipient);
                assert_eq!(&delivered[..], &payload[..]);
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn surb_replies_decrypt_at_the_creator() {
    for seed in 100..108 {
        let mut rng = rng(seed);
        let nodes = nodes(&mut rng);
        let delays = [rng.next_u32(), 0, u32::MAX];
        let (mut recipient, mut surb_id) = ([0u8; 32], [0u8; 16]);
        rng.fill_bytes(&mut recipient);
        rng.fill_bytes(&mut surb_id);
        let cmds = commands(delays, reply_to(recipient, surb_id));
        let (surb, keys) = create_surb(&mut rng, &path(&nodes, &cmds)).unwrap();
        assert_eq!(surb.first_hop(), nodes[0].id);
        // Logs may show where a SURB leads, never its reply key.
        assert_eq!(
            format!("{surb:?}"),
            format!("Surb {{ first_hop: {:?}, .. }}", nodes[0].id)
        );

        // The SURB travels as bytes; the replier parses it back.
        let surb = Surb::try_from(&surb.as_bytes()[..]).unwrap();
        let reply = payload(&mut rng);
        let mut packet = Box::new([0u8; PACKET_LEN]);
        assert_eq!(surb.reply(&reply, &mut packet), nodes[0].id);
        let Terminal::Reply(r, s, encrypted) = walk(&nodes, &mut packet, delays) else {
            panic!("the SURB's terminal hop did not hand over a reply");
        };
        assert_eq!((r.0, s.0), (recipient, surb_id));
        let mut encrypted: [u8; 10_188] = encrypted.try_into().unwrap();
        assert_eq!(&keys.decrypt_reply(&mut encrypted).unwrap()[..], &reply[..]);
    }
}

#[test]
fn creation_is_deterministic_in_the_rng() {
    let make = || {
        let mut rng = rng(7);
        let nodes = nodes(&mut rng);
        let cmds = commands([1, 2, 3], deliver_to([9; 32]));
        let payload = payload(&mut rng);
        let mut packet = Box::new([0u8; PACKET_LEN]);
        create_packet(&mut rng, &path(&nodes, &cmds), &payload, &mut packet).unwrap();
        let scmds = commands([4, 5, 6], reply_to([8; 32], [7; 16]));
        let (surb, keys) = create_surb(&mut rng, &path(&nodes, &scmds)).unwrap();
        (packet, surb, *keys.to_bytes())
    };
    let (a, b) = (make(), make());
    assert_eq!(a.0, b.0);
    assert_eq!(a.1.as_bytes(), b.1.as_bytes());
    assert_eq!(a.2, b.2);
    assert_eq!(a.1.as_bytes().len(), SURB_LEN);
}

#[test]
fn terminal_hop_may_carry_a_delay_and_commands_fill_the_area() {
    let mut rng = rng(3);
    let nodes = nodes(&mut rng);
    // recipient (33) + node_delay (5) at the terminal; the area is 82 bytes.
    let mut cmds = commands([0, 0, 0], deliver_to([1; 32]));
    cmds[3].push(Command::NodeDelay(42));
    let payload = payload(&mut rng);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    create_packet(&mut rng, &path(&nodes, &cmds), &payload, &mut packet).unwrap();
    let mut last = None;
    for node in &nodes {
        let out = unwrap(&node.key, &mut packet).unwrap();
        last = Some((out.commands.delay(), out.commands.len()));
    }
    assert_eq!(last, Some((Some(42), 2)));
}

#[test]
fn an_unwrapped_packet_logs_no_payload_bytes() {
    let mut rng = rng(9);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], deliver_to([6; 32]));
    let payload = Box::new([0xabu8; kemsphinx::geometry::PAYLOAD_LEN]);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    create_packet(&mut rng, &path(&nodes, &cmds), &payload, &mut packet).unwrap();
    for node in &nodes[..3] {
        unwrap(&node.key, &mut packet).unwrap();
    }
    let out = unwrap(&nodes[3].key, &mut packet).unwrap();
    let logged = format!("{out:?}");
    assert!(logged.contains("payload_len: 10156"), "{logged}");
    assert!(
        !logged.contains("171, 171") && !logged.contains("abab"),
        "{logged}"
    );
    assert!(
        logged.len() < 2_000,
        "{} bytes of Debug output",
        logged.len()
    );
}

/// `unwrap_any` under the live keys of a node: the key a packet was built
/// for unwraps it wherever it stands in the list, exactly as `unwrap` with
/// that key does; with only other keys it is `Error::Mac` and the packet
/// is unchanged; a wrong version ends the trial before any key.
#[test]
fn unwrap_any_finds_the_key_the_packet_was_built_for() {
    use kemsphinx::{Error, PrivateKey, unwrap_any};
    let mut rng = rng(21);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], deliver_to([5; 32]));
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let body = payload(&mut rng);
    create_packet(&mut rng, &path(&nodes, &cmds), &body, &mut packet).unwrap();
    let others: Vec<PrivateKey> = (0..2).map(|_| PrivateKey::generate(&mut rng)).collect();
    let mut expected = packet.clone();
    let by_unwrap = unwrap(&nodes[0].key, &mut expected).unwrap();
    let (tag, action) = (by_unwrap.replay_tag, format!("{:?}", by_unwrap.action));
    for position in 0..3 {
        let mut keys: Vec<&PrivateKey> = others.iter().collect();
        keys.insert(position, &nodes[0].key);
        let mut copy = packet.clone();
        let (which, hop) = unwrap_any(keys.iter().copied(), &mut copy).unwrap();
        assert_eq!(which, position);
        assert_eq!(hop.replay_tag, tag);
        assert_eq!(format!("{:?}", hop.action), action);
        assert_eq!(copy, expected);
    }
    let mut copy = packet.clone();
    assert_eq!(
        unwrap_any(others.iter(), &mut copy).unwrap_err(),
        Error::Mac
    );
    assert_eq!(copy, packet);
    assert_eq!(unwrap_any([], &mut copy).unwrap_err(), Error::Mac);
    copy[0] ^= 1;
    let damaged = copy.clone();
    assert_eq!(
        unwrap_any([&nodes[0].key], &mut copy).unwrap_err(),
        Error::Version
    );
    assert_eq!(copy, damaged);
}
