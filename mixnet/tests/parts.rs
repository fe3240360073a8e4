//! The mix node's parts on their own: key epochs and their filters, the
//! latency histogram, the rate-limited log.

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
use kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{
    Command, Error, Hop, NodeId, PrivateKey, RecipientId, ReplayTag, create_packet, unwrap,
};
use kemsphinx_mixnet::epoch::{EpochPolicy, Epochs, Full, Turn, Which};
use kemsphinx_mixnet::log::{BURST, Log, PER_SECOND};
use kemsphinx_mixnet::stats::Histogram;
use rand_core::{Rng, SeedableRng};

const HOUR: Duration = Duration::from_secs(3600);

fn policy(capacity: usize, rotate_after: usize) -> EpochPolicy {
    EpochPolicy {
        capacity,
        fp_rate: 1e-3,
        rotate_after,
        length: HOUR,
        grace: HOUR,
    }
}

fn tag(rng: &mut ChaCha20Rng) -> ReplayTag {
    let mut t = [0u8; 32];
    rng.fill_bytes(&mut t);
    ReplayTag(t)
}

/// What the old single filter could not do: after twenty times its
/// capacity of inserts, fresh tags are still (nearly all) fresh, because
/// the node moved to a new key and filter each time one filled.
#[test]
fn fresh_tags_are_not_dropped_however_many_tags_came_before() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let (capacity, rotate_after, flood) = (1_000, 900, 20_000);
    let t0 = Instant::now();
    let mut epochs = Epochs::new(
        policy(capacity, rotate_after),
        PrivateKey::generate(&mut rng),
        t0,
    );
    let (mut started, mut retired) = (0, 0);
    for _ in 0..flood {
        let t = tag(&mut rng);
        epochs.remember(Which::Current, &t).unwrap();
        while let Some(turn) = epochs.turn(t0, || PrivateKey::generate(&mut rng)) {
            match turn {
                Turn::Started {
                    by_count: true,
                    took: 900,
                    ..
                } => started += 1,
                // Every change after the first comes within the previous
                // epoch's grace (the clock stands still), which retires it.
                Turn::Retired { early: true, .. } => retired += 1,
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(started, flood / rotate_after);
    assert_eq!(retired, started - 1);
    assert_eq!(epochs.current().filter().len(), flood % rotate_after);
    assert_eq!(epochs.previous().unwrap().filter().len(), rotate_after);
    let queries = 100_000;
    let dropped = (0..queries).filter(|_| epochs.seen(&tag(&mut rng))).count();
    println!("{dropped} of {queries} fresh tags looked like replays after {flood} inserts");
    // Two live filters, each under its capacity: at most twice the target.
    assert!((dropped as f64) < 2.0 * 1e-3 * queries as f64, "{dropped}");
}

#[test]
fn the_previous_epoch_takes_up_to_its_capacity_then_refuses_once_reported() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let t0 = Instant::now();
    let mut epochs = Epochs::new(policy(10, 6), PrivateKey::generate(&mut rng), t0);
    for _ in 0..6 {
        epochs.remember(Which::Current, &tag(&mut rng)).unwrap();
    }
    let turn = epochs.turn(t0, || PrivateKey::generate(&mut rng));
    assert_eq!(
        turn,
        Some(Turn::Started {
            number: 1,
            took: 6,
            by_count: true
        })
    );
    assert_eq!(epochs.turn(t0, || unreachable!()), None);
    for _ in 0..4 {
        epochs.remember(Which::Previous, &tag(&mut rng)).unwrap();
    }
    let full = |first| Err(Full { number: 0, first });
    assert_eq!(epochs.remember(Which::Previous, &tag(&mut rng)), full(true));
    assert_eq!(
        epochs.remember(Which::Previous, &tag(&mut rng)),
        full(false)
    );
    // The new epoch is unaffected.
    epochs.remember(Which::Current, &tag(&mut rng)).unwrap();
    assert_eq!(epochs.current().filter().len(), 1);
}

/// The node's unwrap: the keys in order, on to the next on a MAC failure.
fn unwrap_as_a_node(epochs: &Epochs, packet: &[u8; PACKET_LEN]) -> Result<Which, Error> {
    let mut packet = Box::new(*packet);
    let mut tried = Err(Error::Mac);
    for (which, key) in epochs.keys() {
        tried = unwrap(key, &mut packet).map(|_| which);
        if !matches!(tried, Err(Error::Mac)) {
            break;
        }
    }
    tried
}

#[test]
fn the_previous_key_unwraps_during_its_grace_and_not_after() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let t0 = Instant::now();
    let p = EpochPolicy {
        length: Duration::from_secs(10),
        grace: Duration::from_secs(5),
        ..policy(100, 100)
    };
    let mut epochs = Epochs::new(p, PrivateKey::generate(&mut rng), t0);
    let packet_for = |epochs: &Epochs, rng: &mut ChaCha20Rng| {
        let key = epochs.current().public_key().clone();
        let others: Vec<PrivateKey> = (1..HOPS).map(|_| PrivateKey::generate(rng)).collect();
        let (delay, deliver) = (
            [Command::NodeDelay(0)],
            [Command::Recipient(RecipientId([1; 32]))],
        );
        let path: [Hop<'_>; HOPS] = std::array::from_fn(|i| Hop {
            id: NodeId([i as u8; 32]),
            public_key: if i == 0 {
                &key
            } else {
                others[i - 1].public_key()
            },
            commands: if i + 1 < HOPS { &delay } else { &deliver },
        });
        let mut packet = Box::new([0u8; PACKET_LEN]);
        create_packet(rng, &path, &[0; PAYLOAD_LEN], &mut packet).unwrap();
        packet
    };
    let old = packet_for(&epochs, &mut rng);
    assert_eq!(unwrap_as_a_node(&epochs, &old), Ok(Which::Current));
    // Nothing changes before the epoch's time is up.
    assert_eq!(
        epochs.turn(t0 + Duration::from_secs(9), || unreachable!()),
        None
    );
    let t1 = t0 + Duration::from_secs(10);
    let turn = epochs.turn(t1, || PrivateKey::generate(&mut rng));
    assert_eq!(
        turn,
        Some(Turn::Started {
            number: 1,
            took: 0,
            by_count: false
        })
    );
    let new = packet_for(&epochs, &mut rng);
    assert_eq!(unwrap_as_a_node(&epochs, &old), Ok(Which::Previous));
    assert_eq!(unwrap_as_a_node(&epochs, &new), Ok(Which::Current));
    let t2 = t1 + Duration::from_secs(5);
    assert_eq!(
        epochs.turn(t2, || unreachable!()),
        Some(Turn::Retired {
            number: 0,
            early: false
        })
    );
    assert!(epochs.previous().is_none());
    assert_eq!(unwrap_as_a_node(&epochs, &old), Err(Error::Mac));
    assert_eq!(unwrap_as_a_node(&epochs, &new), Ok(Which::Current));
}

/// The nearest-rank quantile of sorted samples.
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

/// A clean stop sends the packets the node still holds for their delay
/// (before: they were counted forwarded and never sent, and their resends
/// after a restart were replays).
#[test]
fn a_clean_stop_sends_what_the_node_still_holds() {
    use common::{NODE, SINK, node_to_sink};
    use kemsphinx_mixnet::node_epochs;
    use std::net::UdpSocket;
    use std::sync::atomic::{AtomicBool, Ordering};

    const N: u64 = 4;
    let mut rng = ChaCha20Rng::seed_from_u64(41);
    let (epochs, _) = node_epochs(policy(1_000, 1_000), None).unwrap();
    let key = epochs.current().public_key().clone();
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    sink.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (node, dir) = node_to_sink(epochs, sink.local_addr().unwrap());
    let addr = dir.nodes[0].addr;
    let others: Vec<PrivateKey> = (1..HOPS).map(|_| PrivateKey::generate(&mut rng)).collect();
    // Held for 1.5 s at the node: longer than the stop below takes.
    let (delay, deliver) = (
        [Command::NodeDelay(1_500)],
        [Command::Recipient(RecipientId([4; 32]))],
    );
    let path: [Hop<'_>; HOPS] = std::array::from_fn(|i| Hop {
        id: if i == 0 { NODE } else { SINK },
        public_key: if i == 0 {
            &key
        } else {
            others[i - 1].public_key()
        },
        commands: if i + 1 < HOPS { &delay } else { &deliver },
    });
    let stop = AtomicBool::new(false);
    let forwarded = std::thread::scope(|s| {
        let running = s.spawn(|| node.run(&dir, &stop));
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..N {
            let mut packet = Box::new([0u8; PACKET_LEN]);
            create_packet(&mut rng, &path, &[9; PAYLOAD_LEN], &mut packet).unwrap();
            client.send_to(&packet[..], addr).unwrap();
        }
        while dir.nodes[0].progress.load(Ordering::Relaxed) < N {
            std::thread::sleep(Duration::from_millis(1));
        }
        stop.store(true, Ordering::Relaxed);
        running.join().unwrap().forwarded
    });
    assert_eq!(forwarded, N);
    let mut buf = vec![0u8; PACKET_LEN + 1];
    let mut sent = 0;
    while sent < N && sink.recv(&mut buf).is_ok_and(|n| n == PACKET_LEN) {
        sent += 1;
    }
    assert_eq!(sent, N, "held packets lost at a clean stop");
}
