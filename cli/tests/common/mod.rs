//! What the command's tests share: scratch folders, and running the
//! binary under a time limit while watching its memory.
// Each test crate uses some of these.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A fresh, empty scratch folder for one test of this test crate.
pub fn scratch(name: &str) -> PathBuf {
    let crate_name = env!("CARGO_CRATE_NAME");
    let dir = std::env::temp_dir().join(format!(
        "kemsphinx-{crate_name}-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `kemsphinx verify ARGS`, killed if it runs longer than `limit` (then
/// `None`), and its peak resident memory in KiB (`VmHWM`, read from /proc
/// while it runs, 0 off Linux: a high-water mark, so the last reading is
/// the peak up to a few milliseconds before the end).
pub fn verify(args: &[impl AsRef<OsStr>], limit: Duration) -> (Option<Output>, u64) {
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
    let drain = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            from.read_to_end(&mut v).unwrap();
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let (deadline, status_file) = (
        Instant::now() + limit,
        format!("/proc/{}/status", child.id()),
    );
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    let output = status.map(|status| Output {
        status,
        stdout,
        stderr,
    });
    (output, peak)
}
