//! `Keyring::receive_batch` allocates nothing (memory mode): a batch's
//! state is arrays on the stack, whatever its datagrams hold, packets for
//! the node's key, replays, copies within a batch, noise, wrong lengths.
//! (A test binary of its own: allocation-counter replaces the global
//! allocator.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// `common`'s scratch directories and datagram buffers are not used here.
#![allow(dead_code)]

mod common;

use chacha20::ChaCha20Rng;
use common::Client;
use kemsphinx_node::kemsphinx::geometry::PACKET_LEN;
use kemsphinx_node::kemsphinx::{BATCH, PrivateKey};
use kemsphinx_node::{Dropped, EpochPolicy, Keyring};
use rand_core::SeedableRng;

#[test]
fn receiving_a_batch_allocates_nothing() {
    let key = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(1));
    let policy = EpochPolicy {
        fp_rate: 1e-9,
        ..EpochPolicy::default()
    };
    let keyring = Keyring::new(policy, key).unwrap();
    let node = keyring.current().public_key;
    let packets = Client::new(2).packets(&node, 2 * BATCH + 2);
    // Two batches of 2·BATCH + 1 datagrams: the first a warm-up, each
    // with its own packets, a copy, noise and a short datagram.
    let batch = |packets: &[common::Packet]| {
        let mut b: Vec<Vec<u8>> = packets.iter().map(|p| p.to_vec()).collect();
        b.push(packets[0].to_vec());
        b.push(vec![0x5a; PACKET_LEN]);
        b.push(vec![0; 3]);
        b
    };
    let (first, second) = packets.split_at(BATCH + 1);
    let (mut warm, mut timed) = (batch(first), batch(second));
    let mut accepted = 0;
    keyring.receive_batch(warm.iter_mut().map(Vec::as_mut_slice), |_, r| {
        accepted += usize::from(r.is_ok());
    });
    let mut results = [None; 2 * BATCH + 1];
    let info = allocation_counter::measure(|| {
        keyring.receive_batch(timed.iter_mut().map(Vec::as_mut_slice), |i, r| {
            results[i] = Some(r.map(|a| a.epoch));
        });
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    // The call did its work: every packet went on, the copy was a replay.
    let n = second.len();
    assert!(
        results[..n].iter().all(|r| *r == Some(Ok(0))),
        "{results:?}"
    );
    assert_eq!(
        results[n..n + 3],
        [
            Some(Err(Dropped::Replay)),
            Some(Err(Dropped::Version)),
            Some(Err(Dropped::Length))
        ]
    );
    assert_eq!(accepted, first.len());
    assert_eq!(keyring.accepted(), packets.len() as u64);
}
