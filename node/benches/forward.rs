//! What the forwarder adds per packet (hold, then hand out: two short
//! locks and one 16 KB copy), against what the packet already cost: one
//! `Keyring::receive` (memory mode, a real unwrap).
//!
//! ```text
//! cargo bench -p kemsphinx-node --bench forward [-- ROUNDS]
//! ```
//!
//! (A custom harness, as `receive.rs`: each packet is accepted once, so
//! every round of receives needs packets the keyring has not seen.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use kemsphinx_node::kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx_node::kemsphinx::{Command, Hop, NodeId, PrivateKey, RecipientId, create_packet};
use kemsphinx_node::{EpochPolicy, ForwardPolicy, Forwarder, Keyring};

/// Packets per round.
const BATCH: usize = 256;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let mut rng = rand_core::UnwrapErr(getrandom::SysRng);
    let key = PrivateKey::generate(&mut rng);
    let others: Vec<PrivateKey> = (1..HOPS).map(|_| PrivateKey::generate(&mut rng)).collect();
    let public = key.public_key().clone();
    let policy = EpochPolicy {
        capacity: 1 << 20,
        rotate_after: 1 << 20,
        ..EpochPolicy::default()
    };
    let keyring = Arc::new(Keyring::new(policy, key).unwrap());
    let fwd = Forwarder::new(
        Arc::clone(&keyring),
        ForwardPolicy {
            capacity: BATCH,
            ..ForwardPolicy::default()
        },
    );
    let (delay, terminal) = (
        [Command::NodeDelay(0)],
        [Command::Recipient(RecipientId([7; 32]))],
    );
    let path: [Hop<'_>; HOPS] = std::array::from_fn(|i| Hop {
        id: NodeId([i as u8 + 1; 32]),
        public_key: if i == 0 {
            &public
        } else {
            others[i - 1].public_key()
        },
        commands: if i + 1 < HOPS { &delay } else { &terminal },
    });
    let packet = Box::new([0x42u8; PACKET_LEN]);
    let (mut receive, mut forward) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut batch: Vec<Vec<u8>> = (0..BATCH)
            .map(|_| {
                let mut p = vec![0u8; PACKET_LEN];
                let out: &mut [u8; PACKET_LEN] = (&mut p[..]).try_into().unwrap();
                create_packet(&mut rng, &path, &[0; PAYLOAD_LEN], out).unwrap();
                p
            })
            .collect();
        let t = Instant::now();
        for p in &mut batch {
            let _accepted = keyring.receive(p).unwrap();
        }
        receive.push(t.elapsed() / BATCH as u32);

        let now = Instant::now();
        let t = Instant::now();
        for _ in 0..BATCH {
            fwd.hold(
                NodeId([2; 32]),
                &packet,
                fwd.keyring().durable_ticket(),
                now,
            )
            .unwrap();
        }
        while let Some(p) = fwd.pop_due(now) {
            std::hint::black_box(p.outgoing());
        }
        forward.push(t.elapsed() / BATCH as u32);
    }
    let (r, f) = (median(receive), median(forward));
    println!(
        "per packet, median of {rounds} rounds of {BATCH}: Keyring::receive {r:?}, \
         Forwarder hold + hand out {f:?} ({:.2} % of the receive)",
        100.0 * f.as_secs_f64() / r.as_secs_f64()
    );
}
