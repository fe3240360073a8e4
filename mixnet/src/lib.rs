//! A four-node mix network on loopback, shared by `examples/mix_node.rs`
//! and `tests/mix_node.rs` (a workspace crate that is never published; it
//! is not part of the library).
//!
//! ```text
//! client ──► n0 ──► n1 ──► n2 ──► n3 (service)      request with a SURB
//! client ◄── n0 ◄── n1 ◄── n2 ◄── n3                reply on the SURB
//! ```
//!
//! Each node is a few threads sharing one UDP socket on 127.0.0.1, one
//! [`Keyring`] and one [`Forwarder`] (the `kemsphinx-node` crate: key
//! epochs, replay filters, the order of checks, each packet held for its
//! delay and until durable), its keys published in the [`Directory`]. See
//! [`node`] for the threads and what the demo does with what comes due,
//! [`client`] for the other end, [`log`] for how a node reports without
//! ever waiting and [`stats`] for what it counts.
//!
//! Disk mode ([`Config::persist`]): each node's keyring keeps its epochs'
//! keys and replay tags in a directory of its own, a packet leaves only
//! once its tag is durable, and a restarted node resumes its epochs.
//!
//! Sockets: a node receives into a buffer one byte larger than a packet
//! ([`node::RECEIVE_BUFFER`]), so an oversize datagram is refused for its
//! length rather than cut to a packet. Its socket asks for
//! [`SOCKET_BUFFER`] bytes each way: at 16 KB a datagram, Linux's default
//! (about 208 KiB) holds only a dozen packets, and a burst beyond what the
//! workers drain is lost in the kernel, uncounted. Linux caps the request
//! at `net.core.rmem_max` / `wmem_max`: raise those on a real node.

// Example code indexes and unwraps freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

pub mod client;
pub mod log;
pub mod node;
pub mod stats;

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use getrandom::SysRng;
use kemsphinx_node::kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx_node::kemsphinx::{NodeId, PrivateKey, PublicKey, RecipientId};
use kemsphinx_node::{EpochPolicy, ForwardPolicy, Forwarder, Keyring, OpenError, Resumed, framing};
use rand_core::{Rng, UnwrapErr};

use crate::node::{Counters, Node};
use crate::stats::{ClientStats, NodeStats};

/// The send and receive buffer each node's socket asks for: 256 packets.
pub const SOCKET_BUFFER: usize = 256 * PACKET_LEN;

/// What to run: the client's load and the demo's own settings, and the
/// crate's two policies as they are (each node runs both).
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
    /// Also send node 0 a replay and five malformed datagrams.
    pub attacks: bool,
    /// Before the requests, send node 0 this many 1-byte datagrams.
    pub flood: u64,
    /// Before the requests, send node 0 this many packets that pass its
    /// MAC but name an unknown next hop (each costs a filter insert).
    pub forged: u64,
    /// Each node's key epochs and replay filters.
    pub epochs: EpochPolicy,
    /// How each node's [`Forwarder`] holds packets.
    pub forward: ForwardPolicy,
    /// Disk mode: node `i` keeps its epochs' keys and replay stores in
    /// `DIR/n<i>` and resumes them on the next run
    /// ([`Keyring::open`]); `None` (the default): memory mode, nothing is
    /// written.
    pub persist: Option<PathBuf>,
    /// Worker threads per node.
    pub workers: usize,
    /// Disk mode: the keyrings' group interval. Shorter than the crate's
    /// default (40 ms, chosen for throughput): this network's delays are
    /// only milliseconds, and eight hops would each wait for a group.
    pub group_interval: Duration,
}

impl Default for Config {
    /// 100 requests; epochs of 100,000 tags (a new one after 90,000, or
    /// ten minutes, with 30 s of grace), so a run rarely turns one; the
    /// crate's default forwarding.
    fn default() -> Self {
        Self {
            packets: 100,
            window: 4,
            max_delay_ms: 5,
            timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(5),
            attacks: true,
            flood: 0,
            forged: 0,
            epochs: EpochPolicy {
                capacity: 100_000,
                fp_rate: 1e-6,
                rotate_after: 90_000,
                length: Duration::from_secs(600),
                grace: Duration::from_secs(30),
                publish_ahead: false,
                schedule: None,
                ..EpochPolicy::default()
            },
            forward: ForwardPolicy::default(),
            persist: None,
            workers: 2,
            group_interval: Duration::from_millis(5),
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
        }
    }
}

/// A node's keyring: in memory with a fresh key, or (disk mode) resumed
/// from or started in `dir`.
///
/// # Errors
/// The policy, or in disk mode a key or store that does not load (the
/// error names the file), or files that cannot be written.
pub fn keyring(
    policy: EpochPolicy,
    dir: Option<&std::path::Path>,
) -> Result<(Keyring, Option<Resumed>), OpenError> {
    match dir {
        None => {
            let key = PrivateKey::generate(&mut UnwrapErr(SysRng));
            Ok((Keyring::new(policy, key)?, None))
        }
        Some(dir) => Keyring::open(policy, dir).map(|(k, r)| (k, Some(r))),
    }
}

/// A UDP socket on 127.0.0.1 asking for [`SOCKET_BUFFER`] bytes each way
/// (the kernel may grant less; see the crate docs).
///
/// # Errors
/// If it cannot be bound.
pub fn bind() -> io::Result<UdpSocket> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None)?;
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER);
    socket.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())?;
    Ok(socket.into())
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

/// The service's answer to a message: `echo` and the message, laid out
/// as a reply payload ([`framing::encode_reply`]: no header, zeros to the
/// end).
pub fn answer(message: &[u8]) -> Box<[u8; PAYLOAD_LEN]> {
    let mut out = Box::new([0u8; PAYLOAD_LEN]);
    let echo = [b"echo".as_slice(), message].concat();
    framing::encode_reply(&echo, &mut out).expect("a request's message fits a reply");
    out
}

/// Everything a run produced.
pub struct Report {
    /// Per node, n0 first.
    pub nodes: Vec<NodeStats>,
    /// The client's side.
    pub client: ClientStats,
    /// Bytes of each epoch's replay filter, per node.
    pub filter_bytes: usize,
}

/// Start four nodes, run the client to completion, stop the nodes.
///
/// # Errors
/// If a loopback socket cannot be bound.
pub fn run(cfg: &Config) -> io::Result<Report> {
    let mut rng = UnwrapErr(SysRng);
    let mut keyrings = Vec::new();
    for i in 0..HOPS {
        let dir = cfg.persist.as_ref().map(|d| d.join(format!("n{i}")));
        let (k, resumed) = keyring(cfg.epochs.clone(), dir.as_deref()).map_err(io::Error::other)?;
        k.set_group_interval(cfg.group_interval);
        if let Some(r) = resumed {
            eprintln!(
                "n{i}: disk mode: resumed epochs (number, tags) {:?}, deleted {:?}",
                r.epochs, r.retired
            );
        }
        keyrings.push(k);
    }
    let sockets: Vec<UdpSocket> = (0..HOPS).map(|_| bind()).collect::<io::Result<_>>()?;
    let client_socket = UdpSocket::bind("127.0.0.1:0")?;
    let mut random_id = || {
        let mut id = [0u8; 32];
        rng.fill_bytes(&mut id);
        id
    };
    let mut nodes = Vec::new();
    for (s, k) in sockets.iter().zip(&keyrings) {
        let current = k.current();
        nodes.push(NodeEntry::new(
            NodeId(random_id()),
            s.local_addr()?,
            current.number,
            current.public_key,
        ));
    }
    let dir = Directory {
        nodes,
        client: (RecipientId(random_id()), client_socket.local_addr()?),
        service: RecipientId(random_id()),
    };
    let counters: Vec<Arc<Counters>> = (0..HOPS).map(|_| Arc::default()).collect();
    let stop = AtomicBool::new(false);
    let (dir_ref, stop_ref) = (&dir, &stop);
    let (nodes, client) = thread::scope(|s| {
        let handles: Vec<_> = sockets
            .into_iter()
            .zip(keyrings)
            .zip(&counters)
            .enumerate()
            .map(|(index, ((socket, keyring), counters))| {
                let node = Node {
                    index,
                    forwarder: Forwarder::new(Arc::new(keyring), cfg.forward.clone()),
                    socket,
                    service: (index == HOPS - 1).then_some(dir.service),
                    workers: cfg.workers,
                    counters: Arc::clone(counters),
                };
                s.spawn(move || node.run(dir_ref, stop_ref))
            })
            .collect();
        let client = client::run(&client_socket, &dir, &counters[0], cfg);
        stop.store(true, Ordering::Relaxed);
        let nodes: Vec<NodeStats> = handles
            .into_iter()
            .map(|h| h.join().expect("node"))
            .collect();
        (nodes, client)
    });
    Ok(Report {
        nodes,
        client,
        filter_bytes: cfg.epochs.filter_bytes(),
    })
}
