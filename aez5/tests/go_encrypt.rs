//! The Go AEZ's 1,024 full-AEZ encryption vectors (`tests/data/encrypt.json`,
//! 1.4 MB): in the repository only, not in the published package, which
//! runs the smaller files through the same runner (`tests/vectors.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

#[test]
fn go_encrypt() {
    assert_eq!(common::encrypt_file("encrypt.json"), 1024);
}
