//! `kemsphinx verify` on hostile input: what is not a regular file, or is
//! larger than the bound, is a FAIL line found without blocking or reading
//! it (the run still ends with its summary); links are followed only when
//! named; names need not be UTF-8; case ids are printed with their control
//! characters escaped.

// Tests unwrap, index and panic freely.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::scratch;
use kemsphinx_cli::conformance::MAX_FILE_LEN;
use serde_json::{Value, json};

/// `kemsphinx verify ARGS`, killed if it runs longer than `limit` (then
/// `None`).
fn verify(args: &[&Path], limit: Duration) -> Option<Output> {
    common::verify(args, limit).0
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec(value).unwrap()).unwrap();
}

/// The committed `vectors/own/kdf.json` and its number of cases.
fn kdf() -> (Value, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/own/kdf.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let n = doc["cases"].as_array().unwrap().len();
    (doc, n)
}

/// The line `verify` prints for a file-level failure.
fn fail_line(path: &Path, reason: &str) -> String {
    format!("FAIL {} -: {reason}", path.display())
}

/// The lines `verify` printed, after it ended by itself within `limit`.
fn verify_lines(args: &[&Path], limit: Duration) -> (Option<i32>, Vec<String>) {
    let out = verify(args, limit).expect("verify did not end");
    let lines = text(&out.stdout).lines().map(str::to_owned).collect();
    (out.status.code(), lines)
}

#[test]
fn a_list_in_the_go_aez_format_is_a_fail_line_not_a_second_runner() {
    let dir = scratch("go-list");
    let go = json!([{"k": "00", "nonce": "00", "data": [], "tau": 1_000_000_000_000u64, "m": "", "c": ""}]);
    write_json(&dir.join("encrypt.json"), &go);
    let (code, lines) = verify_lines(&[&dir], Duration::from_secs(60));
    assert_eq!(code, Some(1));
    assert_eq!(
        lines,
        [
            fail_line(
                &dir.join("encrypt.json"),
                "not a kemsphinx-vectors/1 object"
            ),
            "0 passed, 1 failed".to_owned()
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn documents_of_another_shape_are_fail_lines_and_key_order_does_not_matter() {
    let dir = scratch("shapes");
    let head = r#""schema":"kemsphinx-vectors/1","kind":"kem""#;
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let files = [
        // A list whose items could be read as the header's fields in order.
        ("a", r#"["kemsphinx-vectors/1","kem",[{}]]"#.to_owned()),
        ("b", format!(r#"{{{head},"schema":"x","cases":[{{}}]}}"#)),
        ("c", format!(r#"{{{head},"cases":{{}}}}"#)),
        ("d", format!(r#"{{{head},"cases":[]}}"#)),
        ("e", format!(r#"{{{head},"cases":[{{}}]}} x"#)),
        (
            "f",
            format!(r#"{{"cases":[{{"id":"f0"}},{deep},{{"id":"f2"}}],{head}}}"#),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.join(format!("{name}.json")), text).unwrap();
    }
    let (code, lines) = verify_lines(&[&dir], Duration::from_secs(20));
    assert_eq!(code, Some(1));
    let at = |name: &str| format!("FAIL {} ", dir.join(format!("{name}.json")).display());
    let want = [
        format!("{}-: not a kemsphinx-vectors/1 object", at("a")),
        format!("{}-: duplicate field `schema` at line 1 column 53", at("b")),
        format!("{}-: no `cases` list", at("c")),
        format!("{}-: no cases", at("d")),
        format!(
            "{}-: not JSON: trailing characters at line 1 column 60",
            at("e")
        ),
        format!("{}f0: missing field `op`", at("f")),
        format!(
            "{}#1: recursion limit exceeded at line 1 column 128",
            at("f")
        ),
        format!("{}f2: missing field `op`", at("f")),
        "0 passed, 8 failed".to_owned(),
    ];
    assert_eq!(lines, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_3_gb_file_fails_at_once_in_less_than_256_mib() {
    let dir = scratch("big");
    let big = dir.join("big.json");
    // Sparse: 3 GB long, no disk used.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(3_000_000_000)
        .unwrap();
    // Under a 256 MiB address-space limit, so reading the file (or a good
    // part of it) would abort the command instead of printing a FAIL line.
    let started = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 262144 && exec \"$0\" verify \"$1\"")
        .arg(env!("CARGO_BIN_EXE_kemsphinx"))
        .arg(&big)
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        text(&out.stdout),
        fail_line(
            &big,
            &format!("3000000000 bytes, over the bound of {MAX_FILE_LEN}\n0 passed, 1 failed\n")
        )
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fifo_or_device_is_a_fail_line_and_never_blocks() {
    let dir = scratch("fifo");
    let fifo = dir.join("fifo.json");
    // And one not named like a vector file, which a walk passes over
    // without opening it.
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .arg(dir.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    // Named, and met while walking a folder: both refused, neither blocks
    // (nothing ever writes to the FIFO).
    let (code, lines) = verify_lines(&[&fifo, Path::new("/dev/zero")], Duration::from_secs(20));
    assert_eq!(code, Some(1));
    assert_eq!(
        lines,
        [
            fail_line(&fifo, "not a regular file (a FIFO)"),
            "FAIL /dev/zero -: not a regular file (a device)".to_owned(),
            "0 passed, 2 failed".to_owned(),
        ]
    );
    let (doc, cases) = kdf();
    write_json(&dir.join("kdf.json"), &doc);
    let (code, lines) = verify_lines(&[&dir], Duration::from_secs(20));
    assert_eq!(code, Some(1));
    assert_eq!(
        lines,
        [
            fail_line(&fifo, "not a regular file (a FIFO)"),
            format!("{cases} passed, 1 failed"),
        ]
    );
    // A folder named where a file is read (`inspect`'s FILE or `--key`)
    // is refused from the opened folder.
    let refused = kemsphinx_cli::keyfile::read_input(&dir).unwrap_err();
    assert_eq!(
        refused,
        format!("{}: not a regular file (a folder)", dir.display())
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn links_are_followed_when_named_and_never_while_walking() {
    let (doc, cases) = kdf();
    let dir = scratch("links");
    let inner = dir.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    write_json(&inner.join("kdf.json"), &doc);
    // Outside the folder walked, reachable only through links.
    write_json(&dir.join("outside.json"), &doc);
    std::os::unix::fs::symlink("/", inner.join("root")).unwrap();
    std::os::unix::fs::symlink("..", inner.join("up")).unwrap();
    std::os::unix::fs::symlink("../outside.json", inner.join("link.json")).unwrap();

    // Walking `inner`: its one file; the links to `/` and to the parent
    // are not walked (the run ends at once), the `*.json` link is a FAIL.
    let (code, lines) = verify_lines(&[&inner], Duration::from_secs(20));
    assert_eq!(code, Some(1));
    assert_eq!(
        lines,
        [
            fail_line(
                &inner.join("link.json"),
                "a link: followed only when named, never inside a folder"
            ),
            format!("{cases} passed, 1 failed"),
        ]
    );
    // Named on the command line, links are followed: the linked file, and
    // the parent through `up` (which holds `outside.json` and `inner`, whose
    // file the walk reads once; `inner/link.json` is still a link met
    // while walking).
    let (code, lines) = verify_lines(&[&inner.join("link.json")], Duration::from_secs(20));
    assert_eq!(
        (code, lines),
        (Some(0), vec![format!("{cases} passed, 0 failed")])
    );
    let (_, lines) = verify_lines(&[&inner.join("up")], Duration::from_secs(20));
    assert_eq!(
        lines.last().unwrap(),
        &format!("{} passed, 1 failed", 2 * cases)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn names_that_are_not_utf8_are_read_and_printed_lossily() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let (mut doc, cases) = kdf();
    let dir = scratch("utf8");
    let good = dir.join(OsStr::from_bytes(b"kdf-\xff.json"));
    write_json(&good, &doc);
    // Named, and found while walking: the same file, read once.
    let (code, lines) = verify_lines(&[&good, &dir], Duration::from_secs(60));
    assert_eq!(
        (code, lines),
        (Some(0), vec![format!("{cases} passed, 0 failed")])
    );
    // A failing case names its file with U+FFFD for the byte.
    doc["cases"][0]["okm"] = json!("zz");
    let bad_dir = dir.join(OsStr::from_bytes(b"sub-\xfe"));
    std::fs::create_dir(&bad_dir).unwrap();
    write_json(&bad_dir.join("kdf.json"), &doc);
    let (code, lines) = verify_lines(&[&bad_dir], Duration::from_secs(60));
    assert_eq!(code, Some(1));
    let shown = format!("{}/sub-\u{fffd}/kdf.json", dir.display());
    assert!(lines[0].starts_with(&format!("FAIL {shown} ")), "{lines:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn symlink_loops_are_not_walked_and_each_file_is_read_once() {
    let (doc, cases) = kdf();
    let dir = scratch("loops");
    write_json(&dir.join("kdf.json"), &doc);
    std::os::unix::fs::symlink(".", dir.join("a")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("b")).unwrap();
    std::os::unix::fs::symlink("kdf.json", dir.join("again.json")).unwrap();
    let sub = dir.join("deeper/sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
    std::os::unix::fs::symlink("../..", sub.join("top")).unwrap();
    write_json(&sub.join("kdf.json"), &doc);

    // Two files; the links are not walked, and the one named like a
    // vector file is a failure.
    let link_fail = fail_line(
        &dir.join("again.json"),
        "a link: followed only when named, never inside a folder",
    );
    let (code, lines) = verify_lines(&[&dir], Duration::from_secs(60));
    assert_eq!(code, Some(1));
    assert_eq!(
        lines,
        [link_fail.clone(), format!("{} passed, 1 failed", 2 * cases)]
    );
    // The same file named twice, once through a link: read once.
    let (code, lines) = verify_lines(
        &[&dir.join("kdf.json"), &dir.join("again.json"), &dir],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        lines,
        [link_fail, format!("{} passed, 1 failed", 2 * cases)]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn control_characters_in_printed_fields_are_escaped() {
    let (mut doc, _) = kdf();
    let dir = scratch("ids");
    let case = doc["cases"][0].clone();
    let mut cases = Vec::new();
    for id in [
        "clear\u{1b}[2J\u{1b}[31mred",
        "line\nbreak\r0 passed, 0 failed",
        "bidi \u{202e}desrever\u{202c} and \u{7f}\u{85}",
        "back\\slash",
    ] {
        let mut c = case.clone();
        c["id"] = json!(id);
        c["okm"] = json!("zz"); // not hex: the case fails, and its id is printed
        cases.push(c);
    }
    doc["cases"] = json!(cases);
    doc["kind"] = json!("kdf\u{1b}]0;title\u{7}");
    write_json(&dir.join("ids.json"), &doc);
    doc["kind"] = json!("kdf");
    write_json(&dir.join("ok\u{1b}[1m.json"), &doc);

    let out = verify(&[&dir], Duration::from_secs(60)).unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    // Nothing but printable text and the line ends.
    assert!(
        stdout.chars().all(|c| c == '\n' || !c.is_control()),
        "{stdout:?}"
    );
    assert!(!stdout.contains('\u{202e}') && !stdout.contains('\u{202c}'));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1 + 4 + 1, "{stdout}");
    assert!(
        lines[0].contains("unknown kind `kdf\\u{1b}]0;title\\u{7}`"),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("ok\\u{1b}[1m.json clear\\u{1b}[2J\\u{1b}[31mred: "));
    assert!(lines[2].contains(" line\\nbreak\\r0 passed, 0 failed: "));
    assert!(lines[3].contains(" bidi \\u{202e}desrever\\u{202c} and \\u{7f}\\u{85}: "));
    assert!(lines[4].contains(" back\\\\slash: "));
    assert_eq!(lines[5], "0 passed, 5 failed");
    std::fs::remove_dir_all(&dir).unwrap();
}
