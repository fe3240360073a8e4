//! What disk mode costs (issue 19), all in one run, as markdown:
//!
//! 1. the replay store (redb) on this workload: a full epoch of 10⁶ random
//!    32-byte tags (bulk load), then group commits of durable inserts into
//!    it (tags/s, commits/s), disk bytes per 10⁶ tags, restart time (open
//!    the store and rebuild the Bloom filter from it), and an exact lookup.
//!    (It once measured fjall beside redb; that comparison was retired
//!    after its decision, and its figures stay in the repository's
//!    `results/2026-12-01-persist-cost.md` and SPEC.md §14.)
//! 2. per packet, on the node's own code (`Epochs`, `Journal`, `Store`):
//!    unwrap alone; memory mode (replay tag, Bloom check, unwrap, Bloom
//!    insert); disk mode (the same, plus the exact check and the tag's
//!    durable insert by group commit, timed until the last group is
//!    durable, at group intervals 0, 5 and 20 ms), on 1 and 2 threads (one
//!    node per thread, its own store), wall time and CPU time;
//! 3. the four-node example network in memory mode and in disk mode: round
//!    trips, and how long due packets waited for their group's commit.
//!
//! ```text
//! cargo run --release --manifest-path mixnet/Cargo.toml --example persist_cost [-- OUT.md]
//! cargo run --release --manifest-path mixnet/Cargo.toml --example persist_cost -- --crash-restart
//! ```
//!
//! (`--crash-restart` measures only the restart after a crash with a full
//! epoch, which the full run also does.)
//!
//! Scratch files go to `$TMPDIR` (on this machine's disk, not tmpfs:
//! check with `df`), and are removed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    missing_docs
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{
    Command, Hop, NodeId, PrivateKey, RecipientId, ReplayTag, create_packet, replay_tag, unwrap,
};
use kemsphinx_mixnet::epoch::{EpochPolicy, Epochs, Which};
use kemsphinx_mixnet::journal::{GROUP_INTERVAL, Journal};
use kemsphinx_mixnet::log::Log;
use kemsphinx_mixnet::persist::PersistDir;
use kemsphinx_mixnet::replay::ReplayFilter;
use kemsphinx_mixnet::store::Store;
use kemsphinx_mixnet::{Config, run};
use rand_core::{Rng, SeedableRng};

const EPOCH_TAGS: usize = 1_000_000;
const GROUP: usize = 256;
const GROUP_COMMITS: usize = 200;
/// Then larger groups, as a node at a higher rate makes them.
const BIG_GROUP: usize = 2048;
const BIG_COMMITS: usize = 25;
const EXTRA: usize = GROUP * GROUP_COMMITS + BIG_GROUP * BIG_COMMITS;
const PACKETS: usize = 6_000;
const REPEATS: usize = 3;

fn tags(rng: &mut ChaCha20Rng, n: usize) -> Vec<ReplayTag> {
    (0..n)
        .map(|_| {
            let mut t = [0u8; 32];
            rng.fill_bytes(&mut t);
            ReplayTag(t)
        })
        .collect()
}

fn dir_bytes(path: &Path) -> u64 {
    let meta = std::fs::metadata(path).unwrap();
    if meta.is_file() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .unwrap()
        .map(|e| dir_bytes(&e.unwrap().path()))
        .sum()
}

/// What one database did on the workload.
struct StoreFigures {
    name: &'static str,
    bulk_s: f64,
    group_tags_per_s: f64,
    commits_per_s: f64,
    big_tags_per_s: f64,
    big_commits_per_s: f64,
    bytes_per_million: u64,
    restart_s: f64,
    lookup_us: f64,
}

/// The key the measured stores are bound to.
fn store_key() -> PrivateKey {
    PrivateKey::from_seed(&[9; 96])
}

fn bloom() -> ReplayFilter {
    ReplayFilter::new(EPOCH_TAGS, 1e-6)
}

fn measure_redb(scratch: &Path, epoch: &[ReplayTag], extra: &[ReplayTag]) -> StoreFigures {
    let path = scratch.join("redb-epoch.redb");
    let t = Instant::now();
    let store = Store::create(&path, 0, store_key().public_key(), SystemTime::now()).unwrap();
    for chunk in epoch.chunks(50_000) {
        store.commit(chunk).unwrap();
    }
    let bulk_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for chunk in extra.chunks(GROUP).take(GROUP_COMMITS) {
        store.commit(chunk).unwrap();
    }
    let group_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for chunk in extra[GROUP * GROUP_COMMITS..EXTRA].chunks(BIG_GROUP) {
        store.commit(chunk).unwrap();
    }
    let big_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let probes = &extra[EXTRA..][..10_000];
    for tag in probes {
        assert!(!store.contains(tag).unwrap());
    }
    let lookup_us = t.elapsed().as_secs_f64() * 1e6 / probes.len() as f64;
    drop(store);
    let bytes = dir_bytes(&path);
    let t = Instant::now();
    let store = Store::open(&path, 0, store_key().public_key()).unwrap();
    let mut filter = bloom();
    let n = store.for_each(|tag| {
        filter.insert(tag);
    });
    let restart_s = t.elapsed().as_secs_f64();
    assert_eq!(n.unwrap() as usize, EPOCH_TAGS + EXTRA);
    drop(store);
    std::fs::remove_file(&path).unwrap();
    let total = EPOCH_TAGS + EXTRA;
    StoreFigures {
        name: "redb 4.6",
        bulk_s,
        group_tags_per_s: (GROUP * GROUP_COMMITS) as f64 / group_s,
        commits_per_s: GROUP_COMMITS as f64 / group_s,
        big_tags_per_s: (BIG_GROUP * BIG_COMMITS) as f64 / big_s,
        big_commits_per_s: BIG_COMMITS as f64 / big_s,
        bytes_per_million: bytes * 1_000_000 / total as u64,
        restart_s,
        lookup_us,
    }
}

/// Distinct packets for one node key (hop 1); the other hops' keys are
/// random.
fn packets(rng: &mut ChaCha20Rng, key: &PrivateKey, n: usize) -> Vec<Box<[u8; PACKET_LEN]>> {
    let others: Vec<PrivateKey> = (1..HOPS).map(|_| PrivateKey::generate(rng)).collect();
    let delay = [Command::NodeDelay(1)];
    let terminal = [Command::Recipient(RecipientId([4; 32]))];
    (0..n)
        .map(|_| {
            let path: [Hop<'_>; HOPS] = std::array::from_fn(|i| Hop {
                id: NodeId([i as u8; 32]),
                public_key: if i == 0 {
                    key.public_key()
                } else {
                    others[i - 1].public_key()
                },
                commands: if i + 1 < HOPS { &delay } else { &terminal },
            });
            let mut p = Box::new([0u8; PACKET_LEN]);
            create_packet(rng, &path, &[7u8; PAYLOAD_LEN], &mut p).unwrap();
            p
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    UnwrapOnly,
    Memory,
    /// With this group interval.
    Disk(Duration),
}

fn policy() -> EpochPolicy {
    EpochPolicy {
        capacity: EPOCH_TAGS,
        fp_rate: 1e-6,
        rotate_after: EPOCH_TAGS,
        length: Duration::from_secs(3600),
        grace: Duration::from_secs(60),
    }
}

/// One node's receive path over `packets`; returns seconds until done
/// (disk mode: until the last tag is durable).
fn one_node(
    mode: Mode,
    key: &PrivateKey,
    packets: &[Box<[u8; PACKET_LEN]>],
    scratch: &Path,
) -> f64 {
    let mut buf = Box::new([0u8; PACKET_LEN]);
    let interval = match mode {
        Mode::Disk(i) => i,
        _ => Duration::ZERO,
    };
    let journal = Arc::new(Journal::new(interval));
    let key_copy = || PrivateKey::from_bytes(&key.to_bytes()).unwrap();
    let mut epochs = match mode {
        Mode::Disk(_) => {
            let dir = PersistDir::new(scratch).unwrap();
            let (e, _) = Epochs::open(
                policy(),
                dir,
                Arc::clone(&journal),
                Instant::now(),
                key_copy,
            )
            .unwrap();
            e
        }
        _ => Epochs::new(policy(), key_copy(), Instant::now()),
    };
    std::thread::scope(|s| {
        let committer = matches!(mode, Mode::Disk(_)).then(|| {
            s.spawn(|| {
                let mut log = Log::stderr();
                journal.run_committer(0, &mut log, || {});
            })
        });
        let t = Instant::now();
        let mut last_group = 0;
        for p in packets {
            buf.copy_from_slice(&p[..]);
            if mode == Mode::UnwrapOnly {
                unwrap(epochs.keys().next().unwrap().1, &mut buf).unwrap();
                continue;
            }
            let tag = replay_tag(&buf);
            assert!(!epochs.seen(&tag));
            unwrap(epochs.keys().next().unwrap().1, &mut buf).unwrap();
            last_group = epochs.remember_durably(Which::Current, &tag).unwrap();
        }
        while journal.durable() < last_group {
            std::thread::sleep(Duration::from_micros(50));
        }
        let elapsed = t.elapsed().as_secs_f64();
        journal.stop();
        if let Some(c) = committer {
            c.join().unwrap();
        }
        elapsed
    })
}

/// This process's CPU time so far (user + system, all threads), from
/// `/proc/self/stat` in clock ticks of 10 ms.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15; 12 and 13 after the ')'.
    (ticks(11) + ticks(12)) / 100.0
}

/// µs per packet, median of `REPEATS`, with `threads` nodes in parallel
/// (each its own copy of the packets, its own epochs and store); and CPU
/// µs per packet over all runs (every thread of the process: the
/// committers' work included).
fn per_packet(
    mode: Mode,
    threads: usize,
    key: &PrivateKey,
    packets: &[Box<[u8; PACKET_LEN]>],
    scratch: &Path,
) -> (f64, f64) {
    let cpu0 = cpu_seconds();
    let mut runs: Vec<f64> = (0..REPEATS)
        .map(|r| {
            let times: Vec<f64> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..threads)
                    .map(|i| {
                        let dir = scratch.join(format!("node-{r}-{i}"));
                        s.spawn(move || {
                            let t = one_node(mode, key, packets, &dir);
                            let _ = std::fs::remove_dir_all(&dir);
                            t
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            // Wall time for all threads' packets, per packet of one thread
            // (so with 2 threads on 2 cores, the same figure means twice
            // the throughput).
            let wall = times.iter().copied().fold(0.0, f64::max);
            wall * 1e6 / packets.len() as f64
        })
        .collect();
    let cpu = (cpu_seconds() - cpu0) * 1e6 / (REPEATS * threads * packets.len()) as f64;
    runs.sort_by(f64::total_cmp);
    (runs[REPEATS / 2], cpu)
}

fn network(persist: Option<PathBuf>) -> (Duration, Duration, Duration, Duration, u64) {
    let cfg = Config {
        packets: 400,
        attacks: false,
        persist,
        ..Config::default()
    };
    let r = run(&cfg).unwrap();
    assert_eq!(r.client.replies_ok, cfg.packets, "{:?}", r.client);
    let commits = r.nodes.iter().map(|n| n.commits).sum();
    // Node 1, a middle hop, forwards both ways: its wait is representative.
    let n1 = &r.nodes[1];
    (
        r.client.round_trip.quantile(0.5),
        r.client.round_trip.quantile(0.99),
        n1.durable_wait.quantile(0.5),
        n1.durable_wait.quantile(0.99),
        commits,
    )
}

/// Child of [`crash_restart`]: fill a store with `EPOCH_TAGS` tags and
/// abort (no destructor runs: redb finds the file as a crash leaves it).
fn fill_and_abort(path: &Path) -> ! {
    let mut rng = ChaCha20Rng::seed_from_u64(23);
    let store = Store::create(path, 0, store_key().public_key(), SystemTime::now()).unwrap();
    for chunk in tags(&mut rng, EPOCH_TAGS).chunks(50_000) {
        store.commit(chunk).unwrap();
    }
    std::process::abort();
}

/// Restart after a crash with a full epoch: a child process fills a store
/// with 10⁶ tags and aborts; then open it (redb's check and repair) and
/// rebuild the Bloom filter, timed. Returns (seconds, tags).
fn crash_restart(scratch: &Path) -> (f64, u64) {
    let path = scratch.join("crashed.redb");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--fill-and-abort")
        .arg(&path)
        .status()
        .unwrap();
    assert!(!status.success(), "the child was to abort");
    let t = Instant::now();
    let store = Store::open(&path, 0, store_key().public_key()).unwrap();
    let mut filter = bloom();
    let n = store
        .for_each(|tag| {
            filter.insert(tag);
        })
        .unwrap();
    let s = t.elapsed().as_secs_f64();
    drop(store);
    std::fs::remove_file(&path).unwrap();
    (s, n)
}

/// `--two-phase`: what the store's two-phase commits cost over one-phase
/// ones, on redb itself: groups of `GROUP` random tags, each committed
/// durably, alternating one-phase and two-phase rounds of 50 commits into
/// two databases in the same directory. Returns the median commit time of
/// each, in seconds.
fn two_phase_cost(scratch: &Path) -> (f64, f64) {
    use redb::{Database, Durability, TableDefinition};
    const TAGS: TableDefinition<'_, [u8; 32], ()> = TableDefinition::new("replay_tags");
    let mut rng = ChaCha20Rng::seed_from_u64(37);
    let dbs = [false, true].map(|two| {
        let path = scratch.join(format!("two-phase-{two}.redb"));
        let _ = std::fs::remove_file(&path);
        (two, Database::create(&path).unwrap())
    });
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for _round in 0..20 {
        for (i, (two, db)) in dbs.iter().enumerate() {
            for _ in 0..50 {
                let group = tags(&mut rng, GROUP);
                let t = Instant::now();
                let mut tx = db.begin_write().unwrap();
                tx.set_durability(Durability::Immediate).unwrap();
                tx.set_two_phase_commit(*two);
                {
                    let mut table = tx.open_table(TAGS).unwrap();
                    for tag in &group {
                        table.insert(&tag.0, ()).unwrap();
                    }
                }
                tx.commit().unwrap();
                times[i].push(t.elapsed().as_secs_f64());
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [one, two] = &mut times;
    (median(one), median(two))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag] = &args[..]
        && flag == "--two-phase"
    {
        let scratch = std::env::temp_dir().join(format!("persist-2pc-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let (one, two) = two_phase_cost(&scratch);
        println!(
            "group commit of {GROUP} tags, median of 1,000 each, interleaved: one-phase {:.2} ms, \
             two-phase {:.2} ms ({:.2}×)",
            one * 1e3,
            two * 1e3,
            two / one
        );
        let _ = std::fs::remove_dir_all(&scratch);
        return;
    }
    if let [_, flag, path] = &args[..]
        && flag == "--fill-and-abort"
    {
        fill_and_abort(Path::new(path));
    }
    if let [_, flag] = &args[..]
        && flag == "--crash-restart"
    {
        let scratch = std::env::temp_dir().join(format!("persist-crash-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let (s, n) = crash_restart(&scratch);
        println!(
            "restart after a crash (abort) with {n} tags: open (check and repair) + Bloom rebuild {s:.2} s"
        );
        let _ = std::fs::remove_dir_all(&scratch);
        return;
    }
    let out = args.get(1).cloned();
    let scratch = std::env::temp_dir().join(format!("persist-cost-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(19);
    let mut md = String::new();
    let load = |s: &str| std::fs::read_to_string(s).unwrap_or_default();
    let loadavg = load("/proc/loadavg");
    let cpu = load("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("?")
        .trim()
        .to_owned();
    writeln!(md, "# Disk mode's cost (issue 19)\n").unwrap();
    writeln!(
        md,
        "`cargo run --release --manifest-path mixnet/Cargo.toml --example persist_cost`; CPU {cpu}, {} cores; \
         load average at start {}; scratch files in {}.\n",
        std::thread::available_parallelism().map_or(0, usize::from),
        loadavg.split(' ').take(3).collect::<Vec<_>>().join(" "),
        scratch.display()
    )
    .unwrap();

    // 1. The store.
    let epoch = tags(&mut rng, EPOCH_TAGS);
    let extra = tags(&mut rng, EXTRA + 10_000);
    eprintln!("measuring redb...");
    let redb = measure_redb(&scratch, &epoch, &extra);
    writeln!(
        md,
        "## The store: 10⁶ random 32-byte tags, then {GROUP_COMMITS} group commits of {GROUP} \
         tags and {BIG_COMMITS} of {BIG_GROUP}, each durable (fsync) before the next\n"
    )
    .unwrap();
    writeln!(
        md,
        "| database | bulk load of 10⁶ tags | groups of {GROUP}: tags/s (commits/s) | groups of \
         {BIG_GROUP}: tags/s (commits/s) | disk bytes per 10⁶ tags | restart: open (+ checks) + \
         Bloom rebuild, {} tags | exact lookup (absent tag) |",
        EPOCH_TAGS + EXTRA
    )
    .unwrap();
    writeln!(md, "|---|---|---|---|---|---|---|").unwrap();
    let f = &redb;
    writeln!(
        md,
        "| {} | {:.2} s | {:.0} ({:.0}) | {:.0} ({:.0}) | {:.1} MB | {:.2} s | {:.1} µs |",
        f.name,
        f.bulk_s,
        f.group_tags_per_s,
        f.commits_per_s,
        f.big_tags_per_s,
        f.big_commits_per_s,
        f.bytes_per_million as f64 / 1e6,
        f.restart_s,
        f.lookup_us
    )
    .unwrap();
    drop((epoch, extra));
    eprintln!("restart after a crash...");
    let (crash_s, crash_n) = crash_restart(&scratch);
    writeln!(
        md,
        "\nredb, restart after a crash: a process filled a store with {crash_n} tags and aborted; \
         open (redb's check and repair) + Bloom rebuild took {crash_s:.2} s."
    )
    .unwrap();

    // 2. Per packet.
    eprintln!("making {PACKETS} packets...");
    let key = PrivateKey::generate(&mut rng);
    let ps = packets(&mut rng, &key, PACKETS);
    writeln!(
        md,
        "\n## Per packet, on the node's code: {PACKETS} distinct packets per node, median of \
         {REPEATS} runs (µs per packet per node; with 2 threads, 2 nodes run at once)\n"
    )
    .unwrap();
    writeln!(
        md,
        "| threads | group interval | unwrap alone | memory mode (tag, Bloom, unwrap, insert) | \
         disk mode (+ exact check, durable insert by group commit) | disk / memory | CPU µs per \
         packet: unwrap / memory / disk | CPU disk / memory |"
    )
    .unwrap();
    writeln!(md, "|---|---|---|---|---|---|---|---|").unwrap();
    for threads in [1, 2] {
        eprintln!("per packet, {threads} thread(s)...");
        let (u, uc) = per_packet(Mode::UnwrapOnly, threads, &key, &ps, &scratch);
        let (m, mc) = per_packet(Mode::Memory, threads, &key, &ps, &scratch);
        for interval in [Duration::ZERO, GROUP_INTERVAL, 4 * GROUP_INTERVAL] {
            let (d, dc) = per_packet(Mode::Disk(interval), threads, &key, &ps, &scratch);
            writeln!(
                md,
                "| {threads} | {} ms | {u:.1} | {m:.1} | {d:.1} | {:.3} | {uc:.1} / {mc:.1} / \
                 {dc:.1} | {:.3} |",
                interval.as_millis(),
                d / m,
                dc / mc
            )
            .unwrap();
        }
    }

    // 3. The network.
    eprintln!("the example network, memory then disk mode...");
    let (m50, m99, _, _, _) = network(None);
    let (d50, d99, w50, w99, commits) = network(Some(scratch.join("network")));
    writeln!(
        md,
        "\n## The four-node example network, 400 requests (window 4, node_delay 0..=5 ms)\n"
    )
    .unwrap();
    writeln!(
        md,
        "| mode | round trip p50 | p99 | due packets' wait for their group (n1) p50 / p99 | group commits (4 nodes) |"
    )
    .unwrap();
    writeln!(md, "|---|---|---|---|---|").unwrap();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    writeln!(
        md,
        "| memory | {:.1} ms | {:.1} ms | – | – |",
        ms(m50),
        ms(m99)
    )
    .unwrap();
    writeln!(
        md,
        "| disk | {:.1} ms | {:.1} ms | {:.2} / {:.2} ms | {commits} |",
        ms(d50),
        ms(d99),
        ms(w50),
        ms(w99)
    )
    .unwrap();
    let loadavg = load("/proc/loadavg");
    writeln!(
        md,
        "\nLoad average at the end: {}.",
        loadavg.split(' ').take(3).collect::<Vec<_>>().join(" ")
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&scratch);
    print!("{md}");
    if let Some(path) = out {
        std::fs::write(&path, &md).unwrap();
        eprintln!("written to {path}");
    }
}
