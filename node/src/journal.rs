//! Durable before forwarded: group commit of replay tags (disk mode).
//!
//! [`Keyring::receive`](crate::Keyring::receive) hands each new tag to the
//! journal and gets back the number of the group it joined, as a
//! [`Ticket`]; the node holds the packet until that group is durable. One
//! committer thread (the keyring's) takes everything handed in since its
//! last commit as one group and commits it (one redb transaction per
//! store, two `fsync`s each); tags that arrive during a commit form the
//! next group. So the group interval adapts to the disk: one commit's
//! time, or [`GROUP_INTERVAL`] if that is longer. Each group is written in
//! key order.
//!
//! A failed commit (a full disk) keeps its tags and is retried every
//! [`RETRY`] (the store reopens its file first: redb writes nothing more
//! after an I/O error until then). Nothing after them becomes durable, so
//! nothing after them may leave. Meanwhile ([`Journal::failing`]) the
//! keyring still drops replays of every tag it knows and drops new packets
//! before any work, without remembering them, so memory does not grow with
//! traffic while the disk is down. Once a retry succeeds, forwarding
//! resumes. Tags queued for an epoch that retires meanwhile are dropped
//! from the queue once its key file is durably gone: no packet can be
//! unwrapped with that key again, so they guard nothing, and its store is
//! deleted (retrying them would keep the journal failing for ever).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use kemsphinx::ReplayTag;

use crate::health::Recorder;
use crate::store::{Store, StoreError};

/// A commit starts at most this long after the previous one started (or
/// as soon as it ends, if it took longer). Each commit has a fixed cost
/// (two `fdatasync`s and about seven page writes: 190–360 µs of CPU,
/// mostly the kernel's) and a cost per B-tree page it rewrites (about 7
/// µs on a new store, 12 µs late in an epoch), which the workers pay for
/// in CPU when every core unwraps; a longer interval spreads the fixed
/// cost over more tags, and more tags share each page. Measured on two
/// cores with a new store (`benches/receive.rs`, results/2026-12-05):
/// disk mode cost 1.10–1.21× the bare calls' CPU at 20 ms, 1.04–1.12×
/// at 40 ms, 1.07–1.13× at 60 ms. A packet whose delay is shorter than
/// the time to its group's commit waits up to this much longer; mixing
/// delays are far longer (Katzenpost's per-hop delays average 200 ms by
/// default), so the wait adds about 3 ms per hop on average there.
/// The example network, whose delays are 0–5 ms, sets 5 ms instead. Late
/// in an epoch each tag rewrites a page of its own and no interval helps
/// (15–20 µs of CPU per packet over memory mode at 20 and 60 ms, with
/// 900,000 tags stored). The default;
/// [`Keyring::set_group_interval`](crate::Keyring::set_group_interval)
/// changes it.
pub const GROUP_INTERVAL: Duration = Duration::from_millis(40);

/// How long the committer waits after a failed commit before it retries.
pub const RETRY: Duration = Duration::from_millis(200);

/// What a packet waits on before it may leave: its replay tag's group
/// commit, in the keyring that accepted it (memory mode's tickets are
/// durable at once). A ticket is bound to its keyring: another keyring,
/// whose groups count alike, calls it not durable
/// ([`NotDurable::OtherKeyring`]), so a node that runs two keyrings
/// cannot let a packet leave on the other's commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[must_use = "nothing of the packet may leave before its ticket is durable"]
pub struct Ticket {
    /// The keyring that made it (a number unique in the process).
    pub(crate) keyring: u64,
    /// Its group commit; 0 in memory mode (nothing to wait for).
    pub(crate) group: u64,
}

/// Why [`Keyring::wait_durable`](crate::Keyring::wait_durable) let a
/// ticket's packet not leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum NotDurable {
    /// Its group commit did not become durable in the time given (the
    /// disk is slow or failing): the node drops the packet.
    #[error("the ticket's group commit is not durable yet")]
    TimedOut,
    /// The ticket is another keyring's: this one knows nothing of it.
    #[error("a ticket of another keyring")]
    OtherKeyring,
}

/// One store's tags in a group.
struct Batch {
    store: Arc<Store>,
    tags: Vec<ReplayTag>,
}

#[derive(Default)]
struct Queue {
    /// The group new tags join (groups count from 1).
    next: u64,
    /// The group's tags, one batch per store (one store nearly always;
    /// two or three while epochs change or one is published ahead), so
    /// a tag joins with a pointer comparison or two and no reference
    /// count is touched per tag.
    batches: Vec<Batch>,
    /// Emptied batch buffers, back from the committer, for new batches
    /// to fill without allocating (their capacity is the groups' size).
    spare: Vec<Vec<ReplayTag>>,
    stop: bool,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.batches.is_empty()
    }

    /// Queue `tag` for `store`.
    fn push(&mut self, store: &Arc<Store>, tag: ReplayTag) {
        if let Some(batch) = self
            .batches
            .iter_mut()
            .find(|b| Arc::ptr_eq(&b.store, store))
        {
            batch.tags.push(tag);
            return;
        }
        let mut tags = self.spare.pop().unwrap_or_default();
        tags.push(tag);
        self.batches.push(Batch {
            store: Arc::clone(store),
            tags,
        });
    }

    /// Put back a failed group's batches, before what was queued since.
    fn put_back(&mut self, mut failed: Vec<Batch>) {
        for newer in self.batches.drain(..) {
            match failed
                .iter_mut()
                .find(|b| Arc::ptr_eq(&b.store, &newer.store))
            {
                Some(b) => {
                    b.tags.extend_from_slice(&newer.tags);
                    recycle(&mut self.spare, newer.tags);
                }
                None => failed.push(newer),
            }
        }
        self.batches = failed;
    }
}

/// Keep an emptied batch buffer for reuse (a few at most, and none grown
/// past [`SPARE_TAGS`] by a stalled disk's backlog: that memory goes back).
fn recycle(spare: &mut Vec<Vec<ReplayTag>>, mut tags: Vec<ReplayTag>) {
    if spare.len() < SPARE && tags.capacity() <= SPARE_TAGS {
        tags.clear();
        spare.push(tags);
    }
}

/// Batch buffers kept for reuse: one per store a group can span.
const SPARE: usize = 4;
/// The largest batch buffer kept for reuse, in tags (256 KiB): far more
/// than a group interval brings at any rate one node unwraps.
const SPARE_TAGS: usize = 8192;

/// A node's group-commit queue and what became of it.
pub(crate) struct Journal {
    /// The group interval, in nanoseconds.
    interval: AtomicU64,
    queue: Mutex<Queue>,
    wake: Condvar,
    durable: Mutex<u64>,
    durable_changed: Condvar,
    durable_now: AtomicU64,
    failing: AtomicBool,
    commits: AtomicU64,
    /// The last commit failure, until taken for the node's log.
    error: Mutex<Option<StoreError>>,
    /// What [`Keyring::health`](crate::Keyring::health) reads.
    pub(crate) health: Recorder,
}

impl Journal {
    pub(crate) fn new() -> Self {
        Self {
            interval: AtomicU64::new(nanos(GROUP_INTERVAL)),
            queue: Mutex::new(Queue {
                next: 1,
                ..Queue::default()
            }),
            wake: Condvar::new(),
            durable: Mutex::new(0),
            durable_changed: Condvar::new(),
            durable_now: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            commits: AtomicU64::new(0),
            error: Mutex::new(None),
            health: Recorder::default(),
        }
    }

    /// Queue `tag` for `store`; returns its group.
    pub(crate) fn add(&self, store: &Arc<Store>, tag: ReplayTag) -> u64 {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let first = queue.is_empty();
        queue.push(store, tag);
        let group = queue.next;
        self.health.added(group, first);
        drop(queue);
        self.wake.notify_one();
        group
    }

    /// Every group up to this one is durable.
    pub(crate) fn durable(&self) -> u64 {
        self.durable_now.load(Ordering::Acquire)
    }

    /// Wait until `group` is durable or `timeout` has passed (a timeout
    /// past what an `Instant` can hold: for as long as it takes); whether
    /// it is durable.
    pub(crate) fn wait(&self, group: u64, timeout: Duration) -> bool {
        let deadline = Instant::now().checked_add(timeout);
        let mut durable = self.durable.lock().unwrap_or_else(PoisonError::into_inner);
        while *durable < group {
            let Some(deadline) = deadline else {
                durable = self
                    .durable_changed
                    .wait(durable)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            durable = self
                .durable_changed
                .wait_timeout(durable, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// Commit at most once per `interval` from now on.
    pub(crate) fn set_interval(&self, interval: Duration) {
        self.interval.store(nanos(interval), Ordering::Relaxed);
    }

    /// Whether the last commit failed.
    pub(crate) fn failing(&self) -> bool {
        self.failing.load(Ordering::Relaxed)
    }

    /// Successful commits so far.
    pub(crate) fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// The last commit failure, once.
    pub(crate) fn take_error(&self) -> Option<StoreError> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Make the committer return once everything queued is committed (or
    /// has failed once more).
    pub(crate) fn stop(&self) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop = true;
        self.wake.notify_all();
    }

    /// The committer thread's loop: commit each group, until
    /// [`stop`](Self::stop).
    pub(crate) fn run_committer(&self) {
        loop {
            let (group, mut batches, stop) = {
                let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                while queue.is_empty() && !queue.stop {
                    queue = self
                        .wake
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                let group = queue.next;
                queue.next += 1;
                (group, std::mem::take(&mut queue.batches), queue.stop)
            };
            // A retired epoch's key is gone: its packets can never be
            // unwrapped again, so its tags need no commit (its store may
            // be deleted already, and a retry would fail for ever).
            let mut retired = 0;
            batches.retain(|b| {
                let keep = !b.store.is_retired();
                if !keep {
                    retired += b.tags.len();
                }
                keep
            });
            self.health.dropped(retired);
            if batches.is_empty() && stop {
                return;
            }
            let started = Instant::now();
            match commit(&mut batches) {
                Ok(n) => {
                    self.health.committed(group, n, started.elapsed());
                    self.commits.fetch_add(1, Ordering::Relaxed);
                    self.failing.store(false, Ordering::Relaxed);
                    let mut durable = self.durable.lock().unwrap_or_else(PoisonError::into_inner);
                    *durable = group;
                    self.durable_now.store(group, Ordering::Release);
                    drop(durable);
                    self.durable_changed.notify_all();
                    let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                    for batch in batches.drain(..) {
                        recycle(&mut queue.spare, batch.tags);
                    }
                }
                Err(e) => {
                    self.failing.store(true, Ordering::Relaxed);
                    self.health.failed(e.to_string(), true);
                    *self.error.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                    let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                    queue.put_back(batches);
                    if queue.stop {
                        return;
                    }
                    drop(queue);
                    std::thread::sleep(RETRY);
                }
            }
            let interval = Duration::from_nanos(self.interval.load(Ordering::Relaxed));
            if let Some(rest) = interval.checked_sub(started.elapsed()) {
                std::thread::sleep(rest);
            }
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Commit a group, one transaction per store (a group may hold tags of
/// two epochs), each batch sorted first: in key order, each B-tree page a
/// group touches is copied once. Returns how many tags.
fn commit(batches: &mut [Batch]) -> Result<usize, StoreError> {
    let mut n = 0;
    for batch in batches {
        batch.tags.sort_unstable_by_key(|t| t.0);
        batch.store.commit(&batch.tags)?;
        n += batch.tags.len();
    }
    Ok(n)
}
