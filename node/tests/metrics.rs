//! With the feature `metrics`: what a node's exporter sees, read back
//! through an in-process recorder after real packets were accepted,
//! replayed and dropped, a self-check, and group commits on disk.
#![cfg(feature = "metrics")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
#[path = "common/recorder.rs"]
mod recorder;

use std::time::Duration;

use chacha20::ChaCha20Rng;
use common::{Client, datagram, scratch};
use kemsphinx_node::kemsphinx::PrivateKey;
use kemsphinx_node::kemsphinx::geometry::PACKET_LEN;
use kemsphinx_node::{Dropped, EpochPolicy, Keyring, self_check};
use metrics_util::debugging::DebugValue;
use rand_core::SeedableRng;
use recorder::{counter, gauge, read};

fn policy() -> EpochPolicy {
    EpochPolicy {
        capacity: 1_000,
        fp_rate: 1e-12,
        rotate_after: 1_000,
        ..EpochPolicy::default()
    }
}

#[test]
fn counters_gauges_and_histogram_under_katzenpost_names() {
    let snapshotter = recorder::install();

    // The start-up self-check's rates.
    let check = self_check(Duration::from_millis(20)).unwrap();
    let m = read(&snapshotter);
    let solo = gauge(&m, "katzenpost_server_selfcheck_sphinx_ops_per_sec_solo");
    assert!((solo - check.one_core).abs() < 1e-9 && solo > 0.0, "{solo}");
    let all = gauge(
        &m,
        "katzenpost_server_selfcheck_sphinx_ops_per_sec_saturated",
    );
    assert!((all - check.all_cores).abs() < 1e-9, "{all}");
    #[allow(clippy::cast_precision_loss)]
    let cores = check.cores as f64;
    assert!((gauge(&m, "katzenpost_server_selfcheck_num_cpu") - cores).abs() < 1e-9);

    // Memory mode: 3 accepted, 2 replays, 1 for another key, 1 too short.
    let key = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(61));
    let keyring = Keyring::new(policy(), key).unwrap();
    let mut client = Client::new(62);
    let packets = client.packets(&keyring.current().public_key, 3);
    for p in &packets {
        let mut buf = datagram(p);
        assert!(keyring.receive(&mut buf[..PACKET_LEN]).is_ok());
    }
    for p in &packets[..2] {
        let mut buf = datagram(p);
        assert_eq!(
            keyring.receive(&mut buf[..PACKET_LEN]).err(),
            Some(Dropped::Replay)
        );
    }
    let stranger = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(63));
    let mut buf = datagram(&client.packet(stranger.public_key()));
    assert_eq!(
        keyring.receive(&mut buf[..PACKET_LEN]).err(),
        Some(Dropped::Mac)
    );
    assert_eq!(
        keyring.receive(&mut buf[..100]).err(),
        Some(Dropped::Length)
    );
    let m = read(&snapshotter);
    let mut names: Vec<&String> = m.keys().collect();
    names.sort();
    println!("{names:?}");
    assert_eq!(counter(&m, "katzenpost_sphinx_unwraps_total"), 3);
    assert_eq!(counter(&m, "katzenpost_replayed_packets_total"), 2);
    assert_eq!(counter(&m, "katzenpost_dropped_packets_total"), 4);
    assert_eq!(
        counter(&m, "katzenpost_dropped_reason_total{reason=replay}"),
        2
    );
    assert_eq!(
        counter(&m, "katzenpost_dropped_reason_total{reason=mac}"),
        1
    );
    assert_eq!(
        counter(&m, "katzenpost_dropped_reason_total{reason=length}"),
        1
    );
    assert_eq!(
        counter(&m, "katzenpost_dropped_reason_total{reason=epoch_full}"),
        0
    );
    let fill = gauge(&m, "kemsphinx_node_epoch_fill{role=current}");
    assert!((fill - 0.003).abs() < 1e-12, "{fill}");
    // The housekeeping thread's wait sets every role's fill.
    let _ = keyring.wait_for_turn(Duration::ZERO);
    let m = read(&snapshotter);
    assert!((gauge(&m, "kemsphinx_node_epoch_fill{role=current}") - 0.003).abs() < 1e-12);
    assert!(gauge(&m, "kemsphinx_node_epoch_fill{role=previous}").abs() < 1e-12);
    assert!(gauge(&m, "kemsphinx_node_epoch_fill{role=next}").abs() < 1e-12);
    drop(keyring);

    // Disk mode: a group commit's latency, nothing pending after it.
    let dir = scratch("metrics");
    let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
    let p = client.packet(&keyring.current().public_key);
    let mut buf = datagram(&p);
    let ticket = keyring.receive(&mut buf[..PACKET_LEN]).unwrap().ticket;
    assert!(
        keyring
            .wait_durable(ticket, Duration::from_secs(30))
            .is_ok()
    );
    let m = read(&snapshotter);
    assert_eq!(counter(&m, "katzenpost_sphinx_unwraps_total"), 1);
    let Some(DebugValue::Histogram(commits)) = m.get("kemsphinx_node_group_commit_seconds") else {
        panic!("no commit histogram: {:?}", m.keys());
    };
    println!("group commits (s): {commits:?}");
    assert!(!commits.is_empty() && commits.iter().all(|s| s.0 > 0.0 && s.0 < 30.0));
    assert!(gauge(&m, "kemsphinx_node_pending_tags").abs() < 1e-12);
    assert!(gauge(&m, "kemsphinx_node_disk_failing").abs() < 1e-12);
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}
