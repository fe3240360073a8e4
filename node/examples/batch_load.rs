//! The example node's packets/s with and without batching: runs
//! `udp_node` (built already) as a child process, in turn with each
//! `--batch` given, and floods it from this process with packets built
//! beforehand for its key.
//!
//! ```text
//! cargo build --release -p kemsphinx-node --example udp_node --example batch_load
//! target/release/examples/batch_load [--node target/release/examples/udp_node]
//!     [--listen 127.0.0.1:30011] [--rate 30000] [--seconds 3] [--runs 5] [--batch 1,8]
//! ```
//!
//! Each run copies one fresh state directory (so every run's node has the
//! same key and empty filters, and the same packets are new to it), starts
//! the node, and once it says it is running sends the packets at `--rate`
//! per second (more than the node takes: the socket is never empty, and
//! what overflows its buffer is lost in the kernel) until the node stops
//! after `--seconds`. The node's `accepted` count over its running time is
//! its rate. The packets ask to be forwarded to a node it does not know
//! after 59 s, so nothing leaves during a run: the forwarder holds 1,024
//! and refuses the rest (`queue_full`), the same in every mode. Runs
//! alternate between the modes, so drift on a shared machine falls on
//! both alike; the medians are printed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_precision_loss
)]

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use getrandom::SysRng;
use kemsphinx_node::kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx_node::kemsphinx::{
    Command, NodeId, PrivateKey, PublicKey, RecipientId, create_packet, path,
};
use rand_core::UnwrapErr;

type Packet = Box<[u8; PACKET_LEN]>;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str, default: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1).cloned())
            .unwrap_or_else(|| default.to_owned())
    };
    let node = arg("--node", "target/release/examples/udp_node");
    let listen = arg("--listen", "127.0.0.1:30011");
    let rate: u64 = arg("--rate", "30000").parse()?;
    let seconds: u64 = arg("--seconds", "3").parse()?;
    let runs: usize = arg("--runs", "5").parse()?;
    let modes: Vec<String> = arg("--batch", "1,8")
        .split(',')
        .map(str::to_owned)
        .collect();

    let base = std::env::temp_dir().join(format!("batch_load-{}", std::process::id()));
    let fresh = base.join("fresh");
    std::fs::create_dir_all(&base)?;
    // A node started and stopped at once: its state holds epoch 0's key.
    let out = Process::new(&node)
        .args(["--listen", &listen, "--seconds", "0", "--state"])
        .arg(&fresh)
        .output()?;
    if !out.status.success() {
        return Err(format!("{node}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let key = PrivateKey::from_pem(&std::fs::read(fresh.join("epoch-00000000.key"))?)?;
    let count = usize::try_from(rate * (seconds + 1))?;
    let started = Instant::now();
    let packets = build(key.public_key(), count);
    println!(
        "{count} packets built in {:.1} s; {runs} runs of {seconds} s per mode, sent at {rate}/s",
        started.elapsed().as_secs_f64()
    );
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    for run in 0..runs {
        for (mode, batch) in modes.iter().enumerate() {
            let state = base.join(format!("run-{run}-{batch}"));
            copy_dir(&fresh, &state)?;
            let r = one_run(&node, &listen, &state, batch, seconds, rate, &packets)?;
            println!("run {run}, --batch {batch}: {r:.0} packets/s");
            rates[mode].push(r);
            std::fs::remove_dir_all(&state)?;
        }
    }
    std::fs::remove_dir_all(&base)?;
    // Each run's ratio first (the modes ran back to back), then the
    // median: drift between runs falls out of it.
    let mut paired: Vec<f64> = match &rates[..] {
        [first, .., last] => first.iter().zip(last).map(|(a, b)| b / a).collect(),
        _ => Vec::new(),
    };
    let medians: Vec<f64> = rates.iter_mut().map(|r| median(r)).collect();
    for (batch, m) in modes.iter().zip(&medians) {
        println!("--batch {batch}: median {m:.0} packets/s");
    }
    if let [single, .., batched] = medians[..] {
        println!(
            "ratio of the medians (last / first mode): {:.3}×",
            batched / single
        );
        println!("median of the runs' ratios: {:.3}×", median(&mut paired));
    }
    Ok(())
}

/// Packets whose first hop is the node with `key`: forwarded to a node
/// it does not know, after 59 s.
fn build(key: &PublicKey, n: usize) -> Vec<Packet> {
    let mut rng = UnwrapErr(SysRng);
    let others: [PrivateKey; HOPS - 1] = std::array::from_fn(|_| PrivateKey::generate(&mut rng));
    let [b, c, d] = others.each_ref().map(PrivateKey::public_key);
    let nodes = [
        (NodeId([0; 32]), key),
        (NodeId([0xee; 32]), b),
        (NodeId([0xef; 32]), c),
        (NodeId([0xf0; 32]), d),
    ];
    let delay = [Command::NodeDelay(59_000)];
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

/// One run of the node with `--batch batch`: its accepted packets per
/// second of running time.
fn one_run(
    node: &str,
    listen: &str,
    state: &Path,
    batch: &str,
    seconds: u64,
    rate: u64,
    packets: &[Packet],
) -> Result<f64, Box<dyn Error>> {
    let spawned = Instant::now();
    let mut child = Process::new(node)
        .args(["--listen", listen, "--batch", batch, "--seconds"])
        .arg(seconds.to_string())
        .arg("--state")
        .arg(state)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    for line in lines.by_ref() {
        if line?.contains("running") {
            break;
        }
    }
    let running = spawned.elapsed();
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    socket.connect(listen)?;
    let window = Duration::from_secs(seconds).saturating_sub(running);
    let start = Instant::now();
    let mut sent = 0u64;
    for p in packets {
        // Connected: a stopped node's port refuses, and the send fails.
        if socket.send(&p[..]).is_err() {
            break;
        }
        sent += 1;
        let due = Duration::from_secs_f64(sent as f64 / rate as f64);
        if let Some(ahead) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(ahead);
        }
        if start.elapsed() > window + Duration::from_secs(1) {
            break;
        }
    }
    if sent == packets.len() as u64 {
        return Err("the packets ran out before the node stopped: raise --rate".into());
    }
    let mut accepted = None;
    for line in lines {
        let line = line?;
        if let Some(rest) = line.strip_prefix("node: accepted ") {
            accepted = rest.split(',').next().and_then(|n| n.parse::<u64>().ok());
            println!("  {line}");
        }
    }
    child.wait()?;
    let accepted = accepted.ok_or("the node printed no summary")?;
    Ok(accepted as f64 / window.as_secs_f64())
}

/// Copy the closed state directory `from` to `to` (mode 0700).
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        std::fs::copy(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
