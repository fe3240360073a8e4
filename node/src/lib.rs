#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod batch;
mod clock;
mod dir;
mod disk;
mod dropped;
mod epochs;
mod error;
mod fault;
mod filter;
mod forward;
mod health;
mod instrument;
mod journal;
mod keyring;
mod pending;
mod report;
mod resume;
mod rotation;
mod schedule;
mod selfcheck;
mod store;

pub use dropped::{DropCounts, Dropped};
pub use epochs::{EpochPolicy, PolicyError, ResumeChange, Resumed, Turn};
pub use error::OpenError;
pub use forward::{
    Discarded, Due, ForwardCounts, ForwardPolicy, Forwarder, Outgoing, Refused, SURB_REPLY_LEN,
};
pub use health::{CommitLatency, EpochHealth, Health, RECENT, Role};
pub use journal::{GROUP_INTERVAL, NotDurable, RETRY, Ticket};
pub use kemsphinx::framing::{self, Framed, FramingError};
pub use keyring::{Accepted, Keyring};
pub use rotation::EpochStatus;
pub use schedule::{EpochTime, MAX_AHEAD, Schedule};
pub use selfcheck::{SelfCheck, SelfCheckError, self_check};

/// The packet library this crate is built on, re-exported so a node names
/// one dependency and one version of it.
pub use kemsphinx;
#[cfg(test)]
mod tests;
