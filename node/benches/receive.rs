//! What the keyring costs per packet, against the bare library calls a
//! node would make without it (`replay_tag` + `unwrap`), on one thread and
//! on every core; the same batched (`Keyring::receive_batch` against
//! `replay_tag` + `unwrap_batch`, `BATCH` packets a call); and how long a
//! disk-mode keyring takes to reopen.
//!
//! ```text
//! cargo bench -p kemsphinx-node --bench receive [-- ROUNDS BATCH [FILLED]]
//! ```
//!
//! `GROUP_MS=N` in the environment sets the disk keyrings' group interval
//! to N ms (default [`GROUP_INTERVAL`](kemsphinx_node::GROUP_INTERVAL)).
//!
//! With `FILLED`, the disk keyrings' stores hold that many tags before
//! the first round (as late in an epoch: each group's tags then land in
//! as many B-tree pages, nearly one page written per tag).
//!
//! Rounds are interleaved (bare, memory mode, disk mode, then the same
//! three batched, each on a fresh slice of packets none of them has seen,
//! the batched disk mode on a copy of the disk keyring's directory made
//! before any packet), so drift on a shared machine falls on all alike;
//! the figures are medians over rounds. Disk mode is timed twice: the
//! calls alone, and until the batch's last ticket is durable (its last
//! group commit, two `fsync`s, included).
//!
//! (A custom harness rather than divan's: each packet can be accepted only
//! once, so every timed batch needs packets no keyring has seen, and the
//! three modes must share them round by round.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kemsphinx_node::kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx_node::kemsphinx::{
    BATCH, Command, NodeId, PrivateKey, PublicKey, RecipientId, create_packet, packet_mut, path,
    replay_tag, unwrap, unwrap_batch,
};
use kemsphinx_node::{EpochPolicy, Keyring, Ticket};

type Packet = Box<[u8; PACKET_LEN]>;

fn packets(first: &PublicKey, n: usize) -> Vec<Packet> {
    let mut rng = rand_core::UnwrapErr(getrandom::SysRng);
    let others: [PrivateKey; HOPS - 1] = std::array::from_fn(|_| PrivateKey::generate(&mut rng));
    let [b, c, d] = others.each_ref().map(PrivateKey::public_key);
    let keys = [first, b, c, d];
    let nodes = std::array::from_fn(|i| (NodeId([i as u8; 32]), keys[i]));
    let delay = [Command::NodeDelay(1)];
    let deliver = [Command::Recipient(RecipientId([0; 32]))];
    let path = path(nodes, [&delay, &delay, &delay, &deliver]);
    (0..n)
        .map(|_| {
            let mut p = Box::new([0u8; PACKET_LEN]);
            create_packet(&mut rng, &path, &[7; PAYLOAD_LEN], &mut p).unwrap();
            p
        })
        .collect()
}

fn policy() -> EpochPolicy {
    EpochPolicy {
        capacity: 1_000_000,
        rotate_after: 1_000_000,
        ..EpochPolicy::default()
    }
}

/// Run `each` on every packet of `slice`, split over `threads` threads;
/// the wall time per packet.
fn timed(slice: &[Packet], threads: usize, each: &(dyn Fn(&mut [u8]) + Sync)) -> Duration {
    let chunk = slice.len().div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|s| {
        for part in slice.chunks(chunk) {
            s.spawn(move || {
                let mut buf = vec![0u8; PACKET_LEN + 1];
                for p in part {
                    buf[..PACKET_LEN].copy_from_slice(&p[..]);
                    each(&mut buf[..PACKET_LEN]);
                }
            });
        }
    });
    start.elapsed() / u32::try_from(slice.len()).unwrap()
}

/// [`timed`], `BATCH` packets a call: `each` gets them as datagrams.
fn timed_batches(
    slice: &[Packet],
    threads: usize,
    each: &(dyn Fn(&mut [&mut [u8]]) + Sync),
) -> Duration {
    let chunk = slice.len().div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|s| {
        for part in slice.chunks(chunk) {
            s.spawn(move || {
                let mut bufs = vec![[0u8; PACKET_LEN + 1]; BATCH];
                for group in part.chunks(BATCH) {
                    for (buf, p) in bufs.iter_mut().zip(group) {
                        buf[..PACKET_LEN].copy_from_slice(&p[..]);
                    }
                    let mut views: [&mut [u8]; BATCH] = Default::default();
                    for (view, buf) in views.iter_mut().zip(&mut bufs) {
                        *view = &mut buf[..PACKET_LEN];
                    }
                    each(&mut views[..group.len()]);
                }
            });
        }
    });
    start.elapsed() / u32::try_from(slice.len()).unwrap()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kemsphinx-node-bench-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// CPU time of the whole process so far (every thread, the disk keyring's
/// committer included), from `/proc/self/stat`, in clock ticks of 10 ms;
/// zero where there is no `/proc`.
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

/// Copy the closed disk-mode directory `from` to `to`.
fn copy_dir(from: &Path, to: &Path) {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Medians per packet: bare, memory, disk (calls), disk (until durable);
/// CPU time per packet of bare, memory and disk, then of the three
/// batched (summed over rounds); and medians per packet batched: bare,
/// memory, disk (calls).
fn measure(
    rounds: usize,
    batch: usize,
    threads: usize,
    filled: usize,
) -> ([Duration; 4], [Duration; 6], [Duration; 3]) {
    let dir = scratch(&format!("t{threads}"));
    let dir_b = scratch(&format!("t{threads}-batched"));
    drop(Keyring::open(policy(), &dir).unwrap());
    if filled > 0 {
        fill_store(&dir.join("epoch-00000000.redb"), filled);
    }
    copy_dir(&dir, &dir_b);
    let (disk, _) = Keyring::open(policy(), &dir).unwrap();
    let (disk_b, _) = Keyring::open(policy(), &dir_b).unwrap();
    disk.set_group_interval(group_interval());
    disk_b.set_group_interval(group_interval());
    let pem = std::fs::read(dir.join("epoch-00000000.key")).unwrap();
    let key = PrivateKey::from_pem(&pem).unwrap();
    let all = packets(key.public_key(), rounds * batch);
    let mut times: [Vec<Duration>; 4] = Default::default();
    let mut batched: [Vec<Duration>; 3] = Default::default();
    let mut cpu = [0u64; 6];
    for slice in all.chunks(batch) {
        let t0 = cpu_ticks();
        times[0].push(timed(slice, threads, &|buf| {
            let packet = packet_mut(buf).unwrap();
            std::hint::black_box(replay_tag(packet));
            unwrap(&key, packet).unwrap();
        }));
        let memory = Keyring::new(policy(), PrivateKey::from_pem(&pem).unwrap()).unwrap();
        let t1 = cpu_ticks();
        times[1].push(timed(slice, threads, &|buf| {
            let _accepted = memory.receive(buf).unwrap();
        }));
        let t2 = cpu_ticks();
        let last = std::sync::Mutex::new(None::<Ticket>);
        let start = Instant::now();
        times[2].push(timed(slice, threads, &|buf| {
            let t = disk.receive(buf).unwrap().ticket;
            let mut last = last.lock().unwrap();
            *last = (*last).max(Some(t));
        }));
        let last = last.lock().unwrap().unwrap();
        assert!(disk.wait_durable(last, Duration::from_secs(10)).is_ok());
        times[3].push(start.elapsed() / u32::try_from(slice.len()).unwrap());
        let t3 = cpu_ticks();
        cpu[0] += t1 - t0;
        cpu[1] += t2 - t1;
        cpu[2] += t3 - t2;
        batched[0].push(timed_batches(slice, threads, &|views| {
            let packets = views.iter_mut().map(|v| packet_mut(v).unwrap());
            let tagged = packets.inspect(|p| {
                std::hint::black_box(replay_tag(p));
            });
            for r in unwrap_batch([&key], tagged) {
                r.unwrap();
            }
        }));
        let memory = Keyring::new(policy(), PrivateKey::from_pem(&pem).unwrap()).unwrap();
        let t4 = cpu_ticks();
        batched[1].push(timed_batches(slice, threads, &|views| {
            let datagrams = views.iter_mut().map(|v| &mut **v);
            memory.receive_batch(datagrams, |_, r| {
                let _accepted = r.unwrap();
            });
        }));
        let t5 = cpu_ticks();
        batched[2].push(timed_batches(slice, threads, &|views| {
            let datagrams = views.iter_mut().map(|v| &mut **v);
            disk_b.receive_batch(datagrams, |_, r| {
                let _accepted = r.unwrap();
            });
        }));
        let t6 = cpu_ticks();
        cpu[3] += t4 - t3;
        cpu[4] += t5 - t4;
        cpu[5] += t6 - t5;
    }
    drop((disk, disk_b));
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&dir_b).unwrap();
    let per_packet =
        |ticks: u64| Duration::from_millis(ticks * 10) / u32::try_from(all.len()).unwrap();
    (times.map(median), cpu.map(per_packet), batched.map(median))
}

/// Reopen the disk keyring in `dir`, which holds `tags` tags.
fn restart(dir: &Path, tags: usize) -> Duration {
    let start = Instant::now();
    let (k, resumed) = Keyring::open(policy(), dir).unwrap();
    let took = start.elapsed();
    assert_eq!(resumed.epochs, [(0, tags as u64)]);
    drop(k);
    took
}

/// The disk keyrings' group interval: `GROUP_MS` milliseconds from the
/// environment, else the library's default.
fn group_interval() -> Duration {
    std::env::var("GROUP_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(kemsphinx_node::GROUP_INTERVAL, Duration::from_millis)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rounds = args.first().copied().unwrap_or(9);
    let batch = args.get(1).copied().unwrap_or(400);
    let filled = args.get(2).copied().unwrap_or(0);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "receive cost: {rounds} interleaved rounds of {batch} packets, medians per packet \
         (disk store holding {filled} tags first, group interval {:?})",
        group_interval()
    );
    println!(
        "{:<10}{:>10}{:>10}{:>8}{:>13}{:>8}{:>17}{:>8}",
        "threads", "bare µs", "memory", "ratio", "disk (calls)", "ratio", "disk (durable)", "ratio"
    );
    for threads in [1, cores] {
        let ([bare, memory, disk, durable], cpu, [b_bare, b_memory, b_disk]) =
            measure(rounds, batch, threads, filled);
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let r = |d: Duration| d.as_secs_f64() / bare.as_secs_f64();
        println!(
            "{threads:<10}{:>10.1}{:>10.1}{:>7.3}×{:>13.1}{:>7.3}×{:>17.1}{:>7.3}×",
            us(bare),
            us(memory),
            r(memory),
            us(disk),
            r(disk),
            us(durable),
            r(durable)
        );
        let [c_bare, c_memory, c_disk, cb_bare, cb_memory, cb_disk] = cpu.map(us);
        println!(
            "  CPU µs per packet, every thread: bare {c_bare:.1}, memory {c_memory:.1} ({:.3}×), \
             disk {c_disk:.1} ({:.3}×)",
            c_memory / c_bare,
            c_disk / c_bare
        );
        println!(
            "  batched ({BATCH} a call), µs per packet: bare {:.1} ({:.3}× bare single), \
             memory {:.1} ({:.3}× memory single), disk (calls) {:.1} ({:.3}× disk single)",
            us(b_bare),
            us(b_bare) / us(bare),
            us(b_memory),
            us(b_memory) / us(memory),
            us(b_disk),
            us(b_disk) / us(disk)
        );
        println!(
            "  batched, CPU µs per packet, every thread: bare {cb_bare:.1} ({:.3}× bare single), \
             memory {cb_memory:.1} ({:.3}× memory single), disk {cb_disk:.1} ({:.3}× disk single)",
            cb_bare / c_bare,
            cb_memory / c_memory,
            cb_disk / c_disk
        );
    }
    // Restart with a full epoch: a disk keyring whose store holds
    // `capacity` tags. Making that many packets would take minutes, so the
    // tags are written into the closed store directly (the store's table,
    // SPEC.md §14), then the keyring reopens it: redb's open with every
    // page checked, and the Bloom filter rebuilt from every tag.
    let full = policy().capacity;
    let dir = scratch("restart");
    drop(Keyring::open(policy(), &dir).unwrap());
    fill_store(&dir.join("epoch-00000000.redb"), full);
    let times: Vec<Duration> = (0..3).map(|_| restart(&dir, full)).collect();
    println!(
        "restart (disk mode, a full epoch of {full} tags): median {:.2} s",
        median(times).as_secs_f64()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Add `n` random tags to the closed store at `path`.
fn fill_store(path: &Path, n: usize) {
    const TAGS: redb::TableDefinition<'_, &[u8], ()> = redb::TableDefinition::new("replay_tags");
    let db = redb::Database::open(path).unwrap();
    let tx = db.begin_write().unwrap();
    {
        let mut table = tx.open_table(TAGS).unwrap();
        let mut tag = [0u8; 32];
        for i in 0..n {
            tag[..8].copy_from_slice(&(i as u64).to_le_bytes());
            tag[8..16]
                .copy_from_slice(&(i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
            table.insert(&tag[..], ()).unwrap();
        }
    }
    tx.commit().unwrap();
}
