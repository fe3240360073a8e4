//! Why a datagram was dropped, and how many were, per reason.
//!
//! Every refusal of [`Keyring::receive`](crate::Keyring::receive) is one
//! of these, and counted as it is returned: a node's statistics need no
//! bookkeeping of their own, and a flood of any one kind shows as that
//! kind.

use std::sync::atomic::{AtomicU64, Ordering};

/// Why [`Keyring::receive`](crate::Keyring::receive) dropped a datagram.
///
/// The packet checks come in the order the keyring makes them; nothing
/// after the first that fails was done (no key work for a replay, no
/// filter insert for a packet whose MAC failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum Dropped {
    /// Not exactly one packet long (16,150 bytes).
    #[error("not a packet: wrong length")]
    Length,
    /// Its replay tag is in a live epoch's filter: a replay (in memory
    /// mode, or a Bloom false positive at the filter's rate; disk mode
    /// looks a possible hit up exactly).
    #[error("replay")]
    Replay,
    /// Disk mode: the replay store cannot be written (a full or failing
    /// disk), so nothing new could be made durable or leave; dropped
    /// before any key work and not remembered.
    #[error("replay store not writable")]
    DiskFailing,
    /// The header's version byte is not the format's.
    #[error("unknown header version")]
    Version,
    /// The KEM ciphertext was refused (an X25519 share of low order).
    #[error("KEM ciphertext refused")]
    Kem,
    /// The header MAC did not verify under any live key: forged,
    /// damaged, or built for a retired key.
    #[error("header MAC failed under every live key")]
    Mac,
    /// The routing commands did not parse.
    #[error("routing commands malformed")]
    Commands,
    /// A terminal hop's payload failed its authenticity check.
    #[error("payload tag failed")]
    PayloadTag,
    /// The epoch whose key unwrapped it holds its filter's capacity: it
    /// takes no more packets until it retires (a new epoch starts at
    /// [`EpochPolicy::rotate_after`](crate::EpochPolicy::rotate_after)).
    #[error("key epoch full")]
    EpochFull,
    /// An error of the packet library this version does not know.
    #[error("packet refused")]
    Other,
}

impl Dropped {
    /// Every reason, in the order of the checks.
    pub const ALL: [Self; 10] = [
        Self::Length,
        Self::Replay,
        Self::DiskFailing,
        Self::Version,
        Self::Kem,
        Self::Mac,
        Self::Commands,
        Self::PayloadTag,
        Self::EpochFull,
        Self::Other,
    ];

    /// A short name for logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::Length => "length",
            Self::Replay => "replay",
            Self::DiskFailing => "disk_failing",
            Self::Version => "version",
            Self::Kem => "kem",
            Self::Mac => "mac",
            Self::Commands => "commands",
            Self::PayloadTag => "payload_tag",
            Self::EpochFull => "epoch_full",
            Self::Other => "other",
        }
    }

    fn index(self) -> usize {
        match self {
            Self::Length => 0,
            Self::Replay => 1,
            Self::DiskFailing => 2,
            Self::Version => 3,
            Self::Kem => 4,
            Self::Mac => 5,
            Self::Commands => 6,
            Self::PayloadTag => 7,
            Self::EpochFull => 8,
            Self::Other => 9,
        }
    }
}

impl From<kemsphinx::Error> for Dropped {
    fn from(e: kemsphinx::Error) -> Self {
        match e {
            kemsphinx::Error::Length { .. } => Self::Length,
            kemsphinx::Error::Version => Self::Version,
            kemsphinx::Error::Kem => Self::Kem,
            kemsphinx::Error::Mac => Self::Mac,
            kemsphinx::Error::Command(_) => Self::Commands,
            kemsphinx::Error::PayloadTag => Self::PayloadTag,
            _ => Self::Other,
        }
    }
}

/// Datagrams dropped so far, per [`Dropped`] reason.
///
/// `Debug` and `Display` name each reason ([`Dropped::name`]) with its
/// count: `{:?}` prints `DropCounts { length: 0, replay: 2, … }`, `{}`
/// prints `length 0, replay 2, …`, for a node's log.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounts([u64; Dropped::ALL.len()]);

impl std::fmt::Debug for DropCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("DropCounts");
        for (why, n) in self.iter() {
            s.field(why.name(), &n);
        }
        s.finish()
    }
}

impl std::fmt::Display for DropCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (why, n)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} {n}", why.name())?;
        }
        Ok(())
    }
}

impl DropCounts {
    /// How many were dropped for `why`.
    pub fn get(&self, why: Dropped) -> u64 {
        self.0.get(why.index()).copied().unwrap_or(0)
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Each reason with its count, in [`Dropped::ALL`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (Dropped, u64)> + '_ {
        Dropped::ALL.into_iter().zip(self.0.iter().copied())
    }
}

/// The keyring's counters, shared by every thread that receives.
#[derive(Default)]
pub(crate) struct DropCounters([AtomicU64; Dropped::ALL.len()]);

impl DropCounters {
    pub(crate) fn add(&self, why: Dropped) {
        crate::instrument::dropped(why);
        if let Some(c) = self.0.get(why.index()) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn snapshot(&self) -> DropCounts {
        DropCounts(std::array::from_fn(|i| {
            self.0.get(i).map_or(0, |c| c.load(Ordering::Relaxed))
        }))
    }
}
