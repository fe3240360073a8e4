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

use std::time::{Duration, Instant};

use kemsphinx::{PrivateKey, PublicKey, ReplayTag};

use crate::replay::ReplayFilter;

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
    /// The previous epoch's grace ended: its key and filter are gone.
    Retired {
        /// The epoch retired.
        number: u64,
    },
}

/// The live epochs of one node: the current one and, during its grace,
/// the previous one.
pub struct Epochs {
    policy: EpochPolicy,
    current: Epoch,
    /// The previous epoch and when its grace ends.
    previous: Option<(Epoch, Instant)>,
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
        }
    }

    fn epoch(policy: &EpochPolicy, number: u64, key: PrivateKey, now: Instant) -> Epoch {
        Epoch {
            number,
            key,
            filter: ReplayFilter::new(policy.capacity, policy.fp_rate),
            started: now,
            full_reported: false,
        }
    }

    /// The current epoch.
    pub fn current(&self) -> &Epoch {
        &self.current
    }

    /// The previous epoch, while its key still unwraps.
    pub fn previous(&self) -> Option<&Epoch> {
        self.previous.as_ref().map(|(e, _)| e)
    }

    /// Whether `tag` is in a live epoch's filter: a replay (or, at rate at
    /// most twice the filters' target, a false positive). Checked before
    /// any public-key work.
    pub fn seen(&self, tag: &ReplayTag) -> bool {
        self.current.filter.contains(tag) || self.previous().is_some_and(|e| e.filter.contains(tag))
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
        Ok(())
    }

    /// Retire the previous epoch if its grace is over; start a new epoch
    /// with a key from `new_key` if the current one has taken
    /// `rotate_after` packets or lived `length`. At most one change per
    /// call; call again until `None`.
    pub fn turn(&mut self, now: Instant, new_key: impl FnOnce() -> PrivateKey) -> Option<Turn> {
        if let Some((e, until)) = &self.previous
            && now >= *until
        {
            let number = e.number;
            self.previous = None;
            return Some(Turn::Retired { number });
        }
        let took = self.current.filter.len();
        let by_count = took >= self.policy.rotate_after;
        if !by_count && now.duration_since(self.current.started) < self.policy.length {
            return None;
        }
        let number = self.current.number + 1;
        let next = Self::epoch(&self.policy, number, new_key(), now);
        let old = std::mem::replace(&mut self.current, next);
        self.previous = Some((old, now + self.policy.grace));
        Some(Turn::Started {
            number,
            took,
            by_count,
        })
    }
}
