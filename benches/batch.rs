//! Unwrap throughput of one mix key on 1 and 2 threads, and the key
//! trial of a batch unwrap across a node's live keys.
//!
//! The pattern a multi-core node uses: one loaded [`PrivateKey`] (`Send +
//! Sync`, expanded once) shared by reference, one packet per task, every
//! task on its own buffer. One iteration unwraps a batch of [`BATCH`]
//! distinct first-hop packets, split evenly across the threads; divan
//! reports the batch time and packets per second. Copying the fresh
//! packets in is not timed.
//!
//! `key_trial` unwraps [`kemsphinx::BATCH`] packets under a node's two
//! live keys, `unwrap_batch` against `unwrap_any` a packet at a time: all
//! for the first key, all for the second (the previous epoch's during its
//! grace, or the next one's published ahead), or all noise that no key
//! opens (a flood of forgeries, which every key is tried on).
//!
//! ```text
//! cargo bench --bench batch
//! ```

// Bench code indexes and unwraps freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation
)]

use std::sync::LazyLock;

use chacha20::ChaCha20Rng;
use divan::Bencher;
use divan::counter::ItemsCount;
use kemsphinx::geometry::layout::packet as at;
use kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{
    Action, Command, NodeId, PrivateKey, RecipientId, create_packet, path, unwrap, unwrap_any,
};
use rand_core::{Rng, SeedableRng};

/// Packets per iteration: enough that thread start-up is noise.
const BATCH: usize = 64;

type Packet = Box<[u8; PACKET_LEN]>;

/// The first hop's key and a batch of packets addressed to it.
static FIXTURE: LazyLock<(PrivateKey, Vec<Packet>)> = LazyLock::new(|| {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let keys: [PrivateKey; 4] = std::array::from_fn(|_| PrivateKey::generate(&mut rng));
    let nodes = std::array::from_fn(|i| (NodeId([i as u8; 32]), keys[i].public_key()));
    let delay = [Command::NodeDelay(10)];
    let deliver = [Command::Recipient(RecipientId([1; 32]))];
    let path = path(nodes, [&delay, &delay, &delay, &deliver]);
    let payload = [0x42u8; PAYLOAD_LEN];
    let packets = (0..BATCH)
        .map(|_| {
            let mut p = Box::new([0u8; PACKET_LEN]);
            create_packet(&mut rng, &path, &payload, &mut p).unwrap();
            p
        })
        .collect();
    let [first, ..] = keys;
    (first, packets)
});

/// A kind of batch of `key_trial`: its name and packets.
type Kind = (&'static str, Vec<Packet>);

/// A node's two live keys and a batch of packets of each kind of
/// `key_trial`, by name.
static TRIAL: LazyLock<([PrivateKey; 2], Vec<Kind>)> = LazyLock::new(|| {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let live: [PrivateKey; 2] = std::array::from_fn(|_| PrivateKey::generate(&mut rng));
    let rest: [PrivateKey; 3] = std::array::from_fn(|_| PrivateKey::generate(&mut rng));
    let delay = [Command::NodeDelay(10)];
    let deliver = [Command::Recipient(RecipientId([1; 32]))];
    let payload = [0x42u8; PAYLOAD_LEN];
    let mut for_key = |first: &PrivateKey| -> Vec<Packet> {
        let keys = [first, &rest[0], &rest[1], &rest[2]];
        let nodes = std::array::from_fn(|i| (NodeId([i as u8; 32]), keys[i].public_key()));
        let path = path(nodes, [&delay, &delay, &delay, &deliver]);
        (0..kemsphinx::BATCH)
            .map(|_| {
                let mut p = Box::new([0u8; PACKET_LEN]);
                create_packet(&mut rng, &path, &payload, &mut p).unwrap();
                p
            })
            .collect()
    };
    let first = for_key(&live[0]);
    let second = for_key(&live[1]);
    let noise = (0..kemsphinx::BATCH)
        .map(|_| {
            let mut p = Box::new([0u8; PACKET_LEN]);
            rng.fill_bytes(&mut p[..]);
            p[at::VERSION].fill(0);
            p
        })
        .collect();
    let kinds = vec![
        ("first key", first),
        ("second key", second),
        ("noise", noise),
    ];
    (live, kinds)
});

fn main() {
    LazyLock::force(&FIXTURE);
    LazyLock::force(&TRIAL);
    divan::main();
}

/// Unwrap [`BATCH`] packets with `threads` threads sharing one key.
#[divan::bench(args = [1, 2])]
fn unwrap_batch(bencher: Bencher, threads: usize) {
    let (key, packets) = &*FIXTURE;
    bencher
        .counter(ItemsCount::new(BATCH))
        .with_inputs(|| packets.clone())
        .bench_local_values(|mut batch: Vec<Packet>| {
            let per_thread = BATCH.div_ceil(threads);
            std::thread::scope(|s| {
                for chunk in batch.chunks_mut(per_thread) {
                    s.spawn(move || {
                        for packet in chunk {
                            let out = unwrap(key, packet).unwrap();
                            assert!(matches!(out.action, Action::Forward { .. }));
                        }
                    });
                }
            });
            batch
        });
}

/// Unwrap [`kemsphinx::BATCH`] packets of one kind under two live keys,
/// with `unwrap_batch` (`batched`) or `unwrap_any` a packet at a time.
#[divan::bench(
    args = ["first key", "second key", "noise"],
    consts = [true, false],
    sample_count = 40
)]
fn key_trial<const BATCHED: bool>(bencher: Bencher, kind: &str) {
    let (live, kinds) = &*TRIAL;
    let (_, packets) = kinds.iter().find(|(k, _)| *k == kind).unwrap();
    let want = match kind {
        "first key" => Some(0),
        "second key" => Some(1),
        _ => None,
    };
    let keys = [&live[0], &live[1]];
    bencher
        .counter(ItemsCount::new(packets.len()))
        .with_inputs(|| packets.clone())
        .bench_local_values(|mut batch: Vec<Packet>| {
            if BATCHED {
                for r in kemsphinx::unwrap_batch(keys, batch.iter_mut().map(|p| &mut **p)) {
                    assert_eq!(r.ok().map(|(i, _)| i), want);
                }
            } else {
                for p in &mut batch {
                    assert_eq!(unwrap_any(keys, p).ok().map(|(i, _)| i), want);
                }
            }
            batch
        });
}
