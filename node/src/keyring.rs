//! The keyring: a node's live key epochs and their replay filters, and the
//! one call a node makes per datagram.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use getrandom::SysRng;
use kemsphinx::{Action, PrivateKey, PublicKey, packet_mut, replay_tag, unwrap_any};
use rand_core::UnwrapErr;

use crate::dir::{Found, PersistDir};
use crate::dropped::DropCounters;
use crate::epochs::{Epoch, EpochPolicy, ResumeChange, Resumed, Turn};
use crate::error::OpenError;
use crate::journal::{Journal, NotDurable, Ticket};
use crate::schedule::{MAX_AHEAD, Schedule};
use crate::store::Store;
use crate::{DropCounts, Dropped};

/// After a failed attempt to write a new epoch's files, the next one.
const CREATE_RETRY: Duration = Duration::from_secs(1);

/// A packet the keyring let through: unwrapped in place, its tag
/// remembered in its epoch's filter.
#[derive(Debug)]
#[non_exhaustive]
#[must_use = "the action is the packet's next step, and its ticket must be durable before it leaves"]
pub struct Accepted<'a> {
    /// The epoch whose key unwrapped it.
    pub epoch: u64,
    /// Whether that was the previous epoch's key, during its grace.
    pub previous_key: bool,
    /// What to do with it (a forward packet borrows the datagram, now the
    /// next hop's packet).
    pub action: Action<'a>,
    /// Nothing of this packet (nor a reply made from it) may leave the
    /// node before this is durable ([`Keyring::wait_durable`]); in
    /// memory mode it is at once.
    pub ticket: Ticket,
}

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

struct Live {
    current: Epoch,
    /// The previous epoch and when its grace ends.
    previous: Option<(Epoch, Instant)>,
    /// With [`EpochPolicy::publish_ahead`]: the next epoch, its key
    /// published ahead.
    next: Option<Epoch>,
    /// With a [`Schedule`] made ahead more than one epoch
    /// ([`Schedule::with_ahead`]): the epochs after `next`, in order.
    further: Vec<Epoch>,
}

impl Live {
    /// The live epochs: current, previous, next, further.
    fn epochs(&self) -> impl Iterator<Item = &Epoch> {
        std::iter::once(&self.current)
            .chain(self.previous.as_ref().map(|(e, _)| e))
            .chain(self.next.as_ref())
            .chain(self.further.iter())
    }
}

/// What [`Keyring::turn`] keeps between calls; its lock also keeps two
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

/// What a call to [`Keyring::turn`] is to do, decided under the read lock.
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

/// The number of the next keyring made in this process (tickets carry
/// their keyring's).
static KEYRINGS: AtomicU64 = AtomicU64::new(1);

struct Disk {
    dir: PersistDir,
    journal: Arc<Journal>,
    committer: Mutex<Option<JoinHandle<()>>>,
}

/// A node's live key epochs, their replay filters (and in disk mode their
/// stores), and the order of checks on every datagram.
///
/// Share it between worker threads (`&Keyring` or an `Arc`): it is `Sync`.
/// [`receive`](Self::receive) takes a read lock and each epoch's filter
/// lock only for its test-and-set; [`turn`](Self::turn), called from one
/// housekeeping thread, takes the write lock for the moment of a change.
pub struct Keyring {
    /// Unique in the process: the tickets it hands out carry it.
    id: u64,
    policy: EpochPolicy,
    live: RwLock<Live>,
    drops: DropCounters,
    accepted: AtomicU64,
    /// The epoch whose key unwrapped the last packet: tried first on the
    /// next one.
    last_epoch: AtomicU64,
    disk: Option<Disk>,
    /// The last failure to write or delete an epoch's files.
    disk_error: Mutex<Option<String>>,
    turning: Mutex<Turning>,
    /// Set when the current epoch reaches `rotate_after`: wakes
    /// [`Keyring::wait_for_turn`].
    turn_due: Mutex<bool>,
    turn_wake: Condvar,
}

fn new_key() -> PrivateKey {
    PrivateKey::generate(&mut UnwrapErr(SysRng))
}

impl Keyring {
    /// Memory mode: epoch 0 with `key`. Nothing is written anywhere; a
    /// restart starts a fresh key (a restarted node must not reuse a key
    /// whose filter it lost: use [`open`](Self::open) to keep keys).
    ///
    /// # Errors
    /// [`OpenError::Policy`] if the policy does not hold together.
    pub fn new(policy: EpochPolicy, key: PrivateKey) -> Result<Self, OpenError> {
        Self::new_at(policy, key, SystemTime::now())
    }

    /// [`new`](Self::new), with the wall clock's time given: with an
    /// [`EpochPolicy::schedule`], `key`'s epoch is the one `wall` falls
    /// in (self-timed, epoch 0, and `wall` is not used). For a node whose
    /// clock is not the system's, and for tests.
    ///
    /// # Errors
    /// [`OpenError::Policy`] if the policy does not hold together.
    pub fn new_at(
        policy: EpochPolicy,
        key: PrivateKey,
        wall: SystemTime,
    ) -> Result<Self, OpenError> {
        policy.check()?;
        let now = Instant::now();
        let first = policy.schedule.map_or(0, |s| s.epoch(wall));
        let current = Epoch::new(&policy, first, key, now);
        let mut ahead = (1..=policy.ahead() as u64)
            .map(|i| Epoch::new(&policy, first.saturating_add(i), new_key(), now));
        let next = ahead.next();
        let further = ahead.collect();
        Ok(Self::with(policy, current, None, (next, further), None))
    }

    /// Disk mode in `dir` (created, mode 0700, if missing; locked against
    /// any other process): resume the epochs stored there (the newest as
    /// the current one, or with [`EpochPolicy::publish_ahead`] as the
    /// next one; the one before the current while its grace lasts; older
    /// ones are deleted), each filter rebuilt from its store; or, if there
    /// are none, start epoch 0 with a fresh key and store it. What changed
    /// about which key is current is in [`Resumed::changes`]. Starts the
    /// keyring's group-commit thread.
    ///
    /// Never give it a directory restored from a backup or a snapshot
    /// (see the crate's README): it cannot tell, and would accept replays
    /// of every packet forwarded since the copy was made.
    ///
    /// # Errors
    /// [`OpenError::Policy`]; [`OpenError::Locked`]: a directory in use
    /// by another process; [`OpenError::Permissions`]: a directory or
    /// file that others may write (or read, for keys and stores), or a
    /// symbolic link; [`OpenError::Key`]: a key file that does not load,
    /// or epochs without the directory's `node.secret`;
    /// [`OpenError::Store`]: a store missing beside its key, damaged, or
    /// not bound to its key and this directory; [`OpenError::Io`]: files
    /// that cannot be read or written. Each names its file.
    pub fn open(policy: EpochPolicy, dir: &Path) -> Result<(Self, Resumed), OpenError> {
        Self::open_at(policy, dir, SystemTime::now())
    }

    /// [`open`](Self::open), with the wall clock's time given: what
    /// [`new_at`](Self::new_at) is to [`new`](Self::new). With an
    /// [`EpochPolicy::schedule`], an empty directory starts the epoch
    /// `wall` falls in; epochs found are resumed as they are, and the
    /// first [`turn_at`](Self::turn_at) catches up with the clock (never
    /// back: an epoch numbered past the clock, after a step back, stays
    /// current until the clock reaches its end).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_at(
        policy: EpochPolicy,
        dir: &Path,
        wall: SystemTime,
    ) -> Result<(Self, Resumed), OpenError> {
        policy.check()?;
        let dir = PersistDir::new(dir, policy.store_cache)?;
        let (mut numbers, keyless, temporaries) = dir.scan()?;
        let mut resumed = Resumed {
            temporaries,
            ..Resumed::default()
        };
        resumed.changes.extend(
            keyless
                .into_iter()
                .map(|number| ResumeChange::KeyMissing { number }),
        );
        let now = Instant::now();
        let load = |f: Found, resumed: &mut Resumed| -> Result<Epoch, OpenError> {
            let age = wall.duration_since(f.store.started()).unwrap_or_default();
            let started = now.checked_sub(age).unwrap_or(now);
            let mut e = Epoch::new(&policy, f.number, f.key, started);
            let n = f
                .store
                .for_each(|tag| e.restore(tag))
                .map_err(OpenError::from)?;
            resumed.epochs.push((f.number, n));
            e.store = Some(Arc::new(f.store));
            Ok(e)
        };
        let make = |number: u64, ahead: bool| -> Result<Epoch, OpenError> {
            let key = new_key();
            let store = dir.create(number, &key, wall, ahead)?;
            let mut e = Epoch::new(&policy, number, key, now);
            e.store = Some(Arc::new(store));
            Ok(e)
        };
        let further = Self::further(&policy, &mut numbers, wall);
        let (newest, found_next) = Self::newest(&policy, &dir, &mut numbers, &mut resumed)?;
        // When the next epoch was made, the current one became current.
        let promoted = found_next.as_ref().map(|f| {
            let age = wall.duration_since(f.store.started()).unwrap_or_default();
            now.checked_sub(age).unwrap_or(now)
        });
        let (current, previous) = match newest {
            None => {
                let first = policy.schedule.map_or(0, |s| s.epoch(wall));
                resumed.made.push(first);
                (make(first, false)?, None)
            }
            Some(newest) => {
                let older = numbers.pop();
                let mut current = load(newest, &mut resumed)?;
                if let Some(at) = promoted {
                    current.started = at;
                }
                let until = current.started.checked_add(policy.grace).unwrap_or(now);
                // With a schedule, the wall clock may end the grace first.
                let in_grace = |n: u64| {
                    now < until
                        && !policy
                            .schedule
                            .is_some_and(|s| s.grace_over(n, policy.grace, wall))
                };
                let previous = match older {
                    Some(n) if in_grace(n) => Some((load(dir.open(n)?, &mut resumed)?, until)),
                    Some(n) => {
                        resumed.retired.push(n);
                        None
                    }
                    None => None,
                };
                (current, previous)
            }
        };
        let next = match found_next {
            Some(f) => Some(load(f, &mut resumed)?),
            None if policy.publish_ahead => {
                let number = current.number.saturating_add(1);
                resumed.made.push(number);
                Some(make(number, true)?)
            }
            None => None,
        };
        let mut further = further
            .into_iter()
            .map(|n| load(dir.open(n)?, &mut resumed))
            .collect::<Result<Vec<_>, _>>()?;
        // Keys made ahead that are missing (more asked than on disk).
        while next.is_some() && further.len() + 1 < policy.ahead() {
            let top = further.last().or(next.as_ref()).map_or(0, |e| e.number);
            further.push(make(top.saturating_add(1), true)?);
        }
        // Past their grace: deleted unread.
        resumed.retired.extend(numbers);
        resumed.epochs.sort_unstable();
        resumed.retired.sort_unstable();
        for &number in &resumed.retired {
            dir.retire(number, || {})?;
        }
        let journal = Arc::new(Journal::new());
        let committer = {
            let journal = Arc::clone(&journal);
            std::thread::Builder::new()
                .name("replay-commit".into())
                .spawn(move || journal.run_committer())
                .map_err(|e| OpenError::io(dir.path(), e))?
        };
        let disk = Disk {
            dir,
            journal,
            committer: Mutex::new(Some(committer)),
        };
        Ok((
            Self::with(policy, current, previous, (next, further), Some(disk)),
            resumed,
        ))
    }

    /// With a schedule and keys made more than one epoch ahead: the
    /// epochs on disk after the next one, taken from the top of `numbers`
    /// (oldest first) while the one below is still ahead of the clock
    /// and two are left (current and next), at most `ahead - 1`.
    fn further(policy: &EpochPolicy, numbers: &mut Vec<u64>, wall: SystemTime) -> Vec<u64> {
        let Some(schedule) = policy.schedule else {
            return Vec::new();
        };
        let target = schedule.epoch(wall);
        let mut further = Vec::new();
        while further.len() + 1 < policy.ahead()
            && numbers.len() > 2
            && numbers
                .get(numbers.len().saturating_sub(2))
                .is_some_and(|&n| n > target)
        {
            further.extend(numbers.pop());
        }
        further.reverse();
        further
    }

    /// The newest epoch on disk, opened, and whether it is the next one:
    /// with `publish_ahead`, the newest epoch is the next one if it was
    /// made as one (and an older one is there to be current). A store
    /// that says how it was made tells a `publish_ahead` turned on or off
    /// since the node stopped: the epoch that was current stays current
    /// ([`ResumeChange`]). Taken from `numbers`.
    fn newest(
        policy: &EpochPolicy,
        dir: &PersistDir,
        numbers: &mut Vec<u64>,
        resumed: &mut Resumed,
    ) -> Result<(Option<Found>, Option<Found>), OpenError> {
        let Some(number) = numbers.pop() else {
            return Ok((None, None));
        };
        let found = dir.open(number)?;
        let made_ahead = found.store.ahead().unwrap_or(policy.publish_ahead);
        let older = numbers.len();
        match (policy.publish_ahead, made_ahead) {
            (true, true) if older >= 1 => {
                let current = numbers.pop().map(|n| dir.open(n)).transpose()?;
                Ok((current, Some(found)))
            }
            (true, false) => {
                resumed.changes.push(ResumeChange::PublishAheadTurnedOn);
                Ok((Some(found), None))
            }
            (false, true) if older >= 1 => {
                drop(found);
                dir.retire(number, || {})?;
                resumed
                    .changes
                    .push(ResumeChange::PublishAheadTurnedOff { dropped: number });
                let current = numbers.pop().map(|n| dir.open(n)).transpose()?;
                Ok((current, None))
            }
            // Only one epoch, or as the policy has it.
            _ => Ok((Some(found), None)),
        }
    }

    fn with(
        policy: EpochPolicy,
        current: Epoch,
        previous: Option<(Epoch, Instant)>,
        (next, further): (Option<Epoch>, Vec<Epoch>),
        disk: Option<Disk>,
    ) -> Self {
        let current_number = current.number;
        Self {
            id: KEYRINGS.fetch_add(1, Ordering::Relaxed),
            policy,
            live: RwLock::new(Live {
                current,
                previous,
                next,
                further,
            }),
            turning: Mutex::new(Turning::default()),
            drops: DropCounters::default(),
            accepted: AtomicU64::new(0),
            last_epoch: AtomicU64::new(current_number),
            disk,
            disk_error: Mutex::new(None),
            turn_due: Mutex::new(false),
            turn_wake: Condvar::new(),
        }
    }

    fn journal(&self) -> Option<&Journal> {
        self.disk.as_ref().map(|d| &*d.journal)
    }

    /// Disk mode: what [`health`](Self::health) reads beside the epochs.
    pub(crate) fn recorder(&self) -> Option<&crate::health::Recorder> {
        self.journal().map(|j| &j.health)
    }

    /// Call `f` on each live epoch (role, number, tags taken, when it
    /// started), for [`health`](Self::health).
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

    fn live(&self) -> std::sync::RwLockReadGuard<'_, Live> {
        self.live.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// One datagram, in the order that keeps a node safe and cheap to
    /// attack only at the price of the attacker's own work:
    ///
    /// 1. exactly one packet long ([`Dropped::Length`]);
    /// 2. its replay tag (one hash, no key) is in no live epoch's filter
    ///    ([`Dropped::Replay`]), and in disk mode the store is writable
    ///    ([`Dropped::DiskFailing`]), both before any public-key work;
    /// 3. unwrapped in place under the live keys (current, previous during
    ///    its grace, next with [`EpochPolicy::publish_ahead`]), the one that unwrapped
    ///    the last packet first (a packet for another key fails on its MAC
    ///    and is left unchanged for the next try);
    /// 4. only now that the MAC verified, the tag is remembered, atomically
    ///    (of two copies racing on two threads, one goes on;
    ///    [`Dropped::Replay`]), and refused if its epoch is full
    ///    ([`Dropped::EpochFull`]). A copy that keeps a real packet's KEM
    ///    ciphertext but not its header therefore cannot get the real one
    ///    dropped by arriving first.
    ///
    /// Give it the whole datagram as received, into a buffer larger than a
    /// packet (so an oversize datagram is not truncated into one). Every
    /// drop is counted ([`drops`](Self::drops)).
    ///
    /// # Errors
    /// Why the datagram was dropped; the caller sends nothing.
    pub fn receive<'a>(&self, datagram: &'a mut [u8]) -> Result<Accepted<'a>, Dropped> {
        let result = self.receive_inner(datagram);
        match &result {
            Ok(_) => {
                self.accepted.fetch_add(1, Ordering::Relaxed);
                crate::instrument::accepted();
            }
            Err(why) => self.drops.add(*why),
        }
        result
    }

    fn receive_inner<'a>(&self, datagram: &'a mut [u8]) -> Result<Accepted<'a>, Dropped> {
        let packet = packet_mut(datagram)?;
        let tag = replay_tag(packet);
        let live = self.live();
        if live.epochs().any(|e| e.seen(&tag)) {
            return Err(Dropped::Replay);
        }
        let journal = self.journal();
        if journal.is_some_and(Journal::failing) {
            return Err(Dropped::DiskFailing);
        }
        // The key that unwrapped the last packet first, then the others
        // (current, previous, next).
        let last = self.last_epoch.load(Ordering::Relaxed);
        let mut order: [Option<&Epoch>; 2 + MAX_AHEAD as usize] = [None; 2 + MAX_AHEAD as usize];
        let candidates = live
            .epochs()
            .filter(|e| e.number == last)
            .chain(live.epochs().filter(|e| e.number != last));
        for (slot, epoch) in order.iter_mut().zip(candidates) {
            *slot = Some(epoch);
        }
        let order = order.into_iter().flatten();
        let (which, hop) = unwrap_any(order.clone().map(|e| &*e.key), packet)?;
        let by = order.clone().nth(which).unwrap_or(&live.current);
        self.last_epoch.store(by.number, Ordering::Relaxed);
        let previous_key = by.number < live.current.number;
        let (group, taken) = by.remember(&tag, journal)?;
        self.taken(&live, by, taken);
        Ok(Accepted {
            epoch: by.number,
            previous_key,
            action: hop.action,
            ticket: self.ticket(group),
        })
    }

    /// After `by` took a packet and holds `taken`: wake the housekeeping
    /// thread ([`wait_for_turn`](Self::wait_for_turn)) when the current
    /// epoch, or the next one published ahead, reaches `rotate_after`.
    fn taken(&self, live: &Live, by: &Epoch, taken: usize) {
        if self.policy.schedule.is_some() {
            // A scheduled epoch never turns by fill.
            return;
        }
        let turns = by.number == live.current.number
            || live.next.as_ref().is_some_and(|n| n.number == by.number);
        #[cfg(feature = "metrics")]
        crate::instrument::fill(
            match (by.number == live.current.number, turns) {
                (true, _) => crate::health::Role::Current,
                (false, true) => crate::health::Role::Next,
                (false, false) => crate::health::Role::Previous,
            },
            taken,
            self.policy.capacity,
        );
        if taken == self.policy.rotate_after && turns {
            *self.turn_due.lock().unwrap_or_else(PoisonError::into_inner) = true;
            self.turn_wake.notify_all();
        }
    }

    fn ticket(&self, group: u64) -> Ticket {
        Ticket {
            keyring: self.id,
            group,
        }
    }

    /// Whether a packet holding `ticket` may leave now (never for a
    /// ticket of another keyring).
    #[must_use]
    pub fn is_durable(&self, ticket: Ticket) -> bool {
        ticket.keyring == self.id && self.journal().is_none_or(|j| j.durable() >= ticket.group)
    }

    /// Wait up to `timeout` (any `Duration`: `Duration::MAX` waits as
    /// long as it takes) for `ticket`'s group commit.
    ///
    /// # Errors
    /// The packet may not leave: its commit was not durable in time
    /// ([`NotDurable::TimedOut`]: a node drops a packet whose ticket does
    /// not become durable in reasonable time, the disk is failing), or
    /// the ticket is another keyring's ([`NotDurable::OtherKeyring`]).
    pub fn wait_durable(&self, ticket: Ticket, timeout: Duration) -> Result<(), NotDurable> {
        if ticket.keyring != self.id {
            return Err(NotDurable::OtherKeyring);
        }
        match self.journal() {
            Some(j) if !j.wait(ticket.group, timeout) => Err(NotDurable::TimedOut),
            _ => Ok(()),
        }
    }

    /// Retire the previous epoch if its grace is over; start a new epoch
    /// (fresh key from the operating system's generator; in disk mode its
    /// store, then its key file) if the current one has taken
    /// [`EpochPolicy::rotate_after`] packets or lived
    /// [`EpochPolicy::length`]. At most one change per call: call again
    /// until `None`, from one housekeeping thread, waiting in between with
    /// [`wait_for_turn`](Self::wait_for_turn). After [`Turn::Started`],
    /// publish [`current`](Self::current)'s key; after [`Turn::Started`]
    /// or [`Turn::Replaced`] with [`EpochPolicy::publish_ahead`],
    /// [`next`](Self::next)'s. A next epoch that has taken
    /// [`EpochPolicy::rotate_after`] packets is replaced at once (see
    /// [`Turn::Replaced`] for why replaced, not turned).
    ///
    /// A new epoch due while the previous one is still in its grace
    /// retires that one first, early. No new epoch starts while the store
    /// cannot be written (it would fail the same way), nor while a retired
    /// epoch's files could not be deleted (they are retried first), so no
    /// more than two epochs' keys (three with
    /// [`EpochPolicy::publish_ahead`]; two plus [`Schedule::ahead`] with
    /// a schedule) are ever on disk. Files are written and
    /// deleted outside the lock that [`receive`](Self::receive) takes:
    /// receiving threads wait only for the swap itself.
    ///
    /// With an [`EpochPolicy::schedule`], the wall clock
    /// (`SystemTime::now()`) decides: see [`turn_at`](Self::turn_at).
    #[must_use = "a started or replaced epoch's key is to be published"]
    pub fn turn(&self, now: Instant) -> Option<Turn> {
        self.turn_at(now, SystemTime::now())
    }

    /// [`turn`](Self::turn) at a given moment: `now` on the monotonic
    /// clock, `wall` the wall clock's time at that moment.
    ///
    /// Self-timed, `wall` is not used. With an [`EpochPolicy::schedule`],
    /// the epoch `wall` falls in is the one to be current: a new epoch
    /// starts, numbered as the schedule numbers it, once `wall` reaches
    /// the current one's end (never earlier, whatever it has taken); the
    /// previous key retires once `wall` is [`EpochPolicy::grace`] past
    /// that epoch's end, or `grace` has passed on the monotonic clock
    /// since the rotation, whichever comes first. A `wall` past several
    /// boundaries (a step forward, a node that was down) starts the epoch
    /// it names: a next epoch made ahead whose time is over is retired
    /// ([`Turn::Skipped`]), never made current late, and with
    /// [`EpochPolicy::publish_ahead`] a new next one is made
    /// ([`Turn::Ahead`]). A `wall` before the current epoch's start (a
    /// step back) changes nothing: no older epoch is made current again.
    #[must_use = "a started or replaced epoch's key is to be published"]
    pub fn turn_at(&self, now: Instant, wall: SystemTime) -> Option<Turn> {
        let mut turning = self.turning.lock().unwrap_or_else(PoisonError::into_inner);
        self.delete_undeleted(&mut turning);
        match self.plan(now, wall, &turning)? {
            Plan::Retire { number, early } => {
                let retired = {
                    let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
                    live.previous.take()
                };
                let store = retired.and_then(|(e, _)| e.store);
                self.delete(&mut turning, number, store);
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
                let fresh = self.fresh_epoch(&mut turning, (now, wall), number, next_starts)?;
                // Told a time ahead, the rotation still happens now: the
                // new epoch's age and the previous key's grace run from
                // the real rotation, not from a day ahead.
                let at = now.min(Instant::now());
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
                let fresh = self.fresh_epoch(&mut turning, (now, wall), number, true)?;
                let number = fresh.number;
                let old = {
                    let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
                    live.next.replace(fresh)
                };
                let store = old.and_then(|e| e.store);
                self.delete(&mut turning, filled, store);
                Some(Turn::Replaced { filled, number })
            }
            Plan::Skip { number } => {
                let old = {
                    let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
                    let later = (!live.further.is_empty()).then(|| live.further.remove(0));
                    std::mem::replace(&mut live.next, later)
                };
                self.delete(&mut turning, number, old.and_then(|e| e.store));
                Some(Turn::Skipped { number })
            }
            Plan::Ahead { number } => {
                let fresh = self.fresh_epoch(&mut turning, (now, wall), number, true)?;
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
        turning: &mut Turning,
        (now, wall): (Instant, SystemTime),
        number: u64,
        ahead: bool,
    ) -> Option<Epoch> {
        let mut fresh = Epoch::new(&self.policy, number, new_key(), now.min(Instant::now()));
        if let Some(disk) = &self.disk {
            match disk.dir.create(number, &fresh.key, wall, ahead) {
                Ok(store) => fresh.store = Some(Arc::new(store)),
                Err(e) => {
                    turning.retry_at = now.checked_add(CREATE_RETRY);
                    self.set_disk_error(format!("starting epoch {number}: {e}"));
                    return None;
                }
            }
        }
        Some(fresh)
    }

    /// What [`turn`](Self::turn) is to do now, if anything.
    fn plan(&self, now: Instant, wall: SystemTime, turning: &Turning) -> Option<Plan> {
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
            || self.disk_failing();
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
    fn delete_undeleted(&self, turning: &mut Turning) {
        for (number, store) in std::mem::take(&mut turning.undeleted) {
            self.delete(turning, number, store);
        }
    }

    /// Delete retired epoch `number`'s files (disk mode); once its key
    /// file is durably gone, its store's queued tags are dropped. What
    /// fails is kept to try again.
    fn delete(&self, turning: &mut Turning, number: u64, store: Option<Arc<Store>>) {
        let Some(disk) = &self.disk else {
            return;
        };
        let retire = || {
            if let Some(s) = &store {
                s.retire();
            }
        };
        if let Err(err) = disk.dir.retire(number, retire) {
            self.set_disk_error(format!("retiring epoch {number}: {err}"));
            turning.undeleted.push((number, store));
        }
    }

    /// Wait up to `timeout`, or until the current epoch has taken
    /// [`EpochPolicy::rotate_after`] packets; whether that woke it. The
    /// housekeeping thread's wait between calls to [`turn`](Self::turn):
    /// a flood fills an epoch in milliseconds, and a turn that waited for
    /// a fixed tick could let the epoch reach its capacity and refuse
    /// packets first.
    ///
    /// With an [`EpochPolicy::schedule`] it also wakes when the wall clock
    /// (`SystemTime::now()`, read at the call) reaches the next boundary
    /// or the end of the previous key's grace, so a rotation is on time
    /// whatever the timeout; every boundary is computed from the
    /// schedule, so nothing drifts. Keep `timeout` short (a second) all
    /// the same: a wall clock stepped during the wait is seen at the next
    /// call.
    pub fn wait_for_turn(&self, timeout: Duration) -> bool {
        #[cfg(feature = "metrics")]
        self.publish_fill();
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

    fn set_disk_error(&self, e: String) {
        if let Some(r) = self.recorder() {
            r.failed(e.clone(), false);
        }
        *self
            .disk_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(e);
    }

    /// The current epoch: the key to publish.
    pub fn current(&self) -> EpochStatus {
        let live = self.live();
        status(&live.current)
    }

    /// With [`EpochPolicy::publish_ahead`]: the next epoch, whose key is
    /// to be published ahead of its start.
    pub fn next(&self) -> Option<EpochStatus> {
        self.live().next.as_ref().map(status)
    }

    /// With [`EpochPolicy::publish_ahead`]: every epoch whose key is made
    /// ahead of its start, in order (epochs `N+1..=N+k` while `N` is
    /// current, `k` the schedule's [`Schedule::ahead`], or one): the keys
    /// a PKI publishes for the coming epochs. Empty without
    /// `publish_ahead`.
    pub fn ahead(&self) -> Vec<EpochStatus> {
        let live = self.live();
        live.next
            .iter()
            .chain(live.further.iter())
            .map(status)
            .collect()
    }

    /// The previous epoch, while its key still unwraps.
    pub fn previous(&self) -> Option<EpochStatus> {
        self.live().previous.as_ref().map(|(e, _)| status(e))
    }

    /// The policy the keyring runs.
    pub fn policy(&self) -> &EpochPolicy {
        &self.policy
    }

    /// A ticket of this keyring that is durable at once: for a packet that
    /// nothing received made (an answer sent later on a SURB, cover
    /// traffic), which waits on no group commit, given to
    /// [`Forwarder::hold`](crate::Forwarder::hold).
    pub fn durable_ticket(&self) -> Ticket {
        self.ticket(0)
    }

    /// Whether this keyring keeps its epochs on disk.
    pub fn is_disk_mode(&self) -> bool {
        self.disk.is_some()
    }

    /// Datagrams dropped so far, per reason.
    pub fn drops(&self) -> DropCounts {
        self.drops.snapshot()
    }

    /// Packets accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Disk mode: whether the replay store cannot be written now (new
    /// packets are dropped, [`Dropped::DiskFailing`], until it can).
    pub fn disk_failing(&self) -> bool {
        self.journal().is_some_and(Journal::failing)
    }

    /// Disk mode: start a group commit at most once per `interval` (the
    /// default is [`GROUP_INTERVAL`](crate::GROUP_INTERVAL), 20 ms). Shorter
    /// intervals cut the wait of packets whose `node_delay` is short; they
    /// cost more commits, so more CPU per packet when every core is busy
    /// (measured on two cores: 1.27× the bare calls at 5 ms, 1.05× at
    /// 20 ms). Memory mode: nothing to do.
    pub fn set_group_interval(&self, interval: Duration) {
        if let Some(j) = self.journal() {
            j.set_interval(interval);
        }
    }

    /// Disk mode: group commits so far.
    pub fn commits(&self) -> u64 {
        self.journal().map_or(0, Journal::commits)
    }

    /// Disk mode: the last failure to commit tags or to write or delete an
    /// epoch's files, once (for the node's log).
    #[must_use = "the error is taken: log it"]
    pub fn take_disk_error(&self) -> Option<String> {
        let commit = self.journal().and_then(Journal::take_error);
        let files = self
            .disk_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match (commit, files) {
            (Some(c), Some(f)) => Some(format!("{c}; {f}")),
            (Some(c), None) => Some(c.to_string()),
            (None, f) => f,
        }
    }
}

fn status(e: &Epoch) -> EpochStatus {
    EpochStatus {
        number: e.number,
        public_key: e.key.public_key().clone(),
        taken: e.taken(),
    }
}

impl Drop for Keyring {
    /// Disk mode: commit what is queued (one more try if the disk is
    /// failing) and stop the commit thread.
    fn drop(&mut self) {
        if let Some(disk) = &self.disk {
            disk.journal.stop();
            let handle = disk
                .committer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(h) = handle {
                let _ = h.join();
            }
        }
    }
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("current", &self.current().number)
            .field("previous", &self.previous().map(|e| e.number))
            .field("disk_mode", &self.is_disk_mode())
            .finish_non_exhaustive()
    }
}

/// What the crate's own tests reach past the packet for: tags without
/// packets (making thousands of real packets would cost minutes in a debug
/// build).
#[cfg(test)]
impl Keyring {
    /// Remember `tag` in the current (`previous == false`) or previous
    /// epoch, as `receive` does after a packet's MAC verified.
    pub(crate) fn remember_tag(
        &self,
        tag: &kemsphinx::ReplayTag,
        previous: bool,
    ) -> Result<Ticket, Dropped> {
        let live = self.live();
        let epoch = match (&live.previous, previous) {
            (Some((e, _)), true) => e,
            _ => &live.current,
        };
        let (group, taken) = epoch.remember(tag, self.journal())?;
        self.taken(&live, epoch, taken);
        Ok(self.ticket(group))
    }

    /// Remember `tag` in the next epoch (published ahead), as `receive`
    /// does after a packet's MAC verified under its key.
    pub(crate) fn remember_next(&self, tag: &kemsphinx::ReplayTag) -> Result<Ticket, Dropped> {
        let live = self.live();
        let next = live.next.as_ref().ok_or(Dropped::Other)?;
        let (group, taken) = next.remember(tag, self.journal())?;
        self.taken(&live, next, taken);
        Ok(self.ticket(group))
    }

    /// Whether `ticket` became durable within `timeout`.
    pub(crate) fn is_durable_within(&self, ticket: Ticket, timeout: Duration) -> bool {
        self.wait_durable(ticket, timeout).is_ok()
    }

    /// Whether a live epoch has seen `tag` (the check before any key work).
    pub(crate) fn seen(&self, tag: &kemsphinx::ReplayTag) -> bool {
        let live = self.live();
        live.epochs().any(|e| e.seen(tag))
    }
}
