//! Disk mode's replay store: one redb database per key epoch, holding the
//! replay tags of the packets that epoch's key unwrapped (the truth, exact),
//! and the epoch's number and start time.
//!
//! The Bloom filter ([`crate::filter`]) stays in front: a tag it has
//! certainly not seen needs no lookup here; a tag it may have seen is looked
//! up, so a Bloom false positive never drops an honest packet in disk mode.
//! Tags are written in groups, each group one write transaction committed
//! with [`Durability::Immediate`] (an `fsync` before the commit returns);
//! see [`crate::journal`] for who waits for it.
//!
//! Opening never makes an empty store where one is expected: a missing,
//! truncated or corrupt file (every page's checksum is verified on open)
//! is an error naming the file ([`StoreError`]), because an empty or
//! partial replay cache accepts replays.
//!
//! Every commit is two-phase (redb's [`WriteTransaction::set_two_phase_commit`],
//! one more `fsync`): with a one-phase commit, redb recovering an
//! uncleanly closed file falls back to the commit before the last when
//! the last one's header slot or newest pages do not verify, and the last
//! group's tags would be gone although their packets left. Two-phase, the
//! last commit's slot is valid once written, and damage to it or its pages
//! fails the integrity check on open instead.
//!
//! A store is bound to its epoch's key: it records the public key it was
//! made for, and opening it for another key (a store copied from another
//! node, or another epoch's with the same number) is refused. It is bound
//! to the directory that made it too: it records a mark (an HMAC of its
//! number and public key under the directory's secret, [`crate::dir`]),
//! so a key and store planted by someone else, or copied from another
//! node, are refused. The file is
//! created with mode 0600, before redb writes to it.
//!
//! [`WriteTransaction::set_two_phase_commit`]: redb::WriteTransaction::set_two_phase_commit

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::OpenError;
use kemsphinx::{PublicKey, ReplayTag};
use redb::{Database, Durability, ReadOnlyTable, ReadableDatabase, ReadableTable, TableDefinition};

/// The tags: key = the 32-byte tag as a byte string, no value. (A byte
/// string, not redb's `[u8; 32]`: that type compares and decodes keys one
/// element at a time, which made redb's B-tree work per tag several times
/// dearer, in every commit and in the rebuild on restart.)
const TAGS: TableDefinition<'_, &[u8], ()> = TableDefinition::new("replay_tags");
/// The epoch: "number", "started" (milliseconds since the Unix epoch) and
/// "ahead" (1 if it was made as the next epoch, published ahead).
const META: TableDefinition<'_, &str, u64> = TableDefinition::new("epoch");
/// The public key the store was made for: "public_key"; and "maker", the
/// mark of the directory that made it ([`crate::dir`]).
const KEY: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("key");

/// A store could not be opened or used. Always names the file.
#[derive(Debug)]
pub(crate) struct StoreError {
    /// The database file.
    pub(crate) path: PathBuf,
    /// What went wrong.
    pub(crate) what: String,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "replay store {}: {}", self.path.display(), self.what)
    }
}

impl std::error::Error for StoreError {}

/// A store found wrong on start: [`OpenError::Store`], naming it.
impl From<StoreError> for OpenError {
    fn from(e: StoreError) -> Self {
        OpenError::Store {
            path: e.path,
            reason: e.what,
        }
    }
}

impl StoreError {
    /// A store that could not be made (a new epoch's): the disk's fault,
    /// not the file's ([`OpenError::Io`]).
    pub(crate) fn into_io(self) -> OpenError {
        OpenError::Io {
            path: self.path,
            source: io::Error::other(self.what),
        }
    }
}

/// One epoch's replay tags on disk.
pub(crate) struct Store {
    /// The database; `None` only while a reopen after an error failed.
    /// redb refuses every write after an I/O error until the file is
    /// reopened, so a failed commit marks the store `broken` and the next
    /// commit reopens it first (a disk that filled up and has room again
    /// then takes the retried tags).
    db: RwLock<Option<Database>>,
    broken: AtomicBool,
    /// Its epoch's key file is gone (durably): no packet can be unwrapped
    /// for this store again, so tags still queued for it need not be
    /// committed (and cannot be, once the file is deleted).
    retired: AtomicBool,
    path: PathBuf,
    number: u64,
    started: SystemTime,
    /// Whether it was made as the next epoch (`None`: not recorded).
    ahead: Option<bool>,
    /// redb's page cache, bytes ([`crate::EpochPolicy::store_cache`]).
    cache: usize,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("number", &self.number)
            .finish_non_exhaustive()
    }
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` milliseconds after the Unix epoch; a time past what this
/// platform's clock holds (a damaged record) is taken as the epoch itself,
/// never a panic.
fn since_unix_epoch(ms: u64) -> SystemTime {
    UNIX_EPOCH
        .checked_add(Duration::from_millis(ms))
        .unwrap_or(UNIX_EPOCH)
}

impl Store {
    fn err(path: &Path, what: impl fmt::Display) -> StoreError {
        StoreError {
            path: path.to_owned(),
            what: what.to_string(),
        }
    }

    /// Create a new, empty store (mode 0600) for epoch `number` of `key`,
    /// started at `started`; its epoch record is durable when this
    /// returns. Refuses if the file exists.
    ///
    /// # Errors
    /// The file exists, or any database or I/O error.
    pub(crate) fn create(
        path: &Path,
        number: u64,
        key: &PublicKey,
        started: SystemTime,
        maker: &[u8; 32],
        ahead: bool,
        cache: usize,
    ) -> Result<Self, StoreError> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        // Made empty with its mode here; redb initialises an empty file.
        crate::fault::check(path, crate::fault::Point::StoreFile)
            .map_err(|e| Self::err(path, e))?;
        drop(options.open(path).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                Self::err(path, "exists; not replacing a replay store")
            } else {
                Self::err(path, e)
            }
        })?);
        let db = redb::Builder::new()
            .set_cache_size(cache)
            .create(path)
            .map_err(|e| Self::err(path, e))?;
        let mut tx = db.begin_write().map_err(|e| Self::err(path, e))?;
        tx.set_durability(Durability::Immediate)
            .map_err(|e| Self::err(path, e))?;
        tx.set_two_phase_commit(true);
        {
            let mut bound = tx.open_table(KEY).map_err(|e| Self::err(path, e))?;
            bound
                .insert("public_key", &key.as_bytes()[..])
                .map_err(|e| Self::err(path, e))?;
            bound
                .insert("maker", &maker[..])
                .map_err(|e| Self::err(path, e))?;
            drop(bound);
            let mut meta = tx.open_table(META).map_err(|e| Self::err(path, e))?;
            meta.insert("number", number)
                .map_err(|e| Self::err(path, e))?;
            meta.insert("started", millis(started))
                .map_err(|e| Self::err(path, e))?;
            meta.insert("ahead", u64::from(ahead))
                .map_err(|e| Self::err(path, e))?;
            tx.open_table(TAGS).map_err(|e| Self::err(path, e))?;
        }
        crate::fault::check(path, crate::fault::Point::StoreInit)
            .map_err(|e| Self::err(path, e))?;
        tx.commit().map_err(|e| Self::err(path, e))?;
        Ok(Self {
            db: RwLock::new(Some(db)),
            broken: AtomicBool::new(false),
            retired: AtomicBool::new(false),
            path: path.to_owned(),
            number,
            started: since_unix_epoch(millis(started)),
            ahead: Some(ahead),
            cache,
        })
    }

    /// Open the existing store of epoch `number` of `key`: the file must
    /// exist, be a redb database (repaired by redb if the last run did not
    /// close it) and hold this epoch's record, `key` and a tag table.
    ///
    /// # Errors
    /// Missing file, not a database, truncated or corrupt, another
    /// epoch's store or another key's: each an error naming the file.
    pub(crate) fn open(
        path: &Path,
        number: u64,
        key: &PublicKey,
        maker: &[u8; 32],
        cache: usize,
    ) -> Result<Self, StoreError> {
        let len = std::fs::metadata(path)
            .map_err(|e| Self::err(path, format!("cannot open: {e}")))?
            .len();
        if len == 0 {
            return Err(Self::err(path, "empty file (truncated?)"));
        }
        let db = Self::open_db(path, cache)?;
        let (got, started, ahead) = {
            let tx = db.begin_read().map_err(|e| Self::err(path, e))?;
            let meta = tx
                .open_table(META)
                .map_err(|e| Self::err(path, format!("no epoch record: {e}")))?;
            tx.open_table(TAGS)
                .map_err(|e| Self::err(path, format!("no tag table: {e}")))?;
            let get = |k: &str| -> Result<u64, StoreError> {
                meta.get(k)
                    .map_err(|e| Self::err(path, e))?
                    .map(|v| v.value())
                    .ok_or_else(|| Self::err(path, format!("epoch record lacks {k:?}")))
            };
            let bound = tx
                .open_table(KEY)
                .map_err(|e| Self::err(path, format!("not bound to a key: {e}")))?;
            let same = bound
                .get("public_key")
                .map_err(|e| Self::err(path, e))?
                .is_some_and(|v| v.value() == &key.as_bytes()[..]);
            if !same {
                return Err(Self::err(
                    path,
                    "made for another key than this epoch's (another node's store, or a \
                     replaced key): refusing its tags",
                ));
            }
            let made_here = bound
                .get("maker")
                .map_err(|e| Self::err(path, e))?
                .is_some_and(|v| v.value() == &maker[..]);
            if !made_here {
                return Err(Self::err(
                    path,
                    "not made by this node (its mark does not verify under the directory's \
                     node.secret): refusing it and its key, which someone else may know",
                ));
            }
            let ahead = meta
                .get("ahead")
                .map_err(|e| Self::err(path, e))?
                .map(|v| v.value() != 0);
            (get("number")?, get("started")?, ahead)
        };
        if got != number {
            return Err(Self::err(path, format!("holds epoch {got}, not {number}")));
        }
        Ok(Self {
            db: RwLock::new(Some(db)),
            broken: AtomicBool::new(false),
            retired: AtomicBool::new(false),
            path: path.to_owned(),
            number,
            started: since_unix_epoch(started),
            ahead,
            cache,
        })
    }

    /// Open the database file, every page's checksum verified (redb
    /// otherwise checks only after a crash, and may trust or even panic on
    /// a file altered since it wrote it): part of the restart time
    /// measured.
    fn open_db(path: &Path, cache: usize) -> Result<Database, StoreError> {
        redb::Builder::new()
            .set_cache_size(cache)
            .set_check_integrity_on_open(true)
            .open(path)
            .map_err(|e| Self::err(path, format!("corrupt or truncated: {e}")))
    }

    /// The database, for reading or one write transaction: `None` while a
    /// reopen after an error has failed.
    fn db(&self) -> Result<std::sync::RwLockReadGuard<'_, Option<Database>>, StoreError> {
        self.db
            .read()
            .map_err(|_| Self::err(&self.path, "lock poisoned"))
    }

    /// After a failed commit: close the file and open it again.
    fn reopen(&self) -> Result<(), StoreError> {
        let mut guard = self
            .db
            .write()
            .map_err(|_| Self::err(&self.path, "lock poisoned"))?;
        // The old handle holds redb's lock on the file: closed first.
        drop(guard.take());
        *guard = Some(Self::open_db(&self.path, self.cache)?);
        self.broken.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Mark the store's epoch retired: its key file is durably deleted.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    /// Whether its epoch is retired ([`retire`](Self::retire)).
    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }

    /// Whether the epoch was made as the next one, published ahead
    /// (`None`: the store does not say).
    pub(crate) fn ahead(&self) -> Option<bool> {
        self.ahead
    }

    /// When the epoch started (wall clock, to the millisecond).
    pub(crate) fn started(&self) -> SystemTime {
        self.started
    }

    /// Insert `tags` in one transaction, durable when this returns.
    ///
    /// # Errors
    /// Any database or I/O error (a full disk among them); then none of
    /// `tags` is in the store.
    pub(crate) fn commit(&self, tags: &[ReplayTag]) -> Result<(), StoreError> {
        if self.broken.load(Ordering::Relaxed) {
            self.reopen()?;
        }
        let result = self.commit_once(tags);
        if result.is_err() {
            self.broken.store(true, Ordering::Relaxed);
        }
        result
    }

    fn commit_once(&self, tags: &[ReplayTag]) -> Result<(), StoreError> {
        let path = &self.path;
        crate::fault::check(path, crate::fault::Point::StoreCommit)
            .map_err(|e| Self::err(path, e))?;
        let guard = self.db()?;
        let db = guard
            .as_ref()
            .ok_or_else(|| Self::err(path, "not open (a reopen after an error failed)"))?;
        let mut tx = db.begin_write().map_err(|e| Self::err(path, e))?;
        tx.set_durability(Durability::Immediate)
            .map_err(|e| Self::err(path, e))?;
        tx.set_two_phase_commit(true);
        {
            let mut table = tx.open_table(TAGS).map_err(|e| Self::err(path, e))?;
            for tag in tags {
                table
                    .insert(&tag.0[..], ())
                    .map_err(|e| Self::err(path, e))?;
            }
        }
        tx.commit().map_err(|e| Self::err(path, e))
    }

    /// Run `f` on the tag table in a read transaction.
    fn read_tags<T>(
        &self,
        f: impl FnOnce(&ReadOnlyTable<&'static [u8], ()>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let path = &self.path;
        let guard = self.db()?;
        let db = guard
            .as_ref()
            .ok_or_else(|| Self::err(path, "not open (a reopen after an error failed)"))?;
        let tx = db.begin_read().map_err(|e| Self::err(path, e))?;
        let table = tx.open_table(TAGS).map_err(|e| Self::err(path, e))?;
        f(&table)
    }

    /// Whether `tag` is in the store (exact).
    ///
    /// # Errors
    /// Any database or I/O error.
    pub(crate) fn contains(&self, tag: &ReplayTag) -> Result<bool, StoreError> {
        self.read_tags(|table| {
            let found = table
                .get(&tag.0[..])
                .map_err(|e| Self::err(&self.path, e))?;
            Ok(found.is_some())
        })
    }

    /// Call `f` on every tag (to rebuild the Bloom filter on start);
    /// returns how many.
    ///
    /// # Errors
    /// Any database or I/O error.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&ReplayTag)) -> Result<u64, StoreError> {
        let path = &self.path;
        self.read_tags(|table| {
            let mut n = 0;
            for entry in table.iter().map_err(|e| Self::err(path, e))? {
                let (k, _) = entry.map_err(|e| Self::err(path, e))?;
                let tag = <[u8; 32]>::try_from(k.value())
                    .map_err(|_| Self::err(path, "a stored tag is not 32 bytes long"))?;
                f(&ReplayTag(tag));
                n += 1;
            }
            Ok(n)
        })
    }
}
