//! Timing and allocation counting for the report.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Counts allocations and bytes made by threads that asked to be watched.
pub(crate) struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: every call is passed to the system allocator unchanged; the only
// addition is two relaxed counters. (The library forbids unsafe code; this
// measuring harness needs it to be a global allocator.)
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if WATCHED.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
            BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations and bytes of one call of `f` on this thread.
pub(crate) fn allocations<T>(f: impl FnOnce() -> T) -> (usize, usize) {
    let (a, b) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    WATCHED.with(|w| w.set(true));
    black_box(f());
    WATCHED.with(|w| w.set(false));
    (
        ALLOCS.load(Ordering::Relaxed) - a,
        BYTES.load(Ordering::Relaxed) - b,
    )
}

/// Timing of one operation.
#[derive(Clone, Debug)]
pub(crate) struct Timing {
    pub(crate) name: &'static str,
    /// Per-operation time of each sample (sorted).
    pub(crate) samples: Vec<Duration>,
    pub(crate) iterations: u32,
    pub(crate) allocs: usize,
    pub(crate) bytes: usize,
}

impl Timing {
    pub(crate) fn median(&self) -> Duration {
        self.samples[self.samples.len() / 2]
    }
    pub(crate) fn min(&self) -> Duration {
        self.samples[0]
    }
    pub(crate) fn max(&self) -> Duration {
        self.samples[self.samples.len() - 1]
    }
    pub(crate) fn ops_per_sec(&self) -> f64 {
        1.0 / self.median().as_secs_f64()
    }
}

/// Time `op` (which gets a fresh input from `setup` each iteration; setup is
/// not timed): `samples` samples of enough iterations to last ~`target`.
pub(crate) fn measure<I, T>(
    name: &'static str,
    samples: usize,
    target: Duration,
    mut setup: impl FnMut() -> I,
    mut op: impl FnMut(&mut I) -> T,
) -> Timing {
    // Warm up and size the sample.
    let start = Instant::now();
    let mut warm = 0u32;
    while start.elapsed() < Duration::from_millis(200) || warm < 3 {
        let mut input = setup();
        black_box(op(&mut input));
        warm += 1;
    }
    let once = start.elapsed() / warm.max(1);
    let iterations = (target.as_nanos() / once.as_nanos().max(1)).clamp(1, 10_000) as u32;
    let mut input = setup();
    let (allocs, bytes) = allocations(|| op(&mut input));
    let mut out = Vec::with_capacity(samples);
    let mut inputs: Vec<I> = Vec::with_capacity(iterations as usize);
    for _ in 0..samples {
        inputs.clear();
        inputs.extend((0..iterations).map(|_| setup()));
        let t = Instant::now();
        for input in &mut inputs {
            black_box(op(input));
        }
        out.push(t.elapsed() / iterations);
    }
    out.sort();
    Timing {
        name,
        samples: out,
        iterations,
        allocs,
        bytes,
    }
}

/// Latency percentiles of `n` single operations.
pub(crate) fn percentiles<I, T>(
    n: usize,
    mut setup: impl FnMut() -> I,
    mut op: impl FnMut(&mut I) -> T,
) -> Vec<(f64, Duration)> {
    let mut lat = Vec::with_capacity(n);
    let mut input = setup();
    for _ in 0..n {
        input = reuse(input, &mut setup);
        let t = Instant::now();
        black_box(op(&mut input));
        lat.push(t.elapsed());
    }
    lat.sort();
    [50.0, 95.0, 99.0, 99.9, 100.0]
        .iter()
        .map(|p| {
            let i = ((p / 100.0) * n as f64).ceil() as usize;
            (*p, lat[i.clamp(1, n) - 1])
        })
        .collect()
}

/// A fresh input (kept as a separate step so it is never timed).
fn reuse<I>(_old: I, setup: &mut impl FnMut() -> I) -> I {
    setup()
}
