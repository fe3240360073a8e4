//! `kemsphinx keygen`: files in the reference's format, the private one
//! 0600 from creation, and never an overwrite.

// Tests unwrap, index and panic freely.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use kemsphinx::{PrivateKey, PublicKey};
use kemsphinx_cli::keygen::{KeyFiles, generate, write_key_pair};

/// A fresh folder under the system temp dir (not created).
fn scratch(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    std::env::temp_dir().join(format!(
        "kemsphinx-keygen-{tag}-{}-{nanos}",
        std::process::id()
    ))
}

fn keygen(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kemsphinx"))
        .arg("keygen")
        .args(args)
        .output()
        .unwrap()
}

fn mode(path: &std::path::Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn writes_a_loadable_pair_with_a_0600_private_key() {
    let dir = scratch("pair");
    let out = keygen(&["--out", dir.to_str().unwrap(), "--name", "node-1"]);
    assert!(out.status.success(), "{out:?}");
    let files = KeyFiles::new(&dir, "node-1");
    assert_eq!(mode(&files.private), 0o600);
    assert_eq!(
        mode(&files.public) & 0o022,
        0,
        "public key not writable by others"
    );
    assert_eq!(mode(&dir), 0o700);

    let private = PrivateKey::from_pem(&fs::read(&files.private).unwrap()).unwrap();
    let public = PublicKey::from_pem(&fs::read(&files.public).unwrap()).unwrap();
    assert_eq!(*private.public_key(), public);
    let text = fs::read_to_string(&files.private).unwrap();
    assert!(text.starts_with("-----BEGIN MLKEM768-X25519 PRIVATE KEY-----\n"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refuses_to_overwrite_either_file_and_writes_nothing() {
    let dir = scratch("exists");
    assert!(keygen(&["--out", dir.to_str().unwrap()]).status.success());
    let files = KeyFiles::new(&dir, "mix");
    let before = (
        fs::read(&files.public).unwrap(),
        fs::read(&files.private).unwrap(),
    );

    let again = keygen(&["--out", dir.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not overwriting"));
    let after = (
        fs::read(&files.public).unwrap(),
        fs::read(&files.private).unwrap(),
    );
    assert_eq!(before, after);

    // Only the public file present: still refused, no private file made.
    fs::remove_file(&files.private).unwrap();
    let err = write_key_pair(&dir, &files, &generate().unwrap()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    assert!(!files.private.exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refuses_a_dangling_symlink_in_place_of_the_private_key() {
    let dir = scratch("link");
    fs::create_dir_all(&dir).unwrap();
    let files = KeyFiles::new(&dir, "mix");
    let target = dir.join("elsewhere");
    std::os::unix::fs::symlink(&target, &files.private).unwrap();
    let err = write_key_pair(&dir, &files, &generate().unwrap()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    assert!(!target.exists() && !files.public.exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &[][..],
        &["--out"][..],
        &["--name", "x"][..],
        &["--out", "/tmp", "--name", "../up"][..],
        &["--out", "/tmp", "--bogus"][..],
    ] {
        assert_eq!(keygen(args).status.code(), Some(2), "{args:?}");
    }
    assert!(keygen(&["--help"]).status.success());
}

/// The files in `dir`, sorted.
fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// `sh -c 'SETUP; exec kemsphinx keygen --out DIR'`.
fn keygen_in_shell(setup: &str, dir: &std::path::Path) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("{setup}; exec \"$0\" keygen --out \"$1\""))
        .arg(env!("CARGO_BIN_EXE_kemsphinx"))
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn a_write_error_leaves_no_key_file_and_a_later_run_succeeds() {
    let dir = scratch("fsize");
    fs::create_dir_all(&dir).unwrap();
    // A file size limit of one block (512 or 1,024 bytes): both PEM files
    // are longer.
    let out = keygen_in_shell("ulimit -f 1", &dir);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("keygen: "));
    assert_eq!(listing(&dir), Vec::<String>::new(), "nothing left behind");
    let again = keygen(&["--out", dir.to_str().unwrap()]);
    assert!(again.status.success(), "{again:?}");
    assert_eq!(listing(&dir), ["mix.kem_private.pem", "mix.kem_public.pem"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn if_the_second_file_cannot_be_made_nothing_is_left() {
    let dir = scratch("second");
    fs::create_dir_all(&dir).unwrap();
    let files = KeyFiles {
        public: dir.join("missing/mix.kem_public.pem"),
        private: dir.join("mix.kem_private.pem"),
    };
    let err = write_key_pair(&dir, &files, &generate().unwrap()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(listing(&dir), Vec::<String>::new());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_modes_printed_are_the_modes_the_files_have() {
    for (umask, public, private) in [
        ("022", 0o644, 0o600),
        ("077", 0o600, 0o600),
        ("027", 0o640, 0o600),
    ] {
        let dir = scratch(&format!("umask{umask}"));
        let out = keygen_in_shell(&format!("umask {umask}"), &dir);
        assert!(out.status.success(), "{out:?}");
        let files = KeyFiles::new(&dir, "mix");
        assert_eq!(
            (mode(&files.public), mode(&files.private)),
            (public, private)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            stdout.contains(&format!("(public, mode {public:04o})")),
            "{umask}: {stdout}"
        );
        assert!(
            stdout.contains(&format!("(private, mode {private:04o})")),
            "{umask}: {stdout}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
