//! Unwrap throughput of one mix key on 1 and 2 threads.
//!
//! The pattern a multi-core node uses: one loaded [`PrivateKey`] (`Send +
//! Sync`, expanded once) shared by reference, one packet per task, every
//! task on its own buffer. One iteration unwraps a batch of [`BATCH`]
//! distinct first-hop packets, split evenly across the threads; divan
//! reports the batch time and packets per second. Copying the fresh
//! packets in is not timed.
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
use kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{Action, Command, NodeId, PrivateKey, RecipientId, create_packet, path, unwrap};
use rand_core::SeedableRng;

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

fn main() {
    LazyLock::force(&FIXTURE);
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
