//! After warm-up, the forwarder allocates nothing per packet: holding,
//! dropping when full, and handing out reuse the pool's buffers and the
//! heaps' reserved room. (A test binary of its own: allocation-counter
//! replaces the global allocator.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use kemsphinx_node::kemsphinx::geometry::PACKET_LEN;
use kemsphinx_node::kemsphinx::{NodeId, PrivateKey};
use kemsphinx_node::{Discarded, EpochPolicy, ForwardPolicy, Forwarder, Keyring};
use rand_core::SeedableRng;

#[test]
fn holding_and_handing_out_allocates_nothing_after_warm_up() {
    let key = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(1));
    let keyring = Arc::new(Keyring::new(EpochPolicy::default(), key).unwrap());
    let policy = ForwardPolicy {
        capacity: 8,
        ..ForwardPolicy::default()
    };
    let fwd = Forwarder::new(keyring, policy);
    let packet = Box::new([7u8; PACKET_LEN]);
    let now = Instant::now();
    let ms = Duration::from_millis(1);
    let round = || {
        for i in 0..8u8 {
            let due = now + ms * u32::from(i % 3);
            fwd.hold(
                NodeId([i; 32]),
                &packet,
                fwd.keyring().durable_ticket(),
                due,
            )
            .unwrap();
        }
        assert_eq!(
            fwd.hold(
                NodeId([9; 32]),
                &packet,
                fwd.keyring().durable_ticket(),
                now
            ),
            Err(Discarded::QueueFull)
        );
        let mut n = 0;
        while let Some(p) = fwd.pop_due(now + 3 * ms) {
            let _ = p.outgoing();
            n += 1;
        }
        assert_eq!(n, 8);
    };
    round(); // warm-up: the pool's eight buffers are made here
    let info = allocation_counter::measure(|| {
        for _ in 0..100 {
            round();
        }
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    assert_eq!(fwd.counts().released, 808);
}
