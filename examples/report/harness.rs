//! Timing and allocation counting for the report.
//!
//! Every table is measured by [`interleaved`]: its cases take turns, one
//! sample each per round, so a slow patch of the shared machine slows all
//! of them alike and the ratios between rows compare like with like.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Allocations and bytes of one call of `f` on this thread (the
/// `allocation-counter` crate's global allocator counts them).
pub(crate) fn allocations<T>(f: impl FnOnce() -> T) -> (usize, usize) {
    let info = allocation_counter::measure(|| {
        black_box(f());
    });
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    (count(info.count_total), count(info.bytes_total))
}

/// Timing of one operation.
#[derive(Clone, Debug)]
pub(crate) struct Timing {
    pub(crate) name: String,
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
    pub(crate) fn secs(&self) -> f64 {
        self.median().as_secs_f64()
    }
}

/// The timing of `name` in `list`.
pub(crate) fn find<'a>(list: &'a [Timing], name: &str) -> Option<&'a Timing> {
    list.iter().find(|x| x.name == name)
}

/// What one call of a case's closure does.
enum Run {
    /// Time this many operations, each on a fresh input (setup untimed).
    Time(u32),
    /// Count the allocations of one operation.
    Count,
}

/// One row of a table: a name and the closure that measures it.
pub(crate) struct Case<'a> {
    name: String,
    run: Box<dyn FnMut(Run) -> (Duration, usize, usize) + 'a>,
}

/// Most inputs prepared before one timed run (16 packets: 258 KB).
const CHUNK: u32 = 16;

/// A case timing `op`, which gets a fresh input from `setup` (untimed) for
/// every operation.
pub(crate) fn case<'a, I, T>(
    name: impl Into<String>,
    mut setup: impl FnMut() -> I + 'a,
    mut op: impl FnMut(&mut I) -> T + 'a,
) -> Case<'a> {
    Case {
        name: name.into(),
        run: Box::new(move |run| match run {
            Run::Count => {
                let mut input = setup();
                let (a, b) = allocations(|| op(&mut input));
                (Duration::ZERO, a, b)
            }
            Run::Time(n) => {
                // Inputs are prepared a chunk at a time (untimed), so that
                // they are in the caches as a node's or client's reused
                // buffers are: thousands of 16 KB buffers prepared at once
                // measured memory bandwidth instead (a reply from a SURB
                // took twice as long).
                let mut elapsed = Duration::ZERO;
                let mut left = n;
                while left > 0 {
                    let k = left.min(CHUNK);
                    let mut inputs: Vec<I> = (0..k).map(|_| setup()).collect();
                    let start = Instant::now();
                    for input in &mut inputs {
                        black_box(op(input));
                    }
                    elapsed += start.elapsed();
                    drop(inputs);
                    left -= k;
                }
                (elapsed, 0, 0)
            }
        }),
    }
}

/// How much to measure.
#[derive(Clone, Copy)]
pub(crate) struct Plan {
    /// Samples per case.
    pub(crate) samples: usize,
    /// About how long one sample of one case lasts.
    pub(crate) target: Duration,
    /// Warm-up per case (also sizes its samples).
    pub(crate) warm: Duration,
}

/// Measure `cases` interleaved: warm each up and size its samples, count
/// its allocations, then take `plan.samples` rounds of one sample of each.
pub(crate) fn interleaved(mut cases: Vec<Case<'_>>, plan: Plan) -> Vec<Timing> {
    let mut sizes = Vec::with_capacity(cases.len());
    for c in &mut cases {
        let start = Instant::now();
        let mut ops = 0u32;
        while start.elapsed() < plan.warm || ops < 3 {
            (c.run)(Run::Time(1));
            ops += 1;
        }
        let once = start.elapsed() / ops;
        let iterations = (plan.target.as_nanos() / once.as_nanos().max(1)).clamp(1, 10_000) as u32;
        let (_, allocs, bytes) = (c.run)(Run::Count);
        sizes.push((iterations, allocs, bytes));
    }
    let mut samples = vec![Vec::with_capacity(plan.samples); cases.len()];
    for _ in 0..plan.samples {
        for ((c, &(iterations, ..)), out) in cases.iter_mut().zip(&sizes).zip(&mut samples) {
            let (elapsed, ..) = (c.run)(Run::Time(iterations));
            out.push(elapsed / iterations);
        }
    }
    cases
        .into_iter()
        .zip(sizes)
        .zip(samples)
        .map(|((c, (iterations, allocs, bytes)), mut samples)| {
            samples.sort();
            Timing {
                name: c.name,
                samples,
                iterations,
                allocs,
                bytes,
            }
        })
        .collect()
}

/// Latency percentiles of `n` single operations.
pub(crate) fn percentiles<I, T>(
    n: usize,
    mut setup: impl FnMut() -> I,
    mut op: impl FnMut(&mut I) -> T,
) -> Vec<(f64, Duration)> {
    let mut lat = Vec::with_capacity(n);
    for _ in 0..n {
        let mut input = setup();
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
