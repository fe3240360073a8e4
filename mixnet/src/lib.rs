//! A four-node mix network on loopback, shared by `examples/mix_node.rs`
//! and `tests/mix_node.rs` (a workspace crate that is never published; it
//! is not part of the library).
//!
//! ```text
//! client ──► n0 ──► n1 ──► n2 ──► n3 (service)      request with a SURB
//! client ◄── n0 ◄── n1 ◄── n2 ◄── n3                reply on the SURB
//! ```
//!
//! Each node is a thread with its own key, a UDP socket on 127.0.0.1 and a
//! replay filter ([`replay`]). See [`node`] for what a node does with a
//! datagram and [`client`] for the other end.

// Example code indexes and unwraps freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

pub mod client;
pub mod node;
pub mod replay;
pub mod stats;

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use getrandom::SysRng;
use kemsphinx::geometry::{HOPS, PAYLOAD_LEN, SURB_LEN};
use kemsphinx::{NodeId, PrivateKey, PublicKey, RecipientId};
use rand_core::{Rng, UnwrapErr};

use node::Node;
use replay::ReplayFilter;
use stats::{ClientStats, NodeStats};

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
    /// Also send node 0 a replay and five malformed datagrams.
    pub attacks: bool,
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
            attacks: true,
        }
    }
}

/// Who is where. A real network learns this from its PKI.
pub struct Directory {
    /// Node ids and addresses, n0 first.
    pub nodes: Vec<(NodeId, SocketAddr)>,
    /// The client's recipient id and address.
    pub client: (RecipientId, SocketAddr),
    /// The service's recipient id (it lives at n3).
    pub service: RecipientId,
}

impl Directory {
    /// The address of a node.
    pub fn node_addr(&self, id: &NodeId) -> Option<SocketAddr> {
        self.nodes.iter().find(|(n, _)| n == id).map(|(_, a)| *a)
    }

    /// The address of a client.
    pub fn client_addr(&self, id: &RecipientId) -> Option<SocketAddr> {
        (self.client.0 == *id).then_some(self.client.1)
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
    let keys: Vec<PrivateKey> = (0..HOPS).map(|_| PrivateKey::generate(&mut rng)).collect();
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
    for s in &sockets {
        nodes.push((NodeId(random_id()), s.local_addr()?));
    }
    let dir = Directory {
        nodes,
        client: (RecipientId(random_id()), client_socket.local_addr()?),
        service: RecipientId(random_id()),
    };
    let filter = || ReplayFilter::new(cfg.replay_capacity, cfg.replay_fp_rate);
    let probe = filter();
    let stop = AtomicBool::new(false);
    let (dir_ref, stop_ref) = (&dir, &stop);
    let (nodes, client) = thread::scope(|s| {
        let handles: Vec<_> = sockets
            .into_iter()
            .enumerate()
            .map(|(index, socket)| {
                let service = (index == HOPS - 1).then_some(dir.service);
                let node = Node {
                    index,
                    key: &keys[index],
                    socket,
                    filter: filter(),
                    service,
                };
                s.spawn(move || node.run(dir_ref, stop_ref))
            })
            .collect();
        let publics: Vec<&PublicKey> = keys.iter().map(PrivateKey::public_key).collect();
        let client = client::run(&client_socket, &dir, &publics, cfg);
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
