//! How many packets per second one example node forwards, with 1 and 2
//! worker threads, in memory and in disk mode: a sender keeps at most a
//! window of distinct packets in the node's socket buffer (not yet
//! received; what the node holds for its tags' group commit does not
//! count), every `node_delay` zero; a sink counts what comes out.
//!
//! ```text
//! cargo run --release --manifest-path mixnet/Cargo.toml --example node_rate [-- PACKETS]
//! ```

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation
)]

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kemsphinx_mixnet::{bind, keyring};
use kemsphinx_node::EpochPolicy;
use kemsphinx_node::kemsphinx::geometry::{HOPS, PACKET_LEN};
use kemsphinx_node::kemsphinx::{PrivateKey, PublicKey};

#[path = "../tests/common/mod.rs"]
mod common;
use common::{node_to_sink_with, packet_to_sink};

/// Datagrams sent but not yet received by the node, at most (its socket
/// buffer holds 256).
const WINDOW: u64 = 128;

fn packets(node: &PublicKey, n: usize) -> Vec<Box<[u8; PACKET_LEN]>> {
    let mut rng = rand_core::UnwrapErr(getrandom::SysRng);
    let others: Vec<PrivateKey> = (1..HOPS).map(|_| PrivateKey::generate(&mut rng)).collect();
    (0..n)
        .map(|_| packet_to_sink(&mut rng, node, &others, 0))
        .collect()
}

/// Packets per second forwarded by a node with `workers` workers.
fn rate(workers: usize, disk: Option<&std::path::Path>, n: usize) -> f64 {
    let policy = EpochPolicy {
        capacity: 1_000_000,
        rotate_after: 1_000_000,
        ..EpochPolicy::default()
    };
    let (keyring, _) = keyring(policy, disk).unwrap();
    let key = keyring.current().public_key;
    let packets = packets(&key, n);
    let sink = bind().unwrap();
    let (node, directory) = node_to_sink_with(keyring, sink.local_addr().unwrap(), workers);
    let (counters, addr) = (Arc::clone(&node.counters), directory.nodes[0].addr);
    let (stop, out) = (AtomicBool::new(false), AtomicU64::new(0));
    let elapsed = std::thread::scope(|s| {
        s.spawn(|| node.run(&directory, &stop));
        s.spawn(|| {
            sink.set_read_timeout(Some(Duration::from_millis(20)))
                .unwrap();
            let mut buf = vec![0u8; PACKET_LEN + 1];
            while !stop.load(Ordering::Relaxed) {
                if sink.recv(&mut buf).is_ok() {
                    out.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        let start = Instant::now();
        for (sent, p) in packets.iter().enumerate() {
            while sent as u64 >= counters.received.load(Ordering::Relaxed) + WINDOW {
                std::thread::sleep(Duration::from_micros(100));
            }
            client.send_to(&p[..], addr).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while out.load(Ordering::Relaxed) < n as u64 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
        let elapsed = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        elapsed
    });
    let forwarded = out.load(Ordering::Relaxed);
    assert_eq!(forwarded, n as u64, "packets lost");
    forwarded as f64 / elapsed.as_secs_f64()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3_000);
    let scratch = std::env::temp_dir().join(format!("kemsphinx-node-rate-{}", std::process::id()));
    println!("one node, {n} distinct packets, window {WINDOW}, node_delay 0");
    println!(
        "{:<8}{:>16}{:>16}",
        "workers", "memory pkts/s", "disk pkts/s"
    );
    for workers in [1, 2] {
        let memory = rate(workers, None, n);
        let dir = scratch.join(format!("w{workers}"));
        let disk = rate(workers, Some(&dir), n);
        std::fs::remove_dir_all(&dir).unwrap();
        println!("{workers:<8}{memory:>16.0}{disk:>16.0}");
    }
}
