//! The example mix network (this crate), run for a bounded number of
//! requests: every reply verified, every `node_delay` honoured, a replayed
//! packet and five malformed ones dropped at the first node and nowhere
//! else; and the replay filter's measured false-positive rate.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_precision_loss
)]

use std::collections::BTreeMap;
use std::time::Duration;

use chacha20::ChaCha20Rng;
use kemsphinx::ReplayTag;
use kemsphinx_mixnet::replay::ReplayFilter;
use kemsphinx_mixnet::{Config, run};
use rand_core::{Rng, SeedableRng};

const REQUESTS: u64 = 12;

#[test]
fn requests_are_answered_and_replays_and_malformed_packets_are_dropped() {
    let cfg = Config {
        packets: REQUESTS,
        window: 4,
        max_delay_ms: 3,
        timeout: Duration::from_secs(120),
        request_timeout: Duration::from_secs(60),
        replay_capacity: 10_000,
        replay_fp_rate: 1e-6,
        attacks: true,
    };
    let report = run(&cfg).unwrap();
    let c = &report.client;
    assert_eq!(
        (c.sent, c.replies_ok, c.replies_bad, c.lost),
        (REQUESTS, REQUESTS, 0, 0)
    );
    assert_eq!(c.too_fast, 0, "a round trip was shorter than its delays");
    assert_eq!(c.round_trip.len() as u64, REQUESTS);
    assert_eq!(c.injected, (1, 5));

    let [n0, n1, n2, n3] = &report.nodes[..] else {
        panic!("four nodes")
    };
    // The attacks all went to n0, which dropped each for the right reason.
    assert_eq!(n0.replays, 1);
    let expected: BTreeMap<&str, u64> = [("length", 2), ("mac", 2), ("version", 1)].into();
    assert_eq!(n0.malformed, expected);
    assert_eq!(n0.received, 2 * REQUESTS + 6);
    for n in [n1, n2, n3] {
        assert_eq!((n.replays, n.malformed_total()), (0, 0));
        assert_eq!(n.received, 2 * REQUESTS);
    }
    for n in &report.nodes {
        assert!(n.other_drops.is_empty(), "{:?}", n.other_drops);
        // Every packet unwrapped once, its tag remembered once.
        assert_eq!(n.unwrap_time.len() as u64, 2 * REQUESTS);
        assert_eq!(n.filter_len as u64, 2 * REQUESTS);
    }
    // Forward path n0→n3, reply path n3→n0: who forwarded what.
    assert_eq!((n0.forwarded, n0.replies), (REQUESTS, REQUESTS));
    assert_eq!((n1.forwarded, n2.forwarded), (2 * REQUESTS, 2 * REQUESTS));
    assert_eq!((n3.forwarded, n3.delivered), (REQUESTS, REQUESTS));
    // Each forward hop held its packet (the service's replies leave at once).
    let held: u64 = report.nodes.iter().map(|n| n.lateness.len() as u64).sum();
    assert_eq!(held, 7 * REQUESTS);
}

fn random_tags(rng: &mut ChaCha20Rng, n: usize) -> Vec<ReplayTag> {
    (0..n)
        .map(|_| {
            let mut t = [0u8; 32];
            rng.fill_bytes(&mut t);
            ReplayTag(t)
        })
        .collect()
}

/// Fill a filter to capacity, then count positives among fresh tags.
fn measured_fp_rate(capacity: usize, target: f64, queries: usize) -> (f64, ReplayFilter) {
    let mut rng = ChaCha20Rng::seed_from_u64(capacity as u64);
    let mut filter = ReplayFilter::new(capacity, target);
    let inserted = random_tags(&mut rng, capacity);
    for t in &inserted {
        filter.insert(t);
    }
    assert!(
        inserted.iter().all(|t| filter.contains(t)),
        "no false negatives"
    );
    let hits = random_tags(&mut rng, queries)
        .iter()
        .filter(|t| filter.contains(t))
        .count();
    (hits as f64 / queries as f64, filter)
}

#[test]
fn bloom_filter_false_positive_rate_at_capacity_is_the_target() {
    for (capacity, target, queries) in [(20_000, 1e-2, 200_000), (20_000, 1e-3, 400_000)] {
        let (rate, filter) = measured_fp_rate(capacity, target, queries);
        let theory = filter.fp_rate_at(capacity);
        println!(
            "capacity {capacity}, target {target:e}: {} bits ({} bytes), k = {}, \
             theory {theory:.3e}, measured {rate:.3e} over {queries} queries",
            filter.bits(),
            filter.memory_bytes(),
            filter.hashes()
        );
        // The expected count is ≥ 400; ±30% is over 6 standard deviations.
        assert!(
            rate > 0.7 * theory && rate < 1.3 * theory,
            "{rate} vs {theory}"
        );
        assert!(theory < 1.05 * target, "{theory} vs {target}");
    }
}

#[test]
fn bloom_filter_memory_is_fixed_by_capacity_and_rate() {
    let f = ReplayFilter::new(100_000, 1e-6);
    // m = -n ln p / (ln 2)^2 = 2,875,518 bits; k = (m / n) ln 2 ≈ 20.
    assert_eq!(f.bits(), 2_875_518);
    assert_eq!(f.hashes(), 20);
    assert_eq!(f.memory_bytes(), 2_875_518usize.div_ceil(64) * 8);
    assert!(f.fp_rate_at(100_000) < 1.01e-6);
    let mut f = f;
    let t = ReplayTag([7; 32]);
    assert!(f.insert(&t));
    assert!(!f.insert(&t), "a second insert reports the tag as present");
    assert_eq!(f.len(), 1);
}
