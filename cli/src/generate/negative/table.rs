//! Every negative case as a data row of `cases.txt`: its id, the
//! operation, how its input is made from the base scenario, the outcome
//! this library gives (by hand from SPEC.md §7), the reason where the
//! reference behaves otherwise, and a note.
//!
//! The rows' format is described at the head of `cases.txt`.

use kemsphinx::geometry::layout::{packet, payload};
use kemsphinx_support::{SmallOrderPoint, small_order_encodings};

use crate::generate::drbg::Gen;

/// The rows.
const ROWS: &str = include_str!("cases.txt");

/// One case: a row, its operation and change still as written (the base
/// scenario reads them as it makes the inputs).
pub(super) struct Spec {
    /// The id, less the `neg-own-` every id starts with.
    pub(super) id: &'static str,
    pub(super) op: &'static str,
    pub(super) change: &'static str,
    /// `expect`, and `expect_detail` (this library's error in `Debug` form).
    pub(super) expect: (&'static str, Option<&'static str>),
    pub(super) note: String,
    /// `library_choice`: why this library gives `expect` where the
    /// reference does otherwise (required exactly there).
    pub(super) choice: Option<&'static str>,
}

/// Every case, in the order of the file.
pub(super) fn table() -> Gen<Vec<Spec>> {
    let mut reasons = Vec::new();
    let mut specs = Vec::new();
    for line in ROWS
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if let Some((name, text)) = line.strip_prefix("= ").and_then(|r| r.split_once(" | ")) {
            reasons.push((name, text));
        } else {
            specs.push(row(line, &reasons).map_err(|e| format!("cases.txt: {e}: {line}"))?);
        }
    }
    Ok(specs)
}

/// One row.
fn row(line: &'static str, reasons: &[(&str, &'static str)]) -> Gen<Spec> {
    let fields: Vec<&'static str> = line.splitn(7, " | ").collect();
    let [id, op, change, expect, detail, reason, note] = fields[..] else {
        return Err("not seven fields".into());
    };
    let choice = match reason {
        "-" => None,
        name => Some(
            reasons
                .iter()
                .find(|r| r.0 == name)
                .ok_or("unknown reason")?
                .1,
        ),
    };
    let what = match change.split_once("point:") {
        Some((_, name)) => Some(point(name)?.what),
        None => None,
    };
    Ok(Spec {
        id,
        op,
        change,
        expect: (expect, (detail != "-").then_some(detail)),
        note: what.map_or_else(|| note.to_owned(), |w| note.replace("{what}", &w)),
        choice,
    })
}

/// The small-order encoding `name`.
pub(super) fn point(name: &str) -> Gen<SmallOrderPoint<String>> {
    let found = small_order_encodings().into_iter().find(|p| p.name == name);
    found.ok_or_else(|| format!("no small-order point `{name}`"))
}

/// A byte offset: a number, or a layout name with an optional `+N`/`-N`.
pub(super) fn offset(at: &str) -> Gen<usize> {
    let (name, delta) = at.split_at(at.find(['+', '-']).unwrap_or(at.len()));
    let base = match name {
        "version" => packet::VERSION.start,
        "x25519" => packet::KEM_X25519.start,
        "x25519_end" => packet::KEM_X25519.end,
        "mlkem" => packet::KEM_MLKEM.start,
        "mac" => packet::MAC.start,
        "payload" => packet::PAYLOAD.start,
        "tag_end" => payload::TAG.end,
        _ => match name.strip_prefix("routing") {
            Some(block) => packet::routing_block(number(block)?).start,
            None => number(name)?,
        },
    };
    match delta.split_at_checked(1) {
        Some(("+", n)) => Ok(base + number::<usize>(n)?),
        Some(("-", n)) => base.checked_sub(number(n)?).ok_or("offset below 0".into()),
        _ => Ok(base),
    }
}

/// A decimal number.
pub(super) fn number<T: std::str::FromStr>(text: &str) -> Gen<T> {
    text.parse().map_err(|_| format!("not a number: `{text}`"))
}
