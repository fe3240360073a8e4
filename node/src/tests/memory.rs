//! What disk mode holds in memory per full epoch (10⁶ tags): measured as
//! the process's resident set (`VmRSS`, and its peak `VmHWM`, from
//! `/proc/self/status`) while an epoch fills through the group commit, and
//! after a restart resumes it (the store checked page by page, the Bloom
//! filter rebuilt from every tag).
//!
//! The measurement runs in a process of its own (this test binary again,
//! running only [`measured_in_a_fresh_process`]), so no other test's
//! memory is counted. Release builds take about half a minute
//! (`cargo test --release -p kemsphinx-node --lib memory -- --nocapture`
//! prints the figures); debug builds take a few minutes.

use std::path::Path;
use std::time::Duration;

use chacha20::ChaCha20Rng;
use rand_core::SeedableRng;

use super::disk::{scratch, tag};
use crate::{EpochPolicy, Keyring};

/// Set in the child process that measures.
const CHILD: &str = "KEMSPHINX_NODE_MEMORY_CHILD";
/// A full epoch, as the default policy sizes it, in release builds; a
/// tenth of one, with a 2 MiB cache (still far smaller than the store),
/// in debug builds, where redb is many times slower.
const TAGS: usize = if cfg!(debug_assertions) {
    100_000
} else {
    1_000_000
};
/// Tags per group commit while filling: about what 20 ms of traffic at
/// 40,000 packets a second brings (two cores' worth).
const GROUP: usize = 800;

/// `VmRSS` and `VmHWM` in KiB; zero where there is no `/proc`.
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// CPU time of the process so far (every thread), in ticks of 10 ms.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = after
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // utime and stime: fields 14 and 15 of the line, 12 and 13 after ")".
    fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn policy() -> EpochPolicy {
    EpochPolicy {
        capacity: TAGS,
        rotate_after: TAGS,
        store_cache: if cfg!(debug_assertions) {
            2 << 20
        } else {
            EpochPolicy::default().store_cache
        },
        ..EpochPolicy::default()
    }
}

/// Fill epoch 0 of a disk keyring in `dir` with a full epoch's tags,
/// `GROUP` per commit (left open: the caller measures).
fn fill(dir: &Path) -> Keyring {
    let (keyring, _) = Keyring::open(policy(), dir).unwrap();
    keyring.set_group_interval(Duration::ZERO);
    let mut rng = ChaCha20Rng::seed_from_u64(30);
    for _ in 0..TAGS / GROUP {
        let mut last = None;
        for _ in 0..GROUP {
            last = Some(keyring.remember_tag(&tag(&mut rng), false).unwrap());
        }
        assert!(keyring.is_durable_within(last.unwrap(), Duration::from_secs(30)));
    }
    assert_eq!(keyring.current().taken, TAGS);
    keyring
}

/// Which phase the child process runs, and in which directory.
const DIR: &str = "KEMSPHINX_NODE_MEMORY_DIR";

/// One phase, in a process of its own: `fill` a fresh epoch, or `resume`
/// the full one. Prints the resident set's growth over the process before
/// the keyring was made, with the keyring open, and its peak.
fn phase(name: &str, dir: &Path) {
    let (before, _) = rss_kib();
    let (held, peak) = if name == "fill" {
        let (cpu, start) = (cpu_ticks(), std::time::Instant::now());
        let keyring = fill(dir);
        let r = rss_kib();
        println!(
            "fill: {:.1} µs CPU per tag (every thread), {:.1} s",
            (cpu_ticks() - cpu) as f64 * 1e4 / TAGS as f64,
            start.elapsed().as_secs_f64()
        );
        drop(keyring);
        r
    } else {
        let (keyring, resumed) = Keyring::open(policy(), dir).unwrap();
        assert_eq!(resumed.epochs, [(0, TAGS as u64)]);
        // A replay of stored tags is looked up in the store.
        let mut rng = ChaCha20Rng::seed_from_u64(30);
        for _ in 0..10_000 {
            assert!(keyring.seen(&tag(&mut rng)));
        }
        let r = rss_kib();
        drop(keyring);
        r
    };
    let grow = |kib: u64| mib(kib.saturating_sub(before));
    println!(
        "{name}: {:.1} MiB held, peak {:.1} MiB (store cache {:.0} MiB, filter {:.1} MiB, \
         process before {:.1} MiB)",
        grow(held),
        grow(peak),
        mib(policy().store_cache as u64 / 1024),
        mib(policy().filter_bytes() as u64 / 1024),
        mib(before),
    );
    // The cache and the filter, and a few MiB besides (measured: about
    // 4 MiB, the cache's index and redb's allocator state among them).
    let bound = mib((policy().store_cache + policy().filter_bytes()) as u64 / 1024) + 8.0;
    assert!(grow(held) <= bound, "{name}: {:.1} MiB", grow(held));
    // The README's figure: at most half of 0.1's 133 MiB.
    assert!(grow(held) <= 66.0, "{name}: {:.1} MiB", grow(held));
}

/// Run `phase` in a fresh process: this test binary, this test alone.
fn child(name: &str, dir: &Path) -> String {
    let me = std::env::current_exe().unwrap();
    let out = std::process::Command::new(me)
        .args([
            "--exact",
            "tests::memory::measured_in_a_fresh_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, name)
        .env(DIR, dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the {name} process failed");
    text
}

#[test]
fn measured_in_a_fresh_process() {
    if let (Some(name), Some(dir)) = (std::env::var_os(CHILD), std::env::var_os(DIR)) {
        phase(&name.to_string_lossy(), Path::new(&dir));
        return;
    }
    let dir = scratch("memory");
    let filled = child("fill", &dir);
    let resumed = child("resume", &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(filled.contains("fill: ") && resumed.contains("resume: "));
}

/// `store_cache` is checked: a cache too small to keep the B-tree's
/// branch pages (or zero), or past any machine's memory (a size given in
/// the wrong unit), is refused before anything is opened.
#[test]
fn the_store_cache_is_checked() {
    let with = |store_cache| EpochPolicy {
        store_cache,
        ..EpochPolicy::default()
    };
    let mut refused = vec![0, 1, (1 << 20) - 1];
    if let Ok(over) = usize::try_from((64u64 << 30) + 1) {
        refused.extend([over, usize::MAX]);
    }
    for bytes in refused {
        assert_eq!(
            with(bytes).check(),
            Err(crate::PolicyError::StoreCache),
            "{bytes} bytes"
        );
        let dir = scratch("cache-refused");
        let e = Keyring::open(with(bytes), &dir)
            .err()
            .map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("store_cache")), "{bytes}");
        assert!(!dir.exists(), "nothing made for a refused policy");
    }
    let mut accepted = vec![1 << 20, 32 << 20, EpochPolicy::default().store_cache];
    if let Ok(most) = usize::try_from(64u64 << 30) {
        accepted.push(most);
    }
    for bytes in accepted {
        assert_eq!(with(bytes).check(), Ok(()), "{bytes} bytes");
    }
    // The smallest cache works: a store is made, filled and resumed.
    let dir = scratch("cache-small");
    let small = EpochPolicy {
        capacity: 10_000,
        rotate_after: 10_000,
        ..with(1 << 20)
    };
    let mut rng = ChaCha20Rng::seed_from_u64(31);
    let tags: Vec<_> = (0..2_000).map(|_| tag(&mut rng)).collect();
    {
        let (keyring, _) = Keyring::open(small.clone(), &dir).unwrap();
        let last = tags
            .iter()
            .map(|t| keyring.remember_tag(t, false).unwrap())
            .last();
        assert!(keyring.is_durable_within(last.unwrap(), Duration::from_secs(30)));
    }
    let (keyring, resumed) = Keyring::open(small, &dir).unwrap();
    assert_eq!(resumed.epochs, [(0, 2_000)]);
    assert!(tags.iter().all(|t| keyring.seen(t)));
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}
