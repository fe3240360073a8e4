//! What the one-node tests (and `examples/node_rate.rs`) share: a node on
//! 127.0.0.1 whose every next hop (and client) is one sink address, and
//! packets for it.

// Each test uses some of these.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use kemsphinx_mixnet::node::Node;
use kemsphinx_mixnet::{Directory, NodeEntry, bind};
use kemsphinx_node::kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN};
use kemsphinx_node::kemsphinx::{
    Command, NodeId, PrivateKey, PublicKey, RecipientId, create_packet, path,
};
use kemsphinx_node::{ForwardPolicy, Forwarder, Keyring};
use rand_core::CryptoRng;

/// The node's id.
pub(crate) const NODE: NodeId = NodeId([1; 32]);
/// The sink's id: the next hop of every packet the tests make.
pub(crate) const SINK: NodeId = NodeId([2; 32]);

/// Node 0 with `keyring`, the crate's default forwarding and two workers
/// on a fresh 127.0.0.1 socket, and a directory in which the sink at
/// `sink` is node 1 and the client.
pub(crate) fn node_to_sink(keyring: Keyring, sink: SocketAddr) -> (Node, Directory) {
    node_to_sink_with(keyring, sink, 2)
}

/// [`node_to_sink`] with `workers` workers.
pub(crate) fn node_to_sink_with(
    keyring: Keyring,
    sink: SocketAddr,
    workers: usize,
) -> (Node, Directory) {
    let socket = bind().unwrap();
    let current = keyring.current();
    let directory = Directory {
        nodes: vec![
            NodeEntry::new(
                NODE,
                socket.local_addr().unwrap(),
                current.number,
                current.public_key.clone(),
            ),
            NodeEntry::new(SINK, sink, 0, current.public_key),
        ],
        client: (RecipientId([3; 32]), sink),
        service: RecipientId([4; 32]),
    };
    let node = Node {
        index: 0,
        forwarder: Forwarder::new(Arc::new(keyring), ForwardPolicy::default()),
        socket,
        service: None,
        workers,
        counters: Arc::default(),
    };
    (node, directory)
}

/// A packet through the node (public key `node`) and then the sink, which
/// stands for the other hops (keys `others`); held `delay_ms` at each.
pub(crate) fn packet_to_sink<R: CryptoRng + ?Sized>(
    rng: &mut R,
    node: &PublicKey,
    others: &[PrivateKey],
    delay_ms: u32,
) -> Box<[u8; PACKET_LEN]> {
    let delay = [Command::NodeDelay(delay_ms)];
    let terminal = [Command::Recipient(RecipientId([4; 32]))];
    let key = |i: usize| others[i].public_key();
    let nodes = [(NODE, node), (SINK, key(0)), (SINK, key(1)), (SINK, key(2))];
    let path = path(nodes, [&delay, &delay, &delay, &terminal]);
    let mut p = Box::new([0u8; PACKET_LEN]);
    create_packet(rng, &path, &[0u8; PAYLOAD_LEN], &mut p).unwrap();
    p
}
