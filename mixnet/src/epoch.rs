//! Key epochs: a node's mix key and its replay filter begin and end
//! together.
//!
//! A replay can only be recognised by the key that unwraps it, and a
//! packet for a retired key no longer unwraps at all, so a filter need
//! only remember the tags of its own key's packets. A node therefore
//! starts a new epoch (fresh key, published; fresh filter) when the
//! current one has lived [`EpochPolicy::length`], or earlier when it has
//! taken [`EpochPolicy::rotate_after`] packets. It keeps the previous
//! epoch's key and filter for [`EpochPolicy::grace`], for packets already
//! built for the old key; that epoch takes at most its filter's capacity
//! and then refuses its key's packets (so no filter ever holds more tags
//! than it was sized for, and the false-positive rate never exceeds its
//! target). Anyone with a node's public key can make packets that pass its
//! MAC, so this is what bounds what they can do to the filter: force
//! early key changes, not make honest packets look like replays.
//!
//! In disk mode ([`Epochs::open`]) each epoch also has a replay store
//! ([`crate::store`]) and a key file ([`crate::persist`]): a tag the Bloom
//! filter may have seen is looked up exactly (in the tags not yet durable,
//! then in the store), each new tag joins a group commit
//! ([`crate::journal`]), epochs found on disk are resumed on start, and a
//! retired epoch's key file and store are deleted.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use kemsphinx::{PrivateKey, PublicKey, ReplayTag};

use crate::journal::Journal;
use crate::persist::PersistDir;
use crate::replay::ReplayFilter;
use crate::store::Store;

/// After a failed attempt to write a new epoch's files, the next one.
const CREATE_RETRY: Duration = Duration::from_secs(1);

/// How a node's epochs turn over.
#[derive(Clone, Debug)]
pub struct EpochPolicy {
    /// Tags each epoch's filter is sized for.
    pub capacity: usize,
    /// The filter's false-positive rate at `capacity`.
    pub fp_rate: f64,
    /// Packets after which a new epoch starts (at most `capacity`; the
    /// difference is room for the old key's packets during the grace).
    pub rotate_after: usize,
    /// A new epoch starts at the latest after this long.
    pub length: Duration,
    /// How long the previous epoch's key still unwraps.
    pub grace: Duration,
}

/// One epoch: a key and the tags of the packets it unwrapped.
pub struct Epoch {
    /// Counts up from 0, per node.
    pub number: u64,
    key: PrivateKey,
    filter: ReplayFilter,
    started: Instant,
    /// Whether its refusal at capacity was reported.
    full_reported: bool,
    /// Disk mode: the epoch's replay store.
    store: Option<Arc<Store>>,
    /// Disk mode: tags handed to the journal, with their group, until
    /// that group is known durable.
    unsynced: Vec<(u64, ReplayTag)>,
}

impl Epoch {
    /// The epoch's public key.
    pub fn public_key(&self) -> &PublicKey {
        self.key.public_key()
    }

    /// The epoch's replay filter.
    pub fn filter(&self) -> &ReplayFilter {
        &self.filter
    }

    /// Whether `tag` was seen by this epoch: certainly not if the Bloom
    /// filter says so; otherwise, in disk mode, exactly (tags not yet
    /// durable, then the store; a store that cannot be read counts as
    /// seen, so a failing disk drops packets rather than let a replay by).
    fn seen(&self, tag: &ReplayTag) -> bool {
        if !self.filter.contains(tag) {
            return false;
        }
        let Some(store) = &self.store else {
            return true;
        };
        self.unsynced.iter().any(|(_, t)| t == tag) || store.contains(tag).unwrap_or(true)
    }
}

/// What [`Epochs::open`] found on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resumed {
    /// Epochs resumed (number, tags loaded), oldest first; empty when
    /// the directory held none and epoch 0 was started.
    pub epochs: Vec<(u64, u64)>,
    /// Epochs found past their grace, whose files were deleted.
    pub retired: Vec<u64>,
}

/// Which live epoch's key unwrapped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The current key.
    Current,
    /// The previous key, during its grace.
    Previous,
}

/// What [`Epochs::remember`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full {
    /// The epoch whose filter is full.
    pub number: u64,
    /// Whether this is the first refusal for that epoch (to log once).
    pub first: bool,
}

/// A change made by [`Epochs::turn`], for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// A new epoch started: `took` packets ended epoch `number - 1`
    /// (`by_count`) or its time was up.
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
}

/// The live epochs of one node: the current one and, during its grace,
/// the previous one.
pub struct Epochs {
    policy: EpochPolicy,
    current: Epoch,
    /// The previous epoch and when its grace ends.
    previous: Option<(Epoch, Instant)>,
    /// Disk mode: where the epochs live, and the group commit.
    disk: Option<(PersistDir, Arc<Journal>)>,
    /// Disk mode: no new epoch's files before this (after a failure).
    retry_at: Option<Instant>,
    /// Disk mode: the last failure to write or delete an epoch's files,
    /// until taken for the log.
    disk_error: Option<String>,
}

impl Epochs {
    /// Start epoch 0 with `key`.
    pub fn new(policy: EpochPolicy, key: PrivateKey, now: Instant) -> Self {
        assert!(policy.rotate_after > 0 && policy.rotate_after <= policy.capacity);
        let current = Self::epoch(&policy, 0, key, now);
        Self {
            policy,
            current,
            previous: None,
            disk: None,
            retry_at: None,
            disk_error: None,
        }
    }

    /// Disk mode: resume the epochs stored in `dir` (the newest as the
    /// current one, the one before it while its grace lasts; older ones
    /// are deleted), each Bloom filter rebuilt from its store; or, if
    /// there are none, start epoch 0 with `new_key` and store it.
    ///
    /// # Errors
    /// A key or store that does not load (each error names its file), or
    /// epoch 0's files cannot be written.
    pub fn open(
        policy: EpochPolicy,
        dir: PersistDir,
        journal: Arc<Journal>,
        now: Instant,
        new_key: impl FnOnce() -> PrivateKey,
    ) -> io::Result<(Self, Resumed)> {
        assert!(policy.rotate_after > 0 && policy.rotate_after <= policy.capacity);
        let mut found = dir.load()?;
        let mut resumed = Resumed::default();
        let wall = SystemTime::now();
        let instant_of = |t: SystemTime| {
            let age = wall.duration_since(t).unwrap_or(Duration::ZERO);
            now.checked_sub(age).unwrap_or(now)
        };
        let mut load = |f: crate::persist::Found| -> io::Result<Epoch> {
            let mut e = Self::epoch(&policy, f.number, f.key, instant_of(f.store.started()));
            let n = f.store.for_each(|tag| {
                e.filter.insert(tag);
            })?;
            resumed.epochs.push((f.number, n));
            e.store = Some(Arc::new(f.store));
            Ok(e)
        };
        let (current, previous) = match found.pop() {
            None => {
                let key = new_key();
                let store = dir.create(0, &key, wall)?;
                let mut e = Self::epoch(&policy, 0, key, now);
                e.store = Some(Arc::new(store));
                (e, None)
            }
            Some(newest) => {
                let older = found.pop();
                let current = load(newest)?;
                let until = current.started + policy.grace;
                let previous = match older {
                    Some(f) if now < until => Some((load(f)?, until)),
                    Some(f) => {
                        resumed.retired.push(f.number);
                        None
                    }
                    None => None,
                };
                (current, previous)
            }
        };
        for f in found {
            resumed.retired.push(f.number);
        }
        for &number in &resumed.retired {
            dir.retire(number)?;
        }
        let epochs = Self {
            policy,
            current,
            previous,
            disk: Some((dir, journal)),
            retry_at: None,
            disk_error: None,
        };
        Ok((epochs, resumed))
    }

    fn epoch(policy: &EpochPolicy, number: u64, key: PrivateKey, now: Instant) -> Epoch {
        Epoch {
            number,
            key,
            filter: ReplayFilter::new(policy.capacity, policy.fp_rate),
            started: now,
            full_reported: false,
            store: None,
            unsynced: Vec::new(),
        }
    }

    /// Disk mode's group commit, if in disk mode.
    pub fn journal(&self) -> Option<&Arc<Journal>> {
        self.disk.as_ref().map(|(_, j)| j)
    }

    /// The last failure to write or delete an epoch's files, once.
    pub fn take_disk_error(&mut self) -> Option<String> {
        self.disk_error.take()
    }

    /// The current epoch.
    pub fn current(&self) -> &Epoch {
        &self.current
    }

    /// The previous epoch, while its key still unwraps.
    pub fn previous(&self) -> Option<&Epoch> {
        self.previous.as_ref().map(|(e, _)| e)
    }

    /// Whether `tag` was seen by a live epoch: a replay (or, in memory
    /// mode only, at rate at most twice the filters' target, a Bloom false
    /// positive; disk mode looks a possible hit up exactly). Checked before
    /// any public-key work.
    pub fn seen(&self, tag: &ReplayTag) -> bool {
        self.current.seen(tag) || self.previous().is_some_and(|e| e.seen(tag))
    }

    /// The keys to try on a packet, in order: the current one, then
    /// (during its grace) the previous one. A packet for the other key
    /// fails the first try on its MAC, which leaves it unchanged (the
    /// library's guarantee), so the second try sees it as it arrived.
    pub fn keys(&self) -> impl Iterator<Item = (Which, &PrivateKey)> {
        let previous = self.previous().map(|e| (Which::Previous, &e.key));
        std::iter::once((Which::Current, &self.current.key)).chain(previous)
    }

    /// Remember `tag` in the filter of the epoch whose key unwrapped its
    /// packet; refuse if that filter already holds its capacity.
    ///
    /// # Errors
    /// [`Full`] when the epoch takes no more packets.
    pub fn remember(&mut self, which: Which, tag: &ReplayTag) -> Result<(), Full> {
        self.remember_durably(which, tag).map(|_| ())
    }

    /// [`remember`](Self::remember), and in disk mode hand the tag to the
    /// group commit. Returns the tag's group (0 in memory mode): a packet
    /// may leave once [`Journal::durable`] has reached it.
    ///
    /// # Errors
    /// [`Full`] when the epoch takes no more packets.
    pub fn remember_durably(&mut self, which: Which, tag: &ReplayTag) -> Result<u64, Full> {
        let epoch = match (which, &mut self.previous) {
            (Which::Previous, Some((e, _))) => e,
            _ => &mut self.current,
        };
        if epoch.filter.is_full() {
            let first = !epoch.full_reported;
            epoch.full_reported = true;
            return Err(Full {
                number: epoch.number,
                first,
            });
        }
        epoch.filter.insert(tag);
        let (Some(store), Some((_, journal))) = (&epoch.store, &self.disk) else {
            return Ok(0);
        };
        let group = journal.add(store, *tag);
        let durable = journal.durable();
        if epoch.unsynced.first().is_some_and(|(g, _)| *g <= durable) {
            epoch.unsynced.retain(|(g, _)| *g > durable);
        }
        epoch.unsynced.push((group, *tag));
        Ok(group)
    }

    /// Drop the previous epoch; in disk mode delete its key file, then its
    /// store (a failure is kept for the log).
    fn retire_previous(&mut self) {
        let Some((e, _)) = self.previous.take() else {
            return;
        };
        if let Some((dir, _)) = &self.disk
            && let Err(err) = dir.retire(e.number)
        {
            self.disk_error = Some(format!("retiring epoch {}: {err}", e.number));
        }
    }

    /// Retire the previous epoch if its grace is over; start a new epoch
    /// with a key from `new_key` if the current one has taken
    /// `rotate_after` packets or lived `length`. At most one change per
    /// call; call again until `None`.
    ///
    /// A new epoch due while the previous one is still in its grace (a
    /// second early change, which anyone with the public key can force)
    /// retires that one first, early: only two epochs are ever live, and
    /// in disk mode its key file and store go with it.
    pub fn turn(&mut self, now: Instant, new_key: impl FnOnce() -> PrivateKey) -> Option<Turn> {
        if let Some((e, until)) = &self.previous
            && now >= *until
        {
            let number = e.number;
            self.retire_previous();
            return Some(Turn::Retired {
                number,
                early: false,
            });
        }
        let took = self.current.filter.len();
        let by_count = took >= self.policy.rotate_after;
        if !by_count && now.duration_since(self.current.started) < self.policy.length {
            return None;
        }
        if self.retry_at.is_some_and(|t| now < t) {
            return None;
        }
        // No new epoch (new files) while the store cannot be written: it
        // would fail the same way, and the current epoch takes no new
        // packets meanwhile anyway.
        if self.journal().is_some_and(|j| j.failing()) {
            return None;
        }
        if let Some((e, _)) = &self.previous {
            let number = e.number;
            self.retire_previous();
            return Some(Turn::Retired {
                number,
                early: true,
            });
        }
        let number = self.current.number + 1;
        let mut next = Self::epoch(&self.policy, number, new_key(), now);
        if let Some((dir, _)) = &self.disk {
            match dir.create(number, &next.key, SystemTime::now()) {
                Ok(store) => next.store = Some(Arc::new(store)),
                Err(e) => {
                    self.retry_at = Some(now + CREATE_RETRY);
                    self.disk_error = Some(format!("starting epoch {number}: {e}"));
                    return None;
                }
            }
        }
        let old = std::mem::replace(&mut self.current, next);
        self.previous = Some((old, now + self.policy.grace));
        Some(Turn::Started {
            number,
            took,
            by_count,
        })
    }
}
