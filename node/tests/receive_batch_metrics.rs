//! With the feature `metrics`: `Keyring::receive_batch` emits what
//! `receive` emits, per datagram (a test binary of its own: the recorder
//! is the process's).
#![cfg(feature = "metrics")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
// `common`'s scratch directories and datagram buffers are not used here.
#![allow(dead_code)]

mod common;
#[path = "common/recorder.rs"]
mod recorder;

use chacha20::ChaCha20Rng;
use common::Client;
use kemsphinx_node::kemsphinx::PrivateKey;
use kemsphinx_node::kemsphinx::geometry::PACKET_LEN;
use kemsphinx_node::{EpochPolicy, Keyring};
use rand_core::SeedableRng;
use recorder::{counter, gauge, read};

#[test]
fn a_batch_counts_each_datagram_as_receive_does() {
    let snapshotter = recorder::install();

    let policy = EpochPolicy {
        capacity: 1_000,
        fp_rate: 1e-12,
        rotate_after: 1_000,
        ..EpochPolicy::default()
    };
    let key = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(1));
    let keyring = Keyring::new(policy, key).unwrap();
    let packets = Client::new(2).packets(&keyring.current().public_key, 2);
    // Two packets, a copy of the first, noise, a short datagram.
    let mut batch = [
        packets[0].to_vec(),
        packets[1].to_vec(),
        packets[0].to_vec(),
        vec![0x5a; PACKET_LEN],
        vec![0; 5],
    ];
    keyring.receive_batch(batch.iter_mut().map(Vec::as_mut_slice), |_, _| {});

    let m = read(&snapshotter);
    assert_eq!(counter(&m, "katzenpost_sphinx_unwraps_total"), 2);
    assert_eq!(counter(&m, "katzenpost_replayed_packets_total"), 1);
    assert_eq!(counter(&m, "katzenpost_dropped_packets_total"), 3);
    for reason in ["replay", "version", "length"] {
        let name = format!("katzenpost_dropped_reason_total{{reason={reason}}}");
        assert_eq!(counter(&m, &name), 1, "{reason}");
    }
    let fill = gauge(&m, "kemsphinx_node_epoch_fill{role=current}");
    assert!((fill - 2.0 / 1_000.0).abs() < 1e-12, "{fill}");
    assert_eq!(keyring.accepted(), 2);
    assert_eq!(keyring.drops().total(), 3);
}
