//! The performance evidence report: `cargo run --release --example report`.
//!
//! Verifies the reference vectors first (and refuses to time a build that
//! fails them), builds what it runs beside itself (this report on the
//! `rustcrypto` KEM backend, `benches/peers`, and the node crate's
//! example node and load tool), then measures every operation of the Go
//! reference's baseline, the primitives of one unwrap, batched X25519 and
//! the batch unwrap beside their one-at-a-time forms, the example node's
//! packets/s with and without batching, AEZ beside AES-256-CTR, the two
//! KEM backends side by side, kemsphinx beside Nym's sphinx-packet and
//! Outfox, tail latency, multi-thread throughput, peak memory, stack and
//! code size; checks the performance targets of issues 10 and 11 against
//! the Go reference measured on the same CPU model, and issue 32's batch
//! unwrap against single unwraps in the same run; and writes `results/<date>-<time>-<host>.md` and `.json`.
//!
//! Then it regenerates `results/README.md`, the index of every report there,
//! and each report's charts (SVG, drawn from its JSON).
//!
//! Options: `--quick` (fewer samples, for a smoke test), `--out DIR`,
//! `--no-rustcrypto` (skip the second KEM backend), `--no-peers` (skip
//! benches/peers), `--no-node` (skip the example node); `--index` only
//! regenerates the index and the charts, `--index --check` only checks
//! that they are current.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::cast_possible_truncation)]

mod batch;
mod charts;
mod children;
mod compare;
mod env;
mod harness;
mod index;
mod json;
mod markdown;
mod measure;
mod node;
mod probes;
mod reference;
mod sections;
mod targets;
mod units;

use std::path::Path;
use std::time::Duration;

use kemsphinx::unwrap;
use kemsphinx_support::bench::Net;

use harness::{Plan, Timing};

/// Everything measured, for the writers.
pub(crate) struct Results {
    pub(crate) quick: bool,
    pub(crate) env: env::Environment,
    pub(crate) vectors_passed: usize,
    pub(crate) plan: Plan,
    pub(crate) ops: Vec<Timing>,
    pub(crate) parts: Vec<Timing>,
    /// The batch table: batched X25519 and unwrap beside one at a time.
    pub(crate) batch: Vec<Timing>,
    pub(crate) aez: Vec<Timing>,
    pub(crate) aez_backends: Vec<aez5::Backend>,
    pub(crate) backends: Result<compare::Backends, String>,
    pub(crate) peers: Result<Vec<compare::Peer>, String>,
    /// The example node's packets/s with and without batching.
    pub(crate) node: Result<node::NodeRates, String>,
    pub(crate) tail: Vec<(f64, Duration)>,
    pub(crate) tail_n: usize,
    pub(crate) threads: Vec<(usize, f64)>,
    pub(crate) rss: probes::PeakRss,
    pub(crate) stack: Option<(usize, usize)>,
    pub(crate) code: probes::CodeSize,
    /// /proc/loadavg when measuring started and when it ended.
    pub(crate) load: (String, String),
}

/// The sampling plan: full, or `--quick`.
fn plan(quick: bool) -> Plan {
    if quick {
        Plan {
            samples: 11,
            target: Duration::from_millis(2),
            warm: Duration::from_millis(50),
        }
    } else {
        Plan {
            samples: 101,
            target: Duration::from_millis(10),
            warm: Duration::from_millis(200),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let quick = has("--quick");
    if let Some(i) = args.iter().position(|a| a == "--child") {
        std::process::exit(probes::child(
            &args[i + 1],
            args.get(i + 2).map(String::as_str),
        ));
    }
    if has("--child-vectors") {
        println!("{}", conformance_first());
        return;
    }
    if has("--child-ops") {
        let mut plan = plan(quick);
        plan.samples = if quick { 11 } else { 31 };
        let ops = measure::backend_ops(&Net::new(), plan);
        println!("{}", compare::child_json(&ops));
        return;
    }
    let out_dir = args
        .iter()
        .position(|a| a == "--out")
        .map_or("results", |i| args[i + 1].as_str());
    if has("--index") {
        std::process::exit(index_only(Path::new(out_dir), has("--check")));
    }

    let vectors_passed = conformance_first();
    eprintln!("vectors: {vectors_passed} passed");
    // Everything is built before anything is timed.
    let rustcrypto = if has("--no-rustcrypto") {
        Err("skipped (--no-rustcrypto)".to_owned())
    } else if kemsphinx::KEM_BACKEND == "rustcrypto" {
        Err("this build already runs on rustcrypto".to_owned())
    } else {
        children::build_rustcrypto()
    };
    let peers = if has("--no-peers") {
        Err("skipped (--no-peers)".to_owned())
    } else {
        children::build_peers()
    };
    let node = if has("--no-node") {
        Err("skipped (--no-node)".to_owned())
    } else {
        children::build_node()
    };
    let code = probes::code_size();
    let load_start = env::load();
    eprintln!("measuring (this takes a few minutes; load average {load_start})…");
    let plan = plan(quick);
    let net = Net::new();
    let ops = measure::operations(&net, plan);
    let parts = measure::unwrap_and_parts(&net, plan);
    let batch = measure::batch(&net, plan);
    let measure::AezTimings {
        timings: aez,
        backends: aez_backends,
    } = measure::aez_vs_ctr(plan);
    let tail_n = if quick { 10_000 } else { 100_000 };
    let packet = net.first_packet().expect("packets");
    let key = net.first_key();
    let tail = harness::percentiles(tail_n, || packet.clone(), |p| unwrap(key, p).is_ok());
    let threads = throughput(&net, quick);
    let backends = rustcrypto.and_then(|exe| {
        eprintln!("comparing the KEM backends…");
        compare::backends(&exe, if quick { 1 } else { 5 }, quick)
    });
    let peers = peers.and_then(|exe| {
        eprintln!("running benches/peers…");
        children::run_peers(&exe, if quick { 11 } else { 101 }).map(compare::peers)
    });
    let node = node.and_then(|exe| {
        eprintln!("running the example node with and without batching…");
        node::measure(&exe, quick)
    });
    let results = Results {
        quick,
        env: env::Environment::read(),
        vectors_passed,
        plan,
        ops,
        parts,
        batch,
        aez,
        aez_backends,
        backends,
        peers,
        node,
        tail,
        tail_n,
        threads,
        rss: probes::peak_rss(),
        stack: probes::unwrap_stack(),
        code,
        load: (load_start, env::load()),
    };
    let written = json::files(&results, Path::new(out_dir));
    print!(
        "{}",
        std::fs::read_to_string(&written.markdown).unwrap_or_default()
    );
    eprintln!(
        "wrote {} and {}",
        written.markdown.display(),
        written.json.display()
    );
    match index::write(Path::new(out_dir)) {
        Ok(n) => eprintln!("wrote the index and the charts ({n} files)"),
        Err(e) => eprintln!("the index: {e}"),
    }
}

/// `--index`: regenerate the index and charts of `dir`, or with `--check`
/// only say which are not current (exit status 1).
fn index_only(dir: &Path, check: bool) -> i32 {
    let result = if check {
        index::stale(dir).map(|stale| {
            for path in &stale {
                eprintln!("not current: {}", path.display());
            }
            if !stale.is_empty() {
                eprintln!("regenerate with: cargo run --release --example report -- --index");
            }
            stale.len()
        })
    } else {
        index::write(dir).map(|n| {
            eprintln!("wrote the index and the charts ({n} files)");
            0
        })
    };
    match result {
        Ok(0) => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("{e}");
            2
        }
    }
}

/// Unwraps per second on one and two threads: best of two alternating
/// runs per thread count (the VM's other tenants only ever slow a run
/// down).
fn throughput(net: &Net, quick: bool) -> Vec<(usize, f64)> {
    let secs = Duration::from_secs(if quick { 1 } else { 3 });
    let runs: Vec<(usize, f64)> = [1, 2, 1, 2]
        .iter()
        .map(|&t| (t, probes::throughput(net, t, secs)))
        .collect();
    let best = |t: usize| {
        runs.iter()
            .filter(|r| r.0 == t)
            .map(|r| r.1)
            .fold(0.0, f64::max)
    };
    vec![(1, best(1)), (2, best(2))]
}

/// Run the reference vectors; refuse to go on if any fails.
fn conformance_first() -> usize {
    let root = children::repo().join("vectors");
    let mut report = kemsphinx_cli::conformance::Report::default();
    report.verify_path(&root.join("reference"));
    report.verify_path(&root.join("../aez5/tests/data/sprp_go_reference.json"));
    if !report.ok() {
        eprint!("{}", report.failure_lines());
        eprintln!(
            "{} — refusing to time a build that fails the vectors",
            report.summary()
        );
        std::process::exit(1);
    }
    report.passed
}
