//! `hazmat::unwrap_with_shared_secret`, the entry point the `unwrap_header`
//! fuzz target drives: given the shared secret the hop's key decapsulates
//! from the packet, it does exactly what `unwrap` does (the same result,
//! the same buffer afterwards) at every hop of a forward packet and of a
//! SURB reply, on packets refused in the header or the payload too; with
//! any other secret the MAC refuses the packet and the buffer is unchanged.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{Node, commands, deliver_to, nodes, path, payload, reply_to, rng};
use kemsphinx::geometry::PACKET_LEN;
use kemsphinx::geometry::layout::packet as at;
use kemsphinx::{
    Action, Commands, Error, NodeId, RecipientId, ReplayTag, SurbId, Unwrapped, create_packet,
    create_surb, hazmat, unwrap,
};

/// What a hop did, owned, so that two unwraps can be compared.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Forward(ReplayTag, Commands, NodeId, Option<u32>),
    Deliver(ReplayTag, Commands, RecipientId, Vec<u8>),
    Reply(ReplayTag, Commands, RecipientId, SurbId, Vec<u8>),
    Refused(Error),
}

fn outcome(result: Result<Unwrapped<'_>, Error>) -> Outcome {
    let u = match result {
        Ok(u) => u,
        Err(e) => return Outcome::Refused(e),
    };
    match u.action {
        Action::Forward { next_hop, delay } => {
            Outcome::Forward(u.replay_tag, u.commands, next_hop, delay)
        }
        Action::Deliver { recipient, payload } => {
            Outcome::Deliver(u.replay_tag, u.commands, recipient, payload.to_vec())
        }
        Action::SurbReply {
            recipient,
            surb_id,
            encrypted_reply,
        } => Outcome::Reply(
            u.replay_tag,
            u.commands,
            recipient,
            surb_id,
            encrypted_reply.to_vec(),
        ),
    }
}

/// The secret `key` decapsulates from `packet`'s KEM ciphertext.
fn shared_secret(key: &kemsphinx::PrivateKey, packet: &[u8; PACKET_LEN]) -> [u8; 32] {
    let ct = packet[at::KEM_CIPHERTEXT].try_into().unwrap();
    *hazmat::decapsulate(key, ct).unwrap().as_bytes()
}

/// Unwrap `packet` at `node` both ways with the decapsulated secret and
/// assert the same outcome and the same buffer; also with a wrong secret
/// (refused by the MAC, buffer unchanged). Returns the outcome and the
/// buffer afterwards.
fn same_both_ways(node: &Node, packet: &[u8; PACKET_LEN]) -> (Outcome, Box<[u8; PACKET_LEN]>) {
    let ss = shared_secret(&node.key, packet);
    let mut by_key = Box::new(*packet);
    let mut by_secret = Box::new(*packet);
    let want = outcome(unwrap(&node.key, &mut by_key));
    let got = outcome(hazmat::unwrap_with_shared_secret(&ss, &mut by_secret));
    assert_eq!(got, want);
    assert_eq!(by_secret, by_key);

    let mut wrong = ss;
    wrong[17] ^= 0x04;
    let mut buf = Box::new(*packet);
    let refused = outcome(hazmat::unwrap_with_shared_secret(&wrong, &mut buf));
    let expected = if packet[at::VERSION] == [0, 0] {
        Error::Mac
    } else {
        Error::Version
    };
    assert_eq!(refused, Outcome::Refused(expected));
    assert_eq!(&buf[..], &packet[..]);
    (want, by_key)
}

/// Walk `first` through `nodes`; at each hop also compare a copy with one
/// bit flipped in the version, the routing information, the MAC and the
/// payload. Returns each hop's outcome.
fn walk(nodes: &[Node], first: &[u8; PACKET_LEN]) -> Vec<Outcome> {
    let mut packet = Box::new(*first);
    let mut outcomes = Vec::new();
    for node in nodes {
        for bit in [
            at::VERSION.start * 8 + 3,
            at::ROUTING_INFO.start * 8 + 5,
            (at::ROUTING_INFO.end - 1) * 8,
            at::MAC.start * 8 + 7,
            (at::PAYLOAD.start + 100) * 8 + 1,
        ] {
            let mut flipped = packet.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            same_both_ways(node, &flipped);
        }
        let (step, after) = same_both_ways(node, &packet);
        let forwarded = matches!(step, Outcome::Forward(..));
        outcomes.push(step);
        if !forwarded {
            break;
        }
        packet = after;
    }
    outcomes
}

#[test]
fn a_forward_packet_unwraps_the_same_at_every_hop() {
    let mut rng = rng(81);
    let nodes = nodes(&mut rng);
    let cmds = commands([10, 20, 30], deliver_to([6; 32]));
    let payload = payload(&mut rng);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    create_packet(&mut rng, &path(&nodes, &cmds), &payload, &mut packet).unwrap();
    let outcomes = walk(&nodes, &packet);
    assert_eq!(outcomes.len(), 4);
    for (i, o) in outcomes[..3].iter().enumerate() {
        assert!(matches!(o, Outcome::Forward(_, _, next, _) if *next == nodes[i + 1].id));
    }
    assert!(matches!(&outcomes[3], Outcome::Deliver(_, _, _, p) if p[..] == payload[..]));
}

#[test]
fn a_surb_reply_unwraps_the_same_at_every_hop() {
    let mut rng = rng(82);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], reply_to([7; 32], [8; 16]));
    let (surb, keys) = create_surb(&mut rng, &path(&nodes, &cmds)).unwrap();
    let payload = payload(&mut rng);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    assert_eq!(surb.reply(&payload, &mut packet), nodes[0].id);
    let outcomes = walk(&nodes, &packet);
    assert_eq!(outcomes.len(), 4);
    let Outcome::Reply(_, _, recipient, surb_id, reply) = &outcomes[3] else {
        panic!("no reply: {:?}", outcomes[3]);
    };
    assert_eq!(
        (*recipient, *surb_id),
        (RecipientId([7; 32]), SurbId([8; 16]))
    );
    let mut reply: Box<[u8; kemsphinx::geometry::ENCRYPTED_REPLY_LEN]> =
        reply.clone().into_boxed_slice().try_into().unwrap();
    assert_eq!(&keys.decrypt_reply(&mut reply).unwrap()[..], &payload[..]);
}
