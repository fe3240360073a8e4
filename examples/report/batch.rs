//! Batched X25519 and the batch unwrap (issue 32): the batch table's
//! timings per unit (per scalar multiplication, per packet), their ratios
//! to the one-at-a-time forms, and their section of the report, which
//! [`crate::node`]'s table (the example node's packets/s) closes. The
//! cases are `kemsphinx_support::bench::cases::batch`, the divan bench's
//! too. Where the CPU has AVX2 but `unwrap_batch` takes another path by
//! itself (IFMA), the section also gives `unwrap_batch` forced onto AVX2,
//! so that issue 32's AVX2 ratio is measured on such a CPU, labelled as
//! the AVX2 path on this CPU, which is not an AVX2-only CPU.

use std::fmt::Write as _;

use kemsphinx::hazmat::kem_backends;
use kemsphinx_support::bench::cases::{
    self, BatchRow, UNWRAP_AVX2_SIZES, UNWRAP_SIZES, UnwrapOnAvx2, Way, X25519_SIZES, batch_rows,
};
use serde_json::{Value, json};

use crate::Results;
use crate::harness::{Timing, find};
use crate::units::seconds;

/// What the per-unit figures are made of: each row of the batch table
/// with its timing.
fn measured(r: &Results) -> Vec<(BatchRow, &Timing)> {
    batch_rows()
        .into_iter()
        .filter_map(|row| Some((row, find(&r.batch, row.name)?)))
        .collect()
}

/// Seconds per unit of the row doing `way` on `n` units.
fn per_unit(r: &Results, way: Way, n: usize) -> Option<f64> {
    measured(r)
        .into_iter()
        .find(|(row, _)| row.way == way && row.n == n)
        .map(|(row, t)| t.secs() / row.n as f64)
}

/// How a row computes, as the tables label it: its name after the count
/// ("IFMA batch", "KEM backend, one at a time").
fn label(row: &BatchRow) -> &'static str {
    row.name.split_once(", ").map_or(row.name, |(_, how)| how)
}

/// The ways X25519 was measured, in the table's order.
fn x25519_ways() -> Vec<Way> {
    let mut ways: Vec<Way> = Vec::new();
    for row in batch_rows().into_iter().filter(|r| r.way.is_x25519()) {
        if !ways.contains(&row.way) {
            ways.push(row.way);
        }
    }
    ways
}

/// The `x25519-batch` backend a batch unwrap runs on in this process, as
/// a way of the table (the KEM backend's X25519 when it takes no vector
/// path).
fn unwrap_batch_way() -> Way {
    match kem_backends::x25519_batch_path() {
        "scalar" => Way::Scalar,
        _ => Way::Batch(cases::x25519_batch_selected()),
    }
}

/// `unwrap_batch` per packet ÷ `unwrap` per packet, for a queue of `n`.
pub(crate) fn unwrap_ratio(r: &Results, n: usize) -> Option<(f64, f64)> {
    unwrap_ratio_of(r, Way::UnwrapBatch, n)
}

/// The batched way `batched` per packet and `unwrap` per packet, for a
/// queue of `n`.
fn unwrap_ratio_of(r: &Results, batched: Way, n: usize) -> Option<(f64, f64)> {
    let single = per_unit(r, Way::UnwrapSingle, n)?;
    let batched = per_unit(r, batched, n)?;
    Some((batched, single))
}

/// `unwrap_batch` forced onto AVX2.
const ON_AVX2: Way = Way::UnwrapBatchOn(cases::AVX2);

/// Issue 32's bound for an AVX2-only CPU.
const AVX2_BOUND: f64 = 1.0 / 1.2;

/// The bound issue 32 sets on batched ÷ single per packet for this CPU's
/// batch path: 1/1.5 with IFMA, 1/1.2 with AVX2, none without a vector
/// path.
pub(crate) fn unwrap_bound() -> Option<(f64, &'static str)> {
    match kem_backends::x25519_batch_path() {
        "ifma" => Some((1.0 / 1.5, "1/1.5 on an AVX-512 IFMA CPU")),
        "avx2" => Some((1.0 / 1.2, "1/1.2 on an AVX2-only CPU")),
        _ => None,
    }
}

/// The report's section.
pub(crate) fn section(m: &mut String, r: &Results) {
    let _ = writeln!(m, "## Batched X25519 and the batch unwrap\n");
    if r.batch.is_empty() {
        let _ = writeln!(m, "Not measured.\n");
    } else {
        tables(m, r);
    }
    crate::node::section(m, r);
}

/// The section's X25519 and unwrap tables, with what they measure.
fn tables(m: &mut String, r: &Results) {
    let _ = writeln!(
        m,
        "One table, timed interleaved: every row does n units per iteration (its name says \
        how many), so a unit costs the median ÷ n. X25519 runs under one scalar on n distinct \
        public keys: batched through `x25519_batch::mul_batch_on` on every backend this CPU \
        has (`mul_batch` picks **{:?}** here), one point at a time through the selected KEM \
        backend's X25519 (`{}`, what a single unwrap runs) and x25519-dalek 3. The unwrap rows \
        unwrap the same n distinct first-hop packets (fresh copies, made untimed) with \
        `unwrap_batch` (X25519 halves {} at a time; its path here: **{}**, \
        `kem_backends::x25519_batch_path()`) and with `unwrap` one at a time.\n",
        cases::x25519_batch_selected(),
        kemsphinx::KEM_BACKEND,
        kemsphinx::BATCH,
        kem_backends::x25519_batch_path()
    );
    x25519_table(m, r);
    unwrap_table(m, r);
    avx2_table(m, r);
    ratio_line(m, r);
}

/// X25519 per scalar multiplication, each way by batch size, with its
/// ratio to the KEM backend one at a time at that size.
fn x25519_table(m: &mut String, r: &Results) {
    let sizes: Vec<String> = X25519_SIZES.iter().map(|n| format!("×{n}")).collect();
    let _ = writeln!(
        m,
        "X25519 per scalar multiplication (in brackets: ÷ the KEM backend one at a time, same n):\n\n\
        | | {} |\n| --- |{}",
        sizes.join(" | "),
        " ---: |".repeat(sizes.len())
    );
    let rows = batch_rows();
    for way in x25519_ways() {
        let Some(row) = rows.iter().find(|r| r.way == way) else {
            continue;
        };
        let chosen = way == Way::Batch(cases::x25519_batch_selected());
        let cells: Vec<String> = X25519_SIZES
            .iter()
            .map(
                |&n| match (per_unit(r, way, n), per_unit(r, Way::Scalar, n)) {
                    (Some(x), Some(s)) if way != Way::Scalar => {
                        format!("{} ({:.2}×)", seconds(x), x / s)
                    }
                    (Some(x), _) => seconds(x),
                    _ => "—".into(),
                },
            )
            .collect();
        let _ = writeln!(
            m,
            "| {}{} | {} |",
            label(row),
            if chosen { " (chosen)" } else { "" },
            cells.join(" | ")
        );
    }
    let _ = writeln!(m);
}

/// Unwrap per packet, batched and single, their ratio against the issue's
/// bound, and what the X25519 rows predict it saves.
fn unwrap_table(m: &mut String, r: &Results) {
    let bound = unwrap_bound();
    let _ = writeln!(
        m,
        "Unwrap per packet (first hop, forward):\n\n\
        | queue | `unwrap` one at a time | `unwrap_batch` | batched ÷ single | bound | \
        saved per packet | X25519 rows predict |\n\
        | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let way = unwrap_batch_way();
    for n in UNWRAP_SIZES {
        let Some((batched, single)) = unwrap_ratio(r, n) else {
            continue;
        };
        // A batch unwrap computes X25519 `BATCH` points per call.
        let lanes = kemsphinx::BATCH;
        let predicted = per_unit(r, Way::Scalar, lanes)
            .zip(per_unit(r, way, lanes))
            .map_or("—".into(), |(s, b)| signed(s - b));
        let _ = writeln!(
            m,
            "| {n} | {} | {} | **{:.3}×** | {} | {} | {predicted} |",
            seconds(single),
            seconds(batched),
            batched / single,
            bound
                .filter(|_| n >= kemsphinx::BATCH)
                .map_or("—".into(), |(b, _)| format!("≤ {b:.3}×")),
            signed(single - batched),
        );
    }
    let _ = writeln!(
        m,
        "\nThe bound applies to whole batches: for a shorter queue `unwrap_batch` still \
        computes a whole batch of {} points. \"Saved per packet\" is single − batched; \"X25519 rows predict\" is what batching \
        X25519 alone saves per point in this run (the KEM backend's X25519 per point minus \
        the batch path's ({}) per point, at ×{}).\n",
        kemsphinx::BATCH,
        label_of(way),
        kemsphinx::BATCH
    );
}

/// `unwrap_batch` forced onto AVX2 beside `unwrap` one at a time (the
/// same run and packets); where the automatic path is AVX2, its own rows
/// (not timed twice); or why there is none.
fn avx2_table(m: &mut String, r: &Results) {
    let status = cases::unwrap_on_avx2();
    let (way, how) = match status {
        UnwrapOnAvx2::Timed { automatic, .. } => (
            ON_AVX2,
            format!(
                "`unwrap_batch` with its X25519 forced onto `x25519-batch`'s AVX2 ladder \
                (`kem_backends::set_x25519_batch_path`, for the timed operation only; by itself \
                it takes `{automatic}` here)"
            ),
        ),
        UnwrapOnAvx2::AutomaticIsAvx2 => (
            Way::UnwrapBatch,
            "`unwrap_batch` takes the AVX2 path by itself here, so these are its rows above, \
            not timed twice"
                .to_owned(),
        ),
        UnwrapOnAvx2::NoAvx2 => {
            let _ = writeln!(m, "AVX2 path: {status}.\n");
            return;
        }
    };
    let _ = writeln!(
        m,
        "Unwrap per packet on the **AVX2 path on this CPU** ({}): {how}, beside the same \
        `unwrap` rows as above:\n\n\
        | queue | `unwrap` one at a time | `unwrap_batch`, AVX2 path | batched ÷ single | \
        issue 32's bound for an AVX2-only CPU |\n\
        | ---: | ---: | ---: | ---: | ---: |",
        cpu_kind(status)
    );
    for n in UNWRAP_AVX2_SIZES {
        let Some((batched, single)) = unwrap_ratio_of(r, way, n) else {
            continue;
        };
        let _ = writeln!(
            m,
            "| {n} | {} | {} | **{:.3}×** | ≤ {AVX2_BOUND:.3}× |",
            seconds(single),
            seconds(batched),
            batched / single,
        );
    }
    let _ = writeln!(m);
}

/// What kind of CPU this is for issue 32's AVX2 bound.
fn cpu_kind(status: UnwrapOnAvx2) -> &'static str {
    match status {
        UnwrapOnAvx2::Timed { ifma: true, .. } => {
            "this CPU has AVX-512 IFMA, so it is not an AVX2-only CPU"
        }
        // The automatic path is AVX2 only where the CPU has no IFMA.
        UnwrapOnAvx2::Timed { ifma: false, .. } | UnwrapOnAvx2::AutomaticIsAvx2 => {
            "an AVX2-only CPU"
        }
        UnwrapOnAvx2::NoAvx2 => "no AVX2",
    }
}

/// The ratios of the whole-batch queues in one line, each with the path
/// and CPU it is for.
fn ratio_line(m: &mut String, r: &Results) {
    let ratios = |way: Way| -> String {
        UNWRAP_AVX2_SIZES
            .iter()
            .filter_map(|&n| {
                let (b, s) = unwrap_ratio_of(r, way, n)?;
                Some(format!("{:.3}× at {n}", b / s))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let automatic = kem_backends::x25519_batch_path_automatic();
    let cpu = &r.env.cpu;
    let mut parts = vec![format!(
        "automatic path (`{automatic}`) on this CPU ({cpu}): {}{}",
        ratios(Way::UnwrapBatch),
        unwrap_bound().map_or(String::new(), |(b, what)| format!(
            " (bound ≤ {b:.3}×, {what})"
        ))
    )];
    let status = cases::unwrap_on_avx2();
    match status {
        UnwrapOnAvx2::Timed { .. } => parts.push(format!(
            "AVX2 path on this CPU ({cpu}; {}): {} (issue 32's bound for an AVX2-only CPU: \
            ≤ {AVX2_BOUND:.3}×)",
            cpu_kind(status),
            ratios(ON_AVX2)
        )),
        UnwrapOnAvx2::AutomaticIsAvx2 => parts.push(format!(
            "AVX2 path on this CPU ({cpu}; {}): the automatic path, the same figures \
            (not timed twice)",
            cpu_kind(status)
        )),
        UnwrapOnAvx2::NoAvx2 => parts.push("no AVX2 path on this CPU".into()),
    }
    let _ = writeln!(
        m,
        "Batched ÷ single per packet, whole batches: {}.\n",
        parts.join("; ")
    );
}

/// A difference of two times, negative ones with a minus sign.
fn signed(s: f64) -> String {
    if s < 0.0 {
        format!("−{}", seconds(-s))
    } else {
        seconds(s)
    }
}

fn label_of(way: Way) -> &'static str {
    batch_rows()
        .iter()
        .find(|r| r.way == way)
        .map_or("—", label)
}

/// The section's figures for the JSON: every row's timing with its units
/// and time per unit, X25519 per multiplication by way and size, unwrap
/// per packet by queue length.
pub(crate) fn to_json(r: &Results, timing: impl Fn(&Timing) -> Value) -> Value {
    let rows: Vec<Value> = measured(r)
        .into_iter()
        .map(|(row, t)| {
            let mut v = timing(t);
            v["units"] = json!(row.n);
            v["per_unit_ns"] = json!(t.secs() * 1e9 / row.n as f64);
            v
        })
        .collect();
    let mut x25519 = Vec::new();
    for way in x25519_ways() {
        for n in X25519_SIZES {
            let Some(x) = per_unit(r, way, n) else {
                continue;
            };
            let scalar = per_unit(r, Way::Scalar, n);
            x25519.push(json!({
                "way": label_of(way), "n": n, "per_mult_ns": x * 1e9,
                "vs_kem_backend": scalar.map(|s| x / s),
            }));
        }
    }
    let unwrap: Vec<Value> = UNWRAP_SIZES
        .iter()
        .filter_map(|&n| {
            let (batched, single) = unwrap_ratio(r, n)?;
            Some(json!({
                "n": n, "single_per_packet_ns": single * 1e9,
                "batched_per_packet_ns": batched * 1e9, "ratio": batched / single,
            }))
        })
        .collect();
    json!({
        "unwrap_on_avx2": avx2_json(r),
        "x25519_batch_backend": label_of(Way::Batch(cases::x25519_batch_selected())),
        "unwrap_batch_path": kem_backends::x25519_batch_path(),
        "unwrap_batch_size": kemsphinx::BATCH,
        "bound": unwrap_bound().map(|(b, _)| b),
        "cases": rows,
        "x25519_per_mult": x25519,
        "unwrap_per_packet": unwrap,
        "example_node": crate::node::to_json(r),
    })
}

/// `unwrap_batch` forced onto AVX2 for the JSON: whether it was timed,
/// on what kind of CPU, and its ratios.
fn avx2_json(r: &Results) -> Value {
    let status = cases::unwrap_on_avx2();
    let per_packet: Vec<Value> = UNWRAP_AVX2_SIZES
        .iter()
        .filter_map(|&n| {
            let (batched, single) = unwrap_ratio_of(r, ON_AVX2, n)?;
            Some(json!({
                "n": n, "single_per_packet_ns": single * 1e9,
                "batched_per_packet_ns": batched * 1e9, "ratio": batched / single,
            }))
        })
        .collect();
    let (timed, cpu_has_ifma) = match status {
        UnwrapOnAvx2::Timed { ifma, .. } => ("timed", Some(ifma)),
        UnwrapOnAvx2::AutomaticIsAvx2 => ("automatic path is avx2", None),
        UnwrapOnAvx2::NoAvx2 => ("no avx2", None),
    };
    json!({
        "status": timed,
        "cpu_has_ifma": cpu_has_ifma,
        "note": status.to_string(),
        "bound_avx2_only_cpu": AVX2_BOUND,
        "unwrap_per_packet": per_packet,
    })
}
