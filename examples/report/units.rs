//! How numbers read in the report: durations in a unit that suits them,
//! counts with thousands separators.

use std::time::Duration;

/// A duration with a sensible unit.
pub(crate) fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.2} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

pub(crate) fn seconds(s: f64) -> String {
    duration(Duration::from_secs_f64(s))
}

/// One time, or "lo–hi" for two different ones.
pub(crate) fn seconds_range(lo: f64, hi: f64) -> String {
    if lo == hi {
        seconds(lo)
    } else {
        format!("{}–{}", seconds(lo), seconds(hi))
    }
}

/// Thousands separators.
pub(crate) fn count(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
