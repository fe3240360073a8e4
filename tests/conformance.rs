//! Every vector file in `vectors/` (and the long AEZ cases kept with
//! `aez5`'s tests), through the same runner as
//! `kemsphinx verify`, one test per file so a failure names its file.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

use kemsphinx_cli::conformance::Report;

/// Run one file and require every case to pass; returns the case count.
fn run(file: &str) -> usize {
    let mut report = Report::default();
    report.verify_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join(file));
    print!("{}", report.failure_lines());
    println!("{file}: {}", report.summary());
    assert!(report.ok(), "{file}: {}", report.summary());
    report.passed
}

#[test]
fn reference_kem() {
    assert_eq!(run("vectors/reference/kem.json"), 19);
}

#[test]
fn reference_aez() {
    assert_eq!(run("aez5/tests/data/sprp_go_reference.json"), 20);
}

#[test]
fn reference_kdf() {
    assert_eq!(run("vectors/reference/kdf.json"), 5);
}

#[test]
fn reference_stream() {
    assert_eq!(run("vectors/reference/stream.json"), 2);
}

#[test]
fn reference_replay_tag() {
    assert_eq!(run("vectors/reference/replay_tag.json"), 3);
}

#[test]
fn reference_forward() {
    assert_eq!(run("vectors/reference/forward.json"), 6);
}

#[test]
fn reference_surb() {
    assert_eq!(run("vectors/reference/surb.json"), 4);
}

#[test]
fn reference_negative() {
    assert_eq!(run("vectors/reference/negative.json"), 24);
}

#[test]
fn own_kem() {
    assert_eq!(run("vectors/own/kem.json"), 11);
}

#[test]
fn own_aez() {
    assert_eq!(run("vectors/own/aez.json"), 67);
}

#[test]
fn own_kdf() {
    assert_eq!(run("vectors/own/kdf.json"), 4);
}

#[test]
fn own_stream() {
    assert_eq!(run("vectors/own/stream.json"), 3);
}

#[test]
fn own_mac() {
    assert_eq!(run("vectors/own/mac.json"), 5);
}

#[test]
fn own_replay_tag() {
    assert_eq!(run("vectors/own/replay_tag.json"), 3);
}

#[test]
fn own_forward() {
    assert_eq!(run("vectors/own/forward.json"), 3);
}

#[test]
fn own_surb() {
    assert_eq!(run("vectors/own/surb.json"), 2);
}

#[test]
fn own_negative() {
    assert_eq!(run("vectors/own/negative.json"), 94);
}

/// A file of an unknown schema is refused, not passed.
#[test]
fn unknown_schema_is_refused() {
    let dir = std::env::temp_dir().join(format!("kemsphinx-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("other.json");
    std::fs::write(
        &file,
        r#"{"schema":"kemsphinx-vectors/2","kind":"kem","cases":[{"id":"x"}]}"#,
    )
    .unwrap();
    let mut report = Report::default();
    report.verify_path(&file);
    assert!(!report.ok());
    assert_eq!(report.passed, 0);
    assert!(
        report.failures[0].reason.contains("unknown schema"),
        "{:?}",
        report.failures
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
