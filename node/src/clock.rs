//! The keyring's one monotonic clock, for every age and every grace.
//!
//! [`Keyring::turn`](crate::Keyring::turn) is told the time by its caller
//! (a node's housekeeping loop, a test, a simulation), and may be told a
//! time ahead of `Instant::now()`. An epoch's age and the previous key's
//! grace must be measured on one clock: measured partly on the caller's
//! (the time compared with an epoch's start) and partly on the real one
//! (the time an epoch starts), a caller ahead of the real clock saw every
//! new epoch already past its length, and every call turned. So the
//! keyring keeps its own clock: the caller's time, or the real clock plus
//! the furthest the caller has ever been ahead of it, whichever is later.
//! A caller ahead moves it forward once (a turn told a day ahead turns
//! once, as asked); from then on it runs with the real clock (the grace
//! that starts then ends a grace later in real time, not a day later),
//! and never back (a caller behind the real clock, or behind its own
//! earlier calls, changes nothing).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The keyring's clock: `Instant::now()` plus the largest skew a caller
/// was ever ahead of it.
#[derive(Debug, Default)]
pub(crate) struct Clock {
    skew: Mutex<Duration>,
}

impl Clock {
    /// The clock's time when the caller says it is `told`: the later of
    /// `told` and the real clock plus the skew seen so far; a `told`
    /// further ahead than ever before becomes the new skew.
    pub(crate) fn at(&self, told: Instant) -> Instant {
        let real = Instant::now();
        let mut skew = self.skew.lock().unwrap_or_else(PoisonError::into_inner);
        *skew = (*skew).max(told.saturating_duration_since(real));
        // Past what `Instant` holds only when `told` itself is (nearly):
        // then `told` is the time.
        real.checked_add(*skew).map_or(told, |t| t.max(told))
    }

    /// The clock's time now, as no caller told it: for ages reported
    /// between turns ([`Keyring::health`](crate::Keyring::health)).
    pub(crate) fn now(&self) -> Instant {
        let real = Instant::now();
        let skew = *self.skew.lock().unwrap_or_else(PoisonError::into_inner);
        real.checked_add(skew).unwrap_or(real)
    }
}
