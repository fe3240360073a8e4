//! Helpers shared by the integration tests: a seeded RNG, mix nodes and
//! paths, per-hop commands, payloads. Written against the public API and
//! crates.io dev-dependencies only, so that the tests that use it build
//! and run from the published package too (the workspace's
//! `kemsphinx-support` crate is not published).

#![allow(dead_code)]

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{HOPS, KEY_SEED_LEN, NODE_ID_LEN};
use kemsphinx::{Command, NodeId, Path, PrivateKey, RecipientId, SurbId};
use rand_core::{Rng, SeedableRng};

/// A mix node: its id and its key pair.
pub(crate) struct Node {
    pub(crate) id: NodeId,
    pub(crate) key: PrivateKey,
}

/// A deterministic RNG for reproducible tests.
pub(crate) fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Four nodes with keys from random seeds and random ids.
/// For each node in turn: 96 bytes of key seed, then 32 bytes of id (the
/// order the workspace's fixtures use, so that the same seed gives the same
/// nodes there).
pub(crate) fn nodes(rng: &mut ChaCha20Rng) -> Vec<Node> {
    (0..HOPS)
        .map(|_| {
            let mut seed = [0u8; KEY_SEED_LEN];
            let mut id = [0u8; NODE_ID_LEN];
            rng.fill_bytes(&mut seed);
            rng.fill_bytes(&mut id);
            Node {
                id: NodeId(id),
                key: PrivateKey::from_seed(&seed),
            }
        })
        .collect()
}

/// Per-hop commands: a delay for the first three hops, then the terminal's.
pub(crate) fn commands(delays: [u32; 3], terminal: Vec<Command>) -> Vec<Vec<Command>> {
    let mut out: Vec<Vec<Command>> = delays
        .iter()
        .map(|d| vec![Command::NodeDelay(*d)])
        .collect();
    out.push(terminal);
    out
}

/// Terminal commands of a forward packet.
pub(crate) fn deliver_to(recipient: [u8; 32]) -> Vec<Command> {
    vec![Command::Recipient(RecipientId(recipient))]
}

/// Terminal commands of a SURB.
pub(crate) fn reply_to(recipient: [u8; 32], surb_id: [u8; 16]) -> Vec<Command> {
    vec![
        Command::Recipient(RecipientId(recipient)),
        Command::SurbReply(SurbId(surb_id)),
    ]
}

/// The path over four `nodes` with four lists of `commands`.
pub(crate) fn path<'a>(nodes: &'a [Node], commands: &'a [Vec<Command>]) -> Path<'a> {
    let four = (nodes.len(), commands.len()) == (HOPS, HOPS);
    assert!(four, "a path has four hops");
    kemsphinx::path(
        core::array::from_fn(|i| (nodes[i].id, nodes[i].key.public_key())),
        core::array::from_fn(|i| commands[i].as_slice()),
    )
}

/// A random payload.
pub(crate) fn payload(rng: &mut ChaCha20Rng) -> Box<[u8; kemsphinx::geometry::PAYLOAD_LEN]> {
    let mut p = Box::new([0u8; kemsphinx::geometry::PAYLOAD_LEN]);
    rng.fill_bytes(&mut p[..]);
    p
}
