//! A four-node mix network on loopback, shared by `examples/mix_node.rs`
//! and `tests/mix_node.rs` (a workspace crate that is never published; it
//! is not part of the library).
//!
//! ```text
//! client ──► n0 ──► n1 ──► n2 ──► n3 (service)      request with a SURB
//! client ◄── n0 ◄── n1 ◄── n2 ◄── n3                reply on the SURB
//! ```
//!
//! Each node is a thread with a UDP socket on 127.0.0.1 and a series of
//! key epochs ([`epoch`]): a mix key and its replay filter ([`replay`]),
//! replaced together, published in the [`Directory`]. See [`node`] for what
//! a node does with a datagram, [`client`] for the other end, [`log`] for
//! how a node reports without ever waiting and [`stats`] for what it counts.
//!
//! Disk mode ([`Config::persist`]): each epoch's key and replay tags are
//! kept on disk ([`persist`], [`store`]), a packet leaves only once its
//! tag is durable ([`journal`]), and a restarted node resumes its epochs.

// Example code indexes and unwraps freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

pub mod client;
pub mod epoch;
pub mod journal;
pub mod log;
pub mod node;
pub mod persist;
pub mod replay;
pub mod stats;
pub mod store;

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use getrandom::SysRng;
use kemsphinx::geometry::{HOPS, PAYLOAD_LEN, SURB_LEN};
use kemsphinx::{NodeId, PrivateKey, PublicKey, RecipientId};
use rand_core::{Rng, UnwrapErr};

use crate::epoch::{EpochPolicy, Epochs, Resumed};
use crate::journal::Journal;
use crate::log::Log;
use crate::node::Node;
use crate::replay::ReplayFilter;
use crate::stats::{ClientStats, NodeStats};

/// The upper layer's payload framing (as in `examples/roundtrip.rs`):
/// flags ‖ reserved ‖ SURB ‖ message.
pub const SURB_FLAG: u8 = 1;
/// Where the message starts in a payload.
pub const MESSAGE_OFFSET: usize = 2 + SURB_LEN;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Requests the client sends (each answered on its SURB).
    pub packets: u64,
    /// Requests outstanding at once (small: a loopback UDP socket buffers
    /// only a handful of 16 KB datagrams).
    pub window: usize,
    /// `node_delay` of each hop is drawn from `0..=max_delay_ms`.
    pub max_delay_ms: u32,
    /// The whole run stops after this, whatever is outstanding.
    pub timeout: Duration,
    /// A request without a reply after this is counted lost.
    pub request_timeout: Duration,
    /// Replay filter capacity (tags per node and key epoch).
    pub replay_capacity: usize,
    /// Replay filter false-positive rate at capacity.
    pub replay_fp_rate: f64,
    /// A node starts a new key epoch after this many packets (at most
    /// `replay_capacity`, to which larger values are cut; the rest of the
    /// capacity is room for packets still arriving for the previous key).
    pub rotate_after: usize,
    /// ... or at the latest after this long.
    pub epoch: Duration,
    /// How long a node still unwraps packets for its previous key.
    pub grace: Duration,
    /// Also send node 0 a replay and five malformed datagrams.
    pub attacks: bool,
    /// Before the requests, send node 0 this many 1-byte datagrams.
    pub flood: u64,
    /// Before the requests, send node 0 this many packets that pass its
    /// MAC but name an unknown next hop (each costs a filter insert).
    pub forged: u64,
    /// Disk mode: node `i` keeps its epochs' keys and replay stores in
    /// `DIR/n<i>` and resumes them on the next run ([`persist`]); `None`
    /// (the default): memory mode, nothing is written.
    pub persist: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            packets: 100,
            window: 4,
            max_delay_ms: 5,
            timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(5),
            replay_capacity: 100_000,
            replay_fp_rate: 1e-6,
            rotate_after: 90_000,
            epoch: Duration::from_secs(600),
            grace: Duration::from_secs(30),
            attacks: true,
            flood: 0,
            forged: 0,
            persist: None,
        }
    }
}

impl Config {
    /// The nodes' epoch policy.
    pub fn epoch_policy(&self) -> EpochPolicy {
        EpochPolicy {
            capacity: self.replay_capacity,
            fp_rate: self.replay_fp_rate,
            rotate_after: self.rotate_after.min(self.replay_capacity),
            length: self.epoch,
            grace: self.grace,
        }
    }
}

/// One node as the directory knows it.
pub struct NodeEntry {
    /// The node's id.
    pub id: NodeId,
    /// Its address.
    pub addr: SocketAddr,
    /// Its current epoch and public key.
    key: Mutex<(u64, PublicKey)>,
    /// Datagrams it has received so far (the client paces its attacks on
    /// node 0 by this, so the kernel does not drop them).
    pub progress: AtomicU64,
    /// Datagrams it is done with: dropped, or sent on (after their delay
    /// and, in disk mode, their tag's commit). `progress - settled` is
    /// what it holds (a test paces its sending by it).
    pub settled: AtomicU64,
}

/// Who is where, with which key. A real network learns this from its PKI.
pub struct Directory {
    /// The nodes, n0 first.
    pub nodes: Vec<NodeEntry>,
    /// The client's recipient id and address.
    pub client: (RecipientId, SocketAddr),
    /// The service's recipient id (it lives at n3).
    pub service: RecipientId,
}

impl NodeEntry {
    /// A node at `addr` whose epoch `number` has the public key `key`.
    pub fn new(id: NodeId, addr: SocketAddr, number: u64, key: PublicKey) -> Self {
        Self {
            id,
            addr,
            key: Mutex::new((number, key)),
            progress: AtomicU64::new(0),
            settled: AtomicU64::new(0),
        }
    }
}

/// A node's epochs: in memory with a fresh key, or (disk mode) resumed
/// from or started in `dir`.
///
/// # Errors
/// Disk mode: a key or store that does not load (the error names the
/// file), or files that cannot be written.
pub fn node_epochs(
    policy: EpochPolicy,
    dir: Option<&std::path::Path>,
) -> io::Result<(Epochs, Option<Resumed>)> {
    node_epochs_with(policy, dir, journal::GROUP_INTERVAL)
}

/// [`node_epochs`] with a group interval of `group_interval`
/// ([`Journal::new`]).
///
/// # Errors
/// As [`node_epochs`].
pub fn node_epochs_with(
    policy: EpochPolicy,
    dir: Option<&std::path::Path>,
    group_interval: Duration,
) -> io::Result<(Epochs, Option<Resumed>)> {
    let new_key = || PrivateKey::generate(&mut UnwrapErr(SysRng));
    let now = Instant::now();
    match dir {
        None => Ok((Epochs::new(policy, new_key(), now), None)),
        Some(dir) => {
            let dir = persist::PersistDir::new(dir)?;
            let journal = Arc::new(Journal::new(group_interval));
            let (epochs, resumed) = Epochs::open(policy, dir, journal, now, new_key)?;
            Ok((epochs, Some(resumed)))
        }
    }
}

impl Directory {
    /// The address of a node.
    pub fn node_addr(&self, id: &NodeId) -> Option<SocketAddr> {
        self.nodes.iter().find(|n| n.id == *id).map(|n| n.addr)
    }

    /// The address of a client.
    pub fn client_addr(&self, id: &RecipientId) -> Option<SocketAddr> {
        (self.client.0 == *id).then_some(self.client.1)
    }

    /// Node `index`'s current public key.
    pub fn public_key(&self, index: usize) -> PublicKey {
        self.nodes[index]
            .key
            .lock()
            .expect("directory lock")
            .1
            .clone()
    }

    /// Node `index`'s current epoch.
    pub fn epoch(&self, index: usize) -> u64 {
        self.nodes[index].key.lock().expect("directory lock").0
    }

    /// Node `index` publishes the key of its epoch `number`.
    pub fn publish(&self, index: usize, number: u64, key: &PublicKey) {
        *self.nodes[index].key.lock().expect("directory lock") = (number, key.clone());
    }
}

/// The service's answer to a message: `echo` and the message.
pub fn answer(message: &[u8]) -> Box<[u8; PAYLOAD_LEN]> {
    let mut out = Box::new([0u8; PAYLOAD_LEN]);
    out[..4].copy_from_slice(b"echo");
    let n = message.len().min(PAYLOAD_LEN - 4);
    out[4..4 + n].copy_from_slice(&message[..n]);
    out
}

/// Everything a run produced.
pub struct Report {
    /// Per node, n0 first.
    pub nodes: Vec<NodeStats>,
    /// The client's side.
    pub client: ClientStats,
    /// Each node's replay filter: bits, hash count, bytes.
    pub filter: (u64, u32, usize),
}

/// Start four nodes, run the client to completion, stop the nodes.
///
/// # Errors
/// If a loopback socket cannot be bound.
pub fn run(cfg: &Config) -> io::Result<Report> {
    let mut rng = UnwrapErr(SysRng);
    let mut epochs = Vec::new();
    for i in 0..HOPS {
        let dir = cfg.persist.as_ref().map(|d| d.join(format!("n{i}")));
        let (e, resumed) = node_epochs(cfg.epoch_policy(), dir.as_deref())?;
        if let Some(r) = resumed {
            eprintln!(
                "n{i}: disk mode: resumed epochs (number, tags) {:?}, deleted {:?}",
                r.epochs, r.retired
            );
        }
        epochs.push(e);
    }
    let sockets: Vec<UdpSocket> = (0..HOPS)
        .map(|_| UdpSocket::bind("127.0.0.1:0"))
        .collect::<io::Result<_>>()?;
    let client_socket = UdpSocket::bind("127.0.0.1:0")?;
    let mut random_id = || {
        let mut id = [0u8; 32];
        rng.fill_bytes(&mut id);
        id
    };
    let mut nodes = Vec::new();
    for (s, e) in sockets.iter().zip(&epochs) {
        let current = e.current();
        nodes.push(NodeEntry::new(
            NodeId(random_id()),
            s.local_addr()?,
            current.number,
            current.public_key().clone(),
        ));
    }
    let dir = Directory {
        nodes,
        client: (RecipientId(random_id()), client_socket.local_addr()?),
        service: RecipientId(random_id()),
    };
    let probe = ReplayFilter::new(cfg.replay_capacity, cfg.replay_fp_rate);
    let stop = AtomicBool::new(false);
    let (dir_ref, stop_ref) = (&dir, &stop);
    let (nodes, client) = thread::scope(|s| {
        let handles: Vec<_> = sockets
            .into_iter()
            .zip(epochs)
            .enumerate()
            .map(|(index, (socket, epochs))| {
                let service = (index == HOPS - 1).then_some(dir.service);
                let node = Node {
                    index,
                    epochs,
                    socket,
                    service,
                    log: Log::stderr(),
                };
                s.spawn(move || node.run(dir_ref, stop_ref))
            })
            .collect();
        let client = client::run(&client_socket, &dir, cfg);
        stop.store(true, Ordering::Relaxed);
        let nodes: Vec<NodeStats> = handles
            .into_iter()
            .map(|h| h.join().expect("node"))
            .collect();
        (nodes, client)
    });
    let filter = (probe.bits(), probe.hashes(), probe.memory_bytes());
    Ok(Report {
        nodes,
        client,
        filter,
    })
}
