//! The replay check while tags wait for their group commit (a disk
//! stall): the Bloom filter says "maybe", then the epoch's pending tags
//! are looked up (`src/pending.rs`, compiled in here as the keyring
//! compiles it), against the linear scan of 0.1's list.
//!
//! ```text
//! cargo bench -p kemsphinx-node --bench pending
//! ```
//!
//! The probe is the tag added last (a replay of the newest packet: the
//! whole list for 0.1's scan). The store lookup that follows a miss is
//! not part of it.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

#[allow(unused, unreachable_pub)]
#[path = "../src/filter.rs"]
mod filter;
#[allow(unused, unreachable_pub)]
#[path = "../src/pending.rs"]
mod pending;

use chacha20::ChaCha20Rng;
use divan::{Bencher, black_box};
use kemsphinx_node::kemsphinx::ReplayTag;
use rand_core::{Rng, SeedableRng};

use filter::ReplayFilter;
use pending::Pending;

const WAITING: [usize; 3] = [1_000, 20_000, 200_000];

fn main() {
    divan::main();
}

/// `n` random tags: a filter (sized as the default policy's) holding them
/// all, and the last one.
fn tags(n: usize) -> (Vec<ReplayTag>, ReplayFilter) {
    let mut rng = ChaCha20Rng::seed_from_u64(n as u64);
    let mut filter = ReplayFilter::new(1_000_000, 1e-6);
    let tags: Vec<ReplayTag> = (0..n)
        .map(|_| {
            let mut t = [0u8; 32];
            rng.fill_bytes(&mut t);
            let t = ReplayTag(t);
            filter.insert(&t);
            t
        })
        .collect();
    (tags, filter)
}

/// The replay check as the keyring makes it now.
#[divan::bench(args = WAITING)]
fn replay_check(bencher: Bencher<'_, '_>, n: usize) {
    let (tags, filter) = tags(n);
    let mut pending = Pending::default();
    for (i, t) in tags.iter().enumerate() {
        pending.push(i as u64 / 1000 + 1, t, 0);
    }
    let probe = *tags.last().unwrap();
    bencher.bench_local(|| {
        let probe = black_box(&probe);
        filter.contains(probe) && pending.contains(probe)
    });
}

/// The same check over 0.1's list of pending tags.
#[divan::bench(args = WAITING)]
fn replay_check_as_in_0_1(bencher: Bencher<'_, '_>, n: usize) {
    let (tags, filter) = tags(n);
    let pending: Vec<(u64, ReplayTag)> = tags
        .iter()
        .enumerate()
        .map(|(i, t)| (i as u64 / 1000 + 1, *t))
        .collect();
    let probe = *tags.last().unwrap();
    bencher.bench_local(|| {
        let probe = black_box(&probe);
        filter.contains(probe) && pending.iter().any(|(_, t)| t == probe)
    });
}
