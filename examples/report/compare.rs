//! The KEM backends side by side, and kemsphinx beside its Rust peers:
//! collecting what the child processes measured.

use std::path::Path;

use serde_json::{Value, json};

use crate::children;
use crate::harness::Timing;

/// What a build runs its KEM on.
pub(crate) struct Side {
    pub(crate) kem_backend: String,
    pub(crate) x25519: String,
    pub(crate) mlkem: String,
}

/// The same operations on this build's KEM backend and on `rustcrypto`.
pub(crate) struct Backends {
    pub(crate) rounds: usize,
    pub(crate) samples: u64,
    pub(crate) this: Side,
    pub(crate) other: Side,
    /// Operation, median on this build, median on the other (seconds):
    /// the median over the rounds of each round's median.
    pub(crate) rows: Vec<(String, f64, f64)>,
}

/// What `--child-ops` prints: the build's KEM paths and its timings.
pub(crate) fn child_json(ops: &[Timing]) -> Value {
    let crate::env::KemPaths {
        backend: kem,
        x25519,
        mlkem,
    } = crate::env::kem_paths();
    json!({
        "kem_backend": kem,
        "x25519": x25519,
        "mlkem": mlkem,
        "samples": ops.first().map_or(0, |o| o.samples.len()),
        "ops": ops.iter().map(|o| json!({
            "name": o.name,
            "median_ns": o.median().as_nanos() as u64,
            "allocs_per_op": o.allocs,
        })).collect::<Vec<_>>(),
    })
}

fn side(v: &Value) -> Side {
    let s = |k: &str| v[k].as_str().unwrap_or("unknown").to_owned();
    Side {
        kem_backend: s("kem_backend"),
        x25519: s("x25519"),
        mlkem: s("mlkem"),
    }
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// `rounds` rounds of `--child-ops`, this program and the `rustcrypto`
/// build `other` in turn (the order alternating between rounds).
pub(crate) fn backends(other: &Path, rounds: usize, quick: bool) -> Result<Backends, String> {
    let this = std::env::current_exe().map_err(|e| e.to_string())?;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        if r % 2 == 0 {
            a.push(children::child_ops(&this, quick)?);
            b.push(children::child_ops(other, quick)?);
        } else {
            b.push(children::child_ops(other, quick)?);
            a.push(children::child_ops(&this, quick)?);
        }
    }
    let (this_side, other_side) = (side(&a[0]), side(&b[0]));
    if other_side.kem_backend != "rustcrypto" {
        return Err(format!(
            "the rustcrypto build runs on {}",
            other_side.kem_backend
        ));
    }
    let times = |runs: &[Value], name: &str| -> Vec<f64> {
        runs.iter()
            .filter_map(|run| {
                run["ops"].as_array()?.iter().find(|o| o["name"] == name)?["median_ns"].as_f64()
            })
            .map(|ns| ns * 1e-9)
            .collect()
    };
    let names: Vec<String> = a[0]["ops"]
        .as_array()
        .map(|ops| {
            ops.iter()
                .filter_map(|o| o["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let rows = names
        .into_iter()
        .map(|n| {
            let (x, y) = (median(times(&a, &n)), median(times(&b, &n)));
            (n, x, y)
        })
        .collect();
    Ok(Backends {
        rounds,
        samples: a[0]["samples"].as_u64().unwrap_or(0),
        this: this_side,
        other: other_side,
        rows,
    })
}

/// One row of benches/peers.
pub(crate) struct Peer {
    pub(crate) implementation: String,
    pub(crate) payload: u64,
    pub(crate) operation: String,
    pub(crate) median: f64,
    pub(crate) rounds: u64,
}

/// The rows benches/peers wrote.
pub(crate) fn peers(rows: Vec<Value>) -> Vec<Peer> {
    rows.iter()
        .map(|r| Peer {
            implementation: r["implementation"].as_str().unwrap_or("?").to_owned(),
            payload: r["payload_bytes"].as_u64().unwrap_or(0),
            operation: r["operation"].as_str().unwrap_or("?").to_owned(),
            median: r["median_s"].as_f64().unwrap_or(f64::NAN),
            rounds: r["rounds"].as_u64().unwrap_or(0),
        })
        .collect()
}
