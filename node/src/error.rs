//! Why a keyring could not be made or opened, told apart by what an
//! operator does about it: wait for or stop the other process
//! ([`OpenError::Locked`]), fix owner or mode ([`OpenError::Permissions`]),
//! look at one key or store file ([`OpenError::Key`], [`OpenError::Store`]),
//! or at the disk itself ([`OpenError::Io`]). Each names its file.
//!
//! Disk mode's own calls after the start (a rotation's new files, a
//! retirement's deletions) fail with the same type, for the node's log
//! ([`Keyring::take_disk_error`](crate::Keyring::take_disk_error)).

use std::io;
use std::path::{Path, PathBuf};

use crate::epochs::PolicyError;

/// A keyring could not be made or opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The [`EpochPolicy`](crate::EpochPolicy) does not hold together.
    #[error("epoch policy: {0}")]
    Policy(#[from] PolicyError),
    /// Disk mode: another process (or another keyring in this one) holds
    /// the directory. Two nodes on one directory would accept each
    /// other's replays: stop the other one, or give this one its own
    /// directory.
    #[error("{}: locked by another process using this directory: refusing to share it", .path.display())]
    Locked {
        /// The directory.
        path: PathBuf,
    },
    /// Disk mode: the directory or a file in it is not as only this
    /// node's user could have made it: a directory not owned by that
    /// user or writable by group or others, or a key or store that is a
    /// symbolic link, not a regular file, not that user's, or open to
    /// group or others. Refused before any key is loaded (someone else
    /// may have planted or read it): `chmod 0700 DIR`, `chmod 0600
    /// DIR/epoch-*`, or start on an empty directory if in doubt.
    #[error("{}: {reason}", .path.display())]
    Permissions {
        /// The directory or file refused.
        path: PathBuf,
        /// What about it.
        reason: String,
    },
    /// Disk mode: a key file (or `node.secret`, the key of the stores'
    /// marks) that does not load, or that this node did not make. The
    /// node cannot resume that epoch: start on an empty directory (fresh
    /// keys, published) unless the file can be put back as it was.
    #[error("key {}: {reason}", .path.display())]
    Key {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Disk mode: a replay store missing beside its key, truncated,
    /// damaged, another epoch's or another key's, or not made by this
    /// node. Never replaced by an empty one (that would accept
    /// replays): start on an empty directory, as after a lost disk.
    #[error("replay store {}: {reason}", .path.display())]
    Store {
        /// The store file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Disk mode: an I/O error on `path` (a full or failing disk, a
    /// directory that cannot be read or written): the disk needs
    /// looking at; nothing in the directory was found wrong.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory the call was on.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl OpenError {
    /// The file or directory the error is about (`None` for
    /// [`OpenError::Policy`]).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::Policy(_) => None,
            Self::Locked { path }
            | Self::Permissions { path, .. }
            | Self::Key { path, .. }
            | Self::Store { path, .. }
            | Self::Io { path, .. } => Some(path),
        }
    }

    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            source,
        }
    }

    pub(crate) fn permissions(path: &Path, reason: impl std::fmt::Display) -> Self {
        Self::Permissions {
            path: path.to_owned(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn key(path: &Path, reason: impl std::fmt::Display) -> Self {
        Self::Key {
            path: path.to_owned(),
            reason: reason.to_string(),
        }
    }
}
