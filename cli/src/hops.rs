//! Small helpers the runner and the generator share: building a path from
//! nodes and per-hop commands, and serialising one command.

use kemsphinx::geometry::HOPS;
use kemsphinx::{Command, Hop, NodeId, PublicKey};

/// The path over `nodes` (id and public key, first hop first) with per-hop
/// `commands`; an error unless there are exactly four of each.
pub(crate) fn path<'a>(
    nodes: impl IntoIterator<Item = (NodeId, &'a PublicKey)>,
    commands: &'a [Vec<Command>],
) -> Result<[Hop<'a>; HOPS], String> {
    let hops: Vec<Hop<'a>> = nodes
        .into_iter()
        .zip(commands)
        .map(|((id, public_key), c)| Hop {
            id,
            public_key,
            commands: c,
        })
        .collect();
    hops.try_into()
        .map_err(|_| format!("a path needs {HOPS} hops of commands"))
}

/// The serialised form of one command.
pub(crate) fn encoded(cmd: &Command) -> Vec<u8> {
    kemsphinx::hazmat::encode_command(cmd).as_bytes().to_vec()
}
