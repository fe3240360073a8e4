//! A mix network you can read in a few minutes: four mix nodes (threads
//! with their own keys and UDP sockets on 127.0.0.1), a client that sends
//! requests carrying SURBs, and a service at the last node that answers on
//! them. Each node's mix key and replay filter (a Bloom filter of the replay
//! tags, checked before unwrapping) belong to a key epoch and are replaced
//! together (the `kemsphinx-node` crate's `Keyring` keeps them, and the
//! order of checks); its `Forwarder` holds each packet for its
//! `node_delay` (and, in disk mode, until its replay tag is durable).
//! Nodes drop replays and malformed packets, counting each by the crate's
//! named reasons and logging at a bounded rate. At the end: per-node
//! counts and latency percentiles.
//!
//! ```text
//! cargo run --release --manifest-path mixnet/Cargo.toml --example mix_node [-- [--persist DIR] [--schedule START,PERIOD] [REQUESTS]]
//! ```
//!
//! Memory mode (the default) keeps keys and replay filters in memory only.
//! `--persist DIR` is disk mode: each node keeps its live epochs' private
//! keys (mode 0600) and replay stores (redb) in `DIR/n<i>`, forwards a
//! packet only once its replay tag is durable (group commit), and resumes
//! its epochs when run again on the same `DIR` (`Keyring::open`; README,
//! "Disk mode").
//!
//! `--schedule START,PERIOD` puts every node's epochs on one PKI clock
//! (`kemsphinx_node::Schedule`): epoch 0 begins at `START` (seconds since
//! the Unix epoch), each lasts `PERIOD` seconds, each node makes the next
//! epoch's key ahead, and all four agree on every epoch number and
//! boundary; `--schedule katzenpost` is Katzenpost's clock (20 minutes
//! from 2017-06-01). Without it each node times its own epochs.
//!
//! Where to look (in `mixnet/src/`): `node.rs` is the node's threads
//! (workers, epoch turns, egress) and what it does with a packet that is
//! due, `log.rs` the log, `client.rs` the client (and the replayed and
//! malformed datagrams it sends node 0 to show they are dropped);
//! `node/src/` (the `kemsphinx-node` crate) everything the keyring and the
//! forwarder do.

// Example code unwraps freely; the library denies all of this.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

use kemsphinx_mixnet::{Config, run, stats};
use kemsphinx_node::Schedule;

fn main() -> ExitCode {
    let mut cfg = Config::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--persist" {
            let Some(dir) = args.next() else {
                eprintln!("--persist needs a directory");
                return ExitCode::FAILURE;
            };
            cfg.persist = Some(dir.into());
        } else if arg == "--schedule" {
            let Some(schedule) = args.next().as_deref().and_then(parse_schedule) else {
                eprintln!("--schedule needs START,PERIOD (seconds) or katzenpost");
                return ExitCode::FAILURE;
            };
            cfg.epochs.schedule = Some(schedule);
            // A PKI publishes each epoch's keys ahead of it.
            cfg.epochs.publish_ahead = true;
        } else if let Ok(n) = arg.parse() {
            cfg.packets = n;
        } else {
            eprintln!("usage: mix_node [--persist DIR] [--schedule START,PERIOD] [REQUESTS]");
            return ExitCode::FAILURE;
        }
    }
    if let Some(s) = cfg.epochs.schedule {
        let now = s.at(std::time::SystemTime::now());
        println!(
            "epochs on a PKI clock, {:?} each: now epoch {}, {:?} till the next",
            s.period(),
            now.epoch,
            now.till
        );
    }
    let mode = cfg.persist.as_ref().map_or("memory mode".to_owned(), |d| {
        format!("disk mode in {}", d.display())
    });
    println!(
        "4 mix nodes on 127.0.0.1 ({mode}), {} requests with SURBs, window {}, node_delay 0..={} ms",
        cfg.packets, cfg.window, cfg.max_delay_ms
    );
    let report = match run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mix_node: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "replay filter per node and epoch: Bloom, {} tags at FP rate {:e}: {} KiB; {} workers per node",
        cfg.epochs.capacity,
        cfg.epochs.fp_rate,
        report.filter_bytes / 1024,
        cfg.workers
    );
    stats::print_nodes(&report.nodes);
    stats::print_client(&report.client);
    let (replays, malformed) = report.client.injected;
    println!("injected at n0: {replays} replay(s), {malformed} malformed");
    let c = &report.client;
    if c.replies_ok == c.sent && c.too_fast == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--schedule`'s value: `START,PERIOD` in seconds, or `katzenpost`.
fn parse_schedule(text: &str) -> Option<Schedule> {
    if text == "katzenpost" {
        return Some(Schedule::katzenpost());
    }
    let (start, period) = text.split_once(',')?;
    let start = UNIX_EPOCH + Duration::from_secs(start.parse().ok()?);
    Some(Schedule::new(
        start,
        Duration::from_secs(period.parse().ok()?),
    ))
}
