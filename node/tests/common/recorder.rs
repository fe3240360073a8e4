//! What the metrics tests share (feature `metrics`): the process's
//! recorder, installed once per test binary, and its snapshots read back
//! by name. Included by `#[path]` from those tests only, so the other
//! test binaries that share `common` do not build it.

use std::collections::HashMap;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

/// Install an in-process recorder as the process's (once per test
/// binary: the recorder is global) and return what reads it.
pub(crate) fn install() -> Snapshotter {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().unwrap();
    snapshotter
}

/// Every metric recorded, as `name` or `name{label=value,…}` → its value
/// (counters: since the last snapshot).
pub(crate) fn read(snapshotter: &Snapshotter) -> HashMap<String, DebugValue> {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let labels: Vec<String> = key
                .key()
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            let name = if labels.is_empty() {
                key.key().name().to_owned()
            } else {
                format!("{}{{{}}}", key.key().name(), labels.join(","))
            };
            (name, value)
        })
        .collect()
}

/// Counter `name` (0: never incremented, so never registered).
pub(crate) fn counter(m: &HashMap<String, DebugValue>, name: &str) -> u64 {
    match m.get(name) {
        Some(DebugValue::Counter(n)) => *n,
        None => 0,
        other => panic!("{name}: {other:?}"),
    }
}

/// Gauge `name`, which must have been set.
pub(crate) fn gauge(m: &HashMap<String, DebugValue>, name: &str) -> f64 {
    match m.get(name) {
        Some(DebugValue::Gauge(g)) => g.0,
        other => panic!("{name}: {other:?} in {:?}", m.keys()),
    }
}
