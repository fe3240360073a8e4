//! The `kemsphinx` command's library: a conformance runner for KEMSphinx
//! vectors in the `kemsphinx-vectors/1` schema (and the Go AEZ's own
//! vector files), the generator of the own corpus, the packet inspector,
//! and key generation in the reference's PEM format, usable from tests and
//! from the command line.

mod case;
pub mod conformance;
pub mod files;
pub mod generate;
pub mod inspect;
mod json;
pub mod keyfile;
pub mod keygen;
