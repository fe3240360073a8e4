//! The performance targets of issues 10, 11 and 32, checked on this run.
//!
//! Every target against the Go reference uses the reference measured on
//! this CPU model only ([`crate::reference::for_cpu`]); with two reference
//! runs, a target is met when it holds against both. Issue 32's compare
//! the batch unwrap with single unwraps in this run.

use crate::Results;
use crate::harness::{Timing, find};
use crate::measure::{CTR, UNWRAP, aez_name};
use kemsphinx_support::bench::cases::UNWRAP_SIZES;

/// Whether a target holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Met,
    NotMet,
    /// Met against some of the reference's runs, not all.
    Partly(usize, usize),
    NoReference,
    NotMeasured,
    /// Measured, but the issue sets no bound for this CPU.
    NoBound,
}

impl Status {
    pub(crate) fn text(self) -> String {
        match self {
            Self::Met => "**met**".into(),
            Self::NotMet => "**not met**".into(),
            Self::Partly(k, n) => format!("not met (met against {k} of {n} reference runs)"),
            Self::NoReference => "— (no reference for this CPU)".into(),
            Self::NotMeasured => "— (not measured)".into(),
            Self::NoBound => "— (no bound for this CPU)".into(),
        }
    }
    pub(crate) fn key(self) -> &'static str {
        match self {
            Self::Met => "met",
            Self::NotMet => "not met",
            Self::Partly(..) => "partly",
            Self::NoReference => "no reference",
            Self::NotMeasured => "not measured",
            Self::NoBound => "no bound",
        }
    }
}

/// One target and how this run did.
pub(crate) struct Target {
    pub(crate) issue: u8,
    pub(crate) what: String,
    pub(crate) bound: String,
    pub(crate) measured: String,
    pub(crate) status: Status,
}

/// "a×" or "a–b×".
pub(crate) fn times_range(lo: f64, hi: f64) -> String {
    if (hi - lo).abs() < 0.05 {
        format!("{lo:.1}×")
    } else {
        format!("{lo:.1}–{hi:.1}×")
    }
}

/// `op` at least `factor` times faster than the reference on this CPU.
fn vs_reference(r: &Results, issue: u8, op: &str, factor: f64, frac: &str) -> Target {
    let ours = find(&r.ops, op).map(Timing::secs);
    let figure = r.env.reference.as_ref().ok().and_then(|re| re.get(op));
    let (measured, status) = match (ours, figure) {
        (None, _) => ("not measured".into(), Status::NotMeasured),
        (Some(t), None) => (
            format!("{} (reference: —)", crate::units::seconds(t)),
            Status::NoReference,
        ),
        (Some(t), Some(f)) => {
            let ups: Vec<f64> = f.runs.iter().map(|g| g / t).collect();
            let met = ups.iter().filter(|u| **u >= factor).count();
            let (lo, hi) = f.range();
            let status = match met {
                m if m == ups.len() => Status::Met,
                0 => Status::NotMet,
                m => Status::Partly(m, ups.len()),
            };
            (
                format!(
                    "{} vs {}: {} faster",
                    crate::units::seconds(t),
                    crate::units::seconds_range(lo, hi),
                    times_range(lo / t, hi / t)
                ),
                status,
            )
        }
    };
    Target {
        issue,
        what: format!("{op} ≤ {frac} of the reference's time (same CPU model)"),
        bound: format!("≥ {factor:.0}× faster"),
        measured,
        status,
    }
}

/// `a / b ≤ limit`.
fn ratio(issue: u8, what: String, a: Option<f64>, b: Option<f64>, limit: f64) -> Target {
    let (measured, status) = match (a, b) {
        (Some(a), Some(b)) => {
            let x = a / b;
            (
                format!("{x:.2}×"),
                if x <= limit {
                    Status::Met
                } else {
                    Status::NotMet
                },
            )
        }
        _ => ("not measured".into(), Status::NotMeasured),
    };
    Target {
        issue,
        what,
        bound: format!("≤ {limit}×"),
        measured,
        status,
    }
}

/// The sum of the medians of the primitives of one unwrap (every row of
/// the parts table but the unwrap itself).
pub(crate) fn parts_sum(parts: &[Timing]) -> f64 {
    parts
        .iter()
        .filter(|p| p.name != UNWRAP)
        .map(Timing::secs)
        .sum()
}

pub(crate) fn check(r: &Results) -> Vec<Target> {
    let aez = aez5::Aez::new(&[0; 48]).backend();
    let ctr = find(&r.aez, CTR).map(Timing::secs);
    let aez_of = |dir: &str| find(&r.aez, &aez_name(dir, aez)).map(Timing::secs);
    let no_alloc = r
        .ops
        .iter()
        .filter(|o| !o.name.starts_with("KEM"))
        .all(|o| o.allocs == 0);
    vec![
        vs_reference(r, 10, UNWRAP, 6.0, "⅙"),
        vs_reference(r, 10, "build forward packet", 6.0, "⅙"),
        vs_reference(r, 10, "create SURB", 6.0, "⅙"),
        ratio(
            10,
            "unwrap one hop ≤ 1.15 × the sum of its primitives".into(),
            find(&r.parts, UNWRAP).map(Timing::secs),
            Some(parts_sum(&r.parts)),
            1.15,
        ),
        Target {
            issue: 10,
            what: "zero heap allocations on packet paths".into(),
            bound: "0".into(),
            measured: if no_alloc {
                "0"
            } else {
                "some (see Operations)"
            }
            .into(),
            status: if no_alloc {
                Status::Met
            } else {
                Status::NotMet
            },
        },
        ratio(
            11,
            format!("AEZ encipher, 10,188 B ({aez:?}) ≤ 0.6 × AES-256-CTR over the same bytes"),
            aez_of("encipher"),
            ctr,
            0.6,
        ),
        ratio(
            11,
            format!("AEZ decipher, 10,188 B ({aez:?}) ≤ 0.6 × AES-256-CTR over the same bytes"),
            aez_of("decipher"),
            ctr,
            0.6,
        ),
        vs_reference(r, 11, "reply from SURB", 4.0, "¼"),
        vs_reference(r, 11, "decrypt reply", 4.0, "¼"),
    ]
    .into_iter()
    .chain(
        UNWRAP_SIZES
            .into_iter()
            .filter(|n| *n >= kemsphinx::BATCH)
            .map(|n| batch_unwrap(r, n)),
    )
    .collect()
}

/// Issue 32: `unwrap_batch` over `n` packets costs at most the bound for
/// this CPU's batch path (1/1.5 with IFMA, 1/1.2 with AVX2) of `unwrap`'s
/// time per packet. Checked for queues of whole batches; shorter ones are
/// in the batch section only (a ladder computes a whole batch).
fn batch_unwrap(r: &Results, n: usize) -> Target {
    let measured = crate::batch::unwrap_ratio(r, n);
    let bound = crate::batch::unwrap_bound();
    let status = match (measured, bound) {
        (None, _) => Status::NotMeasured,
        (Some(_), None) => Status::NoBound,
        (Some((b, s)), Some((limit, _))) if b / s <= limit => Status::Met,
        (Some(_), Some(_)) => Status::NotMet,
    };
    Target {
        issue: 32,
        what: format!("unwrap_batch of {n} packets: time per packet ≤ bound × unwrap's"),
        bound: bound.map_or(
            "— (no vector batch path on this CPU)".into(),
            |(limit, cpu)| format!("≤ {limit:.3}× ({cpu})"),
        ),
        measured: measured.map_or("not measured".into(), |(b, s)| {
            format!(
                "{:.3}× ({} against {})",
                b / s,
                crate::units::seconds(b),
                crate::units::seconds(s)
            )
        }),
        status,
    }
}
