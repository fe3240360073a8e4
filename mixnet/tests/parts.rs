//! The mix node's parts on their own: the latency histogram, the
//! rate-limited log, a clean stop. (The key epochs and replay filters are
//! the `kemsphinx-node` crate's, tested there.)

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unreachable,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation
)]

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use kemsphinx::PrivateKey;
use kemsphinx::geometry::{HOPS, PACKET_LEN};
use kemsphinx_mixnet::log::{BURST, Log, PER_SECOND};
use kemsphinx_mixnet::stats::Histogram;
use kemsphinx_node::{EpochPolicy, Keyring};
use rand_core::{Rng, SeedableRng};

fn exact(sorted: &[Duration], q: f64) -> Duration {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[test]
fn histogram_quantiles_are_within_an_eighth_above_the_samples() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let mut h = Histogram::default();
    assert_eq!(h.quantile(0.5), Duration::ZERO);
    // Log-uniform from 1 µs to about 17 minutes.
    let mut samples: Vec<Duration> = (0..200_000)
        .map(|_| {
            Duration::from_micros(1u64 << (rng.next_u32() % 30))
                + Duration::from_micros(u64::from(rng.next_u32() % 1000))
        })
        .collect();
    for s in &samples {
        h.record(*s);
    }
    samples.sort();
    assert_eq!(h.count(), 200_000);
    assert_eq!(h.max(), *samples.last().unwrap());
    for q in [0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
        let (got, want) = (h.quantile(q), exact(&samples, q));
        assert!(
            got >= want && got.as_secs_f64() <= want.as_secs_f64() * 1.125,
            "{q}: {got:?} vs {want:?}"
        );
    }
    // Small values are exact; huge ones are kept (in the last bucket).
    let mut small = Histogram::default();
    for us in [0, 1, 2, 7] {
        small.record(Duration::from_micros(us));
    }
    assert_eq!(small.quantile(0.75), Duration::from_micros(2));
    small.record(Duration::from_secs(1 << 40));
    assert_eq!(small.quantile(1.0), Duration::from_secs(1 << 40));
}

#[test]
fn the_log_writes_a_burst_then_a_few_lines_a_second_and_counts_the_rest() {
    let (tx, rx) = mpsc::sync_channel(10_000);
    let mut log = Log::to(tx);
    let t0 = Instant::now() + Duration::from_millis(1);
    let mut built = 0;
    for i in 0..1_000 {
        log.line(t0, || {
            built += 1;
            format!("line {i}")
        });
    }
    let lines: Vec<String> = rx.try_iter().collect();
    assert_eq!(lines.len(), BURST as usize);
    assert_eq!(built, BURST, "suppressed lines are never formatted");
    assert_eq!(log.suppressed(), 1_000 - u64::from(BURST));
    for i in 0..100 {
        log.line(t0 + Duration::from_secs(1), || format!("later {i}"));
    }
    let lines: Vec<String> = rx.try_iter().collect();
    assert_eq!(lines.len(), PER_SECOND as usize);
    assert_eq!(lines[0], "later 0 (980 earlier lines not logged)");
    assert_eq!(lines[1], "later 1");
}

#[test]
fn the_log_never_waits_for_a_full_queue() {
    let (tx, _rx) = mpsc::sync_channel(2); // never read
    let mut log = Log::to(tx);
    let t0 = Instant::now();
    for i in 0..10 {
        log.line(t0, || format!("line {i}"));
    }
    assert_eq!(log.suppressed(), 8);
}

/// A clean stop is the forwarder's: the packets that are due still
/// leave, those not yet due are dropped and counted
/// ([`Discarded::Stopped`](kemsphinx_node::Discarded::Stopped)), and what
/// the node reports forwarded is what the next hop got (counted as each
/// leaves, not as it is accepted).
#[test]
fn a_clean_stop_sends_what_is_due_and_counts_what_is_not() {
    use common::{node_to_sink, packet_to_sink};
    use std::net::UdpSocket;
    use std::sync::atomic::{AtomicBool, Ordering};

    const N: u64 = 4;
    let mut rng = ChaCha20Rng::seed_from_u64(41);
    let policy = EpochPolicy {
        capacity: 1_000,
        rotate_after: 1_000,
        ..EpochPolicy::default()
    };
    let keyring = Keyring::new(policy, PrivateKey::generate(&mut rng)).unwrap();
    let key = keyring.current().public_key;
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    sink.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (node, dir) = node_to_sink(keyring, sink.local_addr().unwrap());
    let counters = std::sync::Arc::clone(&node.counters);
    let addr = dir.nodes[0].addr;
    let others: Vec<PrivateKey> = (1..HOPS).map(|_| PrivateKey::generate(&mut rng)).collect();
    let stop = AtomicBool::new(false);
    let stats = std::thread::scope(|s| {
        let running = s.spawn(|| node.run(&dir, &stop));
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        // N due at once, N held for 30 s: far longer than the stop takes.
        for delay_ms in [0, 30_000] {
            for _ in 0..N {
                let packet = packet_to_sink(&mut rng, &key, &others, delay_ms);
                client.send_to(&packet[..], addr).unwrap();
            }
        }
        while counters.received.load(Ordering::Relaxed) < 2 * N {
            std::thread::sleep(Duration::from_millis(1));
        }
        stop.store(true, Ordering::Relaxed);
        running.join().unwrap()
    });
    let mut buf = vec![0u8; PACKET_LEN + 1];
    let mut sent = 0;
    while sink.recv(&mut buf).is_ok_and(|n| n == PACKET_LEN) {
        sent += 1;
        sink.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
    }
    assert_eq!(sent, N, "the due packets leave, the others do not");
    assert_eq!(stats.forwarded, N, "{stats:?}");
    let d = stats.discarded;
    assert_eq!((d.held, d.released, d.stopped), (2 * N, N, N), "{d:?}");
    assert_eq!(stats.drops_total(), N, "{stats:?}");
    assert_eq!(counters.settled.load(Ordering::Relaxed), 2 * N);
}
