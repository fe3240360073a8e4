//! `unwrap_batch` is `unwrap_any`, packet by packet: the same result and
//! the same buffer afterwards for every mix of packets (for the first key,
//! for a later key, for no key, malformed, with a small-order ephemeral
//! key), every batch length from 0 to 2·BATCH + 1 and every position in a
//! batch; and it allocates nothing.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{commands, deliver_to, nodes, path, payload, rng};
use kemsphinx::geometry::PACKET_LEN;
use kemsphinx::geometry::layout::packet as at;
use kemsphinx::{BATCH, PrivateKey, create_packet, unwrap_any, unwrap_batch};
use rand_core::Rng;

/// A packet's outcome, comparable: the key position and action's kind, or
/// the error, and the buffer afterwards.
type Outcome = (
    Result<(usize, String), kemsphinx::Error>,
    Box<[u8; PACKET_LEN]>,
);

fn describe(
    r: Result<(usize, kemsphinx::Unwrapped<'_>), kemsphinx::Error>,
) -> Result<(usize, String), kemsphinx::Error> {
    r.map(|(i, u)| {
        (
            i,
            format!("{:?} {:?} {:?}", u.replay_tag, u.commands, u.action),
        )
    })
}

/// Packets of every kind, for the first hop: built for `keys[k]`, or
/// damaged, chosen by `rng`.
fn mixed_packets(
    rng: &mut chacha20::ChaCha20Rng,
    count: usize,
) -> (Vec<PrivateKey>, Vec<Box<[u8; PACKET_LEN]>>) {
    let sets: Vec<_> = (0..3).map(|_| nodes(rng)).collect();
    let cmds = commands([1, 2, 3], deliver_to([9; 32]));
    let msg = payload(rng);
    let mut packets = Vec::new();
    for _ in 0..count {
        let set = &sets[usize::try_from(rng.next_u32() % 3).unwrap()];
        let mut p = Box::new([0u8; PACKET_LEN]);
        create_packet(rng, &path(set, &cmds), &msg, &mut p).unwrap();
        match rng.next_u32() % 8 {
            0 => p[at::MAC.start] ^= 1,            // no key's MAC verifies
            1 => p[at::VERSION.start] = 1,         // refused before the KEM
            2 => p[at::KEM_X25519].fill(0),        // a small-order point
            3 => p[at::PAYLOAD.start + 5] ^= 0x80, // forwarded, payload changed
            _ => {}
        }
        packets.push(p);
    }
    // The node's live keys: set 0's first hop (current), set 1's
    // (previous); set 2's packets are for a key the node does not have.
    let keys = sets
        .into_iter()
        .take(2)
        .map(|mut s| s.swap_remove(0).key)
        .collect();
    (keys, packets)
}

#[test]
fn batch_results_are_unwrap_any_packet_by_packet() {
    let mut rng = rng(21);
    let (keys, packets) = mixed_packets(&mut rng, 2 * BATCH + 1);
    let live = [&keys[0], &keys[1]];
    let one: Vec<Outcome> = packets
        .iter()
        .map(|p| {
            let mut p = p.clone();
            let r = describe(unwrap_any(live, &mut p));
            (r, p)
        })
        .collect();
    assert!(one.iter().any(|(r, _)| matches!(r, Ok((0, _)))));
    assert!(one.iter().any(|(r, _)| matches!(r, Ok((1, _)))));
    assert!(one.iter().any(|(r, _)| r.is_err()));

    for len in 0..=packets.len() {
        for start in [0, packets.len() - len] {
            let mut batch: Vec<Box<[u8; PACKET_LEN]>> = packets[start..start + len].to_vec();
            let results: Vec<_> = unwrap_batch(live, batch.iter_mut().map(|b| &mut **b))
                .map(describe)
                .collect();
            assert_eq!(results.len(), len);
            for (i, (r, after)) in results.into_iter().zip(&batch).enumerate() {
                let (want, want_after) = &one[start + i];
                assert_eq!(&r, want, "length {len}, packet {i}");
                assert_eq!(after, want_after, "length {len}, packet {i}: the buffer");
            }
        }
    }
}

#[test]
fn batch_with_no_key_refuses_every_packet_unchanged() {
    let mut rng = rng(22);
    let (_, packets) = mixed_packets(&mut rng, 3);
    let mut copies = packets.clone();
    let none: [&PrivateKey; 0] = [];
    for r in unwrap_batch(none, copies.iter_mut().map(|b| &mut **b)) {
        assert!(r.is_err());
    }
    assert_eq!(copies, packets);
}

#[test]
fn batch_unwraps_a_whole_path() {
    // Every hop in turn, each hop's packets in one batch.
    let mut rng = rng(23);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], deliver_to([9; 32]));
    let msg = payload(&mut rng);
    let mut batch: Vec<Box<[u8; PACKET_LEN]>> = (0..BATCH + 3)
        .map(|_| {
            let mut p = Box::new([0u8; PACKET_LEN]);
            create_packet(&mut rng, &path(&nodes, &cmds), &msg, &mut p).unwrap();
            p
        })
        .collect();
    for (hop, node) in nodes.iter().enumerate() {
        let mut delivered = 0;
        for r in unwrap_batch([&node.key], batch.iter_mut().map(|b| &mut **b)) {
            match r.unwrap().1.action {
                kemsphinx::Action::Forward { .. } => assert!(hop < 3),
                kemsphinx::Action::Deliver { payload, .. } => {
                    assert_eq!(payload, &*msg);
                    delivered += 1;
                }
                kemsphinx::Action::SurbReply { .. } => panic!("no SURB here"),
            }
        }
        assert_eq!(delivered, if hop == 3 { BATCH + 3 } else { 0 });
    }
}
