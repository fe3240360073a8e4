//! The example node's packets/s with and without batching (issue 32):
//! `kemsphinx-node`'s `load throughput` run against its `udp_node`, both
//! built by this report, and its part of the batch section.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::Results;
use crate::children;
use crate::compare::median;
use crate::units::count;

/// The modes compared: the single path, then a worker's full batch.
const MODES: [&str; 2] = ["1", "8"];
/// The load tool's send rate: above what the node takes on this VM
/// (about 6,000 to 16,000 packets/s), so its socket is never empty.
const RATE: u32 = 60_000;

/// What `load throughput` measured.
pub(crate) struct NodeRates {
    /// The arguments it ran with.
    pub(crate) args: Vec<String>,
    /// Runs in which the node kept up with the sender (no datagram lost
    /// in its socket's buffer): their rate is the sender's, not the
    /// node's capacity.
    pub(crate) kept_up: usize,
    /// Per run, packets/s with `--batch 1` and with `--batch 8` (back to
    /// back).
    pub(crate) runs: Vec<(f64, f64)>,
}

impl NodeRates {
    fn medians(&self) -> (f64, f64, f64) {
        let single = median(self.runs.iter().map(|r| r.0).collect());
        let batched = median(self.runs.iter().map(|r| r.1).collect());
        let ratio = median(self.runs.iter().map(|r| r.1 / r.0).collect());
        (single, batched, ratio)
    }
}

/// Run the load tool `exe`: a few runs of a few seconds (one run of two
/// with `quick`), the modes alternating.
pub(crate) fn measure(exe: &Path, quick: bool) -> Result<NodeRates, String> {
    let (seconds, runs) = if quick { (1, 1) } else { (2, 5) };
    let args: Vec<String> = [
        "throughput".to_owned(),
        "--batch".into(),
        MODES.join(","),
        "--rate".into(),
        RATE.to_string(),
        "--seconds".into(),
        seconds.to_string(),
        "--runs".into(),
        runs.to_string(),
    ]
    .into();
    let out = children::run_load(exe, &args)?;
    let runs = parse(&out);
    if runs.is_empty() {
        return Err("`load throughput` printed no runs".into());
    }
    let kept_up = out.matches("it kept up").count();
    Ok(NodeRates {
        args,
        runs,
        kept_up,
    })
}

/// The runs' lines, `run R, --batch B: P packets/s`, paired by run.
fn parse(out: &str) -> Vec<(f64, f64)> {
    let rate = |line: &str, batch: &str| {
        let rest = line.strip_prefix("run ")?;
        let (_, rest) = rest.split_once(&format!(", --batch {batch}: "))?;
        rest.strip_suffix(" packets/s")?.parse::<f64>().ok()
    };
    let single = out.lines().filter_map(|l| rate(l, MODES[0]));
    let batched = out.lines().filter_map(|l| rate(l, MODES[1]));
    single.zip(batched).collect()
}

/// Its table in the batch section, or why there is none.
pub(crate) fn section(m: &mut String, r: &Results) {
    let _ = writeln!(m, "### The example node, with and without batching\n");
    let n = match &r.node {
        Ok(n) => n,
        Err(why) => {
            let _ = writeln!(m, "Not measured: {why}.\n");
            return;
        }
    };
    let _ = writeln!(
        m,
        "`kemsphinx-node`'s example node (`udp_node`, disk mode, 2 worker threads) as a child \
        process, built by this report in release, driven by its load tool: `load {}`. Each run \
        starts the node on a copy of one fresh state with `--batch 1` (`Forwarder::receive`, \
        one datagram at a time) and then `--batch 8` (up to 8 datagrams into \
        `Forwarder::receive_batch`), floods it from one thread with packets built for its key \
        (more than it takes), and counts what it accepted per second. The sender and the node \
        share this machine's cores.\n",
        n.args.join(" ")
    );
    let _ = writeln!(
        m,
        "| run | `--batch 1`, packets/s | `--batch 8`, packets/s | batched ÷ single |\n\
        | ---: | ---: | ---: | ---: |"
    );
    for (i, (single, batched)) in n.runs.iter().enumerate() {
        let _ = writeln!(
            m,
            "| {i} | {} | {} | {:.2}× |",
            count(*single as u64),
            count(*batched as u64),
            batched / single
        );
    }
    let (single, batched, ratio) = n.medians();
    let _ = writeln!(
        m,
        "| **median** | **{}** | **{}** | **{ratio:.2}×** (of the runs' ratios; {:.2}× of the \
        medians) |\n",
        count(single as u64),
        count(batched as u64),
        batched / single
    );
    if n.kept_up > 0 {
        let _ = writeln!(
            m,
            "In {} of the {} runs the node kept up with the sender (nothing lost in its \
            socket's buffer): there the rate is the sender's, not the node's capacity.\n",
            n.kept_up,
            2 * n.runs.len()
        );
    }
}

/// Its figures for the JSON.
pub(crate) fn to_json(r: &Results) -> Value {
    let n = match &r.node {
        Ok(n) => n,
        Err(why) => return json!({ "skipped": why }),
    };
    let (single, batched, ratio) = n.medians();
    json!({
        "command": format!("load {}", n.args.join(" ")),
        "runs": n.runs.iter().map(|(s, b)| json!({
            "single_per_sec": s, "batched_per_sec": b, "ratio": b / s,
        })).collect::<Vec<_>>(),
        "median_single_per_sec": single,
        "median_batched_per_sec": batched,
        "median_ratio": ratio,
        "runs_kept_up": n.kept_up,
    })
}
