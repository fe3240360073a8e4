//! A node's statistics take the same memory however many packets it
//! handles: a counting allocator (`allocation-counter`) measures the heap a run's report owns
//! (what dropping it frees) after a short run and after one four times as
//! long.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use kemsphinx_mixnet::{Config, run};

/// The heap owned by the report of a run of `packets` requests.
fn report_heap(packets: u64) -> usize {
    let cfg = Config {
        packets,
        max_delay_ms: 1,
        timeout: Duration::from_secs(300),
        request_timeout: Duration::from_secs(60),
        attacks: false,
        ..Config::default()
    };
    let report = run(&cfg).unwrap();
    assert_eq!(report.client.replies_ok, packets);
    // What dropping it frees: what the drop allocated less its net change.
    let dropped = allocation_counter::measure(|| drop(report));
    usize::try_from(i128::from(dropped.bytes_total) - i128::from(dropped.bytes_current)).unwrap()
}

#[test]
fn a_reports_memory_does_not_grow_with_the_packets_it_counts() {
    let short = report_heap(6);
    let long = report_heap(24);
    println!("heap owned by the report: {short} bytes after 6 requests, {long} after 24");
    assert_eq!(short, long);
}
