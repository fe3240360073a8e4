//! Where a keyring's epochs are kept: in memory, or on disk.
//!
//! Everything disk mode adds to an epoch lives here, behind one type, so
//! that the rotation ([`crate::rotation`]) and the order of checks
//! ([`Keyring`](crate::Keyring)) ask one question instead of threading
//! an `Option` of disk state through every layer: [`Backing::fresh`]
//! makes a new epoch (in disk mode its store and key file too: the one
//! place an epoch's files are made), [`Backing::retire`] deletes a
//! retired epoch's files (the one place they are deleted), and the
//! journal, its group-commit thread and the last failure to write or
//! delete an epoch's files are the [`Disk`]'s. In memory mode each of
//! these is nothing, or at once.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime};

use kemsphinx::PrivateKey;

use crate::dir::PersistDir;
use crate::epochs::{Epoch, EpochPolicy};
use crate::error::OpenError;
use crate::health::Recorder;
use crate::journal::Journal;
use crate::store::Store;

/// Where the epochs are kept.
pub(crate) enum Backing {
    /// Nothing is written anywhere; a restart starts afresh.
    Memory,
    /// In a directory, each epoch's tags committed in groups.
    Disk(Disk),
}

/// Disk mode: the directory, the journal of tags waiting for their group
/// commit and the thread that commits them, and the last failure to
/// write or delete an epoch's files.
pub(crate) struct Disk {
    dir: PersistDir,
    journal: Arc<Journal>,
    committer: Mutex<Option<JoinHandle<()>>>,
    /// The last failure to write or delete an epoch's files.
    error: Mutex<Option<String>>,
}

impl Disk {
    /// Disk mode in `dir`, its commit thread not started yet
    /// ([`start`](Self::start), once the epochs found are resumed).
    pub(crate) fn new(dir: PersistDir) -> Self {
        Self {
            dir,
            journal: Arc::new(Journal::new()),
            committer: Mutex::new(None),
            error: Mutex::new(None),
        }
    }

    /// The directory.
    pub(crate) fn dir(&self) -> &PersistDir {
        &self.dir
    }

    /// Start the group-commit thread.
    ///
    /// # Errors
    /// [`OpenError::Io`] if the thread cannot be started.
    pub(crate) fn start(self) -> Result<Self, OpenError> {
        let committer = {
            let journal = Arc::clone(&self.journal);
            std::thread::Builder::new()
                .name("replay-commit".into())
                .spawn(move || journal.run_committer())
                .map_err(|e| OpenError::io(self.dir.path(), e))?
        };
        *self
            .committer
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(committer);
        Ok(self)
    }

    /// A new epoch `number` with `key`, its files made (marked as a next
    /// epoch if `ahead`); `started` on the keyring's clock, `wall` the
    /// wall clock's time, recorded in its store.
    ///
    /// # Errors
    /// The files could not be made (none of them is left).
    pub(crate) fn fresh(
        &self,
        policy: &EpochPolicy,
        number: u64,
        key: PrivateKey,
        (started, wall): (Instant, SystemTime),
        ahead: bool,
    ) -> Result<Epoch, OpenError> {
        let store = self.dir.create(number, &key, wall, ahead)?;
        let mut e = Epoch::new(policy, number, key, started);
        e.store = Some(Arc::new(store));
        Ok(e)
    }
}

impl Backing {
    /// Disk mode: the journal of tags waiting for their group commit.
    pub(crate) fn journal(&self) -> Option<&Journal> {
        match self {
            Self::Memory => None,
            Self::Disk(d) => Some(&d.journal),
        }
    }

    /// Disk mode: what [`Keyring::health`](crate::Keyring::health) reads
    /// beside the epochs.
    pub(crate) fn recorder(&self) -> Option<&Recorder> {
        self.journal().map(|j| &j.health)
    }

    /// Disk mode: commit what is queued (one more try if the disk is
    /// failing) and stop the commit thread (when the keyring is dropped).
    pub(crate) fn stop(&self) {
        let Self::Disk(d) = self else {
            return;
        };
        d.journal.stop();
        let handle = d
            .committer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }

    /// Whether the epochs are kept on disk.
    pub(crate) fn is_disk(&self) -> bool {
        matches!(self, Self::Disk(_))
    }

    /// Disk mode: whether the replay store cannot be written now.
    pub(crate) fn failing(&self) -> bool {
        self.journal().is_some_and(Journal::failing)
    }

    /// "Make a fresh epoch, on disk if disk mode": a new epoch `number`
    /// with `key`, started at `started` (the keyring's clock); in disk
    /// mode its store and key file made (marked as a next epoch if
    /// `ahead`, the store recording `wall`).
    ///
    /// # Errors
    /// Disk mode: its files could not be made.
    pub(crate) fn fresh(
        &self,
        policy: &EpochPolicy,
        number: u64,
        key: PrivateKey,
        at: (Instant, SystemTime),
        ahead: bool,
    ) -> Result<Epoch, OpenError> {
        match self {
            Self::Memory => Ok(Epoch::new(policy, number, key, at.0)),
            Self::Disk(d) => d.fresh(policy, number, key, at, ahead),
        }
    }

    /// Delete retired epoch `number`'s files (disk mode); once its key
    /// file is durably gone, its store's queued tags are dropped.
    ///
    /// # Errors
    /// Disk mode: a file could not be deleted (try again later).
    pub(crate) fn retire(&self, number: u64, store: Option<&Arc<Store>>) -> Result<(), OpenError> {
        let Self::Disk(d) = self else {
            return Ok(());
        };
        d.dir.retire(number, || {
            if let Some(s) = store {
                s.retire();
            }
        })
    }

    /// Record a failure to write or delete an epoch's files (disk mode).
    pub(crate) fn set_error(&self, e: String) {
        let Self::Disk(d) = self else {
            return;
        };
        d.journal.health.failed(e.clone(), false);
        *d.error.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
    }

    /// Disk mode: the last failure to commit tags or to write or delete
    /// an epoch's files, once.
    pub(crate) fn take_error(&self) -> Option<String> {
        let Self::Disk(d) = self else {
            return None;
        };
        let commit = d.journal.take_error();
        let files = d
            .error
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
