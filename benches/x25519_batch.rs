//! Batched X25519 and the batch unwrap beside their one-at-a-time forms
//! (`cargo bench --bench x25519_batch`): X25519 under one scalar for 1, 4,
//! 8 and 16 points on each `x25519-batch` backend this CPU has, the KEM
//! backend's X25519 and x25519-dalek a point at a time; `unwrap_batch` over
//! 1, 4, 8 and 16 distinct first-hop packets and `unwrap` over the same
//! packets; and `unwrap_batch` over 8 and 16 with its X25519 forced onto
//! AVX2 where the CPU has AVX2 but `unwrap_batch` takes another path by
//! itself (issue 32's AVX2 figure, measured on an IFMA CPU too; the bench
//! says why where it is not timed).
//!
//! The cases are the report's (`kemsphinx_support::bench::cases::batch`,
//! one table for both). One iteration does all n units its name says
//! ("X25519 ×8, IFMA batch"); divan's item counter gives the rate per
//! unit (scalar multiplications, packets), and a unit costs the median ÷
//! n. Fresh copies of the packets are made outside the timed region.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use divan::Bencher;
use divan::counter::ItemsCount;
use kemsphinx_support::bench::Net;
use kemsphinx_support::bench::cases::{self, batch_names};

fn main() {
    eprintln!("{}", cases::unwrap_on_avx2());
    divan::main();
}

/// Each row of the batch table, counting its units.
#[divan::bench(args = batch_names())]
fn batch(b: Bencher, name: &str) {
    let net = Net::new();
    let row = cases::batch_row(name).unwrap();
    let case = cases::find(cases::batch(&net), name).unwrap().unwrap();
    let (setup, run) = (case.setup, case.run);
    b.counter(ItemsCount::new(row.n))
        .with_inputs(setup)
        .bench_local_refs(run);
}
