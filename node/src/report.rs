//! How the keyring's reports read in a node's log: what a restart
//! resumed, made, deleted or changed ([`Resumed`]), one clause each.

use std::fmt;

use crate::epochs::{ResumeChange, Resumed};

/// `epochs` as "3, 4".
fn numbers(f: &mut fmt::Formatter<'_>, epochs: &[u64]) -> fmt::Result {
    for (i, n) in epochs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{n}")?;
    }
    Ok(())
}

/// One line, clauses separated by "; ", e.g. `resumed epoch 3 (1200
/// tags), epoch 4 (0 tags); made epoch 5 (a next epoch, its key to
/// publish); deleted epoch 1 (past its grace); deleted temporary file
/// DIR/.epoch-00000006.key.….tmp; epoch 2: its store was found without
/// its key file and deleted`. An empty directory reads `made epoch 0
/// (an empty directory)` (on a schedule, the epoch the clock names).
impl fmt::Display for Resumed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut clause = |f: &mut fmt::Formatter<'_>| {
            let sep = if first { "" } else { "; " };
            first = false;
            f.write_str(sep)
        };
        if !self.epochs.is_empty() {
            clause(f)?;
            f.write_str("resumed ")?;
            for (i, (n, tags)) in self.epochs.iter().enumerate() {
                let sep = if i > 0 { ", " } else { "" };
                write!(f, "{sep}epoch {n} ({tags} tags)")?;
            }
        }
        for (i, &n) in self.made.iter().enumerate() {
            clause(f)?;
            // Nothing resumed: the first epoch made is the current one
            // (0, or on a schedule the epoch the clock names).
            if self.epochs.is_empty() && i == 0 {
                write!(f, "made epoch {n} (an empty directory)")?;
            } else {
                write!(f, "made epoch {n} (a next epoch, its key to publish)")?;
            }
        }
        if !self.retired.is_empty() {
            clause(f)?;
            f.write_str("deleted epochs ")?;
            numbers(f, &self.retired)?;
            f.write_str(" (past their grace)")?;
        }
        for t in &self.temporaries {
            clause(f)?;
            write!(f, "deleted temporary file {}", t.display())?;
        }
        for c in &self.changes {
            clause(f)?;
            write!(f, "{c}")?;
        }
        if first {
            f.write_str("nothing")?;
        }
        Ok(())
    }
}

impl fmt::Display for ResumeChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PublishAheadTurnedOn => f.write_str(
                "publish_ahead turned on: the newest epoch stays current, a next epoch was made",
            ),
            Self::PublishAheadTurnedOff { dropped } => write!(
                f,
                "publish_ahead turned off: next epoch {dropped} deleted, files and all"
            ),
            Self::AheadDropped { number } => write!(
                f,
                "fewer epochs ahead asked: epoch {number}, made ahead, deleted, files and all"
            ),
            Self::KeyMissing { number } => write!(
                f,
                "epoch {number}: its store was found without its key file and deleted \
                 (publish the current keys if it was live)"
            ),
        }
    }
}
