//! What the keyring's integration tests share: real packets for a node's
//! key, and scratch directories.

use std::path::PathBuf;

use chacha20::ChaCha20Rng;
use kemsphinx_node::kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx_node::kemsphinx::{
    Command, NodeId, PrivateKey, PublicKey, RecipientId, create_packet, path,
};
use rand_core::SeedableRng;

/// A packet as a node receives it.
pub(crate) type Packet = Box<[u8; PACKET_LEN]>;

/// The id of the node under test, the first hop of every packet made here.
pub(crate) const NODE: NodeId = NodeId([1; 32]);
/// The next hop of every packet made here.
pub(crate) const NEXT: NodeId = NodeId([2; 32]);

/// Makes packets whose first hop is the node under test (the one key that
/// changes), over three more hops whose keys are made once.
pub(crate) struct Client {
    rng: ChaCha20Rng,
    others: [PrivateKey; HOPS - 1],
}

impl Client {
    /// A client drawing every random byte from a generator seeded with
    /// `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let others = std::array::from_fn(|_| PrivateKey::generate(&mut rng));
        Self { rng, others }
    }

    /// A packet for the node whose current key is `key`: it forwards it to
    /// [`NEXT`] after 0 ms.
    pub(crate) fn packet(&mut self, key: &PublicKey) -> Packet {
        let (delay, deliver) = (
            [Command::NodeDelay(0)],
            [Command::Recipient(RecipientId([7; 32]))],
        );
        let [b, c, d] = self.others.each_ref().map(PrivateKey::public_key);
        let nodes = [
            (NODE, key),
            (NEXT, b),
            (NodeId([3; 32]), c),
            (NodeId([4; 32]), d),
        ];
        let path = path(nodes, [&delay, &delay, &delay, &deliver]);
        let mut packet = Box::new([0u8; PACKET_LEN]);
        create_packet(&mut self.rng, &path, &[0x42; PAYLOAD_LEN], &mut packet).unwrap();
        packet
    }

    /// `n` packets for `key`.
    pub(crate) fn packets(&mut self, key: &PublicKey, n: usize) -> Vec<Packet> {
        (0..n).map(|_| self.packet(key)).collect()
    }
}

/// A datagram buffer one byte larger than a packet (as a node receives
/// into), holding `packet`; receive `&mut buf[..PACKET_LEN]`.
pub(crate) fn datagram(packet: &[u8; PACKET_LEN]) -> Vec<u8> {
    let mut buf = vec![0u8; PACKET_LEN + 1];
    buf[..PACKET_LEN].copy_from_slice(packet);
    buf
}

/// A scratch directory's path under the system's temporary directory,
/// unique to this test and process, not yet made.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kemsphinx-node-keyring-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
