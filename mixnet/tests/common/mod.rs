//! What the one-node tests share: a node on 127.0.0.1 whose every next hop
//! (and client) is one sink address.

use std::net::SocketAddr;
use std::sync::Arc;

use kemsphinx::{NodeId, RecipientId};
use kemsphinx_mixnet::node::Node;
use kemsphinx_mixnet::{Directory, NodeEntry, bind};
use kemsphinx_node::Keyring;

/// The node's id.
pub(crate) const NODE: NodeId = NodeId([1; 32]);
/// The sink's id: the next hop of every packet the tests make.
pub(crate) const SINK: NodeId = NodeId([2; 32]);

/// Node 0 with `keyring` on a fresh 127.0.0.1 socket, and a directory in
/// which the sink at `sink` is node 1 and the client.
pub(crate) fn node_to_sink(keyring: Keyring, sink: SocketAddr) -> (Node, Directory) {
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
        keyring: Arc::new(keyring),
        socket,
        service: None,
        workers: 2,
        counters: Arc::default(),
    };
    (node, directory)
}
