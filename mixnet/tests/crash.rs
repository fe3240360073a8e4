//! Disk mode under SIGKILL: a node (a child process running this test
//! binary's `crash_child`) receives a flood of distinct packets, is killed
//! at a random moment, restarted on the same directory and sent every
//! packet again; several rounds, then a clean stop and a second restart.
//!
//! Counted at a sink standing in for the next hop (each forwarded packet
//! by its replay tag at that hop, the same for two forwards of one packet):
//! no packet is ever forwarded twice; after each restart exactly the
//! packets whose tags the store does not hold are forwarded (all of them);
//! every packet forwarded before a kill had its tag durable (the store
//! holds at least as many tags as packets were forwarded); the node starts
//! within a bound. No timing decides a verdict: every wait is for a count,
//! with a generous deadline that only turns a hang into a failure.
//!
//! `KEMSPHINX_CRASH_ROUNDS` (default 4) and `KEMSPHINX_CRASH_BATCH`
//! (default 300) set the size. Run by `.ci/persist` in release:
//! `cargo test --release -p kemsphinx-mixnet --test crash -- --ignored --nocapture`.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation
)]

mod common;

use common::{node_to_sink, packet_to_sink};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{HOPS, PACKET_LEN};
use kemsphinx::{PrivateKey, PublicKey, ReplayTag, packet_mut, replay_tag};
use kemsphinx_node::{EpochPolicy, Keyring};
use rand_core::{Rng, SeedableRng};

const CHILD_DIR: &str = "KEMSPHINX_CRASH_CHILD_DIR";
const CHILD_SINK: &str = "KEMSPHINX_CRASH_CHILD_SINK";
/// Packets sent but not yet settled by the node (dropped or sent on), at
/// most: a loopback socket buffers only about 12 datagrams of 16 KB, the
/// node's and the sink's alike, and more would be dropped by the kernel.
const WINDOW: u64 = 8;
/// Deadline for anything the test waits for (a hang, not a verdict).
const DEADLINE: Duration = Duration::from_secs(120);
/// Bound on the node's start (keys and stores loaded, filters rebuilt).
const START_BOUND: Duration = Duration::from_secs(30);

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The node in its own process: disk mode in `CHILD_DIR`, forwarding to
/// the sink at `CHILD_SINK`. Prints `ready …`, then `progress N` whenever
/// it has settled more datagrams (dropped them or sent them on); stops
/// when its standard input closes.
#[test]
#[ignore = "the node process of disk_mode_never_forwards_a_packet_twice_across_sigkill"]
fn crash_child() {
    let (Some(dir), Some(sink)) = (std::env::var_os(CHILD_DIR), std::env::var(CHILD_SINK).ok())
    else {
        return;
    };
    let start = Instant::now();
    let policy = EpochPolicy {
        capacity: 1_000_000,
        fp_rate: 1e-6,
        rotate_after: 1_000_000,
        length: Duration::from_secs(3600),
        grace: Duration::from_secs(60),
        publish_ahead: false,
        schedule: None,
        ..EpochPolicy::default()
    };
    let (keyring, resumed) = Keyring::open(policy, std::path::Path::new(&dir)).unwrap();
    let tags: u64 = resumed.epochs.iter().map(|(_, n)| n).sum();
    let (node, dir) = node_to_sink(keyring, sink.parse().unwrap());
    println!(
        "ready addr={} tags={tags} start_us={} pk={}",
        dir.nodes[0].addr,
        start.elapsed().as_micros(),
        hex(&node.forwarder.keyring().current().public_key.to_bytes()),
    );
    let stop = AtomicBool::new(false);
    let counters = Arc::clone(&node.counters);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut sink = Vec::new();
            let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
            stop.store(true, Ordering::Relaxed);
        });
        s.spawn(|| {
            let mut shown = 0;
            while !stop.load(Ordering::Relaxed) {
                let now = counters.settled.load(Ordering::Relaxed);
                if now != shown {
                    println!("progress {now}");
                    shown = now;
                }
                std::thread::sleep(Duration::from_micros(300));
            }
        });
        let stats = node.run(&dir, &stop);
        println!("stopped forwarded={}", stats.forwarded);
    });
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A running node process and what it has said.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    addr: SocketAddr,
    tags: u64,
    start: Duration,
    public: Vec<u8>,
    progress: Arc<AtomicU64>,
    stopped: mpsc::Receiver<u64>,
}

fn start_node(dir: &std::path::Path, sink: SocketAddr) -> Running {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env(CHILD_DIR, dir)
        .env(CHILD_SINK, sink.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (ready_tx, ready_rx) = mpsc::channel::<String>();
    let (stopped_tx, stopped) = mpsc::channel();
    let progress = Arc::new(AtomicU64::new(0));
    let p = Arc::clone(&progress);
    std::thread::spawn(move || {
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if let Some(n) = line.strip_prefix("progress ") {
                p.store(n.parse().unwrap(), Ordering::Release);
            } else if let Some(i) = line.find("ready addr=") {
                // (after the harness's "test crash_child ... ", on one line)
                let _ = ready_tx.send(line[i..].to_owned());
            } else if let Some(n) = line.strip_prefix("stopped forwarded=") {
                let _ = stopped_tx.send(n.parse().unwrap());
            }
        }
    });
    let ready = ready_rx
        .recv_timeout(DEADLINE)
        .unwrap_or_else(|_| panic!("the node did not start within {DEADLINE:?}"));
    let field = |name: &str| {
        ready
            .split(' ')
            .find_map(|f| f.strip_prefix(&format!("{name}=")))
            .unwrap()
            .to_owned()
    };
    Running {
        child,
        stdin,
        addr: field("addr").parse().unwrap(),
        tags: field("tags").parse().unwrap(),
        start: Duration::from_micros(field("start_us").parse().unwrap()),
        public: unhex(&field("pk")),
        progress,
        stopped,
    }
}

/// Send `packets` to the node, at most `WINDOW` ahead of what it has
/// received; after `kill_after` of them (if given) SIGKILL it.
fn send_all(
    node: &mut Running,
    socket: &UdpSocket,
    packets: &[Box<[u8; PACKET_LEN]>],
    kill_after: Option<usize>,
) {
    let base = node.progress.load(Ordering::Acquire);
    for (i, p) in packets.iter().enumerate() {
        if kill_after == Some(i) {
            node.child.kill().unwrap();
            node.child.wait().unwrap();
            return;
        }
        let deadline = Instant::now() + DEADLINE;
        while base + i as u64 >= node.progress.load(Ordering::Acquire) + WINDOW {
            assert!(Instant::now() < deadline, "the node stopped receiving");
            std::thread::sleep(Duration::from_micros(200));
        }
        socket.send_to(&p[..], node.addr).unwrap();
    }
    let deadline = Instant::now() + DEADLINE;
    while node.progress.load(Ordering::Acquire) < base + packets.len() as u64 {
        assert!(Instant::now() < deadline, "the node stopped receiving");
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// What the sink has received: per forwarded packet, how many times.
#[derive(Default)]
struct Sink {
    seen: HashMap<ReplayTag, u32>,
    total: u64,
}

fn run_sink(socket: UdpSocket, sink: Arc<Mutex<Sink>>) {
    let mut buf = vec![0u8; PACKET_LEN + 1];
    loop {
        let Ok(n) = socket.recv(&mut buf) else {
            continue;
        };
        let Ok(packet) = packet_mut(&mut buf[..n]) else {
            panic!("the sink got a {n}-byte datagram");
        };
        let tag = replay_tag(packet);
        let mut s = sink.lock().unwrap();
        *s.seen.entry(tag).or_default() += 1;
        s.total += 1;
    }
}

/// Wait until the sink has `target` datagrams, then a little longer to
/// catch any extra; return the count.
fn settle(sink: &Mutex<Sink>, target: u64) -> u64 {
    let deadline = Instant::now() + DEADLINE;
    while sink.lock().unwrap().total < target {
        if Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Packets are held at most their delay (≤ 3 ms) plus their group's
    // commit; anything still to come would come within this.
    std::thread::sleep(Duration::from_millis(500));
    sink.lock().unwrap().total
}

fn make_packets(rng: &mut ChaCha20Rng, node_key: &PublicKey, n: u64) -> Vec<Box<[u8; PACKET_LEN]>> {
    let others: Vec<PrivateKey> = (1..HOPS).map(|_| PrivateKey::generate(rng)).collect();
    (0..n)
        .map(|_| {
            let delay = rng.next_u32() % 4;
            packet_to_sink(rng, node_key, &others, delay)
        })
        .collect()
}

#[test]
#[ignore = "run by .ci/persist in release (minutes in a debug build)"]
fn disk_mode_never_forwards_a_packet_twice_across_sigkill() {
    let rounds = env_or("KEMSPHINX_CRASH_ROUNDS", 4);
    let batch = env_or("KEMSPHINX_CRASH_BATCH", 300);
    let seed = env_or("KEMSPHINX_CRASH_SEED", u64::from(std::process::id()));
    println!("crash test: {rounds} rounds of {batch} packets, seed {seed}");
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let dir = std::env::temp_dir().join(format!("kemsphinx-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sink_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sink_addr = sink_socket.local_addr().unwrap();
    let sink = Arc::new(Mutex::new(Sink::default()));
    let s = Arc::clone(&sink);
    std::thread::spawn(move || run_sink(sink_socket, s));
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();

    let mut packets: Vec<Box<[u8; PACKET_LEN]>> = Vec::new();
    let mut public: Option<Vec<u8>> = None;
    let mut starts = Vec::new();
    // Rounds 0..rounds end with a SIGKILL; round `rounds` with a clean
    // stop; round `rounds + 1` is the second restart after it.
    for round in 0..=rounds + 1 {
        let mut node = start_node(&dir, sink_addr);
        starts.push(node.start);
        assert!(node.start < START_BOUND, "start took {:?}", node.start);
        let key_bytes = node.public.clone();
        match &public {
            None => public = Some(node.public.clone()),
            Some(p) => assert_eq!(p, &node.public, "round {round}: the key was not resumed"),
        }
        let forwarded_before = sink.lock().unwrap().total;
        let n = packets.len() as u64;
        // Durable before forwarded: every packet forwarded so far has its
        // tag in the store.
        assert!(
            node.tags >= forwarded_before && node.tags <= n,
            "round {round}: store holds {} tags, {forwarded_before} forwarded, {n} sent",
            node.tags
        );
        // Every packet again: exactly those the store does not hold leave.
        send_all(&mut node, &client, &packets, None);
        let expected = forwarded_before + (n - node.tags);
        let got = settle(&sink, expected);
        assert_eq!(got, expected, "round {round}: forwarded after restart");
        if round < rounds {
            let key = PublicKey::from_bytes(key_bytes.as_slice().try_into().unwrap()).unwrap();
            let fresh = make_packets(&mut rng, &key, batch);
            let kill_after = 1 + (rng.next_u64() % (batch - 1)) as usize;
            packets.extend(fresh.iter().take(kill_after).cloned());
            send_all(&mut node, &client, &fresh, Some(kill_after));
            // What the node sent before it died reaches the sink within
            // microseconds; this only keeps it out of the next round.
            std::thread::sleep(Duration::from_millis(300));
            let total = sink.lock().unwrap().total;
            println!(
                "round {round}: start {:?}, {} tags loaded, {} resent, {} new forwarded, \
                 killed after {kill_after} of {batch} fresh packets ({total} forwarded in all)",
                node.start,
                node.tags,
                n,
                n - node.tags
            );
        } else {
            drop(node.stdin.take());
            let forwarded = node.stopped.recv_timeout(DEADLINE).unwrap();
            node.child.wait().unwrap();
            println!(
                "round {round} (restart {}): start {:?}, {} tags loaded, {n} resent, {forwarded} \
                 forwarded; clean stop",
                round - rounds + 1,
                node.start,
                node.tags
            );
            if round == rounds + 1 {
                assert_eq!(node.tags, n, "after a clean stop every tag is durable");
                assert_eq!(forwarded, 0);
            }
        }
    }
    let s = sink.lock().unwrap();
    let twice = s.seen.values().filter(|&&c| c > 1).count();
    let distinct = s.seen.len() as u64;
    let sent = packets.len() as u64;
    let slowest = starts.iter().max().unwrap();
    println!(
        "crash test: {} runs, {rounds} SIGKILLs; {sent} distinct packets, each sent 2 or more \
         times; {distinct} forwarded once, {twice} forwarded twice, {} never forwarded (tag \
         durable, killed before its delay ended); slowest start {slowest:?}",
        rounds + 2,
        sent - distinct
    );
    assert_eq!(twice, 0, "packets forwarded twice");
    assert_eq!(s.total, distinct);
    let _ = std::fs::remove_dir_all(&dir);
    std::io::stdout().flush().unwrap();
}
