//! The builds a report runs beside itself: this report built on the
//! `rustcrypto` KEM backend (measured in rounds alternating with this
//! build, each in a child process), and `benches/peers` (kemsphinx beside
//! Nym's sphinx-packet and Outfox, interleaved in one process).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// The root of the repository.
pub(crate) fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The target directory this program was built in (`<target>/release/
/// examples/report`), or `target/` of the repository.
pub(crate) fn target_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| repo().join("target"))
}

/// `cargo build --release` with `args`, in `target` (or the default
/// target directory); the build's output goes to stderr.
pub(crate) fn cargo_build(args: &[&str], target: Option<&Path>) -> bool {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(repo())
        .args(["build", "--release", "--quiet"])
        .args(args)
        .stdout(Stdio::null());
    if let Some(t) = target {
        cmd.env("CARGO_TARGET_DIR", t);
    }
    cmd.status().is_ok_and(|s| s.success())
}

/// The features of the `rustcrypto` build.
pub(crate) const RUSTCRYPTO_FEATURES: &str = "std,pem,rustcrypto";

/// Build this report on the `rustcrypto` KEM backend, in its own target
/// directory, and check the vectors on it. The root crate's
/// dev-dependency on itself turns the default features (and so `libcrux`)
/// back on; with both on, `rustcrypto` is the one selected, which the
/// child reports and the caller checks. Returns the program.
pub(crate) fn build_rustcrypto() -> Result<PathBuf, String> {
    let dir = target_dir().join("rustcrypto");
    eprintln!(
        "building the report on the rustcrypto backend (CARGO_TARGET_DIR={})…",
        dir.display()
    );
    let args = [
        "--example",
        "report",
        "--no-default-features",
        "--features",
        RUSTCRYPTO_FEATURES,
    ];
    if !cargo_build(&args, Some(&dir)) {
        return Err("the rustcrypto build failed".into());
    }
    let exe = dir.join("release/examples/report");
    let out = Command::new(&exe)
        .arg("--child-vectors")
        .output()
        .map_err(|e| format!("running {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "the rustcrypto build fails the vectors: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(exe)
}

/// Run `exe --child-ops` with the plan's arguments and parse what it
/// prints.
pub(crate) fn child_ops(exe: &Path, quick: bool) -> Result<Value, String> {
    let mut cmd = Command::new(exe);
    cmd.arg("--child-ops");
    if quick {
        cmd.arg("--quick");
    }
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("{} --child-ops failed", exe.display()));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("child output: {e}"))
}

/// Build `benches/peers` in its own target directory; returns the
/// program.
pub(crate) fn build_peers() -> Result<PathBuf, String> {
    let dir = target_dir().join("peers");
    eprintln!(
        "building benches/peers (CARGO_TARGET_DIR={})…",
        dir.display()
    );
    let manifest = repo().join("benches/peers/Cargo.toml");
    let manifest = manifest.to_string_lossy();
    if !cargo_build(&["--manifest-path", &manifest], Some(&dir)) {
        return Err("the benches/peers build failed".into());
    }
    Ok(dir.join("release/kemsphinx-peers"))
}

/// Run the peers' benchmark for `rounds` rounds; returns its JSON rows.
pub(crate) fn run_peers(exe: &Path, rounds: usize) -> Result<Vec<Value>, String> {
    let json = std::env::temp_dir().join(format!("kemsphinx-peers-{}.json", std::process::id()));
    let ok = Command::new(exe)
        .args(["--rounds", &rounds.to_string(), "--json"])
        .arg(&json)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let text = std::fs::read_to_string(&json);
    let _ = std::fs::remove_file(&json);
    if !ok {
        return Err("benches/peers failed".into());
    }
    let text = text.map_err(|e| format!("reading the peers' JSON: {e}"))?;
    match serde_json::from_str(&text) {
        Ok(Value::Array(rows)) => Ok(rows),
        Ok(_) => Err("the peers' JSON is not a list".into()),
        Err(e) => Err(format!("the peers' JSON: {e}")),
    }
}

/// Build the example node and its load tool (`kemsphinx-node`'s
/// `udp_node` and `load`) beside this program; returns the load tool.
pub(crate) fn build_node() -> Result<PathBuf, String> {
    eprintln!("building the example node and its load tool…");
    let args = [
        "-p",
        "kemsphinx-node",
        "--example",
        "udp_node",
        "--example",
        "load",
    ];
    if !cargo_build(&args, None) {
        return Err("the build of the example node failed".into());
    }
    Ok(target_dir().join("release/examples/load"))
}

/// Run the load tool with `args`; returns what it printed.
pub(crate) fn run_load(exe: &Path, args: &[String]) -> Result<String, String> {
    let out = Command::new(exe)
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running {}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let last = text.lines().last().unwrap_or("");
        return Err(format!(
            "`load {}` failed (last line: {last})",
            args.join(" ")
        ));
    }
    Ok(text)
}
