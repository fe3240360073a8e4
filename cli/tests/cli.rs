//! The `kemsphinx` binary end to end: `generate` reproduces the committed
//! corpus byte for byte, `verify` reports and refuses as documented, and
//! `inspect` shows layouts and unwraps with raw keys.

// Tests unwrap, index and panic freely.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::scratch;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Run the binary with `args`.
fn kemsphinx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kemsphinx"))
        .args(args)
        .output()
        .unwrap()
}

/// Standard output as text.
fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `*.json` file names in a folder.
fn json_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect()
}

/// A committed own vector file.
fn own(file: &str) -> Value {
    let text = std::fs::read_to_string(repo().join("vectors/own").join(file)).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn generate_reproduces_the_committed_corpus_byte_for_byte() {
    let dir = scratch("generate");
    let out = kemsphinx(&["generate", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let committed = repo().join("vectors/own");
    assert_eq!(json_files(&dir), json_files(&committed));
    for name in json_files(&dir) {
        let fresh = std::fs::read(dir.join(&name)).unwrap();
        let kept = std::fs::read(committed.join(&name)).unwrap();
        assert!(
            fresh == kept,
            "{name} differs from vectors/own/{name}: regenerate"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn another_seed_gives_another_corpus_that_verifies() {
    let dir = scratch("seed");
    let seed = "ff".repeat(32);
    assert!(
        kemsphinx(&["generate", "--seed", &seed, dir.to_str().unwrap()])
            .status
            .success()
    );
    let committed = repo().join("vectors/own");
    for name in json_files(&dir) {
        let fresh = std::fs::read(dir.join(&name)).unwrap();
        assert_ne!(
            fresh,
            std::fs::read(committed.join(&name)).unwrap(),
            "{name}"
        );
    }
    let out = kemsphinx(&["verify", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(stdout(&out).trim_end(), "192 passed, 0 failed");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn generate_refuses_a_bad_seed() {
    let out = kemsphinx(&["generate", "--seed", "abcd", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("64 hex digits"));
}

#[test]
fn verify_json_summarises_every_kind() {
    let out = kemsphinx(&[
        "verify",
        "--json",
        repo().join("vectors/own").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["failed"], 0);
    assert_eq!(summary["passed"], 192);
    assert_eq!(summary["files"], 9);
    assert_eq!(summary["cases_per_kind"]["negative"], 94);
    assert_eq!(summary["cases_per_kind"]["mac"], 5);
}

#[test]
fn verify_names_each_failing_case_and_refuses_unknown_schemas() {
    let dir = scratch("verify");
    let mut forward = own("forward.json");
    forward["cases"][1]["encapsulations"][2]["mlkem_m"] = Value::from("00".repeat(32));
    std::fs::write(dir.join("forward.json"), forward.to_string()).unwrap();
    std::fs::write(
        dir.join("future.json"),
        r#"{"schema":"kemsphinx-vectors/2","kind":"kem","cases":[{"id":"x"}]}"#,
    )
    .unwrap();
    let out = kemsphinx(&["verify", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].contains("forward-01: hop 2 ciphertext from its randomness"),
        "{text}"
    );
    assert!(
        lines[1].contains("unknown schema `kemsphinx-vectors/2`"),
        "{text}"
    );
    assert_eq!(lines[2], "2 passed, 2 failed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Write the hex string `field` of a committed case to a file.
fn write_hex(dir: &Path, name: &str, hex_text: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, hex_text.as_str().unwrap()).unwrap();
    path
}

/// Write the hex string as raw bytes.
fn write_binary(dir: &Path, name: &str, hex_text: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, hex::decode(hex_text.as_str().unwrap()).unwrap()).unwrap();
    path
}

/// `kemsphinx inspect FILE --key KEY`.
fn inspect_with(file: &Path, key: &Path) -> Output {
    let (file, key) = (file.to_str().unwrap(), key.to_str().unwrap());
    kemsphinx(&["inspect", file, "--key", key])
}

#[test]
fn inspect_shows_the_public_layout_without_a_key() {
    let dir = scratch("inspect-layout");
    let case = &own("forward.json")["cases"][0];
    let file = write_binary(&dir, "packet.bin", &case["packets"][0]);
    let out = kemsphinx(&["inspect", file.to_str().unwrap()]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("(binary)") && text.contains("packet, 16150 bytes"),
        "{text}"
    );
    assert!(text.contains("0000 (ok)"), "{text}");
    assert!(
        text.contains(case["unwrap"][0]["replay_tag"].as_str().unwrap()),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inspect_with_a_raw_key_unwraps_and_writes_what_the_hop_outputs() {
    let dir = scratch("inspect-key");
    let case = &own("forward.json")["cases"][0];
    let packet = write_hex(&dir, "p0.hex", &case["packets"][0]);
    let key = write_binary(&dir, "k0.bin", &case["nodes"][0]["private_key"]);
    let next = dir.join("p1.hex");
    let out = kemsphinx(&[
        "inspect",
        packet.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
        "--out",
        next.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("result         ok_forward"), "{text}");
    assert!(
        text.contains(case["unwrap"][1]["replay_tag"].as_str().unwrap()),
        "{text}"
    );
    let written = std::fs::read_to_string(&next).unwrap();
    assert_eq!(written.trim(), case["packets"][1].as_str().unwrap());

    // The same key as PEM, as `kemsphinx keygen` and the reference write it.
    let raw = hex::decode(case["nodes"][0]["private_key"].as_str().unwrap()).unwrap();
    let pem = kemsphinx::PrivateKey::try_from(&raw[..]).unwrap().to_pem();
    let pem_file = dir.join("k0.pem");
    std::fs::write(&pem_file, &pem[..]).unwrap();
    let text = stdout(&inspect_with(&packet, &pem_file));
    assert!(text.contains("result         ok_forward"), "{text}");

    let last = write_hex(&dir, "p3.hex", &case["packets"][3]);
    let key3 = write_hex(&dir, "k3.hex", &case["nodes"][3]["private_key"]);
    let text = stdout(&inspect_with(&last, &key3));
    assert!(text.contains("result         ok_deliver"), "{text}");

    let out = inspect_with(&packet, &key3);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("result         err_mac"), "{out:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inspect_unwraps_a_surb_reply_and_explains_unusable_keys() {
    let dir = scratch("inspect-surb");
    let case = &own("surb.json")["cases"][0];
    let surb = write_hex(&dir, "surb.hex", &case["surb"]);
    let key = write_hex(&dir, "k0.hex", &case["nodes"][0]["private_key"]);
    let out = inspect_with(&surb, &key);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("SURB, 6058 bytes") && text.contains("ok_forward"),
        "{text}"
    );
    assert!(text.contains(case["first_hop"].as_str().unwrap()), "{text}");

    let pem = dir.join("key.pem");
    std::fs::write(&pem, "-----BEGIN KEM PRIVATE KEY-----\n").unwrap();
    let out = inspect_with(&surb, &pem);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PEM"));

    let short = dir.join("short.hex");
    std::fs::write(&short, "00".repeat(100)).unwrap();
    let out = kemsphinx(&["inspect", short.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither a packet"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inspect_and_keygen_take_names_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let dir = scratch("not-utf8");
    let run = |args: &[&OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_kemsphinx"))
            .args(args)
            .output()
            .unwrap()
    };
    // keygen writes into a folder whose name is not UTF-8.
    let keys = dir.join(OsStr::from_bytes(b"keys-\xff"));
    let out = run(&["keygen".as_ref(), "--out".as_ref(), keys.as_os_str()]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).contains("keys-\u{fffd}/mix.kem_private.pem"),
        "{out:?}"
    );
    let key = keys.join("mix.kem_private.pem");
    kemsphinx_cli::keyfile::read_private_key(&key).unwrap();

    // inspect reads a packet and a key, and writes its output, all under
    // names that are not UTF-8, and prints them lossily.
    let case = &own("forward.json")["cases"][0];
    let packet = dir.join(OsStr::from_bytes(b"p0-\xfe.hex"));
    std::fs::write(&packet, case["packets"][0].as_str().unwrap()).unwrap();
    let raw = dir.join(OsStr::from_bytes(b"k0-\xfd.hex"));
    std::fs::write(&raw, case["nodes"][0]["private_key"].as_str().unwrap()).unwrap();
    let next = dir.join(OsStr::from_bytes(b"p1-\xfc.hex"));
    let out = run(&[
        "inspect".as_ref(),
        packet.as_os_str(),
        "--key".as_ref(),
        raw.as_os_str(),
        "--out".as_ref(),
        next.as_os_str(),
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{out:?}");
    assert!(
        text.starts_with(&format!("{}/p0-\u{fffd}.hex (hex)", dir.display())),
        "{text}"
    );
    assert!(
        text.contains("wrote ") && text.contains("p1-\u{fffd}.hex"),
        "{text}"
    );
    let written = std::fs::read_to_string(&next).unwrap();
    assert_eq!(written.trim(), case["packets"][1].as_str().unwrap());

    // The other key, generated above, is read from its non-UTF-8 folder
    // too (and is not this hop's key).
    let out = run(&[
        "inspect".as_ref(),
        packet.as_os_str(),
        "--key".as_ref(),
        key.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stdout(&out).contains("result         err_mac"), "{out:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
