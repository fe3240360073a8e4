//! C ABI for `kemsphinx`: KEMSphinx packets with the `MLKEM768-X25519`
//! KEM, for mix nodes and clients written in C, C++, Go (cgo) or anything
//! else with a C FFI. The header is `include/kemsphinx.h`.
//!
//! # Contract
//!
//! - Every function returns an `int` status ([`Status`]): `0` on success.
//!   Nothing unwinds across the boundary: each body runs inside
//!   `catch_unwind`, and a caught panic (none is known to be reachable; the
//!   one foreseeable cause is the operating system refusing randomness)
//!   becomes [`Status::Internal`]. Build with `panic = "unwind"` (the
//!   default) for that to hold.
//! - Every buffer is a pointer and a length, and the length must be exactly
//!   the header's constant for it ([`Status::Length`] otherwise). A NULL
//!   pointer is [`Status::Null`]. Both are checked, for every argument,
//!   before any work is done.
//! - Output buffers are written only on success; on any error they are
//!   unchanged. Inputs are read before outputs are written, so inputs
//!   and outputs may overlap. The exception is [`kemsphinx_unwrap`], which
//!   works in place on the packet and, like the Rust API, leaves it
//!   unchanged on error.
//! - A function that makes a handle writes it to its out-pointer on
//!   success and NULL on every error, a caught panic included (an
//!   out-pointer that is itself NULL gets [`Status::Null`] and nothing
//!   written). So C may write `T *k; if (f(&k)) goto out; … out: free(k);`
//!   without initialising `k`.
//! - Keys are opaque handles created by a `_from_*`/`_generate` function and
//!   released with the matching `_free`. A handle is immutable once created,
//!   so one private key may be used from many threads at once.
//!
//! What C must still guarantee, and cannot be checked here: each non-NULL
//! pointer is valid for its stated length, and each handle is live (not
//! freed, not forged).

#![deny(unsafe_op_in_unsafe_fn)]

mod create;
mod keys;
mod raw;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests;
mod unwrap;

use core::ffi::{c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use create::{
    Hop, kemsphinx_create_packet, kemsphinx_create_surb, kemsphinx_decrypt_reply,
    kemsphinx_surb_reply,
};
pub use keys::{
    PrivateKeyHandle, PublicKeyHandle, kemsphinx_private_key_free,
    kemsphinx_private_key_from_bytes, kemsphinx_private_key_from_pem,
    kemsphinx_private_key_from_seed, kemsphinx_private_key_generate,
    kemsphinx_private_key_public_key, kemsphinx_private_key_to_bytes, kemsphinx_private_key_to_pem,
    kemsphinx_public_key_free, kemsphinx_public_key_from_bytes, kemsphinx_public_key_from_pem,
    kemsphinx_public_key_to_bytes, kemsphinx_public_key_to_pem,
};
pub use unwrap::{
    Action, Unwrapped, kemsphinx_replay_tag, kemsphinx_unwrap, kemsphinx_unwrap_batch,
};

/// Status codes, as `kemsphinx_status` in the header.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL.
    Null = 1,
    /// A buffer's length is not the one its constant names (or the path
    /// does not have `KEMSPHINX_HOPS` hops).
    Length = 2,
    /// Unsupported header version.
    Version = 3,
    /// KEM decapsulation failed.
    Kem = 4,
    /// Header MAC mismatch: not for this hop, or corrupted.
    Mac = 5,
    /// Malformed routing commands, or commands that cannot be created.
    Command = 6,
    /// Payload tag mismatch (corrupted payload, or a reply for other keys).
    PayloadTag = 7,
    /// A key failed validation.
    Key = 8,
    /// PEM text refused (label, framing or base64).
    Pem = 9,
    /// An argument outside its range (e.g. `has_delay` not 0 or 1).
    Argument = 10,
    /// A panic was caught; nothing was written.
    Internal = 11,
}

impl From<kemsphinx::Error> for Status {
    fn from(e: kemsphinx::Error) -> Self {
        use kemsphinx::Error as E;
        match e {
            E::Length { .. } => Self::Length,
            E::Version => Self::Version,
            E::Kem => Self::Kem,
            E::Mac => Self::Mac,
            E::Command(_) => Self::Command,
            E::PayloadTag => Self::PayloadTag,
            E::Key(_) => Self::Key,
            E::Pem(_) => Self::Pem,
            _ => Self::Internal,
        }
    }
}

impl Status {
    /// A static, NUL-terminated description.
    const fn description(self) -> &'static core::ffi::CStr {
        match self {
            Self::Ok => c"ok",
            Self::Null => c"a required pointer was NULL",
            Self::Length => c"a buffer length is not the one its constant names",
            Self::Version => c"unsupported header version",
            Self::Kem => c"KEM decapsulation failed",
            Self::Mac => c"header MAC mismatch",
            Self::Command => c"malformed or impossible routing commands",
            Self::PayloadTag => c"payload tag mismatch",
            Self::Key => c"invalid key",
            Self::Pem => c"PEM text refused (label, framing or base64)",
            Self::Argument => c"argument out of range",
            Self::Internal => c"internal error (a panic was caught)",
        }
    }

    /// Every status, in code order.
    pub const ALL: [Self; 12] = [
        Self::Ok,
        Self::Null,
        Self::Length,
        Self::Version,
        Self::Kem,
        Self::Mac,
        Self::Command,
        Self::PayloadTag,
        Self::Key,
        Self::Pem,
        Self::Argument,
        Self::Internal,
    ];
}

/// Run a function body, turning its result or a panic into a status code.
///
/// `AssertUnwindSafe` is sound here: after a panic nothing the closure
/// touched is used again. Outputs are written only as the body's last step,
/// by plain copies that cannot panic, and handles are never mutated.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Status>) -> c_int {
    let status = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => Status::Ok,
        Ok(Err(status)) => status,
        Err(_) => Status::Internal,
    };
    status as c_int
}

/// A static description of a status code (`"unknown status"` for codes this
/// library does not define). Never NULL; never free it.
#[unsafe(no_mangle)]
pub extern "C" fn kemsphinx_status_str(status: c_int) -> *const c_char {
    Status::ALL
        .iter()
        .find(|s| **s as c_int == status)
        .map_or(c"unknown status", |s| s.description())
        .as_ptr()
}
