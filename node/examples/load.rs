//! A load tool for `udp_node`, in two modes. **latency** (the default):
//! the latency and loss of honest packets through the node while forged
//! packets arrive at a given share of what the node can process.
//! **throughput**: the node's packets/s with each `--batch` in turn, to
//! compare its batched receive with the single one.
//!
//! ```text
//! cargo build --release -p kemsphinx-node --example udp_node --example load
//! target/release/examples/load [latency] [--modes memory,disk] [--seconds 20]
//!     [--levels 50,90,150] [--honest 3] [--capacity PPS] [--batch N] [--node PATH]
//! target/release/examples/load throughput [--batch 1,8] [--rate 20000]
//!     [--seconds 3] [--runs 5] [--node PATH]
//! ```
//!
//! Each run starts a fresh `udp_node` (the binary beside this one, or
//! `--node PATH`) as a child process on 127.0.0.1 and stops it with
//! SIGTERM: the node measured is the shipped example, unchanged, with
//! nothing of a previous run in its filters or queues, and its CPU time
//! and its socket's kernel drops are its own to read in `/proc`.
//!
//! **latency**: per mode (`--memory` or a fresh `--state`), first the
//! **capacity**: forged packets sent as fast as one thread can for
//! `--seconds`, then paced at twice what the node processed (accepted
//! plus dropped, from the summary it prints when it stops) per second,
//! and the larger rate of the two (`--capacity` skips this). Then one run
//! per **level**: forged packets paced at that percentage of the
//! capacity, and honest ones at `--honest` percent of it alongside.
//! `--batch N` is passed to the node.
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
//! **throughput**: one node in disk mode is started and stopped at once;
//! every run copies its state directory (the same key, empty filters, so
//! the same packets are new to every run's node) and starts the node on
//! the copy with `--batch` (each value of the list in turn, so drift on a
//! shared machine falls on every mode alike). Honest packets built
//! beforehand for its key are sent at `--rate` per second for
//! `--seconds`, more than the node takes (the socket is never empty;
//! what overflows it is lost in the kernel, which the run's line counts),
//! then the node is stopped: its rate is its `accepted` count over that
//! time. The packets ask to be forwarded after 59 s to a node it does not
//! know, so nothing leaves during a run: the forwarder holds 1,024 and
//! refuses the rest (`queue_full`), alike in every mode. Each run prints
//! `run R, --batch B: P packets/s`; then the medians per mode, and the
//! median of each run's last mode ÷ first mode.
//!
//! Linux only: it reads `/proc` and signals the node.

use std::error::Error;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
/// Throughput mode: the first hop's delay (ms), longer than any run, so
/// nothing is sent during one.
const HOLD: u32 = 59_000;

/// The command line: a mode word, then `--name value` pairs.
struct Args {
    words: Vec<String>,
    node: PathBuf,
}

impl Args {
    fn parse() -> Res<Self> {
        let words: Vec<String> = std::env::args().skip(1).collect();
        let beside = std::env::current_exe()?.with_file_name("udp_node");
        let mut args = Self {
            words,
            node: beside,
        };
        if let Some(node) = args.get("--node") {
            args.node = node.into();
        }
        Ok(args)
    }

    fn get(&self, name: &str) -> Option<String> {
        let at = self.words.iter().position(|a| a == name)?;
        self.words.get(at + 1).cloned()
    }

    /// `name`'s value (or `default`), parsed.
    fn num<T: std::str::FromStr>(&self, name: &str, default: &str) -> Res<T>
    where
        T::Err: Error + 'static,
    {
        Ok(self.get(name).as_deref().unwrap_or(default).parse()?)
    }

    /// `name`'s comma-separated list (or `default`'s).
    fn list(&self, name: &str, default: &str) -> Vec<String> {
        let text = self.get(name).unwrap_or_else(|| default.to_owned());
        text.split(',').map(str::to_owned).collect()
    }
}

/// A fresh directory for one node's files, under the system's temporary
/// directory, removed with everything in it when dropped: on every way
/// out, an error or a panic as much as the end of a run. Declare it
/// before the [`Node`] that uses it, so that the node is stopped first.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Res<Self> {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("load-{}-{n}", std::process::id()));
        private_dir(&dir)?;
        Ok(Self(dir))
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("load: could not remove {}: {e}", self.0.display());
        }
    }
}

/// Make `dir` with mode 0700 (disk mode refuses a looser one).
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A child process killed (SIGKILL) and waited for when dropped, unless
/// it has exited already: a tool that fails part-way (an error or a
/// panic, here or in a thread of a scope) leaves no node running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// A `udp_node` child process.
struct Node {
    child: Running,
    addr: SocketAddr,
    key: PublicKey,
    lines: thread::JoinHandle<Vec<String>>,
}

impl Node {
    /// Start one with `args` on a free port, publishing its key into
    /// `dir`, and wait for the key.
    fn start(exe: &Path, dir: &Path, args: &[OsString]) -> Res<Self> {
        let port = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let key_file = dir.join("key.pem");
        let child = Process::new(exe)
            .arg("--listen")
            .arg(addr.to_string())
            .arg("--publish")
            .arg(&key_file)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()?;
        // Killed from here on if this fails.
        let mut child = Running(child);
        let out = child.0.stdout.take().ok_or("no stdout")?;
        let lines = thread::spawn(|| BufReader::new(out).lines().map_while(Result::ok).collect());
        let since = Instant::now();
        let key = loop {
            if let Ok(pem) = std::fs::read(&key_file) {
                break PublicKey::from_pem(&pem)?;
            }
            if since.elapsed() > Duration::from_secs(60) || child.0.try_wait()?.is_some() {
                return Err("the node published no key".into());
            }
            thread::sleep(Duration::from_millis(20));
        };
        Ok(Self {
            child,
            addr,
            key,
            lines,
        })
    }

    /// Its CPU time so far, in seconds.
    fn cpu(&self) -> Res<f64> {
        cpu_seconds(&format!("/proc/{}/stat", self.child.0.id()))
    }

    /// SIGTERM, wait, and its summary.
    fn stop(mut self) -> Res<Summary> {
        terminate(&self.child.0)?;
        self.child.0.wait()?;
        let lines = self.lines.join().map_err(|_| "reader thread")?;
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

/// `n` packets for the path node → `next` (the sink's id) → two more,
/// held `delay` ms at the node and numbered 0..n in the next hop's
/// `node_delay`; made on every core.
fn packets(node: &PublicKey, delay: u32, next: &PublicKey, n: u32) -> Res<Vec<Packet>> {
    let deliver = [Command::Recipient(RecipientId([0x7e; 32]))];
    let (zero, hold) = ([Command::NodeDelay(0)], [Command::NodeDelay(delay)]);
    let nodes = [
        (NodeId([0; 32]), node),
        (SINK, next),
        (NodeId([0x52; 32]), next),
        (NodeId([0x53; 32]), next),
    ];
    let make = |seq: u32| -> Result<Packet, String> {
        let number = [Command::NodeDelay(seq)];
        let hops = path(nodes, [&hold, &number, &zero, &deliver]);
        let mut payload = Box::new([0u8; PAYLOAD_LEN]);
        if let Some(stamp) = payload.first_chunk_mut::<4>() {
            *stamp = seq.to_be_bytes();
        }
        let mut out = Box::new([0u8; PACKET_LEN]);
        create_packet(&mut UnwrapErr(SysRng), &hops, &payload, &mut out)
            .map_err(|e| e.to_string())?;
        Ok(out)
    };
    let cores = thread::available_parallelism().map_or(1, |c| u32::try_from(c.get()).unwrap_or(1));
    let chunk = n.div_ceil(cores).max(1);
    thread::scope(|s| {
        let parts: Vec<_> = (0..n)
            .step_by(usize::try_from(chunk)?)
            .map(|from| s.spawn(move || (from..n.min(from + chunk)).map(make).collect::<Vec<_>>()))
            .collect();
        let mut all = Vec::new();
        for part in parts {
            for p in part.join().map_err(|_| "a packet thread failed")? {
                all.push(p?);
            }
        }
        Ok(all)
    })
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

/// The latency mode's node: `--memory` or a fresh `--state` in `dir`,
/// the sink as its peer, `--batch` if given.
fn latency_args(args: &Args, mode: &str, dir: &Path, sink: SocketAddr) -> Vec<OsString> {
    let sink_id: String = SINK.0.iter().map(|b| format!("{b:02x}")).collect();
    let mut out: Vec<OsString> = vec!["--peer".into(), format!("{sink_id}={sink}").into()];
    if mode == "memory" {
        out.push("--memory".into());
    } else {
        out.extend(["--state".into(), dir.join("node").into()]);
    }
    if let Some(batch) = args.get("--batch") {
        out.extend(["--batch".into(), batch.into()]);
    }
    out
}

/// One timed phase against a fresh node: forged at `forged` per second
/// (`None`: flat out), honest at `honest` per second (0: none). Returns
/// what the node processed per second.
fn phase(args: &Args, mode: &str, forged: Option<f64>, honest: f64) -> Res<f64> {
    let sink_key = PrivateKey::generate(&mut UnwrapErr(SysRng));
    let socket = sink_socket()?;
    let sink_addr = socket.local_addr()?;
    let dir = Scratch::new()?;
    let node = Node::start(&args.node, &dir, &latency_args(args, mode, &dir, sink_addr))?;
    let seconds = args.num("--seconds", "20")?;
    let n = if honest > 0.0 {
        let period = Duration::from_secs_f64(1.0 / honest).as_nanos().max(1);
        u32::try_from(Duration::from_secs(seconds).as_nanos() / period)?
    } else {
        0
    };
    let packets = packets(&node.key, 0, sink_key.public_key(), n.max(1))?;
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
        thread::sleep(Duration::from_secs(seconds));
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
    drop(dir);
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

/// The latency mode: per mode, the capacity, then each level.
fn latency(args: &Args) -> Res<()> {
    let levels: Vec<u32> = args
        .list("--levels", "50,90,150")
        .iter()
        .map(|l| l.parse())
        .collect::<Result<_, _>>()?;
    let honest: f64 = args.num("--honest", "3")?;
    let given: Option<f64> = args.get("--capacity").map(|c| c.parse()).transpose()?;
    for mode in &args.list("--modes", "memory,disk") {
        let capacity = match given {
            Some(c) => c,
            None => capacity(args, mode)?,
        };
        for &level in &levels {
            let rate = capacity * f64::from(level) / 100.0;
            println!("== {mode} mode: forged at {level} % of {capacity:.0}/s = {rate:.0}/s");
            phase(args, mode, Some(rate), capacity * honest / 100.0)?;
        }
    }
    Ok(())
}

/// The throughput mode: `--runs` rounds of every `--batch` in turn, on
/// copies of one fresh state, flooded with the same packets.
fn throughput(args: &Args) -> Res<()> {
    let modes = args.list("--batch", "1,8");
    let rate: u32 = args.num("--rate", "20000")?;
    let seconds: u32 = args.num("--seconds", "3")?;
    let runs: usize = args.num("--runs", "5")?;
    let fresh = Scratch::new()?;
    let state: OsString = fresh.join("node").into();
    let first = Node::start(&args.node, &fresh, &["--state".into(), state])?;
    let key = first.key.clone();
    first.stop()?;
    let count = rate
        .checked_mul(seconds)
        .ok_or("--rate × --seconds: too many")?;
    let made = Instant::now();
    let next = PrivateKey::generate(&mut UnwrapErr(SysRng));
    let packets = packets(&key, HOLD, next.public_key(), count)?;
    println!(
        "{count} packets built in {:.1} s; {runs} runs of {seconds} s per mode, sent at {rate}/s; \
         load average {}",
        made.elapsed().as_secs_f64(),
        loadavg()
    );
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    for run in 0..runs {
        for (mode, batch) in modes.iter().enumerate() {
            let r = flood(args, &fresh, &key, batch, &packets, f64::from(rate))?;
            println!("run {run}, --batch {batch}: {r:.0} packets/s");
            if let Some(rates) = rates.get_mut(mode) {
                rates.push(r);
            }
        }
    }
    drop(fresh);
    // Each run's ratio (its modes ran back to back), then their median:
    // drift between runs falls out of it.
    let mut paired: Vec<f64> = match rates.as_slice() {
        [first, .., last] => first.iter().zip(last).map(|(a, b)| b / a).collect(),
        _ => Vec::new(),
    };
    for (batch, r) in modes.iter().zip(&mut rates) {
        println!("--batch {batch}: median {:.0} packets/s", median(r));
    }
    if !paired.is_empty() {
        println!(
            "median of the runs' ratios (last / first mode): {:.3}×; load average {}",
            median(&mut paired),
            loadavg()
        );
    }
    Ok(())
}

/// One run: the node on a copy of `fresh` with `--batch batch`, sent
/// `packets` at `rate` per second; what it accepted per second.
fn flood(
    args: &Args,
    fresh: &Path,
    key: &PublicKey,
    batch: &str,
    packets: &[Packet],
    rate: f64,
) -> Res<f64> {
    let dir = Scratch::new()?;
    copy_dir(&fresh.join("node"), &dir.join("node"))?;
    let state = dir.join("node").into();
    let node = Node::start(
        &args.node,
        &dir,
        &["--state".into(), state, "--batch".into(), batch.into()],
    )?;
    if node.key != *key {
        return Err("the copied state published another key".into());
    }
    let (cpu0, start) = (node.cpu()?, Instant::now());
    let sent = send_honest(packets, node.addr, rate);
    let elapsed = start.elapsed().as_secs_f64();
    let (cpu, kernel) = (node.cpu()? - cpu0, kernel_drops(node.addr.port())?);
    let summary = node.stop()?;
    drop(dir);
    println!(
        "  sent {} in {elapsed:.2} s; node accepted {}, CPU {:.0} %; kernel drops at its socket \
         {kernel}{}; forwarder: {}",
        sent.iter().flatten().count(),
        summary.accepted,
        cpu / elapsed * 100.0,
        if kernel == 0 {
            " (it kept up: not its capacity, raise --rate)"
        } else {
            ""
        },
        Summary::nonzero(&summary.forwarder)
    );
    Ok(summary.accepted as f64 / elapsed)
}

/// Copy the closed state directory `from` to `to` (mode 0700).
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    private_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        std::fs::copy(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> Res<()> {
    let args = Args::parse()?;
    println!("load average at start: {}", loadavg());
    match args.words.first().map(String::as_str) {
        Some("throughput") => throughput(&args),
        Some("latency") | None => latency(&args),
        Some(w) if w.starts_with("--") => latency(&args),
        Some(other) => Err(format!("{other}: the modes are latency and throughput").into()),
    }
}
