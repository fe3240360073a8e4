#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![doc = include_str!("../README.md")]

pub mod aez;
mod bytes;
pub mod commands;
pub mod error;
pub mod geometry;
mod header;
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub mod hop;
#[cfg(not(feature = "hazmat"))]
mod hop;
pub mod kem;
pub mod packet;
#[cfg(feature = "pem")]
pub mod pem;
pub mod surb;

pub use commands::{Command, Commands, NodeId, RecipientId, SurbId};
pub use error::{CommandError, Error, Input, KeyError, PemError};
pub use header::{Hop, Path};
pub use kem::{PrivateKey, PublicKey};
pub use packet::{
    Action, ReplayTag, Unwrapped, create_packet, packet_mut, payload_ref, replay_tag, unwrap,
};
pub use surb::{Surb, SurbKeys, create_surb, encrypted_reply_mut};
