#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![doc = include_str!("../README.md")]

mod bytes;
mod commands;
mod error;
pub mod geometry;
#[cfg(feature = "hazmat")]
pub mod hazmat;
mod header;
mod hop;
mod kem;
mod packet;
mod payload;
#[cfg(feature = "pem")]
pub mod pem;
mod surb;

pub use commands::{Command, Commands, NodeId, RecipientId, SurbId};
pub use error::{CommandError, Error, Input, KeyError, PemError};
pub use header::{Hop, Path};
pub use kem::{BACKEND as KEM_BACKEND, PrivateKey, PublicKey};
pub use packet::{
    Action, ReplayTag, Unwrapped, create_packet, packet_mut, payload_ref, replay_tag, unwrap,
};
pub use surb::{Surb, SurbKeys, create_surb, encrypted_reply_mut};
