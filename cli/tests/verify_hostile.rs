//! `kemsphinx verify` on hostile input: absurd sizes are FAIL lines (the
//! run still ends with its summary), folders with symlink loops are walked
//! once, and case ids are printed with their control characters escaped.

// Tests unwrap, index and panic freely.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A fresh, empty scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kemsphinx-verify-hostile-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `kemsphinx verify ARGS`, killed if it runs longer than `limit` (then
/// `None`).
fn verify(args: &[&Path], limit: Duration) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kemsphinx"))
        .arg("verify")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the output as it comes, so a chatty child cannot block on a
    // full pipe.
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    status.map(|status| Output {
        status,
        stdout,
        stderr,
    })
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

#[test]
fn absurd_sizes_are_fail_lines_and_the_summary_still_prints() {
    let dir = scratch("tau");
    let zeros = |n: usize| "00".repeat(n);
    let files = [
        // 1e12 bytes of output for an empty message.
        json!([{"k": "00", "nonce": "00", "data": [], "tau": 1_000_000_000_000u64, "m": "", "c": ""}]),
        // m.len() + tau overflows.
        json!([{"k": "00", "nonce": "00", "data": [], "tau": u64::MAX, "m": "00", "c": ""}]),
        // A prf of 1e12 bytes.
        json!([{"k": zeros(48), "delta": zeros(16), "tau": 1_000_000_000_000u64, "r": ""}]),
        // A prf whose tau disagrees with its output.
        json!([{"k": zeros(48), "delta": zeros(16), "tau": 3, "r": "00"}]),
        // A hash whose tau does not fit 32 bits.
        json!([{"k": zeros(48), "tau": u64::MAX, "data": [], "v": zeros(16)}]),
    ];
    let paths: Vec<PathBuf> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let p = dir.join(format!("{i}.json"));
            write_json(&p, f);
            p
        })
        .collect();
    let args: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let out = verify(&args, Duration::from_secs(60)).expect("verify hung");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), files.len() + 1, "{stdout}");
    for (line, path) in lines.iter().zip(&paths) {
        assert!(
            line.starts_with(&format!("FAIL {} #0: ", path.display())),
            "{line}"
        );
        assert!(!line.contains("PANIC"), "{line}");
    }
    assert_eq!(
        lines[files.len()],
        format!("0 passed, {} failed", files.len())
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn symlink_loops_end_and_each_file_is_read_once() {
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

    let out = verify(&[&dir], Duration::from_secs(60)).expect("verify hung on a symlink loop");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Two files (the link to the first is the same file), each read once.
    assert_eq!(
        text(&out.stdout),
        format!("{} passed, 0 failed\n", 2 * cases)
    );
    // The same file named twice, and through a link: still once.
    let out = verify(
        &[&dir.join("kdf.json"), &dir.join("again.json"), &dir],
        Duration::from_secs(60),
    )
    .unwrap();
    assert_eq!(
        text(&out.stdout),
        format!("{} passed, 0 failed\n", 2 * cases)
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
