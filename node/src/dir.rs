//! Disk mode's directory: each live epoch's private key and replay store.
//!
//! ```text
//! DIR/epoch-00000007.key    the epoch's private key, PEM, mode 0600
//! DIR/epoch-00000007.redb   its replay store (crate::store)
//! DIR/node.secret           the key of the stores' marks, mode 0600
//! ```
//!
//! A new epoch's store is made (and made durable) before its key file, and
//! a retired epoch's key file is deleted before its store, so a crash at
//! any moment leaves at worst a store without a key: no packet was ever
//! unwrapped with that key, or it was retired; such a store is deleted on
//! start. A key without its store is the other way round, and is an error:
//! the node would accept replays of every packet that key unwrapped.
//!
//! A new epoch is made all or nothing ([`PersistDir::create`]): files a
//! failed try left (a store made before the disk filled, a key linked
//! before the directory's `fsync` failed) are deleted on the next try, and
//! on any error the files made so far are deleted at once. So one I/O
//! error, or a disk full at rotation time, makes a rotation late (the
//! keyring tries again a second later), never stuck. A retired epoch's key
//! file is deleted and made durably gone before its store; only then are
//! its tags still waiting for a group commit dropped ([`crate::journal`]).
//!
//! Key files are written as `kemsphinx keygen` writes them: a new
//! temporary file of mode 0600 beside the final name, written in one write
//! and `fsync`ed, linked to its final name (which fails if that exists),
//! the temporary name removed, the directory `fsync`ed. A process killed
//! between the write and the removal leaves a temporary file holding a
//! whole private key: start-up deletes every one it finds.
//!
//! One process at a time: [`PersistDir::new`] takes an exclusive lock
//! (`flock`) on the directory itself, through a handle it holds open as
//! long as any clone of the [`PersistDir`] lives, before it looks at
//! anything in it; a second process (or a second `PersistDir` in one
//! process) is refused, before it could delete the first one's new store
//! as an orphan. The lock is on the directory, not on a file in it (0.1
//! locked `DIR/lock`): deleting a file cannot defeat it, and the only way
//! round it, renaming the directory, gives the second process another
//! directory. (A `DIR/lock` left by 0.1 is ignored.)
//!
//! Epochs are bound to the directory that made them: `DIR/node.secret`
//! (32 random bytes, mode 0600, made with the directory) keys a mark that
//! each store records ([`crate::store`]), so a key and store planted by
//! someone else, or copied from another node, are refused rather than
//! resumed (a planted epoch numbered above the current one would become
//! current, and the node would publish a key someone else knows). A
//! directory with epochs but no secret was not made by this version: it
//! is refused.
//!
//! Nobody else may have put or changed anything here: before a key is
//! loaded, the directory must be owned by the process's effective user
//! and writable by nobody else (group or others), and every key and store
//! must be a regular file (a symbolic link is refused, and the key file
//! read must be the one checked), owned by that user, and neither
//! readable nor writable by group or others (the node makes them 0600).
//! The directory's own path may be a symbolic link (as `/var/lib/node`
//! often is): it names the directory, whose owner and mode are checked.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use kemsphinx::PrivateKey;
use zeroize::Zeroizing;

use crate::error::OpenError;
use crate::fault::{self, Point};
use crate::store::{Store, StoreError};

/// The directory's secret, made with the directory: every store made
/// here carries a mark under it ([`PersistDir::mark`]).
const SECRET: &str = "node.secret";

/// A node's disk-mode directory, locked for this process.
#[derive(Clone)]
pub(crate) struct PersistDir {
    path: PathBuf,
    /// The directory, open and locked: the lock lasts while any clone
    /// holds it.
    _lock: Arc<File>,
    /// The contents of [`SECRET`].
    secret: Arc<Zeroizing<[u8; 32]>>,
    /// Each store's page cache, bytes ([`crate::EpochPolicy::store_cache`]).
    store_cache: usize,
}

impl std::fmt::Debug for PersistDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistDir")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// What [`PersistDir::scan`] found: the epochs with keys, the stores
/// without (deleted), the temporary files (deleted).
pub(crate) type Scanned = (Vec<u64>, Vec<u64>, Vec<PathBuf>);

/// One epoch found on start: its key and its store.
pub(crate) struct Found {
    /// The epoch's number.
    pub(crate) number: u64,
    /// Its private key.
    pub(crate) key: PrivateKey,
    /// Its replay store.
    pub(crate) store: Store,
}

/// An I/O error on `path`, as [`OpenError::Io`].
fn err(path: &Path) -> impl FnOnce(io::Error) -> OpenError + '_ {
    move |e| OpenError::io(path, e)
}

impl PersistDir {
    /// Use `path` (created, mode 0700, if missing), locked against any
    /// other user (see the module docs).
    ///
    /// # Errors
    /// If it cannot be created, is not a directory, or another process
    /// (or `PersistDir`) holds its lock.
    pub(crate) fn new(path: &Path, store_cache: usize) -> Result<Self, OpenError> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(path).map_err(err(path))?;
        if !fs::metadata(path).map_err(err(path))?.is_dir() {
            return Err(OpenError::permissions(path, "not a directory"));
        }
        let lock = File::open(path).map_err(err(path))?;
        check_dir(path, &lock)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(OpenError::Locked {
                    path: path.to_owned(),
                });
            }
            Err(fs::TryLockError::Error(e)) => return Err(OpenError::io(path, e)),
        }
        let secret = Arc::new(secret(path)?);
        Ok(Self {
            path: path.to_owned(),
            _lock: Arc::new(lock),
            secret,
            store_cache,
        })
    }

    /// The mark of epoch `number` of `key` made here: HMAC-SHA-256 under
    /// the directory's secret of a label, the number and the public key.
    pub(crate) fn mark(&self, number: u64, key: &kemsphinx::PublicKey) -> [u8; 32] {
        use hmac::{KeyInit, Mac};
        // Any key length is an HMAC key: a 32-byte one cannot be refused.
        let Ok(mut mac) = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&self.secret[..])
        else {
            return [0; 32];
        };
        mac.update(b"kemsphinx-node epoch store v1");
        mac.update(&number.to_le_bytes());
        mac.update(&key.as_bytes()[..]);
        mac.finalize().into_bytes().into()
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Epoch `number`'s key file.
    pub(crate) fn key_path(&self, number: u64) -> PathBuf {
        self.path.join(format!("epoch-{number:08}.key"))
    }

    /// Epoch `number`'s replay store.
    pub(crate) fn store_path(&self, number: u64) -> PathBuf {
        self.path.join(format!("epoch-{number:08}.redb"))
    }

    /// The numbers of the epochs whose key files are here, oldest first,
    /// and of the stores found without their key file, which are deleted
    /// (as are temporary key files a killed write left: their paths). Nothing is opened: [`open`](Self::open) the
    /// live ones, [`retire`](Self::retire) the rest (an epoch past its
    /// grace is deleted unread, so damage to a store nobody needs any more
    /// never stops a start).
    ///
    /// # Errors
    /// The directory cannot be read, or a file in it not deleted.
    pub(crate) fn scan(&self) -> Result<Scanned, OpenError> {
        let (mut keys, mut stores, mut temporaries) = (Vec::new(), Vec::new(), Vec::new());
        for entry in fs::read_dir(&self.path).map_err(err(&self.path))? {
            let name = entry.map_err(err(&self.path))?.file_name();
            let name = name.to_string_lossy();
            let temporary = name.starts_with(".epoch-") || name.starts_with(".node.secret.");
            if temporary && name.ends_with(".tmp") {
                let temp = self.path.join(&*name);
                fs::remove_file(&temp).map_err(err(&temp))?;
                temporaries.push(temp);
                continue;
            }
            let Some(rest) = name.strip_prefix("epoch-") else {
                continue;
            };
            if let Some(n) = rest
                .strip_suffix(".key")
                .and_then(|n| n.parse::<u64>().ok())
            {
                keys.push(n);
            } else if let Some(n) = rest.strip_suffix(".redb").and_then(|n| n.parse().ok()) {
                stores.push(n);
            }
        }
        keys.sort_unstable();
        stores.retain(|n| !keys.contains(n));
        stores.sort_unstable();
        for orphan in &stores {
            let path = self.store_path(*orphan);
            fs::remove_file(&path).map_err(err(&path))?;
        }
        temporaries.sort_unstable();
        Ok((keys, stores, temporaries))
    }

    /// Epoch `number`'s key and store.
    ///
    /// # Errors
    /// A key file that does not parse, a key without its store, or a store
    /// that does not open (missing, truncated, corrupt, another key's):
    /// each names the file.
    pub(crate) fn open(&self, number: u64) -> Result<Found, OpenError> {
        let key_path = self.key_path(number);
        let store_path = self.store_path(number);
        let checked = check_file(&key_path)?;
        if store_path.exists() || fs::symlink_metadata(&store_path).is_ok() {
            check_file(&store_path)?;
        }
        let text = Zeroizing::new(read_checked(&key_path, &checked)?);
        let key = PrivateKey::from_pem(&text).map_err(|e| OpenError::key(&key_path, e))?;
        if !store_path.exists() {
            return Err(OpenError::Store {
                path: store_path,
                reason: format!(
                    "missing, but its key {} is here: refusing to start with an empty replay \
                     cache (it would accept replays)",
                    key_path.display()
                ),
            });
        }
        let store = Store::open(
            &store_path,
            number,
            key.public_key(),
            &self.mark(number, key.public_key()),
            self.store_cache,
        )
        .map_err(OpenError::from)?;
        Ok(Found { number, key, store })
    }

    /// Make epoch `number`'s store, then its key file (see the module
    /// docs for the order), all or nothing: any files of that number a
    /// failed try left are deleted first (the caller makes only numbers
    /// above every live epoch's, so no packet was ever unwrapped with
    /// them), and on any error every file made is deleted again. A full
    /// or failing disk therefore makes a rotation late, never stuck.
    ///
    /// # Errors
    /// Any I/O error (then, as far as the disk lets them be deleted, no
    /// file of the epoch is left; a later try deletes the rest).
    pub(crate) fn create(
        &self,
        number: u64,
        key: &PrivateKey,
        started: SystemTime,
        ahead: bool,
    ) -> Result<Store, OpenError> {
        self.discard(number)?;
        self.try_create(number, key, started, ahead)
            .inspect_err(|_| {
                let _ = self.discard(number);
            })
    }

    fn try_create(
        &self,
        number: u64,
        key: &PrivateKey,
        started: SystemTime,
        ahead: bool,
    ) -> Result<Store, OpenError> {
        let mark = self.mark(number, key.public_key());
        let store = Store::create(
            &self.store_path(number),
            number,
            key.public_key(),
            started,
            &mark,
            ahead,
            self.store_cache,
        )
        .map_err(StoreError::into_io)?;
        sync_dir(&self.path)?;
        write_key(&self.key_path(number), &key.to_pem()[..])?;
        sync_dir(&self.path)?;
        Ok(store)
    }

    /// Delete every file of epoch `number` (key, store, temporary key
    /// files), durably; nothing to do (no call) if there is none.
    fn discard(&self, number: u64) -> Result<(), OpenError> {
        let (final_name, temp_name) = (
            format!("epoch-{number:08}."),
            format!(".epoch-{number:08}.key."),
        );
        let mut removed = false;
        for entry in fs::read_dir(&self.path).map_err(err(&self.path))? {
            let name = entry.map_err(err(&self.path))?.file_name();
            let text = name.to_string_lossy();
            if text.starts_with(&final_name) || text.starts_with(&temp_name) {
                let path = self.path.join(&name);
                remove(&path)?;
                removed = true;
            }
        }
        if removed {
            sync_dir(&self.path)?;
        }
        Ok(())
    }

    /// Delete epoch `number`'s key file, durably, then (`key_gone` called
    /// in between) its store.
    ///
    /// # Errors
    /// Any I/O error but a file already gone.
    pub(crate) fn retire(&self, number: u64, key_gone: impl FnOnce()) -> Result<(), OpenError> {
        remove(&self.key_path(number))?;
        sync_dir(&self.path)?;
        key_gone();
        remove(&self.store_path(number))?;
        sync_dir(&self.path)
    }
}

/// Remove the file `path`; one already gone is no error.
fn remove(path: &Path) -> Result<(), OpenError> {
    match unlink(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(OpenError::io(path, e)),
        _ => Ok(()),
    }
}

/// The directory's secret: read (checked as a key is), or made if the
/// directory holds no epoch yet. Epochs without it were not made here (or
/// by 0.1, which had none): refused, as their keys may be known to
/// someone else.
fn secret(dir: &Path) -> Result<Zeroizing<[u8; 32]>, OpenError> {
    let path = dir.join(SECRET);
    let mut secret = Zeroizing::new([0u8; 32]);
    if fs::symlink_metadata(&path).is_ok() {
        let checked = check_file(&path)?;
        let bytes = Zeroizing::new(read_checked(&path, &checked)?);
        if bytes.len() != secret.len() {
            return Err(OpenError::key(&path, "not 32 bytes long"));
        }
        secret.copy_from_slice(&bytes);
        return Ok(secret);
    }
    for entry in fs::read_dir(dir).map_err(err(dir))? {
        let name = entry.map_err(err(dir))?.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("epoch-") && name.ends_with(".key") {
            return Err(OpenError::key(
                &path,
                format!(
                    "missing, but {name} is here: epochs this node did not make (or that 0.1 \
                     made): refusing them; start with an empty directory"
                ),
            ));
        }
    }
    getrandom::fill(&mut secret[..])
        .map_err(|e| OpenError::io(&path, io::Error::other(format!("OS RNG: {e}"))))?;
    write_key(&path, &secret[..])?;
    sync_dir(dir)?;
    Ok(secret)
}

/// The process's effective user.
#[cfg(unix)]
fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The directory (open as `handle`) is a directory, owned by this user
/// and writable by nobody else.
fn check_dir(path: &Path, handle: &File) -> Result<(), OpenError> {
    let meta = handle.metadata().map_err(err(path))?;
    if !meta.is_dir() {
        return Err(OpenError::permissions(path, "not a directory"));
    }
    owned_and_closed(
        path,
        &meta,
        0o022,
        "writable by group or others, who could plant or swap keys (chmod 0700)",
    )
}

/// `meta` (of `path`) is owned by this process's user and has none of the
/// mode bits in `refused` (on Unix; elsewhere nothing to check).
#[cfg_attr(not(unix), allow(unused_variables))]
fn owned_and_closed(
    path: &Path,
    meta: &fs::Metadata,
    refused: u32,
    why: &str,
) -> Result<(), OpenError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != euid() {
            return Err(OpenError::permissions(
                path,
                format!(
                    "owned by user {}, not by this process's ({})",
                    meta.uid(),
                    euid()
                ),
            ));
        }
        if meta.mode() & refused != 0 {
            return Err(OpenError::permissions(
                path,
                format!("mode {:o}: {why}", meta.mode() & 0o7777),
            ));
        }
    }
    Ok(())
}

/// A key or store: a regular file, not a symbolic link, owned by this
/// user, neither readable nor writable by group or others. Returns what
/// was checked.
fn check_file(path: &Path) -> Result<fs::Metadata, OpenError> {
    let meta = fs::symlink_metadata(path).map_err(err(path))?;
    if meta.file_type().is_symlink() {
        return Err(OpenError::permissions(
            path,
            "a symbolic link: refusing to follow it",
        ));
    }
    if !meta.is_file() {
        return Err(OpenError::permissions(path, "not a regular file"));
    }
    owned_and_closed(
        path,
        &meta,
        0o077,
        "open to group or others (the node makes it 0600)",
    )?;
    Ok(meta)
}

/// Read the file `path` whose name [`check_file`] checked as `checked`,
/// refusing if what was opened is another file (swapped in between).
fn read_checked(path: &Path, checked: &fs::Metadata) -> Result<Vec<u8>, OpenError> {
    let mut file = File::open(path).map_err(err(path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let opened = file.metadata().map_err(err(path))?;
        if (opened.dev(), opened.ino()) != (checked.dev(), checked.ino()) {
            return Err(OpenError::permissions(
                path,
                "replaced while it was being checked",
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = checked;
    // Sized at once: no reallocation leaves copies of the key behind.
    let mut bytes = Vec::with_capacity(usize::try_from(checked.len()).unwrap_or(0) + 1);
    io::Read::read_to_end(&mut file, &mut bytes).map_err(err(path))?;
    Ok(bytes)
}

/// `fsync` a directory, so that names made or removed in it are durable.
fn sync_dir(path: &Path) -> Result<(), OpenError> {
    fault::check(path, Point::DirSync)
        .and_then(|()| File::open(path))
        .and_then(|d| d.sync_all())
        .map_err(err(path))
}

/// Write `bytes` to a new file `target` of mode 0600, atomically: whole or
/// not at all, never over an existing file.
fn write_key(target: &Path, bytes: &[u8]) -> Result<(), OpenError> {
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce)
        .map_err(|e| OpenError::io(target, io::Error::other(format!("OS RNG: {e}"))))?;
    let mut name = OsString::from(".");
    name.push(target.file_name().unwrap_or_default());
    name.push(format!(".{:016x}.tmp", u64::from_le_bytes(nonce)));
    let temp = target.with_file_name(name);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = fault::check(&temp, Point::KeyFile)
        .and_then(|()| options.open(&temp))
        .and_then(|mut file| {
            file.write_all(bytes)?;
            fault::check(&temp, Point::KeySync)?;
            file.sync_all()
        });
    let linked = written
        .and_then(|()| fault::check(target, Point::KeyLink))
        .and_then(|()| fs::hard_link(&temp, target));
    // The temporary name holds the whole key: not removing it is an error
    // (the caller deletes what it can, and start-up every one left).
    let removed = unlink(&temp).map_err(err(&temp));
    linked.map_err(err(target)).and(removed)
}

/// Remove the file `path`.
fn unlink(path: &Path) -> io::Result<()> {
    fault::check(path, Point::Unlink)?;
    fs::remove_file(path)
}
