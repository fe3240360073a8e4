//! The crate's own tests of what lies behind the public API: epochs and
//! disk mode driven with bare replay tags.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod diag;
mod disk;
mod epochs;
mod faults;
mod memory;
mod schedule;
mod types;
