//! Measurements that need a process or a build of their own: peak resident
//! memory, the stack an unwrap needs, the code a mix links, and multi-thread
//! throughput.

use std::process::Command;
use std::time::{Duration, Instant};

use kemsphinx::unwrap;

use kemsphinx_support::bench::{Buffers, Net};

use crate::children;

/// What a child process is asked to do (`report --child MODE [ARG]`).
pub(crate) fn child(mode: &str, arg: Option<&str>) -> i32 {
    match mode {
        "rss-baseline" => {
            let net = Net::new();
            std::hint::black_box(&net);
            println!("{}", vm_hwm_kib());
            0
        }
        "rss" => {
            let net = Net::new();
            let mut rng = <chacha20::ChaCha20Rng as rand_core::SeedableRng>::from_seed([2; 32]);
            net.request_reply(&mut rng, &mut Buffers::new())
                .expect("request/reply");
            println!("{}", vm_hwm_kib());
            0
        }
        "stack" => {
            let size: usize = arg.and_then(|a| a.parse().ok()).unwrap_or(0);
            let net = Net::new();
            let mut packet = net.first_packet().expect("packets");
            let key = net.first_key();
            let empty = arg.is_some_and(|a| a.ends_with('e'));
            let result = std::thread::scope(|s| {
                std::thread::Builder::new()
                    .stack_size(size)
                    .spawn_scoped(s, || {
                        if empty {
                            true
                        } else {
                            unwrap(key, &mut packet).is_ok()
                        }
                    })
                    .map(|h| h.join().unwrap_or(false))
                    .unwrap_or(false)
            });
            i32::from(!result)
        }
        _ => 2,
    }
}

/// Peak resident set size of this process (VmHWM), in KiB.
fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Run this program as a child and read the number it prints.
fn child_number(args: &[&str]) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new(exe).arg("--child").args(args).output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Peak resident memory of child processes, KiB (`None`: not measured).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeakRss {
    /// A process that loads four keys.
    pub(crate) loaded_keys: Option<u64>,
    /// One that then does a full request and reply.
    pub(crate) after_request_reply: Option<u64>,
}

/// Peak RSS of a process that loads four keys, and of one that then does a
/// full request and reply.
pub(crate) fn peak_rss() -> PeakRss {
    PeakRss {
        loaded_keys: child_number(&["rss-baseline"]),
        after_request_reply: child_number(&["rss"]),
    }
}

/// Whether a thread with `size` bytes of stack completes one unwrap (or,
/// with `empty`, nothing at all), tried in a child process so an overflow
/// only kills the child.
fn stack_ok(size: usize, empty: bool) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let arg = format!("{size}{}", if empty { "e" } else { "" });
    Command::new(exe)
        .args(["--child", "stack", &arg])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Smallest stack (bytes, to 1 KiB) on which the probe completes.
fn smallest_stack(empty: bool) -> Option<usize> {
    let (mut lo, mut hi) = (1024usize, 4 << 20);
    if !stack_ok(hi, empty) {
        return None;
    }
    while hi - lo > 1024 {
        let mid = (lo + hi) / 2;
        if stack_ok(mid, empty) {
            hi = mid
        } else {
            lo = mid
        }
    }
    Some(hi)
}

/// Stack high-water mark of one unwrap: the smallest thread stack that
/// completes an unwrap, less the smallest that completes an empty thread.
pub(crate) fn unwrap_stack() -> Option<(usize, usize)> {
    Some((smallest_stack(false)?, smallest_stack(true)?))
}

/// `.text` size of a binary (via binutils `size -A`).
fn text_size(path: &std::path::Path) -> Option<u64> {
    let out = Command::new("size").arg("-A").arg(path).output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.starts_with(".text "))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
}

/// `.text` sizes in bytes (`None`: not measured).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodeSize {
    /// The smallest program that unwraps (examples/unwrap_only.rs).
    pub(crate) unwrap_only: Option<u64>,
    /// An empty Rust program built the same way.
    pub(crate) empty_program: Option<u64>,
}

/// `.text` of the smallest program that unwraps (examples/unwrap_only.rs),
/// and of an empty Rust program built the same way, in bytes.
pub(crate) fn code_size() -> CodeSize {
    let built = children::cargo_build(&["--example", "unwrap_only"], Some(&children::target_dir()));
    let exe = children::target_dir().join("release/examples/unwrap_only");
    let unwrap_only = if built { text_size(&exe) } else { None };
    let dir = std::env::temp_dir().join(format!("kemsphinx-empty-{}", std::process::id()));
    let empty = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("empty.rs"), "fn main() {}\n"))
        .ok()
        .and_then(|()| {
            Command::new("rustc")
                .args(["-C", "opt-level=3", "--edition", "2024", "-o"])
                .arg(dir.join("empty"))
                .arg(dir.join("empty.rs"))
                .status()
                .ok()
        })
        .filter(|s| s.success())
        .and_then(|_| text_size(&dir.join("empty")));
    let _ = std::fs::remove_dir_all(&dir);
    CodeSize {
        unwrap_only,
        empty_program: empty,
    }
}

/// Unwraps per second with `threads` threads sharing one loaded key, each
/// unwrapping copies of the same hop-0 packet for `time`.
pub(crate) fn throughput(net: &Net, threads: usize, time: Duration) -> f64 {
    let packet = net.first_packet().expect("packets");
    let key = net.first_key();
    let start = Instant::now();
    let total: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let packet = packet.clone();
                s.spawn(move || {
                    let mut buf = packet.clone();
                    let mut n = 0u64;
                    while start.elapsed() < time {
                        *buf = *packet;
                        if unwrap(key, &mut buf).is_ok() {
                            n += 1;
                        }
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    total as f64 / start.elapsed().as_secs_f64()
}
