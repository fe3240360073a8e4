//! Epochs on a PKI's clock: numbered from a fixed start in fixed periods
//! of wall-clock time, the same on every node and across restarts.
//!
//! A self-timed keyring (no [`Schedule`]) numbers its epochs from 0 and
//! runs each for [`EpochPolicy::length`](crate::EpochPolicy::length) from
//! its own start: two nodes never agree on a number or a boundary, and a
//! period measured on the monotonic clock from one rotation to the next
//! drifts from a PKI's (0.1 measured about 2.5 ms per epoch). A PKI in the
//! style of Katzenpost's instead names every epoch by its number, counted
//! from one start in one period, and publishes each node's keys for the
//! coming ones; a node has to turn when the PKI's clock does.
//!
//! With a schedule, epoch `N` is the one whose span is
//! `[start + N·period, start + (N+1)·period)` of `SystemTime`, and each
//! boundary is computed from that formula, never from the time of the last
//! rotation, so nothing accumulates. Katzenpost's `core/epochtime` counts
//! epochs the same way from 2017-06-01 00:00:00 UTC in periods of 20
//! minutes (2 minutes in its "warped" test builds), and its `Now()` gives
//! the epoch, the time since its start and the time till the next one:
//! [`Schedule::katzenpost`] and [`Schedule::at`] give the same three
//! numbers, so epoch `N` here is Katzenpost's epoch `N` when the start is
//! its epoch 0 and the period its period.
//!
//! The wall clock can step (NTP, an operator, a resumed VM). What the
//! keyring does, decided here:
//!
//! - **Forward** past one or more boundaries: the next turn makes current
//!   the epoch the clock now names. Epochs skipped over are never made
//!   current late (their time is over for every client; a key made ahead
//!   for one is retired, [`Turn::Skipped`](crate::Turn::Skipped)); the
//!   epoch that was current keeps its key only while the clock is within
//!   the grace after its own end.
//! - **Back**: no older epoch becomes current again (its key may be
//!   retired, its filter gone: making it current would reopen replays or
//!   need a key the node no longer has). The current epoch stays until the
//!   clock reaches the next boundary again; the previous key's grace ends
//!   at the earlier of the grace on the wall clock and the grace on the
//!   monotonic clock since the rotation, so a step back does not keep an
//!   old key alive.
//! - Before `start`: epoch 0.

use std::time::{Duration, SystemTime};

/// A PKI's epoch clock: epoch `N` spans `[start + N·period, start +
/// (N+1)·period)` of wall-clock time.
///
/// Give it to [`EpochPolicy::schedule`](crate::EpochPolicy::schedule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Schedule {
    start: SystemTime,
    period: Duration,
    ahead: u32,
}

/// The most epochs whose keys a keyring makes ahead
/// ([`Schedule::with_ahead`]): every live key is a trial on a packet for
/// none of them, so each costs a failed unwrap on such packets.
pub const MAX_AHEAD: u32 = 4;

/// Where a moment falls in a [`Schedule`], as Katzenpost's
/// `epochtime.Now()` returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EpochTime {
    /// The epoch number.
    pub epoch: u64,
    /// Time since the epoch began (zero before the schedule's start).
    pub elapsed: Duration,
    /// Time until the next epoch begins.
    pub till: Duration,
}

/// Katzenpost's epoch 0: 2017-06-01 00:00:00 UTC, in seconds since the
/// Unix epoch.
const KATZENPOST_START_UNIX: u64 = 1_496_275_200;

/// Katzenpost's epoch period, 20 minutes.
const KATZENPOST_PERIOD: Duration = Duration::from_secs(20 * 60);

impl Schedule {
    /// Epochs of `period` counted from `start`, with one epoch's key
    /// made ahead (with [`EpochPolicy::publish_ahead`](crate::EpochPolicy::publish_ahead)).
    /// A zero period is refused by
    /// [`EpochPolicy::check`](crate::EpochPolicy::check).
    pub const fn new(start: SystemTime, period: Duration) -> Self {
        Self {
            start,
            period,
            ahead: 1,
        }
    }

    /// With [`EpochPolicy::publish_ahead`](crate::EpochPolicy::publish_ahead):
    /// keep the keys of the next `epochs` epochs made and their packets
    /// accepted (epochs `N+1..=N+epochs` while `N` is current), for a PKI
    /// that publishes a node's keys that many epochs ahead. From 1 (the
    /// default) to [`MAX_AHEAD`]; other values are refused by
    /// [`EpochPolicy::check`](crate::EpochPolicy::check).
    #[must_use]
    pub const fn with_ahead(self, epochs: u32) -> Self {
        Self {
            ahead: epochs,
            ..self
        }
    }

    /// How many epochs' keys are made ahead ([`with_ahead`](Self::with_ahead)).
    pub const fn ahead(&self) -> u32 {
        self.ahead
    }

    /// Katzenpost's clock (`core/epochtime`): epoch 0 began 2017-06-01
    /// 00:00:00 UTC, each lasts 20 minutes.
    pub fn katzenpost() -> Self {
        Self::new(
            SystemTime::UNIX_EPOCH + Duration::from_secs(KATZENPOST_START_UNIX),
            KATZENPOST_PERIOD,
        )
    }

    /// When epoch 0 begins.
    pub const fn start(&self) -> SystemTime {
        self.start
    }

    /// How long each epoch lasts.
    pub const fn period(&self) -> Duration {
        self.period
    }

    /// The epoch `now` falls in (0 before the start; saturates at
    /// `u64::MAX`).
    pub fn epoch(&self, now: SystemTime) -> u64 {
        let Ok(since) = now.duration_since(self.start) else {
            return 0;
        };
        let period = self.period.as_nanos().max(1);
        u64::try_from(since.as_nanos() / period).unwrap_or(u64::MAX)
    }

    /// When epoch `number` begins; `None` past what `SystemTime` holds.
    pub fn begins(&self, number: u64) -> Option<SystemTime> {
        let nanos = self.period.as_nanos().checked_mul(u128::from(number))?;
        let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
        let sub = u32::try_from(nanos % 1_000_000_000).ok()?;
        self.start.checked_add(Duration::new(secs, sub))
    }

    /// The epoch `now` falls in, the time since it began and the time
    /// till the next (Katzenpost's `Now()`, at `now`).
    pub fn at(&self, now: SystemTime) -> EpochTime {
        let epoch = self.epoch(now);
        let began = self.begins(epoch).unwrap_or(self.start);
        let elapsed = now.duration_since(began).unwrap_or_default();
        let till = self
            .begins(epoch.saturating_add(1))
            .and_then(|next| next.duration_since(now).ok())
            .unwrap_or(Duration::MAX);
        EpochTime {
            epoch,
            elapsed,
            till,
        }
    }

    /// Whether epoch `number`'s key is past its grace at `now`: the clock
    /// is `grace` or more past the end of the epoch.
    pub(crate) fn grace_over(&self, number: u64, grace: Duration, now: SystemTime) -> bool {
        self.grace_ends(number, grace).is_some_and(|end| now >= end)
    }

    /// When epoch `number`'s key stops unwrapping: `grace` after its end.
    pub(crate) fn grace_ends(&self, number: u64, grace: Duration) -> Option<SystemTime> {
        self.begins(number.saturating_add(1))?.checked_add(grace)
    }

    /// How long from `now` until the keyring has something to do: the
    /// next boundary after `current`, or the end of `previous`'s grace,
    /// whichever is first (zero if one has passed).
    pub(crate) fn till_turn(
        &self,
        current: u64,
        previous: Option<u64>,
        grace: Duration,
        now: SystemTime,
    ) -> Duration {
        let boundary = self.begins(current.saturating_add(1));
        let grace_end = previous.and_then(|p| self.grace_ends(p, grace));
        [boundary, grace_end]
            .into_iter()
            .flatten()
            .map(|t| t.duration_since(now).unwrap_or_default())
            .min()
            .unwrap_or(Duration::MAX)
    }
}
