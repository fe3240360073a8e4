//! Durable before forwarded: group commit of replay tags (disk mode).
//!
//! The receiving thread hands each new tag to the journal and gets back
//! the number of the group it joined; the packet is held for its
//! `node_delay` with that number, and the egress thread sends it only once
//! that group is durable ([`Journal::durable`]). One committer thread takes
//! everything handed in since its last commit as one group and commits it
//! ([`crate::store::Store::commit`], one `fsync`); tags that arrive during
//! a commit form the next group. So the group interval adapts to the disk:
//! it is one commit's time, or `min_interval` ([`GROUP_INTERVAL`] in the
//! node) if that is longer, and a
//! packet whose delay is shorter than the time to its group's commit waits
//! that much longer (measured: see README).
//!
//! A failed commit (a full disk) is logged; its tags stay in the journal
//! and are retried every [`RETRY`] (the store reopens its file first: redb
//! writes nothing more after an I/O error until then), so nothing after
//! them becomes durable and nothing is forwarded until a commit succeeds.
//! Meanwhile ([`Journal::failing`]) the receiving thread still drops
//! replays of every tag it knows, and drops new packets before any work
//! without remembering them, so memory does not grow with traffic; no new
//! epoch starts. Once there is room again, the retry succeeds and
//! forwarding resumes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use kemsphinx::ReplayTag;

use crate::log::Log;
use crate::store::Store;

/// The node's group interval: a commit starts at most this long after the
/// previous one started (or as soon as it ends, if it took longer). Longer
/// groups cost fewer commits (less CPU and disk per tag) and add up to
/// this much to the wait of a packet whose delay is shorter; mixing delays
/// are usually far longer. Measured: `results/`, README "Disk mode".
pub const GROUP_INTERVAL: Duration = Duration::from_millis(5);

/// How long the committer waits after a failed commit before the next try.
pub const RETRY: Duration = Duration::from_millis(200);

#[derive(Default)]
struct State {
    /// The group new tags join (groups count from 1).
    next: u64,
    tags: Vec<(Arc<Store>, ReplayTag)>,
    stop: bool,
}

/// A node's group-commit queue.
pub struct Journal {
    state: Mutex<State>,
    wake: Condvar,
    durable: AtomicU64,
    failing: AtomicBool,
    min_interval: Duration,
    commits: AtomicU64,
}

impl Journal {
    /// A journal that commits at most once per `min_interval` (zero: as
    /// soon as the previous commit is done).
    pub fn new(min_interval: Duration) -> Self {
        Self {
            state: Mutex::new(State {
                next: 1,
                ..State::default()
            }),
            wake: Condvar::new(),
            durable: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            min_interval,
            commits: AtomicU64::new(0),
        }
    }

    /// Queue `tag` for `store`; returns its group.
    pub fn add(&self, store: &Arc<Store>, tag: ReplayTag) -> u64 {
        let mut state = self.state.lock().expect("journal lock");
        state.tags.push((Arc::clone(store), tag));
        let group = state.next;
        drop(state);
        self.wake.notify_one();
        group
    }

    /// Every group up to this one is durable.
    pub fn durable(&self) -> u64 {
        self.durable.load(Ordering::Acquire)
    }

    /// Whether the last commit failed.
    pub fn failing(&self) -> bool {
        self.failing.load(Ordering::Relaxed)
    }

    /// Successful commits so far.
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// Make the committer return once everything queued is committed (or
    /// has failed once more).
    pub fn stop(&self) {
        self.state.lock().expect("journal lock").stop = true;
        self.wake.notify_all();
    }

    /// The committer: commit each group, call `durable` after each
    /// success; until [`stop`](Self::stop).
    pub fn run_committer(&self, index: usize, log: &mut Log, durable: impl Fn()) {
        loop {
            let (group, tags, stop) = {
                let mut state = self.state.lock().expect("journal lock");
                while state.tags.is_empty() && !state.stop {
                    state = self.wake.wait(state).expect("journal lock");
                }
                let group = state.next;
                state.next += 1;
                (group, std::mem::take(&mut state.tags), state.stop)
            };
            if tags.is_empty() && stop {
                return;
            }
            let started = Instant::now();
            match commit(&tags) {
                Ok(()) => {
                    self.durable.store(group, Ordering::Release);
                    self.commits.fetch_add(1, Ordering::Relaxed);
                    if self.failing.swap(false, Ordering::Relaxed) {
                        log.line(Instant::now(), || {
                            format!("n{index}: replay store writable again; forwarding resumes")
                        });
                    }
                    durable();
                }
                Err(e) => {
                    self.failing.store(true, Ordering::Relaxed);
                    log.line(Instant::now(), || {
                        format!(
                            "n{index}: {e}; not forwarding until the replay tags are durable \
                             (still checking every packet)"
                        )
                    });
                    let mut state = self.state.lock().expect("journal lock");
                    let newer = std::mem::replace(&mut state.tags, tags);
                    state.tags.extend(newer);
                    if state.stop {
                        return;
                    }
                    drop(state);
                    std::thread::sleep(RETRY);
                }
            }
            if let Some(rest) = self.min_interval.checked_sub(started.elapsed()) {
                std::thread::sleep(rest);
            }
        }
    }
}

/// Commit `tags`, one transaction per store (a group may hold tags of two
/// epochs).
fn commit(tags: &[(Arc<Store>, ReplayTag)]) -> Result<(), crate::store::StoreError> {
    let mut stores: Vec<&Arc<Store>> = Vec::new();
    for (store, _) in tags {
        if !stores.iter().any(|s| Arc::ptr_eq(s, store)) {
            stores.push(store);
        }
    }
    for store in stores {
        let batch: Vec<ReplayTag> = tags
            .iter()
            .filter(|(s, _)| Arc::ptr_eq(s, store))
            .map(|(_, t)| *t)
            .collect();
        store.commit(&batch)?;
    }
    Ok(())
}
