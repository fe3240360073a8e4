//! Disk mode on a disk that fills up: a real one, a 512 KiB tmpfs mounted
//! for the test (so it needs root: run by `.ci/persist`). Once the replay
//! store's commit fails with "no space", the node forwards nothing more
//! whose tag is not durable (the forwarder drops those packets at their
//! deadline, `Discarded::NotDurable`; new ones are refused before any
//! work, `Dropped::DiskFailing`) and still drops every replay: of packets whose tags are durable, and of
//! packets accepted after the disk filled (their tags still in memory).

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

mod common;

use common::{node_to_sink, packet_to_sink};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{HOPS, PACKET_LEN};
use kemsphinx::{PrivateKey, PublicKey};
use kemsphinx_node::{Dropped, EpochPolicy, Keyring};
use rand_core::{Rng, SeedableRng};

const WINDOW: u64 = 8;
const DEADLINE: Duration = Duration::from_secs(120);

/// Sets its flag when dropped (on a panic too).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    fn new(size: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("kemsphinx-full-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mounting a tmpfs at {} (needs root)", dir.display());
        Self(dir)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        // Lazy: detached even if a failed test left the store open.
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn packet(rng: &mut ChaCha20Rng, node: &PublicKey, others: &[PrivateKey]) -> Box<[u8; PACKET_LEN]> {
    let delay = rng.next_u32() % 3;
    packet_to_sink(rng, node, others, delay)
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !done() {
        assert!(Instant::now() < deadline, "waited {DEADLINE:?} for {what}");
        std::thread::sleep(Duration::from_micros(300));
    }
}

#[test]
#[ignore = "mounts a tmpfs (needs root); run by .ci/persist"]
fn a_full_disk_stops_forwarding_but_never_checking() {
    let mount = Mount::new("512k");
    let dir: &Path = &mount.0;
    // Room an operator frees once the disk is full.
    let filler = dir.join("filler");
    std::fs::write(&filler, vec![0u8; 128 << 10]).unwrap();
    let policy = EpochPolicy {
        capacity: 100_000,
        fp_rate: 1e-6,
        rotate_after: 100_000,
        length: Duration::from_secs(3600),
        grace: Duration::from_secs(60),
        publish_ahead: false,
        schedule: None,
        ..EpochPolicy::default()
    };
    let (keyring, _) = Keyring::open(policy, &dir.join("node")).unwrap();
    let public = keyring.current().public_key;
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (node, directory) = node_to_sink(keyring, sink.local_addr().unwrap());
    let keyring = Arc::clone(node.forwarder.keyring());
    let node_addr = directory.nodes[0].addr;
    let forwarded = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    let others: Vec<PrivateKey> = (1..HOPS).map(|_| PrivateKey::generate(&mut rng)).collect();
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    let counters = Arc::clone(&node.counters);
    let settled = &counters.settled;
    let sent = AtomicU64::new(0);
    let send = |p: &[u8; PACKET_LEN]| {
        let n = sent.load(Ordering::Relaxed);
        wait_for("the node to settle", || {
            n < settled.load(Ordering::Relaxed) + WINDOW
        });
        client.send_to(&p[..], node_addr).unwrap();
        sent.store(n + 1, Ordering::Relaxed);
    };
    let (stats, accepted_before) = std::thread::scope(|s| {
        let node = s.spawn(|| node.run(&directory, &stop));
        // A failed check below stops the node and the sink, so the test
        // fails instead of waiting for them forever.
        let _stop_on_panic = StopOnDrop(&stop);
        s.spawn(|| {
            sink.set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            let mut buf = vec![0u8; PACKET_LEN];
            while !stop.load(Ordering::Relaxed) {
                if sink.recv(&mut buf).is_ok() {
                    forwarded.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        // Fill the disk.
        let mut before = Vec::new();
        while !keyring.disk_failing() {
            assert!(before.len() < 50_000, "the disk never filled");
            let p = packet(&mut rng, &public, &others);
            send(&p);
            before.push(p);
        }
        let accepted_before = before.len() as u64;
        let forwarded_at_failure = forwarded.load(Ordering::Relaxed);
        // Fresh packets now: none may leave, and none is remembered.
        let after: Vec<_> = (0..40)
            .map(|_| packet(&mut rng, &public, &others))
            .collect();
        for p in &after {
            send(p);
        }
        // Replays: of early packets (tags durable), of the fresh ones
        // (dropped unremembered, so dropped again the same way).
        for p in before.iter().take(20).chain(after.iter().take(20)) {
            send(p);
        }
        wait_for("every datagram to settle", || {
            settled.load(Ordering::Relaxed) == sent.load(Ordering::Relaxed)
        });
        std::thread::sleep(Duration::from_millis(200));
        let total_while_full = forwarded.load(Ordering::Relaxed);
        // At most the packets in flight when the failure was seen leave
        // after it (their tags were durable); none of the 40 fresh ones.
        assert!(
            total_while_full <= forwarded_at_failure + WINDOW,
            "{total_while_full}"
        );
        // Room again: the store is reopened, the retried group commits,
        // and fresh packets are forwarded again (their replays dropped).
        std::fs::remove_file(&filler).unwrap();
        wait_for("the store to be writable again", || !keyring.disk_failing());
        let again: Vec<_> = (0..20)
            .map(|_| packet(&mut rng, &public, &others))
            .collect();
        for p in again.iter().chain(again.iter().take(10)) {
            send(p);
        }
        wait_for("the fresh packets after the disk recovered", || {
            forwarded.load(Ordering::Relaxed) >= total_while_full + 20
        });
        wait_for("every datagram to settle", || {
            settled.load(Ordering::Relaxed) == sent.load(Ordering::Relaxed)
        });
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Relaxed);
        let stats = node.join().unwrap();
        let total = forwarded.load(Ordering::Relaxed);
        let drops: Vec<_> = stats.dropped.iter().filter(|(_, n)| *n > 0).collect();
        println!(
            "disk full after {accepted_before} packets ({forwarded_at_failure} forwarded by then, \
             {total_while_full} while full); then 40 fresh packets and 40 replays; room again: \
             20 fresh packets and 10 replays, {total} forwarded in all; keyring drops {drops:?}, \
             forwarder {:?}",
            stats.discarded
        );
        assert_eq!(total, total_while_full + 20, "after recovery");
        assert_eq!(
            stats.forwarded, total,
            "what the node counts sent is what left"
        );
        (stats, accepted_before)
    });
    assert_eq!(stats.dropped.get(Dropped::Replay), 30, "{stats:?}");
    // Refused before any work while the disk was failing: the 40 fresh
    // packets and their 20 replays, and any of the last packets sent
    // before the failure was seen that arrived after it.
    let disk_failing = stats.dropped.get(Dropped::DiskFailing);
    assert!((60..=60 + WINDOW).contains(&disk_failing), "{stats:?}");
    // Every packet before the failure and after the recovery unwrapped,
    // but those still in flight when the failure was seen (dropped
    // unremembered).
    let unwrapped = stats.accepted;
    assert!(
        unwrapped <= accepted_before + 20 && unwrapped + WINDOW >= accepted_before + 20,
        "{unwrapped} unwrapped, {accepted_before} accepted before the failure"
    );
    // Each accepted packet left or, its tag in the failed group, was
    // dropped by the forwarder once its deadline passed: nothing else.
    let d = stats.discarded;
    assert_eq!(d.held, unwrapped, "{d:?}");
    assert_eq!(stats.forwarded + d.not_durable, unwrapped, "{stats:?}");
    assert_eq!(d.discarded(), d.not_durable, "{d:?}");
    // The keyring still holds the store; the file must be closed before
    // the unmount.
    drop(keyring);
    drop(mount);
}
