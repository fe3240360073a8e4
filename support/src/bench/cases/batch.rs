//! The batch table: X25519 under one scalar for batches of 1, 4, 8 and 16
//! points on every `x25519-batch` backend this CPU has, beside the selected
//! KEM backend's X25519 and x25519-dalek's one point at a time; and 1, 4,
//! 8 and 16 distinct first-hop packets unwrapped with `unwrap_batch`,
//! beside `unwrap` on the same packets one at a time; and, where the CPU
//! has AVX2 but `unwrap_batch` would take another path, queues of 8 and
//! 16 unwrapped with `unwrap_batch` forced onto AVX2
//! ([`unwrap_on_avx2`]), so that issue 32's AVX2 figure is measured on
//! any CPU with AVX2.
//!
//! One iteration of a case does all `n` of its units, and its name says
//! how many ("X25519 ×8, IFMA batch"), so a unit (a scalar multiplication,
//! a packet) costs the median ÷ `n` ([`BatchRow::n`]). The single forms
//! loop over the same inputs as the batched ones, so the two differ only
//! in batching.

use core::fmt;

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

/// The queue lengths of the unwrap cases forced onto AVX2: whole batches,
/// the queues issue 32's bound is for.
pub const UNWRAP_AVX2_SIZES: [usize; 2] = [8, 16];

/// `x25519-batch`'s AVX2 backend, for [`Way::UnwrapBatchOn`] (the report
/// names it without depending on `x25519-batch`).
pub const AVX2: Lanes = Lanes::Avx2;

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
    /// As [`Way::UnwrapBatch`], with the X25519 halves on this
    /// `x25519-batch` backend
    /// (`hazmat::kem_backends::set_x25519_batch_path`) for the
    /// operation only (AVX2's rows alone exist, [`unwrap_on_avx2`]).
    UnwrapBatchOn(Lanes),
    /// `kemsphinx::unwrap` on each packet of the queue in turn.
    UnwrapSingle,
}

impl Way {
    /// Whether its units are X25519 scalar multiplications (otherwise they
    /// are packets unwrapped).
    #[must_use]
    pub fn is_x25519(self) -> bool {
        !matches!(
            self,
            Way::UnwrapBatch | Way::UnwrapSingle | Way::UnwrapBatchOn(_)
        )
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
        Way::UnwrapBatchOn(Lanes::Avx2) => named!("unwrap", "unwrap_batch on AVX2"; 8, 16),
        Way::UnwrapBatchOn(_) => &[],
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

/// Whether the batch table times `unwrap_batch` forced onto AVX2
/// ([`Way::UnwrapBatchOn`]), and why not where it does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnwrapOnAvx2 {
    /// Timed: this CPU has AVX2 and `unwrap_batch` takes another path by
    /// itself (`automatic`, as `x25519_batch_path_automatic()` names
    /// it); `ifma` says whether the CPU has AVX-512 IFMA, that is, is not
    /// an AVX2-only CPU.
    Timed {
        /// The path `unwrap_batch` takes by itself here.
        automatic: &'static str,
        /// Whether this CPU has the IFMA backend.
        ifma: bool,
    },
    /// Not timed twice: `unwrap_batch` takes AVX2 by itself here, so its
    /// own rows are AVX2's.
    AutomaticIsAvx2,
    /// Not timed: this CPU (or build) has no AVX2 path.
    NoAvx2,
}

impl fmt::Display for UnwrapOnAvx2 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnwrapOnAvx2::Timed { automatic, ifma } => write!(
                f,
                "unwrap_batch forced onto the AVX2 path on this CPU (by itself it takes `{automatic}`); {}",
                if *ifma {
                    "this CPU has AVX-512 IFMA, so it is not an AVX2-only CPU"
                } else {
                    "this CPU has no AVX-512 IFMA: an AVX2-only CPU"
                }
            ),
            UnwrapOnAvx2::AutomaticIsAvx2 => f.write_str(
                "unwrap_batch on AVX2 not timed separately: it takes the AVX2 path by itself on \
                 this CPU, so its own rows are the AVX2 figures",
            ),
            UnwrapOnAvx2::NoAvx2 => {
                f.write_str("unwrap_batch on AVX2 skipped: this CPU (or build) has no AVX2 path")
            }
        }
    }
}

/// Whether [`batch`] times `unwrap_batch` forced onto AVX2 in this process.
#[must_use]
pub fn unwrap_on_avx2() -> UnwrapOnAvx2 {
    #[cfg(target_arch = "x86_64")]
    {
        if !kem_backends::x25519_batch_path_available(Lanes::Avx2) {
            return UnwrapOnAvx2::NoAvx2;
        }
        // The automatic path, not the current one: another thread may
        // be running a forced row meanwhile.
        match kem_backends::x25519_batch_path_automatic() {
            "avx2" => UnwrapOnAvx2::AutomaticIsAvx2,
            automatic => UnwrapOnAvx2::Timed {
                automatic,
                ifma: x25519_batch_backends().contains(&Lanes::Ifma),
            },
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    UnwrapOnAvx2::NoAvx2
}

/// The rows of [`batch`], in its order: X25519 one at a time (the KEM
/// backend, x25519-dalek), X25519 batched on each backend this CPU has,
/// then the unwrap pairs (one at a time, batched) for each queue length,
/// then `unwrap_batch` forced onto AVX2 where [`unwrap_on_avx2`] times it.
#[must_use]
pub fn batch_rows() -> Vec<BatchRow> {
    let mut ways = vec![Way::Scalar, Way::Dalek];
    ways.extend(x25519_batch_backends().into_iter().map(Way::Batch));
    ways.extend([Way::UnwrapSingle, Way::UnwrapBatch]);
    if matches!(unwrap_on_avx2(), UnwrapOnAvx2::Timed { .. }) {
        ways.push(Way::UnwrapBatchOn(Lanes::Avx2));
    }
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
        Way::UnwrapBatch | Way::UnwrapSingle | Way::UnwrapBatchOn(_) => 0,
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
            Way::UnwrapBatchOn(lanes) => {
                let Some(_on) = OnPath::choose(lanes) else {
                    return 0;
                };
                unwrap_batch([key], buffers).filter(Result::is_ok).count()
            }
            _ => buffers
                .map(|p| unwrap(key, p))
                .filter(Result::is_ok)
                .count(),
        })
    };
    case(row.name, move || Input::Packets(queue.clone()), run)
}

/// The batch path chosen while it lives (an unwrap row forced onto a
/// backend), then the automatic choice again, so that the rows timed
/// interleaved with it run as they would alone.
struct OnPath;

impl OnPath {
    /// `lanes` chosen, or `None` if this CPU or build lacks it.
    #[cfg(target_arch = "x86_64")]
    fn choose(lanes: Lanes) -> Option<Self> {
        kem_backends::set_x25519_batch_path(Some(lanes))
            .ok()
            .map(|()| OnPath)
    }

    /// Never: the choice exists on x86_64 only.
    #[cfg(not(target_arch = "x86_64"))]
    fn choose(_: Lanes) -> Option<Self> {
        None
    }
}

impl Drop for OnPath {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        let _ = kem_backends::set_x25519_batch_path(None);
    }
}
