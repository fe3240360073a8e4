//! Injected I/O errors, for the crate's own tests: each disk-mode call
//! that can fail (a file made, a write's `fsync`, a link, an unlink, a
//! directory `fsync`, a store's commit) asks [`check`] first. In a normal
//! build `check` is an empty function the compiler removes; under
//! `cfg(test)` a test arms a fault for the paths under one directory (its
//! own scratch directory, so tests running at once do not meet), to fail
//! the `skip + 1`-th call at a point and the `times - 1` after it.

/// Where a disk-mode call can be made to fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Point {
    /// A new store's file made (`open`, `O_CREAT | O_EXCL`).
    StoreFile,
    /// A new store's first transaction (its epoch record), committed with
    /// its `fsync`s.
    StoreInit,
    /// A group of tags committed to a store.
    StoreCommit,
    /// A directory `fsync`ed.
    DirSync,
    /// A key's temporary file made.
    KeyFile,
    /// A key's temporary file written and `fsync`ed.
    KeySync,
    /// A key's temporary file linked to its final name.
    KeyLink,
    /// A file unlinked (a key's temporary name, a retired epoch's files).
    Unlink,
}

impl Point {
    /// Every point.
    #[cfg(test)]
    pub(crate) const ALL: [Self; 8] = [
        Self::StoreFile,
        Self::StoreInit,
        Self::StoreCommit,
        Self::DirSync,
        Self::KeyFile,
        Self::KeySync,
        Self::KeyLink,
        Self::Unlink,
    ];
}

#[cfg(not(test))]
#[inline(always)]
pub(crate) fn check(_path: &std::path::Path, _point: Point) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
pub(crate) use armed::{arm, check, disarm, passed};

#[cfg(test)]
mod armed {
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, PoisonError};

    use super::Point;

    struct Fault {
        under: PathBuf,
        point: Point,
        skip: u32,
        times: u32,
    }

    static FAULTS: Mutex<Vec<Fault>> = Mutex::new(Vec::new());

    /// Fail calls at `point` on paths under `under`: let `skip` pass, then
    /// fail the next `times` (`u32::MAX`: until [`disarm`]ed).
    pub(crate) fn arm(under: &Path, point: Point, skip: u32, times: u32) {
        FAULTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Fault {
                under: under.to_owned(),
                point,
                skip,
                times,
            });
    }

    /// Remove every fault armed for paths under `under`.
    pub(crate) fn disarm(under: &Path) {
        FAULTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|f| f.under != under);
    }

    /// Calls at `point` under `under` that the faults armed there let
    /// pass so far (arm one with `skip: u32::MAX, times: 0` to count).
    pub(crate) fn passed(under: &Path, point: Point) -> u32 {
        FAULTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|f| f.under == under && f.point == point)
            .map(|f| u32::MAX - f.skip)
            .sum()
    }

    pub(crate) fn check(path: &Path, point: Point) -> io::Result<()> {
        let mut faults = FAULTS.lock().unwrap_or_else(PoisonError::into_inner);
        for f in faults.iter_mut() {
            if f.point != point || !path.starts_with(&f.under) {
                continue;
            }
            if f.skip > 0 {
                f.skip -= 1;
            } else if f.times > 0 {
                f.times = f.times.saturating_sub(u32::from(f.times != u32::MAX));
                return Err(io::Error::other(format!("injected fault at {point:?}")));
            }
        }
        Ok(())
    }
}
