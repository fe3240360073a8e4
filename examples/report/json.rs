//! The report's files: their names, and the JSON beside the markdown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::Results;
use crate::harness::Timing;
use crate::reference;

/// The two files of one report.
pub(crate) struct Written {
    /// The report itself.
    pub(crate) markdown: PathBuf,
    /// Its figures, for the index and the charts.
    pub(crate) json: PathBuf,
}

/// Write both files into `dir`, named by date, time (UTC) and host so two
/// reports never overwrite each other; returns their paths.
pub(crate) fn files(r: &Results, dir: &Path) -> Written {
    let stamp = crate::env::run("date", &["-u", "+%Y-%m-%d %H%M"]);
    let (date, time) = stamp.split_once(' ').unwrap_or((&stamp, "0000"));
    std::fs::create_dir_all(dir).expect("create results folder");
    let mut stem = format!("{date}-{time}-{}", r.env.host);
    let mut k = 2;
    while dir.join(format!("{stem}.md")).exists() || dir.join(format!("{stem}.json")).exists() {
        stem = format!("{date}-{time}-{}-{k}", r.env.host);
        k += 1;
    }
    let md = dir.join(format!("{stem}.md"));
    let js = dir.join(format!("{stem}.json"));
    let when = format!("{date} {}:{} UTC", &time[..2], &time[2..]);
    std::fs::write(&md, crate::markdown::report(r, &when, &stem)).expect("write markdown");
    std::fs::write(
        &js,
        serde_json::to_string_pretty(&to_json(r, &when)).unwrap(),
    )
    .expect("write json");
    Written {
        markdown: md,
        json: js,
    }
}

fn timing(o: &Timing) -> serde_json::Value {
    json!({
        "name": o.name,
        "median_ns": o.median().as_nanos() as u64,
        "min_ns": o.min().as_nanos() as u64,
        "max_ns": o.max().as_nanos() as u64,
        "samples": o.samples.len(),
        "iterations": o.iterations,
        "ops_per_sec": o.ops_per_sec(),
        "bytes_per_op": o.bytes,
        "allocs_per_op": o.allocs,
    })
}

fn to_json(r: &Results, when: &str) -> serde_json::Value {
    let e = &r.env;
    let backends = r.backends.as_ref().map_or_else(
        |why| json!({ "skipped": why }),
        |b| {
            json!({
                "rounds": b.rounds,
                "samples_per_round": b.samples,
                "this": { "kem_backend": b.this.kem_backend, "x25519": b.this.x25519, "mlkem": b.this.mlkem },
                "other": { "kem_backend": b.other.kem_backend, "x25519": b.other.x25519, "mlkem": b.other.mlkem },
                "operations": b.rows.iter().map(|(n, x, y)| json!({"name": n, "this_s": x, "other_s": y, "ratio": y / x})).collect::<Vec<_>>(),
            })
        },
    );
    let peers = r.peers.as_ref().map_or_else(
        |why| json!({ "skipped": why }),
        |rows| {
            json!(
                rows.iter()
                    .map(|p| json!({
                        "implementation": p.implementation, "payload_bytes": p.payload,
                        "operation": p.operation, "median_s": p.median, "rounds": p.rounds,
                    }))
                    .collect::<Vec<_>>()
            )
        },
    );
    let reference = e.reference.as_ref().map_or_else(
        |why| json!({ "none": why }),
        |re| {
            json!({
                "kind": re.kind,
                "how": re.how,
                "figures": re.figures.iter().map(|f| json!({"name": f.op, "seconds": f.runs, "bytes_per_op": f.bytes, "allocs_per_op": f.allocs})).collect::<Vec<_>>(),
            })
        },
    );
    json!({
        "when": when,
        "host": e.host,
        "quick": r.quick,
        "environment": {
            "cpu": e.cpu, "vendor": e.vendor, "family_model": e.family_model,
            "logical_cpus": e.logical_cpus, "cpu_mhz": e.cpu_mhz, "governor": e.governor,
            "features": e.features.iter().map(|(f, on)| (f.to_string(), *on)).collect::<BTreeMap<_, _>>(),
            "runs_on": e.used.iter().map(|(w, h)| (w.to_string(), h.clone())).collect::<BTreeMap<_, _>>(),
            "os": e.os, "kernel": e.kernel, "rustc": e.rustc, "version": e.version, "commit": e.commit, "profile": e.profile,
        },
        "load_average": {"start": r.load.0, "end": r.load.1},
        "vectors_passed": r.vectors_passed,
        "targets": crate::targets::check(r).iter().map(|t| json!({
            "issue": t.issue, "target": t.what, "bound": t.bound, "measured": t.measured, "status": t.status.key(),
        })).collect::<Vec<_>>(),
        "operations": r.ops.iter().map(timing).collect::<Vec<_>>(),
        "unwrap_and_primitives": r.parts.iter().map(timing).collect::<Vec<_>>(),
        "batch_x25519_and_unwrap": crate::batch::to_json(r, timing),
        "aez_and_ctr": r.aez.iter().map(timing).collect::<Vec<_>>(),
        "kem_backends": backends,
        "peers": peers,
        "unwrap_tail_latency": {
            "unwraps": r.tail_n,
            "percentiles_ns": r.tail.iter().map(|(p, d)| (format!("p{p}"), d.as_nanos() as u64)).collect::<BTreeMap<_, _>>(),
        },
        "unwrap_throughput": r.threads.iter().map(|(t, ops)| json!({"threads": t, "ops_per_sec": ops})).collect::<Vec<_>>(),
        "peak_rss_kib": {"loaded_keys": r.rss.loaded_keys, "after_request_reply": r.rss.after_request_reply},
        "unwrap_stack_bytes": r.stack.map(|(u, e)| u.saturating_sub(e)),
        "text_bytes": {"unwrap_only": r.code.unwrap_only, "empty_program": r.code.empty_program},
        "go_reference_this_cpu_model": reference,
        "go_reference_published_i5_6300u": reference::PUBLISHED.iter().map(|g| json!({"name": g.0, "seconds": g.1})).collect::<Vec<_>>(),
    })
}
