//! Key epochs: a node's mix key and its replay filter begin and end
//! together.
//!
//! A replay can only be recognised by the key that unwraps it, and a
//! packet for a retired key no longer unwraps at all, so a filter need
//! only remember the tags of its own key's packets. A node therefore
//! starts a new epoch (fresh key, to publish; fresh filter) when the
//! current one has lived [`EpochPolicy::length`], or earlier when it has
//! taken [`EpochPolicy::rotate_after`] packets. It keeps the previous
//! epoch's key and filter for [`EpochPolicy::grace`], for packets already
//! built for the old key (and, with [`EpochPolicy::publish_ahead`], the
//! next epoch's key and filter before it starts, for packets built with a
//! key published ahead); that epoch takes at most its filter's capacity
//! and then refuses its key's packets (so no filter ever holds more tags
//! than it was sized for, and the false-positive rate never exceeds its
//! target). Anyone with a node's public key can make packets that pass its
//! MAC, so this is what bounds what they can do to the filter: force
//! early key changes, not make honest packets look like replays. A new
//! epoch due while the previous one is still in its grace retires that one
//! first (early): only two epochs are ever live (three with the next one
//! published ahead; two plus [`Schedule::ahead`] with a schedule's keys
//! made further ahead), so forced changes cannot pile up keys, filters
//! or files.
//!
//! That is a self-timed node. On a PKI's clock
//! ([`EpochPolicy::schedule`], [`crate::schedule`]) epochs are numbered
//! and turned by the schedule alone, and a full epoch refuses instead of
//! turning early.
//!
//! In disk mode each epoch also has a replay store ([`crate::store`]) and
//! a key file ([`crate::dir`]): a tag the Bloom filter may have seen is
//! looked up exactly (in the tags not yet durable, then in the store),
//! each new tag joins a group commit ([`crate::journal`]), epochs found on
//! disk are resumed on start, and a retired epoch's key file and store are
//! deleted.
//!
//! This module holds the terms (the policy, one epoch and its filter,
//! what a turn or a restart reports); one owner each carries out the
//! rest: [`crate::rotation`] the live epochs and their rotation (which
//! epochs are live, when and how they change, on the keyring's one clock,
//! [`crate::clock`]), [`crate::disk`] disk mode (an epoch's files made
//! and deleted, the group commit), [`crate::resume`] what a restart makes
//! of the files found, and [`Keyring`](crate::Keyring) the order of
//! checks on a datagram.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use kemsphinx::{PrivateKey, ReplayTag};

use crate::Dropped;
use crate::filter::ReplayFilter;
use crate::journal::Journal;
use crate::pending::Pending;
use crate::schedule::Schedule;
use crate::store::Store;

/// How a node's epochs turn over.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochPolicy {
    /// Tags each epoch's filter is sized for: the most packets one key
    /// ever unwraps.
    pub capacity: usize,
    /// The filter's false-positive rate at `capacity` (memory mode drops
    /// honest packets at this rate at worst; disk mode never).
    pub fp_rate: f64,
    /// Packets after which a new epoch starts (at most `capacity`). The
    /// difference is room for what arrives between the epoch taking its
    /// share and [`Keyring::turn`](crate::Keyring::turn) starting the next
    /// one (a few packets on a loaded machine, more in disk mode while the
    /// new epoch's files are written), and then for the old key's packets
    /// during the grace. The default leaves 100,000.
    pub rotate_after: usize,
    /// A new epoch starts at the latest after this long.
    pub length: Duration,
    /// How long the previous epoch's key still unwraps.
    pub grace: Duration,
    /// Keep the next epoch's key ready ahead of its start, to publish
    /// before it is used (a PKI that publishes each epoch's keys in
    /// advance, as Katzenpost's does), and unwrap its packets already: a
    /// client whose clock runs ahead, or that took the new key from the
    /// PKI first, is not dropped at the change. The next epoch's filter
    /// takes those packets' tags and keeps them when the epoch becomes
    /// current. In disk mode its key and store are on disk from the start
    /// (so up to three epochs' keys are: previous, current, next). With a
    /// [`Schedule`], as many epochs ahead as [`Schedule::with_ahead`] asks
    /// ([`Keyring::ahead`](crate::Keyring::ahead) lists their keys).
    pub publish_ahead: bool,
    /// Epochs on a PKI's clock ([`Schedule`]) rather than self-timed
    /// (`None`, the default).
    ///
    /// Self-timed, a node numbers its epochs from 0 and turns when the
    /// current one has lived `length` (on the monotonic clock, from its
    /// own start) or taken `rotate_after` packets. With a schedule, epoch
    /// numbers and boundaries are the schedule's, the same on every node
    /// and across restarts (the current epoch is the one the wall clock
    /// names), and `length` and `rotate_after` are not used: a key the
    /// PKI published for an epoch cannot change before the epoch ends
    /// without the PKI knowing, so an epoch that has taken `capacity`
    /// packets refuses the rest ([`Dropped::EpochFull`]) until the
    /// boundary, and a next epoch filled ahead is not replaced. Size
    /// `capacity` for the most packets a period can bring.
    ///
    /// An `Option` beside the self-timed fields rather than a `Timing`
    /// enum holding them: the filter's sizing (`capacity`, `fp_rate`) and
    /// `grace` and `publish_ahead` mean the same under both, and a 0.2
    /// policy written with `..EpochPolicy::default()` gains a schedule by
    /// naming one field.
    pub schedule: Option<Schedule>,
    /// Disk mode: bytes of page cache for each epoch's replay store
    /// (redb's cache of the store's B-tree pages, read and written). This
    /// is most of what disk mode holds in memory per epoch beyond the
    /// Bloom filter ([`filter_bytes`](Self::filter_bytes)): the node's
    /// README gives the figures measured. Per store rather than per
    /// keyring, because the number of live stores changes (previous,
    /// current and each epoch published ahead: at most `2 +` the epochs
    /// ahead) and redb fixes a database's cache when it opens it; a node
    /// that keeps three epochs live holds up to three caches.
    ///
    /// A smaller cache makes each group commit read more of the store's
    /// pages back from the file (the tags are random, so the pages they
    /// land in are too). The default, 32 MiB, measured no dearer per
    /// packet than 0.1's fixed 64 MiB, with the store empty or holding
    /// 900,000 tags, and holds a full epoch in about 40 MiB where 64 MiB
    /// held about 62 MiB; 16 MiB cost about 1 µs more per tag. Memory
    /// mode does not use it. At least 1 MiB (so the B-tree's branch
    /// pages stay cached) and at most 64 GiB (more is a unit mistaken).
    pub store_cache: usize,
}

/// [`EpochPolicy::store_cache`]'s default.
const STORE_CACHE_DEFAULT: usize = 32 << 20;
/// [`EpochPolicy::store_cache`]'s bounds: 1 MiB and 64 GiB.
const STORE_CACHE_MIN: u64 = 1 << 20;
const STORE_CACHE_MAX: u64 = 64 << 30;

impl Default for EpochPolicy {
    /// One million packets per key at most, 900,000 before a new one, a
    /// false-positive rate of 10⁻⁶ (a 3.6 MB filter per epoch), one hour
    /// per key and two minutes of grace.
    fn default() -> Self {
        Self {
            capacity: 1_000_000,
            fp_rate: 1e-6,
            rotate_after: 900_000,
            length: Duration::from_secs(3600),
            grace: Duration::from_secs(120),
            publish_ahead: false,
            schedule: None,
            store_cache: STORE_CACHE_DEFAULT,
        }
    }
}

/// An [`EpochPolicy`] that cannot work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// `capacity` is zero.
    #[error("capacity is zero")]
    ZeroCapacity,
    /// `fp_rate` does not lie strictly between 0 and 1.
    #[error("fp_rate must lie strictly between 0 and 1")]
    FpRate,
    /// `rotate_after` is zero or over `capacity`.
    #[error("rotate_after must lie in 1..=capacity")]
    RotateAfter,
    /// `length` is zero: every call to `turn` would start a new epoch
    /// (a `while let Some(turn)` loop would never end).
    #[error("length is zero: every turn would start a new epoch")]
    ZeroLength,
    /// `length` plus `grace` (as far as an epoch's end is ever reckoned
    /// ahead) overflows this platform's `Instant`.
    #[error("length and grace overflow the clock (Instant): choose durations of years at most")]
    Overflow,
    /// The [`Schedule`]'s period is zero.
    #[error("the schedule's period is zero")]
    ZeroPeriod,
    /// The [`Schedule`]'s epochs ahead are not in 1..=[`MAX_AHEAD`](crate::MAX_AHEAD).
    #[error("the schedule's epochs ahead must lie in 1..=MAX_AHEAD")]
    Ahead,
    /// `store_cache` is under 1 MiB or over 64 GiB.
    #[error("store_cache must lie between 1 MiB and 64 GiB")]
    StoreCache,
}

impl EpochPolicy {
    /// Whether the numbers make sense together.
    ///
    /// # Errors
    /// A zero capacity, a rate outside (0, 1), `rotate_after` zero or
    /// over the capacity, a zero `length`, a `length` and `grace`
    /// that overflow `Instant` (such as `Duration::MAX`), or a
    /// `store_cache` outside 1 MiB..=64 GiB.
    pub fn check(&self) -> Result<(), PolicyError> {
        if self.capacity == 0 {
            return Err(PolicyError::ZeroCapacity);
        }
        if !(self.fp_rate > 0.0 && self.fp_rate < 1.0) {
            return Err(PolicyError::FpRate);
        }
        if self.rotate_after == 0 || self.rotate_after > self.capacity {
            return Err(PolicyError::RotateAfter);
        }
        if self.length.is_zero() {
            return Err(PolicyError::ZeroLength);
        }
        // An epoch's end and its grace's end, reckoned from a turn as far
        // ahead as one more length (with room to spare for the retry).
        let far = Instant::now()
            .checked_add(self.length)
            .and_then(|t| t.checked_add(self.length))
            .and_then(|t| t.checked_add(self.grace))
            .and_then(|t| t.checked_add(Duration::from_secs(3600)));
        if far.is_none() {
            return Err(PolicyError::Overflow);
        }
        if self.schedule.is_some_and(|s| s.period().is_zero()) {
            return Err(PolicyError::ZeroPeriod);
        }
        if self
            .schedule
            .is_some_and(|s| !(1..=crate::MAX_AHEAD).contains(&s.ahead()))
        {
            return Err(PolicyError::Ahead);
        }
        let cache = u64::try_from(self.store_cache).unwrap_or(u64::MAX);
        if !(STORE_CACHE_MIN..=STORE_CACHE_MAX).contains(&cache) {
            return Err(PolicyError::StoreCache);
        }
        Ok(())
    }

    /// How many epochs' keys are made ahead: none without
    /// `publish_ahead`, the schedule's [`Schedule::ahead`] with one, else
    /// one.
    pub(crate) fn ahead(&self) -> usize {
        match (self.publish_ahead, self.schedule) {
            (false, _) => 0,
            (true, Some(s)) => usize::try_from(s.ahead()).unwrap_or(1),
            (true, None) => 1,
        }
    }

    /// Bytes of one epoch's Bloom filter (two live epochs take twice
    /// this).
    pub fn filter_bytes(&self) -> usize {
        ReplayFilter::new(self.capacity, self.fp_rate).memory_bytes()
    }
}

/// A change made by [`Keyring::turn`](crate::Keyring::turn), for the log
/// and the directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[must_use = "a started or replaced epoch's key is to be published"]
pub enum Turn {
    /// A new epoch started, whose public key the node must now publish
    /// (with [`EpochPolicy::publish_ahead`]: it was published already, and
    /// a new next epoch's key is to publish): `took` packets ended epoch
    /// `number - 1` (`by_count`) or its time was up. With an
    /// [`EpochPolicy::schedule`], `number` is the epoch the wall clock
    /// names (the epoch that ended may be numbered lower than `number -
    /// 1` after a step forward) and `by_count` is always `false`.
    Started {
        /// The new epoch.
        number: u64,
        /// Packets the epoch before it took.
        took: usize,
        /// Whether it ended by count rather than by time.
        by_count: bool,
    },
    /// The previous epoch's key and filter are gone (in disk mode, its
    /// key file and store too): its grace ended, or (`early`) a new epoch
    /// was due before it had.
    Retired {
        /// The epoch retired.
        number: u64,
        /// Whether before its grace ended, to make room for a new epoch.
        early: bool,
    },
    /// With [`EpochPolicy::publish_ahead`]: the next epoch had taken
    /// [`EpochPolicy::rotate_after`] packets before it started (anyone
    /// with its published key can make packets that fill it), so it was
    /// replaced at once by a fresh one, numbered above it, whose key the
    /// node must now publish as the next one. The filled epoch's key,
    /// filter and (in disk mode) files are gone; the current epoch is
    /// untouched.
    ///
    /// Replaced rather than turned: turning would make current an epoch
    /// that is (nearly) full and so refuses packets at once, forcing a
    /// second change, and would push the current key, under which honest
    /// packets are in flight, into its grace early. Replacing changes
    /// only a key that is not in use yet; what is lost is the filled
    /// key's packets, refused already. An attacker pays `rotate_after`
    /// packets per replacement, as for a forced rotation.
    Replaced {
        /// The next epoch that was filled, now gone.
        filled: u64,
        /// The new next epoch.
        number: u64,
    },
    /// With a [`Schedule`]: epoch `number`, made ahead, was never
    /// current: the wall clock is past its end (a step forward, or a node
    /// that was down across a boundary). Its key, filter and (in disk
    /// mode) files are gone; it is never made current late.
    Skipped {
        /// The epoch skipped.
        number: u64,
    },
    /// With a [`Schedule`] and [`EpochPolicy::publish_ahead`]: epoch
    /// `number`'s key was made ahead of its start (after a skip left no
    /// next epoch); publish [`Keyring::next`](crate::Keyring::next)'s key.
    Ahead {
        /// The epoch made ahead.
        number: u64,
    },
}

/// What [`Keyring::open`](crate::Keyring::open) found on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
#[must_use = "what a restart resumed, re-made or dropped belongs in the node's log"]
pub struct Resumed {
    /// Epochs resumed (number, tags loaded), oldest first; empty when the
    /// directory held none and epoch 0 was started.
    pub epochs: Vec<(u64, u64)>,
    /// Epochs found past their grace, whose files were deleted.
    pub retired: Vec<u64>,
    /// Epochs made fresh at the start (new key and store): first the
    /// current one when the directory held none (epoch 0, or on a
    /// [`Schedule`] the epoch the clock names), and with [`EpochPolicy::publish_ahead`]
    /// a next epoch when none was found (its key is to be published).
    pub made: Vec<u64>,
    /// Temporary files a killed write left (each a whole private key or
    /// secret), deleted.
    pub temporaries: Vec<std::path::PathBuf>,
    /// What the restart changed or found changed about which key is
    /// current (empty when the epochs resumed as they were).
    pub changes: Vec<ResumeChange>,
}

/// A restart that does not simply resume: which key is current, or which
/// keys are live, differs from when the node stopped. Each is for the
/// node's log and its operator; the keyring has done what is said.
///
/// Said, not refused: each case has one safe way on (none resumes a key
/// without its replay store, nor one the node did not make), and a node
/// that refused would stay down until someone came; the key to publish
/// is [`Keyring::current`](crate::Keyring::current)'s (and
/// [`next`](crate::Keyring::next)'s) as always.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResumeChange {
    /// [`EpochPolicy::publish_ahead`] is on, and was off when the node
    /// stopped: the newest epoch on disk stays current (0.1 took it for
    /// the next one and made the previous key current again), and a next
    /// epoch was made, whose key is to be published. Said only when the
    /// directory held two epochs or more: a single one stays current
    /// either way, and its next epoch is made (in [`Resumed::made`]).
    PublishAheadTurnedOn,
    /// [`EpochPolicy::publish_ahead`] is off, and was on when the node
    /// stopped: the current epoch stays current (0.1 promoted the next
    /// one early), and the next epoch, `dropped`, was retired, files and
    /// all (packets built for its published key fail from now on).
    PublishAheadTurnedOff {
        /// The next epoch that was retired.
        dropped: u64,
    },
    /// With a [`Schedule`]: epoch `number` was made ahead, beyond the
    /// epochs ahead the policy now asks for ([`Schedule::with_ahead`]
    /// lowered, or [`EpochPolicy::publish_ahead`] turned off, since the
    /// node stopped), and was deleted, files and all (packets built for
    /// its published key fail from now on; it is made again, with a new
    /// key, when it comes within reach). Those deleted are the highest
    /// ones beyond what the policy asks for above the epoch current at
    /// the restart: the one that was current when the node stopped, or
    /// the one the clock names if later. That one (and the previous one)
    /// is never deleted, and the ones ahead of it that are kept keep
    /// their keys and order.
    AheadDropped {
        /// The epoch deleted.
        number: u64,
    },
    /// Epoch `number`'s store was found without its key file, and deleted
    /// (a store is no use without its key). A crash while an epoch was
    /// made, or while one was retired, leaves this harmlessly; a key file
    /// deleted by hand does too, and if `number` is above the epoch now
    /// current, the key that was current (or next) is gone and an older
    /// or newer one took its place: publish the current keys.
    KeyMissing {
        /// The epoch whose key file was missing.
        number: u64,
    },
}

/// The replay state of one epoch, behind its lock: the test and the set
/// of a tag happen under one lock, so of two copies of a packet unwrapped
/// at once on two threads, exactly one goes on.
struct Replay {
    filter: ReplayFilter,
    /// Disk mode: tags handed to the journal, with their group, until
    /// that group is known durable (looked up in O(1)).
    unsynced: Pending,
}

/// One epoch: a key and the tags of the packets it unwrapped.
pub(crate) struct Epoch {
    pub(crate) number: u64,
    /// Boxed: an expanded key is 15 KB, and epochs move at every change
    /// (and, unoptimised, are copied through every frame they pass).
    pub(crate) key: Box<PrivateKey>,
    /// When it became the current epoch (for the next epoch, published
    /// ahead: when it was made).
    pub(crate) started: Instant,
    replay: Mutex<Replay>,
    /// Disk mode: the epoch's replay store.
    pub(crate) store: Option<Arc<Store>>,
}

impl Epoch {
    pub(crate) fn new(
        policy: &EpochPolicy,
        number: u64,
        key: PrivateKey,
        started: Instant,
    ) -> Self {
        Self {
            number,
            key: Box::new(key),
            started,
            replay: Mutex::new(Replay {
                filter: ReplayFilter::new(policy.capacity, policy.fp_rate),
                unsynced: Pending::default(),
            }),
            store: None,
        }
    }

    fn replay(&self) -> std::sync::MutexGuard<'_, Replay> {
        self.replay.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tags taken so far.
    pub(crate) fn taken(&self) -> usize {
        self.replay().filter.len()
    }

    /// Put a stored tag back in the filter (on resume).
    pub(crate) fn restore(&self, tag: &ReplayTag) {
        self.replay().filter.insert(tag);
    }

    /// Whether `tag` was seen by this epoch: certainly not if the Bloom
    /// filter says so; otherwise, in disk mode, exactly (tags not yet
    /// durable, then the store; a store that cannot be read counts as
    /// seen, so a failing disk drops packets rather than let a replay by).
    pub(crate) fn seen(&self, tag: &ReplayTag) -> bool {
        Self::seen_in(&self.replay(), self.store.as_deref(), tag)
    }

    fn seen_in(replay: &Replay, store: Option<&Store>, tag: &ReplayTag) -> bool {
        if !replay.filter.contains(tag) {
            return false;
        }
        let Some(store) = store else {
            return true;
        };
        replay.unsynced.contains(tag) || store.contains(tag).unwrap_or(true)
    }

    /// The atomic test-and-set, made only after the packet's MAC
    /// verified: refuse a tag already seen (a copy that won the race) or
    /// an epoch at capacity; otherwise remember the tag and, in disk mode,
    /// queue it for the group commit. Returns its group commit (0 in
    /// memory mode) and the tags the epoch now holds.
    pub(crate) fn remember(
        &self,
        tag: &ReplayTag,
        journal: Option<&Journal>,
    ) -> Result<(u64, usize), Dropped> {
        let mut replay = self.replay();
        if Self::seen_in(&replay, self.store.as_deref(), tag) {
            return Err(Dropped::Replay);
        }
        if replay.filter.is_full() {
            return Err(Dropped::EpochFull);
        }
        replay.filter.insert(tag);
        let taken = replay.filter.len();
        let (Some(store), Some(journal)) = (&self.store, journal) else {
            return Ok((0, taken));
        };
        let group = journal.add(store, *tag);
        let durable = journal.durable();
        replay.unsynced.push(group, tag, durable);
        Ok((group, taken))
    }
}
