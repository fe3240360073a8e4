//! Counters and latency samples, and how they are printed.

use std::collections::BTreeMap;
use std::time::Duration;

/// What one node saw and did.
#[derive(Debug, Default)]
pub struct NodeStats {
    /// Datagrams received.
    pub received: u64,
    /// Packets unwrapped and sent on to the next hop.
    pub forwarded: u64,
    /// Payloads delivered to the service at this node.
    pub delivered: u64,
    /// Encrypted replies handed to the client.
    pub replies: u64,
    /// Packets dropped because their replay tag was already in the filter.
    pub replays: u64,
    /// Packets dropped as malformed, by reason.
    pub malformed: BTreeMap<&'static str, u64>,
    /// Other drops (full queue, unknown recipient, delay over the cap), by
    /// reason.
    pub other_drops: BTreeMap<&'static str, u64>,
    /// Time spent in `unwrap`, per successfully unwrapped packet.
    pub unwrap_time: Vec<Duration>,
    /// How much later than its `node_delay` each forwarded packet left
    /// (never negative: packets are never sent early).
    pub lateness: Vec<Duration>,
    /// Replay tags held by the filter at shutdown.
    pub filter_len: usize,
}

impl NodeStats {
    /// All malformed drops.
    pub fn malformed_total(&self) -> u64 {
        self.malformed.values().sum()
    }
}

/// What the client saw.
#[derive(Debug, Default)]
pub struct ClientStats {
    /// Requests sent (each with a SURB).
    pub sent: u64,
    /// Replies that decrypted and matched the expected answer.
    pub replies_ok: u64,
    /// Replies that failed to decrypt or did not match.
    pub replies_bad: u64,
    /// Requests whose reply never came within the per-request timeout.
    pub lost: u64,
    /// Request to verified reply, per request.
    pub round_trip: Vec<Duration>,
    /// Sum of the `node_delay`s on both paths, per request (the floor of
    /// its round trip).
    pub delay_floor: Vec<Duration>,
    /// Requests whose round trip was shorter than their delays allow.
    pub too_fast: u64,
    /// Datagrams the client sent to node 0 that should be dropped there:
    /// (replays, malformed).
    pub injected: (u64, u64),
}

/// The `q`-quantile (0..=1) of `samples`, nearest rank; zero if empty.
pub fn percentile(samples: &[Duration], q: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// `p50/p90/p99` in microseconds.
fn triple_us(samples: &[Duration]) -> String {
    let us = |q| percentile(samples, q).as_micros();
    format!("{}/{}/{}", us(0.5), us(0.9), us(0.99))
}

/// One table row per node, then the drops by reason.
pub fn print_nodes(nodes: &[NodeStats]) {
    println!(
        "\n{:<5}{:>6}{:>6}{:>9}{:>7}{:>8}{:>11}  {:<22}late p50/p99 µs",
        "node", "recv", "fwd", "deliver", "reply", "replay", "malformed", "unwrap p50/p90/p99 µs",
    );
    for (i, n) in nodes.iter().enumerate() {
        let late = |q| percentile(&n.lateness, q).as_micros();
        println!(
            "n{:<4}{:>6}{:>6}{:>9}{:>7}{:>8}{:>11}  {:<22}{}/{}",
            i,
            n.received,
            n.forwarded,
            n.delivered,
            n.replies,
            n.replays,
            n.malformed_total(),
            triple_us(&n.unwrap_time),
            late(0.5),
            late(0.99)
        );
    }
    for (i, n) in nodes.iter().enumerate() {
        for (why, count) in n.malformed.iter().chain(&n.other_drops) {
            println!("n{i}: dropped {count} ({why})");
        }
    }
}

/// The client's summary.
pub fn print_client(c: &ClientStats) {
    let ms = |q| percentile(&c.round_trip, q).as_secs_f64() * 1e3;
    println!(
        "\nclient: sent {}, replies verified {}, bad {}, lost {}, shorter than their delays {}",
        c.sent, c.replies_ok, c.replies_bad, c.lost, c.too_fast
    );
    println!(
        "round trip (ms): p50 {:.1}, p90 {:.1}, p99 {:.1}, max {:.1}; node_delay floor p50 {:.1}",
        ms(0.5),
        ms(0.9),
        ms(0.99),
        ms(1.0),
        percentile(&c.delay_floor, 0.5).as_secs_f64() * 1e3
    );
}
