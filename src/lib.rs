#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
// docs.rs (and CI's copy of its build) labels every feature-gated item.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc = include_str!("../README.md")]

// One module per concept, each with its section of SPEC.md. Only
// `geometry`, `framing`, `pem` and (with its feature) `hazmat` are public;
// everything else is re-exported below, once.

/// Unwrapping a batch of packets with one node's keys (SPEC.md §6.1).
mod batch;
/// Compile-time-checked views into fixed-size arrays.
mod bytes;
/// Routing commands: strict parsing, validated areas (SPEC.md §4).
mod commands;
/// Where secret-derived values become public (SPEC.md §12).
mod ct;
/// The error type (SPEC.md §7).
mod error;
// Katzenpost's framing inside the payload (its own docs say what).
pub mod framing;
pub mod geometry;
#[cfg(feature = "hazmat")]
pub mod hazmat;
/// Header creation, shared by packets and SURBs (SPEC.md §5.1).
mod header;
/// Per-hop keys: KDF, header stream, MAC, replay tag (SPEC.md §3).
mod hop;
/// The hybrid KEM `MLKEM768-X25519` and its backends (SPEC.md §2, §11).
mod kem;
/// Forward packets and unwrapping (SPEC.md §5.2, §6).
mod packet;
/// The payload's layers and its zero tag (SPEC.md §5.2, §5.4, §5.5, §6).
mod payload;
#[cfg(feature = "pem")]
pub mod pem;
/// SURBs, replies, reply decryption (SPEC.md §5.3–§5.5).
mod surb;

/// The specification: wire format, boundary, evidence (`SPEC.md`, rendered
/// here so that docs.rs readers can reach it). Documentation only.
#[doc = include_str!("../SPEC.md")]
pub mod spec {}

/// The constant-time check's hook (only with `--cfg kemsphinx_ctgrind`,
/// which only the repository's `ctgrind/` harness sets).
#[cfg(kemsphinx_ctgrind)]
#[doc(hidden)]
pub use ct::hook as ctgrind;

pub use batch::{BATCH, UnwrapBatch, unwrap_batch};
pub use commands::{Command, Commands, NodeId, RecipientId, SurbId};
pub use error::{CommandError, Error, Input, KeyError, PemError};
pub use header::{Hop, Path, path};
pub use kem::{BACKEND as KEM_BACKEND, PrivateKey, PublicKey};
pub use packet::{
    Action, ReplayTag, Unwrapped, create_packet, packet_mut, payload_ref, replay_tag, unwrap,
    unwrap_any,
};
pub use surb::{Surb, SurbKeys, create_surb, encrypted_reply_mut};
