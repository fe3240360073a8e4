//! A node's statistics take the same memory however many packets it
//! handles: a counting allocator measures the heap a run's report owns
//! (what dropping it frees) after a short run and after one four times as
//! long.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kemsphinx_mixnet::{Config, run};

/// Counts the bytes freed by threads that asked to be watched.
struct Counting;

static FREED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: defers every call to the system allocator unchanged. (Only this
// test harness needs unsafe code.)
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if WATCHED.with(Cell::get) {
            FREED.fetch_add(layout.size(), Ordering::SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    let before = FREED.load(Ordering::SeqCst);
    WATCHED.with(|w| w.set(true));
    drop(report);
    WATCHED.with(|w| w.set(false));
    FREED.load(Ordering::SeqCst) - before
}

#[test]
fn a_reports_memory_does_not_grow_with_the_packets_it_counts() {
    let short = report_heap(6);
    let long = report_heap(24);
    println!("heap owned by the report: {short} bytes after 6 requests, {long} after 24");
    assert_eq!(short, long);
}
