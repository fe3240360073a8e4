//! The tables' cases: the reference's operations, one unwrap beside the
//! primitives it performs, batched X25519 and the batch unwrap beside their
//! one-at-a-time forms, AEZ beside AES-256-CTR, and the operations the
//! two KEM backends are compared on. The cases themselves are
//! `kemsphinx_support::bench::cases`, the divan benches' too; here they are
//! only measured the report's way ([`interleaved`]).

use kemsphinx::hazmat::kem_backends::{self, Backend};
use kemsphinx_support::bench::Net;
use kemsphinx_support::bench::cases::{self, OwnedCase};

use crate::harness::{Case, Plan, Timing, case, interleaved};

pub(crate) use kemsphinx_support::bench::cases::{CTR, DECAPS, MLKEM, UNWRAP, X25519, aez_name};

/// X25519 with the base point (the backends table only).
pub(crate) const X25519_BASE: &str = "X25519 base point";

/// A table's cases as the harness measures them.
fn rows<'a>(table: Vec<cases::Case<'a>>) -> Vec<Case<'a>> {
    table
        .into_iter()
        .map(|c| case(c.name, c.setup, c.run))
        .collect()
}

/// The operations of the reference's baseline (and decapsulation with a
/// loaded key, which the reference has no benchmark for).
pub(crate) fn operations(net: &Net, plan: Plan) -> Vec<Timing> {
    interleaved(rows(cases::operations(net).expect("fixtures")), plan)
}

/// The primitives of one unwrap, each alone, on the code the library runs,
/// interleaved with an unwrap of the first hop.
pub(crate) fn unwrap_and_parts(net: &Net, plan: Plan) -> Vec<Timing> {
    interleaved(rows(cases::unwrap_parts(net).expect("fixtures")), plan)
}

/// X25519 in batches of 1, 4, 8 and 16 on every `x25519-batch` backend
/// this CPU has and one point at a time, and unwrap of 1, 4, 8 and 16
/// distinct packets batched and one at a time, and of 8 and 16 batched
/// with X25519 forced onto AVX2 where `cases::unwrap_on_avx2` times it,
/// interleaved (`crate::batch` derives the figures per unit).
pub(crate) fn batch(net: &Net, plan: Plan) -> Vec<Timing> {
    interleaved(rows(cases::batch(net).expect("fixtures")), plan)
}

/// What [`aez_vs_ctr`] measured.
pub(crate) struct AezTimings {
    /// AES-256-CTR, then AEZ encipher and decipher per implementation.
    pub(crate) timings: Vec<Timing>,
    /// The AEZ implementations this CPU has, measured.
    pub(crate) backends: Vec<aez5::Backend>,
}

/// AEZ encipher and decipher of 10,188 bytes on every implementation this
/// CPU has (key setup included, as per hop), beside AES-256-CTR over the
/// same bytes.
pub(crate) fn aez_vs_ctr(plan: Plan) -> AezTimings {
    let table: Vec<Case<'static>> = cases::aez_and_ctr()
        .into_iter()
        .map(|c: OwnedCase| case(c.name, c.setup, c.run))
        .collect();
    AezTimings {
        timings: interleaved(table, plan),
        backends: cases::aez_backends(),
    }
}

/// The operations the KEM backends are compared on (`--child-ops`): the
/// tables' cases that depend on the backend, and X25519 with the base
/// point.
pub(crate) fn backend_ops(net: &Net, plan: Plan) -> Vec<Timing> {
    let mut table: Vec<cases::Case<'_>> = cases::operations(net)
        .expect("fixtures")
        .into_iter()
        .filter(|c| [UNWRAP, "build forward packet", "create SURB", DECAPS].contains(&c.name))
        .collect();
    table.extend(
        cases::unwrap_parts(net)
            .expect("fixtures")
            .into_iter()
            .filter(|c| [MLKEM, X25519].contains(&c.name)),
    );
    let mut cases = rows(table);
    cases.push(case(
        X25519_BASE,
        || (),
        |()| kem_backends::x25519_base_point(Backend::SELECTED, &[3; 32]),
    ));
    interleaved(cases, plan)
}
