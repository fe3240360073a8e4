//! `results/README.md`: every report in `results/` in one table (machine,
//! date, commit, backend, the key operations and their speed-ups against
//! the Go reference measured on the same CPU model, batched X25519 and the
//! batch unwrap against their one-at-a-time forms), with each report's
//! charts drawn from its JSON. Regenerated after every report, and by
//! `--index`; `--index --check` fails when a committed file is not what
//! the JSON files give (CI runs it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::charts;
use crate::units::seconds;

/// The operations the index shows, as the reports name them.
const KEY_OPS: [&str; 4] = [
    "unwrap one hop",
    "build forward packet",
    "create SURB",
    "full request/reply",
];

/// The batch column of X25519: per scalar multiplication in a batch of
/// this many on the chosen `x25519-batch` backend (its lanes on IFMA).
const BATCH_X25519: u64 = 8;
/// The batch column of unwrap: `unwrap_batch` per packet over a queue of
/// this many (two of its batches).
const BATCH_UNWRAP: u64 = 16;

/// Every file the index owns in `dir`, with its contents.
pub(crate) fn files(dir: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    let mut out = Vec::new();
    let mut rows = Vec::new();
    for json in names.iter().filter(|n| n.ends_with(".json")) {
        let stem = json.trim_end_matches(".json");
        let text = std::fs::read_to_string(dir.join(json)).map_err(|e| format!("{json}: {e}"))?;
        let report: Value = serde_json::from_str(&text).map_err(|e| format!("{json}: {e}"))?;
        let mut links = Vec::new();
        for (suffix, title, svg) in charts::all(&report) {
            let file = format!("{stem}-{suffix}.svg");
            links.push(format!("[{title}]({file})"));
            out.push((dir.join(file), svg));
        }
        rows.push(row(stem, &report, &links));
    }
    let others: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with(".md") && *n != "README.md")
        .filter(|n| !names.contains(&n.replace(".md", ".json")))
        .collect();
    out.push((dir.join("README.md"), readme(&rows, &others)));
    Ok(out)
}

/// Write the index and the charts into `dir`.
pub(crate) fn write(dir: &Path) -> Result<usize, String> {
    let files = files(dir)?;
    for (path, text) in &files {
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(files.len())
}

/// The files in `dir` that are not what the JSON files give.
pub(crate) fn stale(dir: &Path) -> Result<Vec<PathBuf>, String> {
    Ok(files(dir)?
        .into_iter()
        .filter(|(path, text)| std::fs::read_to_string(path).ok().as_deref() != Some(text))
        .map(|(path, _)| path)
        .collect())
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// One table row: a report, its machine and build, its key medians and
/// speed-ups.
fn row(stem: &str, r: &Value, charts: &[String]) -> String {
    let when = str_at(r, "/when")
        .or_else(|| str_at(r, "/date"))
        .unwrap_or("?");
    let commit = str_at(r, "/environment/commit").unwrap_or("?");
    let backend = str_at(
        r,
        "/environment/runs_on/KEM backend (`kemsphinx::KEM_BACKEND`)",
    )
    .unwrap_or("libcrux");
    let reference = r
        .get("go_reference_this_cpu_model")
        .and_then(|g| g.get("figures"))
        .or_else(|| r.get("go_reference_this_machine_kind"))
        .and_then(Value::as_array);
    let ops = r.get("operations").and_then(Value::as_array);
    let mut cells = Vec::new();
    for op in KEY_OPS {
        let ours = ops
            .and_then(|o| {
                o.iter()
                    .find(|x| x.get("name").and_then(Value::as_str) == Some(op))
            })
            .and_then(|x| x.get("median_ns"))
            .and_then(Value::as_f64)
            .map(|ns| ns * 1e-9);
        let go = reference
            .and_then(|f| {
                f.iter()
                    .find(|x| x.get("name").and_then(Value::as_str) == Some(op))
            })
            .and_then(|x| x.get("seconds"))
            .and_then(|s| s.as_f64().or_else(|| s.get(0)?.as_f64()));
        cells.push(match (ours, go) {
            (Some(o), Some(g)) => format!("{} ({:.1}×)", seconds(o), g / o),
            (Some(o), None) => seconds(o),
            _ => "—".to_owned(),
        });
    }
    cells.extend(batch_cells(r));
    let quick = if r.get("quick").and_then(Value::as_bool) == Some(true) {
        " (`--quick`)"
    } else {
        ""
    };
    format!(
        "| [{stem}]({stem}.md){quick} | {when} | {} | `{commit}` | {backend} | {} | {} |",
        charts::cpu(r),
        cells.join(" | "),
        if charts.is_empty() {
            "— (older JSON)".to_owned()
        } else {
            charts.join("<br>")
        }
    )
}

/// The batch columns of one report: X25519 per multiplication batched
/// (÷ the KEM backend one at a time), `unwrap_batch` per packet (÷
/// `unwrap`); "—" for reports made before either was measured.
fn batch_cells(r: &Value) -> [String; 2] {
    let Some(b) = r.get("batch_x25519_and_unwrap") else {
        return ["—".to_owned(), "—".to_owned()];
    };
    let chosen = b.get("x25519_batch_backend").and_then(Value::as_str);
    let x25519 = b
        .get("x25519_per_mult")
        .and_then(Value::as_array)
        .and_then(|rows| {
            rows.iter().find(|x| {
                x.get("way").and_then(Value::as_str) == chosen
                    && x.get("n").and_then(Value::as_u64) == Some(BATCH_X25519)
            })
        })
        .and_then(|x| {
            let ns = x.get("per_mult_ns")?.as_f64()?;
            let ratio = x.get("vs_kem_backend")?.as_f64()?;
            Some(format!(
                "{} ({ratio:.2}×, {})",
                seconds(ns * 1e-9),
                chosen.unwrap_or("?")
            ))
        });
    let unwrap = b
        .get("unwrap_per_packet")
        .and_then(Value::as_array)
        .and_then(|rows| {
            rows.iter()
                .find(|x| x.get("n").and_then(Value::as_u64) == Some(BATCH_UNWRAP))
        })
        .and_then(|x| {
            let ns = x.get("batched_per_packet_ns")?.as_f64()?;
            let ratio = x.get("ratio")?.as_f64()?;
            Some(format!("{} ({ratio:.2}×)", seconds(ns * 1e-9)))
        });
    [x25519, unwrap].map(|c| c.unwrap_or_else(|| "—".to_owned()))
}

fn readme(rows: &[String], others: &[&String]) -> String {
    let mut m = String::new();
    let _ = writeln!(
        m,
        "# Results\n\n\
         Every performance report in this folder, oldest first. Generated from the reports' \
         JSON by `cargo run --release --example report` (after each report, or alone with \
         `-- --index`); CI fails when this file or a chart is not what the JSON gives. \
         Do not edit by hand.\n\n\
         Each time is the report's median; in brackets, how many times faster than the Go \
         reference *as measured on the same CPU model* (never across CPU models). Figures \
         from different reports were measured in different runs, often on shared, noisy \
         machines: compare the ratios, and within a report. The batch columns give X25519 \
         per scalar multiplication in a batch of {BATCH_X25519} on the chosen `x25519-batch` \
         backend, in brackets ÷ the KEM backend's X25519 one at a time, and `unwrap_batch` \
         per packet over {BATCH_UNWRAP} packets, in brackets ÷ `unwrap` on the same packets; \
         both measured in one run.\n"
    );
    let _ = writeln!(
        m,
        "| report | date | CPU | commit | KEM backend | {} | X25519 ×{BATCH_X25519}, batched, \
         per mult | unwrap_batch ×{BATCH_UNWRAP}, per packet | charts |",
        KEY_OPS.join(" | ")
    );
    let _ = writeln!(m, "|{}", " --- |".repeat(8 + KEY_OPS.len()));
    for r in rows {
        let _ = writeln!(m, "{r}");
    }
    if !others.is_empty() {
        let _ = writeln!(m, "\nOther measurements, not made by the report:\n");
        for o in others {
            let _ = writeln!(m, "- [{o}]({o})");
        }
    }
    m
}
