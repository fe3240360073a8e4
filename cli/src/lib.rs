//! The `kemsphinx` command's library: a conformance runner for KEMSphinx
//! vectors in the `kemsphinx-vectors/1` schema (and the Go AEZ's own
//! vector files), usable from tests and from the command line, and key
//! generation in the reference's PEM format.

pub mod conformance;
pub mod keygen;
