//! The `kemsphinx` command's library: a conformance runner for KEMSphinx
//! vectors in the `kemsphinx-vectors/1` schema (and the Go AEZ's own
//! vector files), the generator of the own corpus, and the packet
//! inspector, usable from tests and from the command line.

pub mod conformance;
pub mod generate;
pub mod inspect;
pub mod keyfile;
pub mod layout;
