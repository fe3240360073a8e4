//! Fixtures shared by the `kemsphinx` command (its vector generator and
//! conformance runner), the integration tests and the benchmarks: mix nodes
//! made from seeds, paths over them, command encodings, and the small-order
//! X25519 points. Not published; it uses the library's `hazmat` entry
//! points and belongs in no mix node or client. With the feature `bench`
//! it also holds the fixtures of the benchmarks and the performance report
//! (`bench`).
//!
//! ```
//! use kemsphinx::{Command, NodeId, RecipientId};
//! use kemsphinx_support::{Node, nodes_path};
//!
//! // Four mixes with fixed keys, three forward hops and a delivery.
//! let nodes = (0..4u8).map(|i| Node::from_seed([i; 96], NodeId([i; 32])));
//! let nodes: Vec<Node> = nodes.collect();
//! let delay = [Command::NodeDelay(100)];
//! let deliver = [Command::Recipient(RecipientId([7; 32]))];
//! let commands = [&delay[..], &delay, &delay, &deliver];
//! let path = nodes_path(&nodes, &commands)?;
//! assert_eq!(path[3].commands, &deliver);
//! # Ok::<(), kemsphinx_support::HopCount>(())
//! ```

#[cfg(feature = "bench")]
pub mod bench;
mod points;

use core::fmt;

use kemsphinx::geometry::{COMMANDS_LEN, HOPS, KEY_SEED_LEN, NODE_ID_LEN};
use kemsphinx::{Command, CommandError, NodeId, Path, PrivateKey, PublicKey, hazmat};
use rand_core::Rng;

pub use points::{P_PLUS_2, SMALL_ORDER, SmallOrderPoint, small_order_encodings};

/// A mix node whose key is derived from a 96-byte seed, as the reference
/// derives it.
pub struct Node {
    /// The seed the key is derived from.
    pub seed: [u8; KEY_SEED_LEN],
    /// The node's id.
    pub id: NodeId,
    /// The node's key pair.
    pub key: PrivateKey,
}

impl Node {
    /// The node with id `id` and the key derived from `seed`.
    #[must_use]
    pub fn from_seed(seed: [u8; KEY_SEED_LEN], id: NodeId) -> Self {
        Self {
            seed,
            id,
            key: PrivateKey::from_seed(&seed),
        }
    }

    /// The node as [`kemsphinx::path`] takes it: its id and public key.
    #[must_use]
    pub fn hop(&self) -> (NodeId, &PublicKey) {
        (self.id, self.key.public_key())
    }
}

/// Four nodes from `rng`: for each in turn, 96 bytes of key seed, then
/// 32 bytes of id.
pub fn nodes<R: Rng + ?Sized>(rng: &mut R) -> [Node; HOPS] {
    core::array::from_fn(|_| {
        let mut seed = [0u8; KEY_SEED_LEN];
        let mut id = [0u8; NODE_ID_LEN];
        rng.fill_bytes(&mut seed);
        rng.fill_bytes(&mut id);
        Node::from_seed(seed, NodeId(id))
    })
}

/// A path was asked for with other than four hops or four command lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopCount {
    /// The hops given.
    pub hops: usize,
    /// The command lists given.
    pub commands: usize,
}

impl fmt::Display for HopCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a path needs {HOPS} hops and {HOPS} command lists, got {} and {}",
            self.hops, self.commands
        )
    }
}

impl std::error::Error for HopCount {}

/// [`kemsphinx::path`] through `hops` (id and public key, first hop
/// first), hop `i` given `commands[i]`, from lists of any length: what the
/// command reads from a vector file, where the count is not yet known.
///
/// # Errors
/// [`HopCount`] unless there are exactly four of each.
pub fn path<'a, C: AsRef<[Command]>>(
    hops: impl IntoIterator<Item = (NodeId, &'a PublicKey)>,
    commands: &'a [C],
) -> Result<Path<'a>, HopCount> {
    let hops: Vec<(NodeId, &PublicKey)> = hops.into_iter().collect();
    let count = HopCount {
        hops: hops.len(),
        commands: commands.len(),
    };
    let hops: [_; HOPS] = hops.try_into().map_err(|_| count)?;
    let commands: &[C; HOPS] = commands.try_into().map_err(|_| count)?;
    Ok(kemsphinx::path(
        hops,
        commands.each_ref().map(AsRef::as_ref),
    ))
}

/// The path through `nodes` with per-hop `commands`, as [`path`].
///
/// # Errors
/// As [`path`].
pub fn nodes_path<'a, C: AsRef<[Command]>>(
    nodes: &'a [Node],
    commands: &'a [C],
) -> Result<Path<'a>, HopCount> {
    path(nodes.iter().map(Node::hop), commands)
}

/// One command's wire encoding.
#[must_use]
pub fn encoded(command: &Command) -> Vec<u8> {
    hazmat::encode_command(command).as_bytes().to_vec()
}

/// Commands encoded one after the other, as a commands area holds them
/// before its zero padding.
pub fn encoded_all<'a>(commands: impl IntoIterator<Item = &'a Command>) -> Vec<u8> {
    commands.into_iter().flat_map(encoded).collect()
}

/// Why bytes are not exactly one command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotOneCommand {
    /// The parser refused them.
    Parse(CommandError),
    /// A null command (or nothing at all).
    Null,
    /// Bytes after the command.
    Trailing,
}

impl fmt::Display for NotOneCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Parse(e) => write!(f, "{e}"),
            Self::Null => f.write_str("a null command"),
            Self::Trailing => f.write_str("bytes after the command"),
        }
    }
}

impl std::error::Error for NotOneCommand {}

/// The command `bytes` encode, all of them and nothing else.
///
/// # Errors
/// [`NotOneCommand`] for anything but exactly one command.
pub fn decode(bytes: &[u8]) -> Result<Command, NotOneCommand> {
    match hazmat::parse_command(bytes) {
        Ok(Some((command, []))) => Ok(command),
        Ok(Some(_)) => Err(NotOneCommand::Trailing),
        Ok(None) => Err(NotOneCommand::Null),
        Err(e) => Err(NotOneCommand::Parse(e)),
    }
}

/// An 82-byte commands area holding `parts` one after the other, then
/// zeros; `None` if they are longer than the area.
#[must_use]
pub fn area<P: AsRef<[u8]>>(parts: &[P]) -> Option<[u8; COMMANDS_LEN]> {
    let bytes: Vec<u8> = parts
        .iter()
        .flat_map(|p| p.as_ref().iter().copied())
        .collect();
    let mut out = [0u8; COMMANDS_LEN];
    out.get_mut(..bytes.len())?.copy_from_slice(&bytes);
    Some(out)
}
