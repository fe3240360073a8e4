//! The live epochs and their rotation: which epochs' keys unwrap now
//! (current, previous during its grace, next and further ones made
//! ahead), when they change, and what a change does.
//!
//! [`Rotation`] owns them: the live epochs behind the lock that
//! [`Keyring::receive`](crate::Keyring::receive) reads and a change
//! writes for a moment; the plan of each call to
//! [`Keyring::turn_at`](crate::Keyring::turn_at) (retire, start, skip,
//! make ahead, replace; [`crate::epochs`] says why each); what a turn
//! keeps between calls (a retry after a failed creation, epochs whose
//! files could not be deleted yet); the keyring's one clock
//! ([`crate::clock`]); and the wake-up of the housekeeping thread when an
//! epoch fills. It decides; where an epoch's files are made or deleted
//! is the [`Backing`]'s ([`crate::disk`]), handed to each turn.

use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

use getrandom::SysRng;
use kemsphinx::{PrivateKey, PublicKey};
use rand_core::UnwrapErr;

use crate::clock::Clock;
use crate::disk::Backing;
use crate::epochs::{Epoch, EpochPolicy, Turn};
use crate::schedule::Schedule;
use crate::store::Store;

/// After a failed attempt to write a new epoch's files, the next one.
const CREATE_RETRY: Duration = Duration::from_secs(1);

/// One live epoch, as a node publishes and monitors it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EpochStatus {
    /// Self-timed: counts up from 0, per node (and across restarts in
    /// disk mode); a number may be skipped ([`Turn::Replaced`]). With an
    /// [`EpochPolicy::schedule`]: the schedule's number, the same on every
    /// node ([`Schedule::epoch`]); numbers are skipped after a clock step
    /// forward or a restart across boundaries ([`Turn::Skipped`]).
    pub number: u64,
    /// The epoch's public key: what the node publishes for it.
    pub public_key: PublicKey,
    /// Packets it has taken (filter inserts).
    pub taken: usize,
}

/// The live epochs: what every datagram is tried against (under the
/// read lock), and what a turn changes (under the write lock).
pub(crate) struct Live {
    pub(crate) current: Epoch,
    /// The previous epoch and when its grace ends.
    pub(crate) previous: Option<(Epoch, Instant)>,
    /// With [`EpochPolicy::publish_ahead`]: the next epoch, its key
    /// published ahead.
    pub(crate) next: Option<Epoch>,
    /// With a [`Schedule`] made ahead more than one epoch
    /// ([`Schedule::with_ahead`]): the epochs after `next`, in order.
    pub(crate) further: Vec<Epoch>,
}

impl Live {
    /// The live epochs: current, previous, next, further.
    pub(crate) fn epochs(&self) -> impl Iterator<Item = &Epoch> {
        std::iter::once(&self.current)
            .chain(self.previous.as_ref().map(|(e, _)| e))
            .chain(self.next.as_ref())
            .chain(self.further.iter())
    }
}

/// What [`Keyring::turn`](crate::Keyring::turn) keeps between calls; its lock also keeps two
/// calls from running at once.
#[derive(Default)]
struct Turning {
    /// Disk mode: no new epoch's files before this (after a failure).
    retry_at: Option<Instant>,
    /// Disk mode: retired epochs whose files could not be deleted yet,
    /// with their stores (whose queued tags are dropped once the key file
    /// is gone). No new epoch starts until they are gone, so there are
    /// never more than two epochs' keys on disk (three with
    /// `publish_ahead`).
    undeleted: Vec<(u64, Option<Arc<Store>>)>,
}

/// What a call to [`Keyring::turn`](crate::Keyring::turn) is to do,
/// decided under the read lock.
enum Plan {
    Retire {
        number: u64,
        early: bool,
    },
    Start {
        took: usize,
        by_count: bool,
        /// With a schedule: the epoch the clock names.
        target: Option<u64>,
    },
    /// With a schedule: the next epoch's time is over before it started.
    Skip {
        number: u64,
    },
    /// With a schedule: no next epoch (after a skip); make it.
    Ahead {
        number: u64,
    },
    /// The next epoch (published ahead) was filled: replace it.
    Replace {
        filled: u64,
    },
}

/// A fresh key from the operating system's generator.
pub(crate) fn new_key() -> PrivateKey {
    PrivateKey::generate(&mut UnwrapErr(SysRng))
}

/// A keyring's live epochs and their rotation.
pub(crate) struct Rotation {
    policy: EpochPolicy,
    live: RwLock<Live>,
    turning: Mutex<Turning>,
    /// Set when the current epoch reaches `rotate_after`: wakes
    /// [`wait`](Self::wait).
    turn_due: Mutex<bool>,
    turn_wake: Condvar,
    /// The one clock of every epoch's age and every grace.
    clock: Clock,
}

impl Rotation {
    /// `live` to run by `policy` (checked already).
    pub(crate) fn new(policy: EpochPolicy, live: Live) -> Self {
        Self {
            policy,
            live: RwLock::new(live),
            turning: Mutex::new(Turning::default()),
            turn_due: Mutex::new(false),
            turn_wake: Condvar::new(),
            clock: Clock::default(),
        }
    }

    /// The policy it runs.
    pub(crate) fn policy(&self) -> &EpochPolicy {
        &self.policy
    }

    /// The live epochs, read-locked.
    pub(crate) fn live(&self) -> std::sync::RwLockReadGuard<'_, Live> {
        self.live.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The keyring's clock now: what every live epoch's age is measured
    /// against.
    pub(crate) fn clock_now(&self) -> Instant {
        self.clock.now()
    }

    /// [`Keyring::each_live`](crate::Keyring::each_live).
    pub(crate) fn each_live(&self, mut f: impl FnMut(crate::health::Role, u64, usize, Instant)) {
        use crate::health::Role;
        let live = self.live();
        f(
            Role::Current,
            live.current.number,
            live.current.taken(),
            live.current.started,
        );
        if let Some((e, _)) = &live.previous {
            f(Role::Previous, e.number, e.taken(), e.started);
        }
        if let Some(e) = &live.next {
            f(Role::Next, e.number, e.taken(), e.started);
        }
    }

    /// Wake the housekeeping thread's [`wait`](Self::wait): a turn is due.
    pub(crate) fn wake(&self) {
        *self.turn_due.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.turn_wake.notify_all();
    }

    /// [`Keyring::wait_for_turn`](crate::Keyring::wait_for_turn).
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let timeout = self.policy.schedule.map_or(timeout, |s| {
            let till = {
                let live = self.live();
                s.till_turn(
                    live.current.number,
                    live.previous.as_ref().map(|(e, _)| e.number),
                    self.policy.grace,
                    SystemTime::now(),
                )
            };
            // Zero: a change is due but `turn` could not make it (the
            // disk): wait the timeout before the next try.
            if till.is_zero() {
                timeout
            } else {
                timeout.min(till)
            }
        });
        let due = self.turn_due.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut due, _) = self
            .turn_wake
            .wait_timeout_while(due, timeout, |due| !*due)
            .unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut *due)
    }

    /// [`Keyring::turn_at`](crate::Keyring::turn_at), its files made and
    /// deleted through `backing`.
    pub(crate) fn turn_at(
        &self,
        backing: &Backing,
        now: Instant,
        wall: SystemTime,
    ) -> Option<Turn> {
        let mut turning = self.turning.lock().unwrap_or_else(PoisonError::into_inner);
        // Ages and graces on one clock: the caller's `now`, or later.
        let now = self.clock.at(now);
        self.delete_undeleted(backing, &mut turning);
        match self.plan(backing, now, wall, &turning)? {
            Plan::Retire { number, early } => {
                let retired = {
                    let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
                    live.previous.take()
                };
                let store = retired.and_then(|(e, _)| e.store);
                self.delete(backing, &mut turning, number, store);
                Some(Turn::Retired { number, early })
            }
            Plan::Start {
                took,
                by_count,
                target,
            } => {
                // The epoch that starts is the next one (published ahead)
                // or a fresh one; when the next one starts, a new next one
                // is made. With a schedule, the next one starts only if
                // it is the epoch the clock names.
                let (next_starts, top) = {
                    let live = self.live();
                    let starts = live
                        .next
                        .as_ref()
                        .is_some_and(|n| target.is_none_or(|t| n.number == t));
                    (starts, self.top_number(&live))
                };
                let number = match target {
                    Some(t) if !next_starts => t,
                    _ => top.saturating_add(1),
                };
                let fresh =
                    self.fresh_epoch(backing, &mut turning, (now, wall), number, next_starts)?;
                // On the keyring's clock: told a time ahead, the new
                // epoch starts then, and its age and the previous key's
                // grace run on with the real clock from there.
                let at = now;
                let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
                let (mut starting, next) = match live.next.take() {
                    Some(next) if next_starts => (next, Some(fresh)),
                    other => (fresh, other),
                };
                live.next = next;
                // Epochs made further ahead move up; the fresh one goes last.
                if next_starts && !live.further.is_empty() {
                    let fresh = live.next.take();
                    live.further.extend(fresh);
                    live.next = Some(live.further.remove(0));
                }
                starting.started = at;
                let number = starting.number;
                let old = std::mem::replace(&mut live.current, starting);
                // The policy check keeps this from overflowing.
                live.previous = Some((old, at.checked_add(self.policy.grace).unwrap_or(at)));
                drop(live);
                Some(Turn::Started {
                    number,
                    took,
                    by_count,
                })
            }
            Plan::Replace { filled } => {
                let number = self.top_number(&self.live()).saturating_add(1);
                let fresh = self.fresh_epoch(backing, &mut turning, (now, wall), number, true)?;
                let number = fresh.number;
                let old = {
                    let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
                    live.next.replace(fresh)
                };
                let store = old.and_then(|e| e.store);
                self.delete(backing, &mut turning, filled, store);
                Some(Turn::Replaced { filled, number })
            }
            Plan::Skip { number } => {
                let old = {
                    let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
                    let later = (!live.further.is_empty()).then(|| live.further.remove(0));
                    std::mem::replace(&mut live.next, later)
                };
                self.delete(backing, &mut turning, number, old.and_then(|e| e.store));
                Some(Turn::Skipped { number })
            }
            Plan::Ahead { number } => {
                let fresh = self.fresh_epoch(backing, &mut turning, (now, wall), number, true)?;
                let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
                match live.next {
                    None => live.next = Some(fresh),
                    Some(_) => live.further.push(fresh),
                }
                Some(Turn::Ahead { number })
            }
        }
    }

    /// The highest live epoch number.
    fn top_number(&self, live: &Live) -> u64 {
        live.epochs().map(|e| e.number).max().unwrap_or(0)
    }

    /// A new epoch `number` (above every live one), with a fresh key (in
    /// disk mode, its files made, marked as a next epoch if `ahead`);
    /// `None` if they could not be (tried again after [`CREATE_RETRY`]).
    fn fresh_epoch(
        &self,
        backing: &Backing,
        turning: &mut Turning,
        (now, wall): (Instant, SystemTime),
        number: u64,
        ahead: bool,
    ) -> Option<Epoch> {
        match backing.fresh(&self.policy, number, new_key(), (now, wall), ahead) {
            Ok(fresh) => Some(fresh),
            Err(e) => {
                turning.retry_at = now.checked_add(CREATE_RETRY);
                backing.set_error(format!("starting epoch {number}: {e}"));
                None
            }
        }
    }

    /// What [`turn_at`](Self::turn_at) is to do now, if anything.
    fn plan(
        &self,
        backing: &Backing,
        now: Instant,
        wall: SystemTime,
        turning: &Turning,
    ) -> Option<Plan> {
        let live = self.live();
        let schedule = self.policy.schedule;
        if let Some((e, until)) = &live.previous
            && (now >= *until
                || schedule.is_some_and(|s| s.grace_over(e.number, self.policy.grace, wall)))
        {
            return Some(Plan::Retire {
                number: e.number,
                early: false,
            });
        }
        let held_back = turning.retry_at.is_some_and(|t| now < t)
            || !turning.undeleted.is_empty()
            || backing.failing();
        if let Some(schedule) = schedule {
            return self.plan_scheduled(&live, schedule, wall, held_back);
        }
        if let Some(next) = &live.next
            && next.taken() >= self.policy.rotate_after
            && !held_back
        {
            return Some(Plan::Replace {
                filled: next.number,
            });
        }
        let took = live.current.taken();
        let by_count = took >= self.policy.rotate_after;
        if !by_count && now.duration_since(live.current.started) < self.policy.length {
            return None;
        }
        if held_back {
            return None;
        }
        if let Some((e, _)) = &live.previous {
            return Some(Plan::Retire {
                number: e.number,
                early: true,
            });
        }
        Some(Plan::Start {
            took,
            by_count,
            target: None,
        })
    }

    /// [`plan`](Self::plan) with a schedule, once the previous epoch's
    /// grace is dealt with: a stale next epoch skipped, then the epoch the
    /// clock names started (never one older than the current), then a
    /// missing next epoch made. Never by fill: a published key stays for
    /// its whole epoch.
    fn plan_scheduled(
        &self,
        live: &Live,
        schedule: Schedule,
        wall: SystemTime,
        held_back: bool,
    ) -> Option<Plan> {
        if held_back {
            return None;
        }
        let target = schedule.epoch(wall);
        if let Some(next) = &live.next
            && next.number < target
        {
            return Some(Plan::Skip {
                number: next.number,
            });
        }
        if target > live.current.number {
            if let Some((e, _)) = &live.previous {
                return Some(Plan::Retire {
                    number: e.number,
                    early: true,
                });
            }
            return Some(Plan::Start {
                took: live.current.taken(),
                by_count: false,
                target: Some(target),
            });
        }
        let made = usize::from(live.next.is_some()) + live.further.len();
        if made < self.policy.ahead() {
            return Some(Plan::Ahead {
                number: self.top_number(live).saturating_add(1),
            });
        }
        None
    }

    /// Try again to delete the files of epochs retired earlier.
    fn delete_undeleted(&self, backing: &Backing, turning: &mut Turning) {
        for (number, store) in std::mem::take(&mut turning.undeleted) {
            self.delete(backing, turning, number, store);
        }
    }

    /// Delete retired epoch `number`'s files (disk mode); once its key
    /// file is durably gone, its store's queued tags are dropped. What
    /// fails is kept to try again.
    fn delete(
        &self,
        backing: &Backing,
        turning: &mut Turning,
        number: u64,
        store: Option<Arc<Store>>,
    ) {
        if let Err(err) = backing.retire(number, store.as_ref()) {
            backing.set_error(format!("retiring epoch {number}: {err}"));
            turning.undeleted.push((number, store));
        }
    }
}

pub(crate) fn status(e: &Epoch) -> EpochStatus {
    EpochStatus {
        number: e.number,
        public_key: e.key.public_key().clone(),
        taken: e.taken(),
    }
}
