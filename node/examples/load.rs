//! A load generator and latency meter for `udp_node`: the latency and
//! loss of honest packets through the node while forged packets arrive at
//! a given share of what the node can process.
//!
//! ```text
//! cargo build --release --example udp_node --example load
//! target/release/examples/load [--modes memory,disk] [--seconds 20]
//!     [--levels 50,90,150] [--honest 3] [--capacity PPS] [--node PATH]
//! ```
//!
//! Each run starts a fresh `udp_node` (the binary beside this one, or
//! `--node PATH`) as a child process on 127.0.0.1 and stops it with
//! SIGTERM: the node measured is the shipped example, unchanged, with
//! nothing of a previous run in its filters or queues, and its CPU time
//! and its socket's kernel drops are its own to read in `/proc`. Per mode
//! (`--memory` or a fresh `--state`), first the **capacity**: forged
//! packets sent as fast as one thread can for `--seconds`, then paced at
//! twice what the node processed (accepted plus dropped, from the summary
//! it prints when it stops) per second, and the larger rate of the two
//! (`--capacity` skips this). Then one run per
//! **level**: forged packets paced at that percentage of the capacity,
//! and honest ones at `--honest` percent of it alongside.
//!
//! A **forged** packet is what an attacker without the key sends at no
//! cost: random bytes of a packet's length with the header's version, and
//! a counter in its KEM ciphertext so no two are alike (none is a
//! replay). Each costs the node a decapsulation per live key before its
//! MAC fails; it costs the sender a write of 8 bytes.
//!
//! An **honest** packet goes node → sink → two more hops, with
//! `node_delay` 0 at the node, so what is measured is the node's
//! processing and queueing. The sink is this program's socket, named to
//! the node with `--peer` and holding the second hop's key. The packet's
//! sequence number is the sink hop's `node_delay` (its payload is still
//! under three layers there): the sink stamps each arrival and keeps the
//! bytes, and reads the numbers after the timed phase, so the only work
//! during it is sending and receiving. Everything sent is made before.
//!
//! Linux only: it reads `/proc` and signals the node.

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command as Process, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use getrandom::SysRng;
use kemsphinx_node::kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN, layout::packet};
use kemsphinx_node::kemsphinx::{
    Action, Command, NodeId, PrivateKey, PublicKey, RecipientId, create_packet, path, unwrap,
};
use rand_core::{Rng, UnwrapErr};

type Res<T> = Result<T, Box<dyn Error>>;
type Packet = Box<[u8; PACKET_LEN]>;

/// The sink's node id: the honest packets' second hop.
const SINK: NodeId = NodeId([0x51; 32]);
/// Distinct random packets the forged ones are stamped from.
const FORGED_POOL: usize = 64;
/// After the senders stop: time for the node to empty its socket and
/// its queue (disk mode's durable deadline is 1 s).
const DRAIN: Duration = Duration::from_millis(1500);
/// Linux's clock ticks in `/proc/PID/stat` (`USER_HZ`, fixed by its ABI).
const TICKS: f64 = 100.0;

struct Args {
    node: PathBuf,
    modes: Vec<String>,
    seconds: u64,
    levels: Vec<u32>,
    honest: f64,
    capacity: Option<f64>,
}

impl Args {
    fn parse() -> Res<Self> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let arg = |name: &str| {
            let at = args.iter().position(|a| a == name)?;
            args.get(at + 1).cloned()
        };
        let beside = std::env::current_exe()?.with_file_name("udp_node");
        let list = |s: String| s.split(',').map(str::to_owned).collect::<Vec<_>>();
        let levels = list(arg("--levels").unwrap_or("50,90,150".into()));
        Ok(Self {
            node: arg("--node").map_or(beside, PathBuf::from),
            modes: list(arg("--modes").unwrap_or("memory,disk".into())),
            seconds: arg("--seconds").unwrap_or("20".into()).parse()?,
            levels: levels.iter().map(|l| l.parse()).collect::<Result<_, _>>()?,
            honest: arg("--honest").unwrap_or("3".into()).parse()?,
            capacity: arg("--capacity").map(|c| c.parse()).transpose()?,
        })
    }
}

/// A `udp_node` child process.
struct Node {
    child: Child,
    addr: SocketAddr,
    key: PublicKey,
    lines: thread::JoinHandle<Vec<String>>,
    state: PathBuf,
}

impl Node {
    /// Start one in `mode` that forwards to `sink`, and wait for its key.
    fn start(args: &Args, mode: &str, sink: SocketAddr) -> Res<Self> {
        let port = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let state = std::env::temp_dir().join(format!("load-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&state)?;
        let key_file = state.join("key.pem");
        let mut cmd = Process::new(&args.node);
        cmd.arg("--listen").arg(addr.to_string());
        cmd.arg("--publish").arg(&key_file);
        let sink_id: String = SINK.0.iter().map(|b| format!("{b:02x}")).collect();
        cmd.arg("--peer").arg(format!("{sink_id}={sink}"));
        if mode == "memory" {
            cmd.arg("--memory");
        } else {
            cmd.arg("--state").arg(state.join("node"));
        }
        let mut child = cmd.stdout(Stdio::piped()).spawn()?;
        let out = child.stdout.take().ok_or("no stdout")?;
        let lines = thread::spawn(|| BufReader::new(out).lines().map_while(Result::ok).collect());
        let since = Instant::now();
        let key = loop {
            if let Ok(pem) = std::fs::read(&key_file) {
                break PublicKey::from_pem(&pem)?;
            }
            if since.elapsed() > Duration::from_secs(60) || child.try_wait()?.is_some() {
                return Err("the node published no key".into());
            }
            thread::sleep(Duration::from_millis(20));
        };
        Ok(Self {
            child,
            addr,
            key,
            lines,
            state,
        })
    }

    /// Its CPU time so far, in seconds.
    fn cpu(&self) -> Res<f64> {
        cpu_seconds(&format!("/proc/{}/stat", self.child.id()))
    }

    /// SIGTERM, wait, and its summary.
    fn stop(mut self) -> Res<Summary> {
        terminate(&self.child)?;
        self.child.wait()?;
        let lines = self.lines.join().map_err(|_| "reader thread")?;
        std::fs::remove_dir_all(&self.state)?;
        lines
            .iter()
            .find_map(|l| Summary::parse(l))
            .ok_or_else(|| format!("no summary in the node's output: {lines:?}").into())
    }
}

/// SIGTERM: the node stops cleanly and prints its counters.
#[cfg(unix)]
fn terminate(child: &Child) -> Res<()> {
    let pid = rustix::process::Pid::from_child(child);
    Ok(rustix::process::kill_process(
        pid,
        rustix::process::Signal::TERM,
    )?)
}

/// Elsewhere the tool builds (the package's examples build everywhere) but
/// cannot stop the node cleanly.
#[cfg(not(unix))]
fn terminate(_: &Child) -> Res<()> {
    Err("the load tool needs Linux".into())
}

/// What the node printed when it stopped.
struct Summary {
    accepted: u64,
    drops: Vec<(String, u64)>,
    forwarder: Vec<(String, u64)>,
}

impl Summary {
    /// `node: accepted N, dropped: length 0, …; forwarder: held N, …; …`
    fn parse(line: &str) -> Option<Self> {
        let rest = line.strip_prefix("node: accepted ")?;
        let (accepted, rest) = rest.split_once(", dropped: ")?;
        let (drops, rest) = rest.split_once("; forwarder: ")?;
        let forwarder = rest.split_once("; ").map_or(rest, |r| r.0);
        let pairs = |s: &str| {
            s.split(", ")
                .filter_map(|p| p.rsplit_once(' '))
                .filter_map(|(k, n)| Some((k.to_owned(), n.parse().ok()?)))
                .collect()
        };
        Some(Self {
            accepted: accepted.parse().ok()?,
            drops: pairs(drops),
            forwarder: pairs(forwarder),
        })
    }

    fn processed(&self) -> u64 {
        self.accepted + self.drops.iter().map(|d| d.1).sum::<u64>()
    }

    fn count(list: &[(String, u64)], name: &str) -> u64 {
        list.iter().find(|d| d.0 == name).map_or(0, |d| d.1)
    }

    /// The reasons with a count, `mac 1234, …`.
    fn nonzero(list: &[(String, u64)]) -> String {
        let l: Vec<_> = list
            .iter()
            .filter(|d| d.1 > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        if l.is_empty() {
            "none".into()
        } else {
            l.join(", ")
        }
    }
}

/// utime + stime of a `/proc/…/stat` file, in seconds.
fn cpu_seconds(file: &str) -> Res<f64> {
    let stat = std::fs::read_to_string(file)?;
    let after = stat.rsplit_once(')').ok_or("stat")?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| -> Res<f64> { Ok(f.get(i).ok_or("stat")?.parse::<f64>()?) };
    Ok((ticks(11)? + ticks(12)?) / TICKS)
}

/// The kernel's count of datagrams dropped at the UDP socket on `port`
/// (receive buffer full), from `/proc/net/udp`.
fn kernel_drops(port: u16) -> Res<u64> {
    let want = format!(":{port:04X}");
    let text = std::fs::read_to_string("/proc/net/udp")?;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1).is_some_and(|a| a.ends_with(&want)) {
            return Ok(f.last().ok_or("/proc/net/udp")?.parse()?);
        }
    }
    Err(format!("no socket on port {port}").into())
}

fn loadavg() -> String {
    let l = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// `n` honest packets for the path node → sink → two more, numbered
/// 0..n in the sink hop's `node_delay`.
fn honest_packets(node: &PublicKey, sink: &PublicKey, n: u32) -> Res<Vec<Packet>> {
    let mut rng = UnwrapErr(SysRng);
    let deliver = [Command::Recipient(RecipientId([0x7e; 32]))];
    let zero = [Command::NodeDelay(0)];
    let nodes = [
        (NodeId([0; 32]), node),
        (SINK, sink),
        (NodeId([0x52; 32]), sink),
        (NodeId([0x53; 32]), sink),
    ];
    let mut payload = Box::new([0u8; PAYLOAD_LEN]);
    (0..n)
        .map(|seq| {
            let number = [Command::NodeDelay(seq)];
            let hops = path(nodes, [&zero, &number, &zero, &deliver]);
            if let Some(stamp) = payload.first_chunk_mut::<4>() {
                *stamp = seq.to_be_bytes();
            }
            let mut out = Box::new([0u8; PACKET_LEN]);
            create_packet(&mut rng, &hops, &payload, &mut out)?;
            Ok(out)
        })
        .collect()
}

/// Random packets with the version of `like`, to stamp forged ones from.
fn forged_pool(like: &[u8; PACKET_LEN]) -> Vec<Packet> {
    let mut rng = UnwrapErr(SysRng);
    (0..FORGED_POOL)
        .map(|_| {
            let mut p = Box::new([0u8; PACKET_LEN]);
            rng.fill_bytes(&mut p[..]);
            if let (Some(v), Some(w)) = (p.get_mut(packet::VERSION), like.get(packet::VERSION)) {
                v.copy_from_slice(w);
            }
            p
        })
        .collect()
}

/// Send forged packets to `to` until `stop`, paced at `rate` per second
/// (as fast as possible if `None`); how many were sent.
fn send_forged(pool: &mut [Packet], to: SocketAddr, rate: Option<f64>, stop: &AtomicBool) -> u64 {
    let Ok(socket) = UdpSocket::bind("127.0.0.1:0") else {
        return 0;
    };
    let period = rate.map(|r| Duration::from_secs_f64(1.0 / r));
    let start = Instant::now();
    let mut sent = 0u64;
    let counter = packet::KEM_X25519.start..packet::KEM_X25519.start + 8;
    while !stop.load(Ordering::Relaxed) {
        for p in pool.iter_mut() {
            if let Some(due) = period.map(|p| start + p.mul_f64(sent as f64)) {
                thread::sleep(due.saturating_duration_since(Instant::now()));
            }
            if let Some(c) = p.get_mut(counter.clone()) {
                c.copy_from_slice(&sent.to_le_bytes());
            }
            if socket.send_to(&p[..], to).is_ok() {
                sent += 1;
            }
        }
    }
    sent
}

/// Send `packets` to `to` at `rate` per second from `start`; when each
/// left.
fn send_honest(packets: &[Packet], to: SocketAddr, rate: f64) -> Vec<Option<Instant>> {
    let Ok(socket) = UdpSocket::bind("127.0.0.1:0") else {
        return vec![];
    };
    let period = Duration::from_secs_f64(1.0 / rate);
    let start = Instant::now();
    let mut at = start;
    packets
        .iter()
        .map(|p| {
            thread::sleep(at.saturating_duration_since(Instant::now()));
            at += period;
            let now = Instant::now();
            socket.send_to(&p[..], to).ok().map(|_| now)
        })
        .collect()
}

/// Receive until `stop`: each datagram with when it arrived.
fn sink(socket: &UdpSocket, stop: &AtomicBool) -> Vec<(Instant, Vec<u8>)> {
    let mut got = Vec::new();
    let mut buf = vec![0u8; PACKET_LEN + 1];
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, _)) = socket.recv_from(&mut buf) {
            got.push((Instant::now(), buf.get(..n).unwrap_or_default().to_vec()));
        }
    }
    got
}

/// The sink's socket: a big receive buffer, a short timeout.
fn sink_socket() -> Res<UdpSocket> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None)?;
    s.set_recv_buffer_size(256 * PACKET_LEN)?;
    s.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())?;
    let s: UdpSocket = s.into();
    s.set_read_timeout(Some(Duration::from_millis(100)))?;
    Ok(s)
}

/// The `permille`-th of sorted `d`, in ms.
fn pct(d: &[Duration], permille: usize) -> f64 {
    let at = d.len().saturating_sub(1) * permille / 1000;
    d.get(at).map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

/// One timed phase against a fresh node: forged at `forged` per second
/// (`None`: flat out), honest at `honest` per second (0: none). Returns
/// what the node processed per second.
fn phase(args: &Args, mode: &str, forged: Option<f64>, honest: f64) -> Res<f64> {
    let sink_key = PrivateKey::generate(&mut UnwrapErr(SysRng));
    let socket = sink_socket()?;
    let sink_addr = socket.local_addr()?;
    let node = Node::start(args, mode, sink_addr)?;
    let n = if honest > 0.0 {
        let period = Duration::from_secs_f64(1.0 / honest).as_nanos().max(1);
        u32::try_from(Duration::from_secs(args.seconds).as_nanos() / period)?
    } else {
        0
    };
    let packets = honest_packets(&node.key, sink_key.public_key(), n.max(1))?;
    let mut pool = forged_pool(packets.first().ok_or("no packet")?);
    let packets = packets.get(..usize::try_from(n)?).unwrap_or_default();
    let (load0, node0) = (cpu_seconds("/proc/self/stat")?, node.cpu()?);
    let stop = AtomicBool::new(false);
    let stop_sink = AtomicBool::new(false);
    let begin = Instant::now();
    let (forged_sent, sent_at, got) = thread::scope(|s| {
        let got = s.spawn(|| sink(&socket, &stop_sink));
        let forged_sent = s.spawn(|| send_forged(&mut pool, node.addr, forged, &stop));
        let sent_at = (honest > 0.0).then(|| s.spawn(|| send_honest(packets, node.addr, honest)));
        thread::sleep(Duration::from_secs(args.seconds));
        stop.store(true, Ordering::Relaxed);
        let forged_sent = forged_sent.join().unwrap_or(0);
        let sent_at = sent_at.map_or(vec![], |h| h.join().unwrap_or_default());
        thread::sleep(DRAIN);
        stop_sink.store(true, Ordering::Relaxed);
        (forged_sent, sent_at, got.join().unwrap_or_default())
    });
    let timed = begin.elapsed().saturating_sub(DRAIN).as_secs_f64();
    let node_cpu = node.cpu()? - node0;
    let load_cpu = cpu_seconds("/proc/self/stat")? - load0;
    let (node_kernel, sink_kernel) = (
        kernel_drops(node.addr.port())?,
        kernel_drops(sink_addr.port())?,
    );
    let load = loadavg();
    let summary = node.stop()?;
    let processed = summary.processed() as f64 / timed;
    println!(
        "{mode}: {} forged sent in {timed:.1} s ({:.0}/s); node processed {processed:.0}/s, \
         node CPU {:.0} %, load tool CPU {:.0} %, load average {load}",
        forged_sent,
        forged_sent as f64 / timed,
        node_cpu / timed * 100.0,
        load_cpu / timed * 100.0,
    );
    println!(
        "  kernel drops at the node's socket {node_kernel}, at the sink's {sink_kernel}; \
         node drops: {}; forwarder: {}",
        Summary::nonzero(&summary.drops),
        Summary::nonzero(&summary.forwarder)
    );
    // Every datagram sent and never processed is in the kernel's count.
    let honest_sent = sent_at.iter().flatten().count() as u64;
    let unseen = (forged_sent + honest_sent).saturating_sub(summary.processed());
    println!(
        "  sent and never processed by the node: {unseen} ({} the kernel's drops)",
        if unseen == node_kernel {
            "exactly"
        } else {
            "NOT"
        }
    );
    if honest > 0.0 {
        honest_report(&sink_key, &sent_at, got, &summary);
    }
    Ok(processed)
}

/// Latency and loss of the honest packets: what the sink got, numbered
/// by unwrapping its hop.
fn honest_report(
    key: &PrivateKey,
    sent_at: &[Option<Instant>],
    got: Vec<(Instant, Vec<u8>)>,
    node: &Summary,
) {
    let mut latency = Vec::with_capacity(got.len());
    // Per second of the run (by when each was sent): overload comes and
    // goes with the CPU the node gets.
    let mut by_second: Vec<Vec<Duration>> = Vec::new();
    let first = sent_at.iter().flatten().next().copied();
    let mut seen = vec![false; sent_at.len()];
    for (arrived, mut bytes) in got {
        let Ok(p) = <&mut [u8; PACKET_LEN]>::try_from(&mut bytes[..]) else {
            continue;
        };
        let Ok(Action::Forward {
            delay: Some(seq), ..
        }) = unwrap(key, p).map(|u| u.action)
        else {
            continue;
        };
        let Ok(seq) = usize::try_from(seq) else {
            continue;
        };
        if let (Some(Some(sent)), Some(s)) = (sent_at.get(seq), seen.get_mut(seq))
            && !*s
        {
            *s = true;
            latency.push(arrived.duration_since(*sent));
            let second = first.map_or(0, |f| sent.duration_since(f).as_secs());
            let second = usize::try_from(second).unwrap_or(usize::MAX);
            if by_second.len() <= second && second < 3600 {
                by_second.resize_with(second + 1, Vec::new);
            }
            if let (Some(b), Some(l)) = (by_second.get_mut(second), latency.last()) {
                b.push(*l);
            }
        }
    }
    latency.sort();
    let sent = sent_at.iter().flatten().count();
    let lost = sent - latency.len();
    let released = Summary::count(&node.forwarder, "released");
    println!(
        "  honest: sent {sent}, received {}, lost {lost} ({:.2} %): {} in the kernel or dropped \
         by the node (node accepted {}), {} accepted and not forwarded, {} forwarded and not \
         received; latency ms p50 {:.2} p95 {:.2} p99 {:.2} max {:.2}",
        latency.len(),
        lost as f64 * 100.0 / sent.max(1) as f64,
        (sent as u64).saturating_sub(node.accepted),
        node.accepted,
        node.accepted.saturating_sub(released),
        released.saturating_sub(latency.len() as u64),
        pct(&latency, 500),
        pct(&latency, 950),
        pct(&latency, 990),
        pct(&latency, 1000),
    );
    let medians: Vec<String> = by_second
        .iter_mut()
        .map(|b| {
            b.sort();
            format!("{:.1}", pct(b, 500))
        })
        .collect();
    println!(
        "  honest p50 ms per second of the run: {}",
        medians.join(" ")
    );
}

/// The most forged packets per second the node processes: flat out, then
/// paced at twice that (a flat-out sender takes CPU and the socket's lock
/// from the node, so it can understate), the larger of the two.
fn capacity(args: &Args, mode: &str) -> Res<f64> {
    println!("== {mode} mode: capacity, forged only, flat out");
    let flat = phase(args, mode, None, 0.0)?;
    println!(
        "== {mode} mode: capacity, forged only, paced at {:.0}/s",
        2.0 * flat
    );
    let paced = phase(args, mode, Some(2.0 * flat), 0.0)?;
    Ok(flat.max(paced))
}

fn main() -> Res<()> {
    let args = Args::parse()?;
    println!("load average at start: {}", loadavg());
    for mode in &args.modes {
        let capacity = match args.capacity {
            Some(c) => c,
            None => capacity(&args, mode)?,
        };
        for &level in &args.levels {
            let rate = capacity * f64::from(level) / 100.0;
            println!("== {mode} mode: forged at {level} % of {capacity:.0}/s = {rate:.0}/s");
            phase(&args, mode, Some(rate), capacity * args.honest / 100.0)?;
        }
    }
    Ok(())
}
