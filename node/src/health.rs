//! A keyring's health, as plain data for a node's status page or log
//! ([`Keyring::health`]): its live epochs' fill and age, the tags waiting
//! for their group commit, the last group commits' latency, and since
//! when the disk has been failing.
//!
//! What it reads is kept as the keyring works, in bounded memory: the
//! commit latencies in a ring of [`RECENT`] entries, the groups waiting
//! in a queue of at most [`GROUPS`] (the oldest kept).

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use crate::Keyring;

/// Group-commit latencies kept ([`CommitLatency::recent`]).
pub const RECENT: usize = 16;
/// Groups waiting for their commit whose first tag's time is kept (more
/// are counted, not timed: the oldest one's age is what matters).
const GROUPS: usize = 1024;

/// Which of the live epochs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// The current epoch: its key is the one published.
    Current,
    /// The previous epoch, during its grace.
    Previous,
    /// The next epoch, published ahead.
    Next,
}

impl Role {
    /// A short name for logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::Current => "current",
            Self::Previous => "previous",
            Self::Next => "next",
        }
    }
}

/// One live epoch's fill and age.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EpochHealth {
    /// The epoch's number.
    pub number: u64,
    /// Which live epoch it is.
    pub role: Role,
    /// Tags it holds (packets it took).
    pub taken: usize,
    /// Tags it may hold ([`EpochPolicy::capacity`](crate::EpochPolicy::capacity)):
    /// at `taken == capacity` it refuses its key's packets.
    pub capacity: usize,
    /// How long since it became current (for the next epoch: since it
    /// was made).
    pub age: Duration,
}

impl EpochHealth {
    /// `taken / capacity`, from 0 to 1.
    #[allow(clippy::cast_precision_loss)] // a ratio for display
    pub fn fill(&self) -> f64 {
        self.taken as f64 / self.capacity.max(1) as f64
    }
}

/// The last group commits' latency (disk mode; all `None` or empty before
/// the first commit, and in memory mode).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommitLatency {
    /// The last successful commit's.
    pub last: Option<Duration>,
    /// The longest since the keyring started.
    pub max: Option<Duration>,
    /// The last [`RECENT`] at most, oldest first.
    pub recent: Vec<Duration>,
}

/// A keyring's state for an operator ([`Keyring::health`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Health {
    /// The live epochs: current, previous (in its grace), next.
    pub epochs: Vec<EpochHealth>,
    /// Disk mode: tags accepted and not yet durable (their packets wait
    /// for their group commit, [`Keyring::is_durable`]).
    pub pending: u64,
    /// Disk mode: how long the oldest of them has waited.
    pub oldest_pending: Option<Duration>,
    /// Disk mode: the group commits' latency.
    pub commits: CommitLatency,
    /// Disk mode: since when the replay store cannot be written (new
    /// packets are dropped, [`Dropped::DiskFailing`](crate::Dropped::DiskFailing));
    /// `None` while it can.
    pub disk_failing_since: Option<SystemTime>,
    /// Disk mode: the last failure to commit tags or to write or delete an
    /// epoch's files, even once the disk is back (unlike
    /// [`Keyring::take_disk_error`], it is not taken).
    pub last_disk_error: Option<String>,
}

/// One line: `epochs: current 3 (1200/1000000, 0.12 %, age 754s),
/// previous 2 (…); pending 12 tags, oldest 15ms; commits: last 4.1ms,
/// max 9.2ms; disk ok` (or `disk failing for 12s: …`; `last disk error:
/// …` when there was one).
impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("epochs: ")?;
        for (i, e) in self.epochs.iter().enumerate() {
            let sep = if i > 0 { ", " } else { "" };
            write!(
                f,
                "{sep}{} {} ({}/{}, {:.2} %, age {}s)",
                e.role.name(),
                e.number,
                e.taken,
                e.capacity,
                e.fill() * 100.0,
                e.age.as_secs()
            )?;
        }
        write!(f, "; pending {} tags", self.pending)?;
        if let Some(age) = self.oldest_pending {
            write!(f, ", oldest {age:?}")?;
        }
        if let (Some(last), Some(max)) = (self.commits.last, self.commits.max) {
            write!(f, "; commits: last {last:?}, max {max:?}")?;
        }
        match self.disk_failing_since {
            None => f.write_str("; disk ok")?,
            Some(since) => {
                let for_ = SystemTime::now().duration_since(since).unwrap_or_default();
                write!(f, "; disk failing for {}s", for_.as_secs())?;
            }
        }
        if let Some(e) = &self.last_disk_error {
            write!(f, "; last disk error: {e}")?;
        }
        Ok(())
    }
}

/// What the journal and the keyring record for [`Health`], as they work.
#[derive(Default)]
pub(crate) struct Recorder {
    /// Tags added and neither committed nor dropped (counted per tag
    /// without a lock).
    pending: AtomicU64,
    state: Mutex<Recorded>,
}

#[derive(Default)]
struct Recorded {
    /// Groups not yet durable, with the time their first tag was added,
    /// oldest first.
    groups: VecDeque<(u64, Instant)>,
    latency: CommitLatency,
    recent: VecDeque<Duration>,
    failing_since: Option<SystemTime>,
    last_error: Option<String>,
}

impl Recorder {
    fn state(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A tag joined `group`; `first`: the group's first (only then is
    /// the time taken, and the lock: once per group, not per packet).
    pub(crate) fn added(&self, group: u64, first: bool) {
        self.pending.fetch_add(1, Ordering::Relaxed);
        if first {
            let mut s = self.state();
            if s.groups.back().is_none_or(|&(g, _)| g < group) && s.groups.len() < GROUPS {
                s.groups.push_back((group, Instant::now()));
            }
        }
    }

    /// `n` tags will never be committed (their epoch retired).
    pub(crate) fn dropped(&self, n: usize) {
        self.forget(n);
    }

    fn forget(&self, n: usize) {
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        let _ = self
            .pending
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
                Some(p.saturating_sub(n))
            });
    }

    /// Every group up to `group` is durable, `n` tags with it, after a
    /// commit that took `took`.
    pub(crate) fn committed(&self, group: u64, n: usize, took: Duration) {
        self.forget(n);
        let mut s = self.state();
        while s.groups.front().is_some_and(|&(g, _)| g <= group) {
            s.groups.pop_front();
        }
        s.latency.last = Some(took);
        s.latency.max = Some(s.latency.max.map_or(took, |m| m.max(took)));
        if s.recent.len() == RECENT {
            s.recent.pop_front();
        }
        s.recent.push_back(took);
        s.failing_since = None;
        drop(s);
        crate::instrument::commit(self.pending.load(Ordering::Relaxed), Some(took));
    }

    /// A disk-mode write or deletion failed; `commit`: a group commit (the
    /// store cannot be written: failing from now on).
    pub(crate) fn failed(&self, error: String, commit: bool) {
        let mut s = self.state();
        if commit && s.failing_since.is_none() {
            s.failing_since = Some(SystemTime::now());
        }
        s.last_error = Some(error);
        drop(s);
        if commit {
            crate::instrument::commit(self.pending.load(Ordering::Relaxed), None);
        }
    }

    fn read(&self, health: &mut Health) {
        let s = self.state();
        health.pending = self.pending.load(Ordering::Relaxed);
        health.oldest_pending = s
            .groups
            .front()
            .filter(|_| health.pending > 0)
            .map(|&(_, t)| t.elapsed());
        health.commits = CommitLatency {
            recent: s.recent.iter().copied().collect(),
            ..s.latency.clone()
        };
        health.disk_failing_since = s.failing_since;
        health.last_disk_error.clone_from(&s.last_error);
    }
}

impl Keyring {
    /// Set every role's fill gauge (0 for a role no epoch holds): roles
    /// move at each turn, so the housekeeping thread's wait refreshes
    /// them all.
    #[cfg(feature = "metrics")]
    pub(crate) fn publish_fill(&self) {
        let capacity = self.policy().capacity;
        let mut seen = [false; 3];
        self.each_live(|role, _, taken, _| {
            if let Some(s) = seen.get_mut(role as usize) {
                *s = true;
            }
            crate::instrument::fill(role, taken, capacity);
        });
        for (role, seen) in [Role::Current, Role::Previous, Role::Next]
            .into_iter()
            .zip(seen)
        {
            if !seen {
                crate::instrument::fill(role, 0, capacity);
            }
        }
    }

    /// A snapshot of the keyring's state for an operator: its live
    /// epochs' fill and age, the tags waiting for their group commit and
    /// the oldest one's age, the last group commits' latency, since when
    /// the disk has been failing and its last error. Cheap (a read lock
    /// and each epoch's filter lock for a moment): a status page may call
    /// it every second.
    pub fn health(&self) -> Health {
        // The clock the epochs' starts are on.
        let now = self.clock_now();
        let capacity = self.policy().capacity;
        let mut health = Health {
            epochs: Vec::with_capacity(3),
            pending: 0,
            oldest_pending: None,
            commits: CommitLatency::default(),
            disk_failing_since: None,
            last_disk_error: None,
        };
        self.each_live(|role, number, taken, started| {
            health.epochs.push(EpochHealth {
                number,
                role,
                taken,
                capacity,
                age: now.saturating_duration_since(started),
            });
        });
        if let Some(r) = self.recorder() {
            r.read(&mut health);
        }
        health
    }
}
