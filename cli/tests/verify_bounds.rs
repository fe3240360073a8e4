//! `kemsphinx verify`'s two run-wide bounds: its memory does not grow with
//! the number or size of files or failing cases (three files of `{}` cases
//! at the size bound, 8.4 million failures, stay under 100 MB, with and
//! without `--json`; a case longer than its bound, or a `schema` that is
//! not a string, is refused unparsed), and a folder walk never reads
//! outside the folder, even while its entries are swapped for links
//! between the listing and the open.
#![cfg(target_os = "linux")]
// Tests unwrap, index and panic freely.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::scratch;
use kemsphinx_cli::conformance::{MAX_CASE_LEN, MAX_FILE_LEN};

/// `kemsphinx verify ARGS`: its standard output, and its peak resident
/// memory in KiB.
fn verify_peak(args: &[&str]) -> (String, u64) {
    let (out, peak) = common::verify(args, Duration::from_secs(300));
    let out = out.expect("verify did not end");
    (String::from_utf8(out.stdout).unwrap(), peak)
}

#[test]
fn three_files_of_empty_cases_at_the_bound_stay_under_100_mb_with_and_without_json() {
    let dir = scratch("memory");
    let head = br#"{"schema":"kemsphinx-vectors/1","kind":"kem","cases":["#;
    let max = usize::try_from(MAX_FILE_LEN).unwrap();
    let cases = (max - head.len() - 1) / 3;
    let mut text = head.to_vec();
    for n in 0..cases {
        text.extend_from_slice(if n == 0 { b"{}" } else { b",{}" });
    }
    text.extend_from_slice(b"]}");
    assert!(text.len() <= max && text.len() > max - 3, "at the bound");
    let files: Vec<String> = (0..3)
        .map(|i| {
            let path = dir.join(format!("empty-{i}.json"));
            fs::write(&path, &text).unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let failed = 3 * cases;

    // Both runs at once: two cores, half the wall time.
    let json_args: Vec<&str> = [&["--json"][..], &files].concat();
    let (plain, json) = std::thread::scope(|s| {
        let json = s.spawn(|| verify_peak(&json_args));
        (verify_peak(&files), json.join().unwrap())
    });

    let (out, peak) = plain;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1_000 + 2, "1,000 failures, a count, a summary");
    assert_eq!(
        lines[1_000],
        format!("... and {} more failures, not shown", failed - 1_000)
    );
    assert_eq!(lines[1_001], format!("0 passed, {failed} failed"));
    println!("text: {failed} failures, peak {} MiB", peak / 1024);
    assert!(peak > 0 && peak < 100 * 1024, "peak {peak} KiB");

    let (out, peak) = json;
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["failed"], failed);
    assert_eq!(doc["failures"].as_array().unwrap().len(), 1_000);
    assert_eq!(doc["failures_not_shown"], failed - 1_000);
    println!("json: peak {} MiB", peak / 1024);
    assert!(peak > 0 && peak < 100 * 1024, "peak {peak} KiB");
    fs::remove_dir_all(&dir).unwrap();
}

/// A list of `{"":0}` about `len` bytes long: the JSON serde_json holds
/// in the most memory for its length, about 100 times.
fn one_key_objects(len: usize) -> String {
    format!("[{}]", vec![r#"{"":0}"#; len / 7].join(","))
}

#[test]
fn a_case_over_its_bound_is_a_failure_not_parsed_and_memory_stays_bounded() {
    let dir = scratch("case-bound");
    let under = one_key_objects(MAX_CASE_LEN - 32);
    let over = one_key_objects(6 << 20);
    let cases = [
        format!(r#"{{"id":"under","a":{under}}}"#),
        format!(r#"{{"id":"over","a":{over}}}"#),
        "{}".into(),
    ];
    let text = format!(
        r#"{{"schema":"kemsphinx-vectors/1","kind":"kem","cases":[{}]}}"#,
        cases.join(",")
    );
    assert!((MAX_CASE_LEN - 32..=MAX_CASE_LEN).contains(&cases[0].len()));
    assert!(text.len() <= usize::try_from(MAX_FILE_LEN).unwrap());
    let path = dir.join("big-cases.json");
    fs::write(&path, &text).unwrap();
    let (out, peak) = verify_peak(&[path.to_str().unwrap()]);
    let shown = path.display();
    let over_len = cases[1].len();
    assert_eq!(
        out,
        format!(
            "FAIL {shown} under: missing field `op`\n\
             FAIL {shown} #1: {over_len} bytes, over the bound of {MAX_CASE_LEN} for a case\n\
             FAIL {shown} #2: missing field `op`\n\
             0 passed, 3 failed\n"
        )
    );
    // The file's text, and the case under the bound parsed (about 100 MiB);
    // parsing the other would take about 600 MiB.
    println!(
        "a case of {} bytes refused, peak {} MiB",
        over_len,
        peak / 1024
    );
    assert!(peak > 0 && peak < 160 * 1024, "peak {peak} KiB");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_schema_that_is_not_a_string_is_refused_unparsed() {
    let dir = scratch("schema-bound");
    let schema = one_key_objects(7 << 20);
    let text = format!(r#"{{"schema":{schema},"kind":"kem","cases":[{{}}]}}"#);
    let path = dir.join("big-schema.json");
    fs::write(&path, &text).unwrap();
    let (out, peak) = verify_peak(&[path.to_str().unwrap()]);
    let why = "invalid type: sequence, expected a string at line 1 column 10";
    let want = format!("FAIL {} -: {why}\n0 passed, 1 failed\n", path.display());
    assert_eq!(out, want);
    // The file's text only: parsed as a JSON value, it took 683 MiB.
    println!(
        "a schema of {} bytes refused, peak {} MiB",
        schema.len(),
        peak / 1024
    );
    assert!(peak > 0 && peak < 50 * 1024, "peak {peak} KiB");
    fs::remove_dir_all(&dir).unwrap();
}

/// A vector file whose one failure names `marker` (an unknown schema).
fn marked(path: &Path, marker: &str) {
    fs::write(path, format!(r#"{{"schema":"{marker}","cases":[]}}"#)).unwrap();
}

#[test]
fn a_walk_never_reads_outside_its_folder_while_entries_are_swapped_for_links() {
    let base = scratch("race");
    let (walked, outside, parked) = (
        base.join("walked"),
        base.join("outside"),
        base.join("parked"),
    );
    for dir in [&walked, &outside, &parked] {
        fs::create_dir(dir).unwrap();
    }
    marked(&outside.join("secret.json"), "OUTSIDE");
    fs::create_dir(walked.join("sub")).unwrap();
    marked(&walked.join("sub").join("inside.json"), "INSIDE-SUB");
    marked(&walked.join("file.json"), "INSIDE-FILE");
    marked(&parked.join("file.json"), "INSIDE-FILE");

    // Swap, over and over: the folder `sub` for a link to `outside`, and
    // the file `file.json` for a link to `outside/secret.json`, each by an
    // atomic rename, then back.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, walked, outside, parked) = (
            stop.clone(),
            walked.clone(),
            outside.clone(),
            parked.clone(),
        );
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            let link = parked.join("link");
            while !stop.load(Ordering::Relaxed) {
                fs::rename(walked.join("sub"), parked.join("sub")).unwrap();
                std::os::unix::fs::symlink(&outside, walked.join("sub")).unwrap();
                std::os::unix::fs::symlink(outside.join("secret.json"), &link).unwrap();
                fs::rename(&link, walked.join("file.json")).unwrap();
                std::thread::yield_now();
                fs::remove_file(walked.join("sub")).unwrap();
                fs::rename(parked.join("sub"), walked.join("sub")).unwrap();
                fs::copy(parked.join("file.json"), parked.join("file.tmp")).unwrap();
                fs::rename(parked.join("file.tmp"), walked.join("file.json")).unwrap();
                swaps += 1;
            }
            swaps
        })
    };

    let (mut runs, mut saw_links) = (0, 0);
    let walked_arg = walked.to_str().unwrap().to_owned();
    let started = std::time::Instant::now();
    while runs < 400 && started.elapsed() < Duration::from_secs(20) {
        let (out, _) = verify_peak(&[&walked_arg]);
        assert!(!out.contains("OUTSIDE"), "read outside the folder:\n{out}");
        assert!(out.ends_with(" failed\n"), "{out}");
        saw_links += usize::from(out.contains("a link"));
        runs += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    println!("{runs} walks, {swaps} swaps, {saw_links} walks met a link, none read outside");
    assert!(swaps > 0 && runs >= 50, "{runs} walks, {swaps} swaps");
    fs::remove_dir_all(&base).unwrap();
}
