//! Helpers shared by the integration tests: a seeded RNG, mix nodes and
//! paths (from the support crate), per-hop commands, payloads.

#![allow(dead_code)]

use chacha20::ChaCha20Rng;
use kemsphinx::{Command, Path, RecipientId, SurbId};
pub(crate) use kemsphinx_support::Node;
use rand_core::{Rng, SeedableRng};

/// A deterministic RNG for reproducible tests.
pub(crate) fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Four nodes with keys from random seeds and random ids.
pub(crate) fn nodes(rng: &mut ChaCha20Rng) -> Vec<Node> {
    kemsphinx_support::nodes(rng).into()
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
    kemsphinx_support::nodes_path(nodes, commands).unwrap()
}

/// A random payload.
pub(crate) fn payload(rng: &mut ChaCha20Rng) -> Box<[u8; kemsphinx::geometry::PAYLOAD_LEN]> {
    let mut p = Box::new([0u8; kemsphinx::geometry::PAYLOAD_LEN]);
    rng.fill_bytes(&mut p[..]);
    p
}
