//! Every packet operation at the granularity of the reference's published
//! baseline, with allocations per operation (`cargo bench --bench packet`).
//! The cases are the report's (`kemsphinx_support::bench::cases`, one
//! table for both); inputs are prepared outside the timed region.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use divan::Bencher;
use kemsphinx::{Action, unwrap};
use kemsphinx_support::bench::Net;
use kemsphinx_support::bench::cases::{self, OPERATIONS};

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

/// Each operation of the table.
#[divan::bench(args = OPERATIONS)]
fn operation(b: Bencher, name: &str) {
    let net = Net::new();
    let case = cases::find(cases::operations(&net), name).unwrap().unwrap();
    let (setup, run) = (case.setup, case.run);
    b.with_inputs(setup).bench_local_refs(run);
}

/// Unwrap at hop 0, 1, 2 (forward) and 3 (deliver): what the table's
/// "unwrap one hop" (hop 0) is at every position.
#[divan::bench(args = [0, 1, 2, 3])]
fn unwrap_hop(b: Bencher, hop: usize) {
    let net = Net::new();
    let packet = net.forward_packets().unwrap().swap_remove(hop);
    let key = &net.nodes[hop].key;
    b.with_inputs(|| packet.clone())
        .bench_local_refs(|p| matches!(unwrap(key, p).unwrap().action, Action::Forward { .. }));
}
