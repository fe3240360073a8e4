//! The batch table: X25519 under one scalar for batches of 1, 4, 8 and 16
//! points on every `x25519-batch` backend this CPU has, beside the selected
//! KEM backend's X25519 and x25519-dalek's one point at a time; and 1, 4,
//! 8 and 16 distinct first-hop packets unwrapped with `unwrap_batch`,
//! beside `unwrap` on the same packets one at a time.
//!
//! One iteration of a case does all `n` of its units, and its name says
//! how many ("X25519 ×8, IFMA batch"), so a unit (a scalar multiplication,
//! a packet) costs the median ÷ `n` ([`BatchRow::n`]). The single forms
//! loop over the same inputs as the batched ones, so the two differ only
//! in batching.

use kemsphinx::hazmat::kem_backends::{self, Backend};
use kemsphinx::{PrivateKey, unwrap, unwrap_batch};
use x25519_batch::{Backend as Lanes, mul_batch_on};

use super::{Case, Input, case};
use crate::bench::{Broken, Net, Packet};

/// The batch sizes of the X25519 cases.
pub const X25519_SIZES: [usize; 4] = [1, 4, 8, 16];

/// The queue lengths of the unwrap cases: a lone packet and half a batch
/// (what light traffic hands `unwrap_batch`, whose ladder still computes
/// a whole batch), one and two of its batches ([`kemsphinx::BATCH`]).
pub const UNWRAP_SIZES: [usize; 4] = [1, 4, 8, 16];

/// The scalar of the X25519 cases (any 32 bytes: X25519 clamps them).
const SCALAR: [u8; 32] = [0x5a; 32];

/// How a case of the batch table computes its units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// `x25519_batch::mul_batch_on` on this backend: the whole batch under
    /// one scalar in one call.
    Batch(Lanes),
    /// The selected KEM backend's X25519
    /// (`hazmat::kem_backends::x25519(Backend::SELECTED, ..)`, what a
    /// single unwrap runs), one point at a time.
    Scalar,
    /// x25519-dalek 3's `x25519`, one point at a time.
    Dalek,
    /// `kemsphinx::unwrap_batch` over the queue, the first hop's key.
    UnwrapBatch,
    /// `kemsphinx::unwrap` on each packet of the queue in turn.
    UnwrapSingle,
}

impl Way {
    /// Whether its units are X25519 scalar multiplications (otherwise they
    /// are packets unwrapped).
    #[must_use]
    pub fn is_x25519(self) -> bool {
        !matches!(self, Way::UnwrapBatch | Way::UnwrapSingle)
    }
}

/// One row of the batch table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchRow {
    /// How it computes its units.
    pub way: Way,
    /// Units (scalar multiplications or packets) per iteration.
    pub n: usize,
    /// Its name, the same in the bench and the report.
    pub name: &'static str,
}

/// `[(n, "<op> ×n, <way>")]` for each size.
macro_rules! named {
    ($op:literal, $way:literal; $($n:literal),+) => {
        &[$(($n, concat!($op, " ×", $n, ", ", $way))),+]
    };
}

/// The names of `way`'s cases, by size.
fn names(way: Way) -> &'static [(usize, &'static str)] {
    match way {
        Way::Batch(Lanes::Ifma) => named!("X25519", "IFMA batch"; 1, 4, 8, 16),
        Way::Batch(Lanes::Avx2) => named!("X25519", "AVX2 batch"; 1, 4, 8, 16),
        Way::Batch(Lanes::Portable) => named!("X25519", "portable batch"; 1, 4, 8, 16),
        Way::Batch(_) => &[],
        Way::Scalar => named!("X25519", "KEM backend, one at a time"; 1, 4, 8, 16),
        Way::Dalek => named!("X25519", "x25519-dalek, one at a time"; 1, 4, 8, 16),
        Way::UnwrapBatch => named!("unwrap", "unwrap_batch"; 1, 4, 8, 16),
        Way::UnwrapSingle => named!("unwrap", "unwrap one at a time"; 1, 4, 8, 16),
    }
}

/// The `x25519-batch` backends this CPU and build have, portable first;
/// the widest is the one `x25519_batch::mul_batch` (and `unwrap_batch`)
/// uses.
#[must_use]
pub fn x25519_batch_backends() -> Vec<Lanes> {
    Lanes::ALL
        .into_iter()
        .filter(|b| mul_batch_on(*b, &SCALAR, &[], &mut []).is_some())
        .collect()
}

/// The `x25519-batch` backend `mul_batch` uses on this CPU.
#[must_use]
pub fn x25519_batch_selected() -> Lanes {
    x25519_batch::backend()
}

/// The rows of [`batch`], in its order: X25519 one at a time (the KEM
/// backend, x25519-dalek), X25519 batched on each backend this CPU has,
/// then the unwrap pairs (one at a time, batched) for each queue length.
#[must_use]
pub fn batch_rows() -> Vec<BatchRow> {
    let mut ways = vec![Way::Scalar, Way::Dalek];
    ways.extend(x25519_batch_backends().into_iter().map(Way::Batch));
    ways.extend([Way::UnwrapSingle, Way::UnwrapBatch]);
    ways.into_iter()
        .flat_map(|way| {
            names(way)
                .iter()
                .map(move |&(n, name)| BatchRow { way, n, name })
        })
        .collect()
}

/// The names of [`batch_rows`].
#[must_use]
pub fn batch_names() -> Vec<&'static str> {
    batch_rows().into_iter().map(|r| r.name).collect()
}

/// The row named `name`.
#[must_use]
pub fn batch_row(name: &str) -> Option<BatchRow> {
    batch_rows().into_iter().find(|r| r.name == name)
}

/// A 64-bit digest of X25519 outputs, so that no output is dead code and
/// every way of computing the same batch returns the same number.
fn digest<'o>(outs: impl IntoIterator<Item = &'o [u8; 32]>) -> u64 {
    outs.into_iter().fold(0u64, |acc, o| {
        let mut word = [0u8; 8];
        word.copy_from_slice(o.get(..8).unwrap_or(&[0; 8]));
        acc.rotate_left(5) ^ u64::from_le_bytes(word)
    })
}

/// Packets unwrapped successfully, as a `u64`.
fn ok_count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The batch table over `net`: every row of [`batch_rows`], in its order.
/// The X25519 points are public keys of distinct secrets; the unwrap
/// queues are [`Net::first_packets`], fresh copies made outside the timed
/// region for every iteration.
///
/// A case returns, for X25519, a digest of its outputs (the same for
/// every way at one size), and for unwrap, how many packets unwrapped.
///
/// # Errors
/// [`Broken`] if a fixture could not be made.
pub fn batch(net: &Net) -> Result<Vec<Case<'_>>, Broken> {
    let largest = X25519_SIZES.into_iter().max().unwrap_or(0);
    let points: Vec<[u8; 32]> = (1..=largest)
        .map(|i| {
            kem_backends::x25519_base_point(Backend::SELECTED, &[u8::try_from(i).unwrap_or(0); 32])
        })
        .collect();
    let queue = net.first_packets(UNWRAP_SIZES.into_iter().max().unwrap_or(0))?;
    let key = net.first_key();
    Ok(batch_rows()
        .into_iter()
        .map(|row| {
            if row.way.is_x25519() {
                x25519_case(row, points.get(..row.n).unwrap_or_default().to_vec())
            } else {
                unwrap_case(row, key, queue.get(..row.n).unwrap_or_default().to_vec())
            }
        })
        .collect())
}

/// An X25519 row over `points`, all under [`SCALAR`].
fn x25519_case<'a>(row: BatchRow, points: Vec<[u8; 32]>) -> Case<'a> {
    let mut out = vec![[0u8; 32]; points.len()];
    let run = move |_: &mut Input| match row.way {
        Way::Batch(lanes) => match mul_batch_on(lanes, &SCALAR, &points, &mut out) {
            Some(Ok(())) => digest(&out),
            _ => 0,
        },
        Way::Scalar => {
            for (o, p) in out.iter_mut().zip(&points) {
                *o = kem_backends::x25519(Backend::SELECTED, &SCALAR, p).unwrap_or_default();
            }
            digest(&out)
        }
        Way::Dalek => {
            for (o, p) in out.iter_mut().zip(&points) {
                *o = x25519_dalek::x25519(SCALAR, *p);
            }
            digest(&out)
        }
        Way::UnwrapBatch | Way::UnwrapSingle => 0,
    };
    case(row.name, || Input::None, run)
}

/// An unwrap row: a fresh copy of `queue` per iteration, unwrapped with
/// the first hop's `key`.
fn unwrap_case(row: BatchRow, key: &PrivateKey, queue: Vec<Packet>) -> Case<'_> {
    let run = move |input: &mut Input| {
        let Input::Packets(packets) = input else {
            return 0;
        };
        let buffers = packets.iter_mut().map(|p| &mut **p);
        ok_count(match row.way {
            Way::UnwrapBatch => unwrap_batch([key], buffers).filter(Result::is_ok).count(),
            _ => buffers
                .map(|p| unwrap(key, p))
                .filter(Result::is_ok)
                .count(),
        })
    };
    case(row.name, move || Input::Packets(queue.clone()), run)
}
