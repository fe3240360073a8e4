//! The keyring: the one call a node makes per datagram, and the public
//! face of its key epochs.
//!
//! [`Keyring`] owns the order of checks on a datagram
//! ([`receive`](Keyring::receive)) and what it hands out (tickets, drop
//! counts); the live epochs and their rotation are a
//! [`Rotation`]'s ([`crate::rotation`]), disk mode is a [`Backing`]'s
//! ([`crate::disk`]), and what a restart resumes is
//! [`crate::resume`]'s. Each public method that is not the order of
//! checks asks one of them.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use kemsphinx::{Action, PrivateKey, ReplayTag, Unwrapped, packet_mut, replay_tag, unwrap_any};

use crate::dir::PersistDir;
use crate::disk::{Backing, Disk};
use crate::dropped::DropCounters;
use crate::epochs::{Epoch, EpochPolicy, Resumed, Turn};
use crate::error::OpenError;
use crate::journal::{Journal, NotDurable, Ticket};
use crate::rotation::{EpochStatus, Live, Rotation, new_key, status};
use crate::schedule::MAX_AHEAD;
#[cfg(doc)]
use crate::schedule::Schedule;
use crate::{DropCounts, Dropped};

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

/// What became of one datagram: as [`Keyring::receive`] returns it.
pub(crate) type Received<'a> = Result<Accepted<'a>, Dropped>;

/// The live epochs in the order their keys are tried: the one that
/// unwrapped the last packet first, then the others (current, previous,
/// next, further).
pub(crate) type KeyOrder<'l> = [Option<&'l Epoch>; 2 + MAX_AHEAD as usize];

/// The number of the next keyring made in this process (tickets carry
/// their keyring's).
static KEYRINGS: AtomicU64 = AtomicU64::new(1);

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
    drops: DropCounters,
    accepted: AtomicU64,
    /// The epoch whose key unwrapped the last packet: tried first on the
    /// next one.
    pub(crate) last_epoch: AtomicU64,
    /// Memory or disk mode.
    backing: Backing,
    /// The live epochs and their rotation.
    epochs: Rotation,
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
        let now = (Instant::now(), wall);
        let first = policy.schedule.map_or(0, |s| s.epoch(wall));
        let backing = Backing::Memory;
        let current = backing.fresh(&policy, first, key, now, false)?;
        let mut ahead = (1..=policy.ahead() as u64)
            .map(|i| backing.fresh(&policy, first.saturating_add(i), new_key(), now, true));
        let next = ahead.next().transpose()?;
        let further = ahead.collect::<Result<_, _>>()?;
        let live = Live {
            current,
            previous: None,
            next,
            further,
        };
        Ok(Self::with(policy, live, backing))
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
        let disk = Disk::new(PersistDir::new(dir, policy.store_cache)?);
        let (live, resumed) = crate::resume::resume(&policy, &disk, wall)?;
        let backing = Backing::Disk(disk.start()?);
        Ok((Self::with(policy, live, backing), resumed))
    }

    /// The keyring of `live` epochs kept in `backing`.
    fn with(policy: EpochPolicy, live: Live, backing: Backing) -> Self {
        Self {
            id: KEYRINGS.fetch_add(1, Ordering::Relaxed),
            drops: DropCounters::default(),
            accepted: AtomicU64::new(0),
            last_epoch: AtomicU64::new(live.current.number),
            backing,
            epochs: Rotation::new(policy, live),
        }
    }

    /// Disk mode: the journal each remembered tag joins.
    pub(crate) fn journal(&self) -> Option<&Journal> {
        self.backing.journal()
    }

    /// Disk mode: what [`health`](Self::health) reads beside the epochs.
    pub(crate) fn recorder(&self) -> Option<&crate::health::Recorder> {
        self.backing.recorder()
    }

    /// Call `f` on each live epoch (role, number, tags taken, when it
    /// started), for [`health`](Self::health).
    pub(crate) fn each_live(&self, f: impl FnMut(crate::health::Role, u64, usize, Instant)) {
        self.epochs.each_live(f);
    }

    /// The keyring's clock now: what every live epoch's age is measured
    /// against.
    pub(crate) fn clock_now(&self) -> Instant {
        self.epochs.clock_now()
    }

    /// The live epochs, read-locked: what a datagram is tried against.
    pub(crate) fn live(&self) -> std::sync::RwLockReadGuard<'_, Live> {
        self.epochs.live()
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
        self.count(&result);
        result
    }

    /// Count `result` among the accepted or the drops (and in the
    /// metrics).
    pub(crate) fn count(&self, result: &Received<'_>) {
        match result {
            Ok(_) => {
                self.accepted.fetch_add(1, Ordering::Relaxed);
                crate::instrument::accepted();
            }
            Err(why) => self.drops.add(*why),
        }
    }

    fn receive_inner<'a>(&self, datagram: &'a mut [u8]) -> Received<'a> {
        let packet = packet_mut(datagram)?;
        let tag = replay_tag(packet);
        let live = self.live();
        let journal = self.journal();
        unseen(&live, journal, &tag)?;
        let order = key_order(&live, self.last_epoch.load(Ordering::Relaxed));
        let unwrapped = unwrap_any(order.iter().flatten().map(|e| &*e.key), packet);
        self.settle(&live, &order, journal, &tag, unwrapped)
    }

    /// After the key trial: the epoch whose key unwrapped the packet
    /// remembers its tag (step 4 of [`receive`](Self::receive)).
    pub(crate) fn settle<'a>(
        &self,
        live: &Live,
        order: &KeyOrder<'_>,
        journal: Option<&Journal>,
        tag: &ReplayTag,
        unwrapped: Result<(usize, Unwrapped<'a>), kemsphinx::Error>,
    ) -> Received<'a> {
        let (which, hop) = unwrapped?;
        let by = order
            .iter()
            .flatten()
            .nth(which)
            .copied()
            .unwrap_or(&live.current);
        self.last_epoch.store(by.number, Ordering::Relaxed);
        let previous_key = by.number < live.current.number;
        let (group, taken) = by.remember(tag, journal)?;
        self.taken(live, by, taken);
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
    pub(crate) fn taken(&self, live: &Live, by: &Epoch, taken: usize) {
        let policy = self.epochs.policy();
        if policy.schedule.is_some() {
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
            policy.capacity,
        );
        if taken == policy.rotate_after && turns {
            self.epochs.wake();
        }
    }

    pub(crate) fn ticket(&self, group: u64) -> Ticket {
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
    /// `now` is the caller's time on the monotonic clock. Every epoch's
    /// age and every grace are measured on the keyring's one clock: the
    /// later of `now` and `Instant::now()` plus the furthest any `now`
    /// has been ahead of it. So a `now` ahead (`turn(t + length)`, a test
    /// or a simulation) turns once, as asked, and the same `now` again
    /// turns nothing; the clock keeps that lead, so the grace that starts
    /// then ends a grace later on the caller's time and in real time (not
    /// a day later after `turn(now + 1 day)`); a `now` behind it changes
    /// nothing.
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
        self.epochs.turn_at(&self.backing, now, wall)
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
        self.epochs.wait(timeout)
    }

    /// The current epoch: the key to publish.
    pub fn current(&self) -> EpochStatus {
        status(&self.live().current)
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
        self.epochs.policy()
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
        self.backing.is_disk()
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
        self.backing.failing()
    }

    /// Disk mode: start a group commit at most once per `interval` (the
    /// default is [`GROUP_INTERVAL`](crate::GROUP_INTERVAL), 40 ms). Shorter
    /// intervals cut the wait of packets whose `node_delay` is short; they
    /// cost more commits, so more CPU per packet when every core is busy
    /// (measured on two cores with a new store: 1.10–1.21× the bare calls'
    /// CPU at 20 ms, 1.04–1.12× at 40 ms; 0.1 measured 1.27× at 5 ms).
    /// Memory mode: nothing to do.
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
        self.backing.take_error()
    }
}

impl Drop for Keyring {
    /// Disk mode: commit what is queued (one more try if the disk is
    /// failing) and stop the commit thread.
    fn drop(&mut self) {
        self.backing.stop();
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

/// Step 2 of [`Keyring::receive`]: `tag` is in no live epoch's filter,
/// and in disk mode the store is writable.
pub(crate) fn unseen(
    live: &Live,
    journal: Option<&Journal>,
    tag: &ReplayTag,
) -> Result<(), Dropped> {
    if live.epochs().any(|e| e.seen(tag)) {
        return Err(Dropped::Replay);
    }
    if journal.is_some_and(Journal::failing) {
        return Err(Dropped::DiskFailing);
    }
    Ok(())
}

/// The live epochs, the one numbered `last` first.
pub(crate) fn key_order(live: &Live, last: u64) -> KeyOrder<'_> {
    let mut order: KeyOrder<'_> = [None; 2 + MAX_AHEAD as usize];
    let candidates = live
        .epochs()
        .filter(|e| e.number == last)
        .chain(live.epochs().filter(|e| e.number != last));
    for (slot, epoch) in order.iter_mut().zip(candidates) {
        *slot = Some(epoch);
    }
    order
}
