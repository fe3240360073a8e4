//! Counters and latency histograms, and how they are printed. Everything
//! here has a fixed size: a node that runs for a year holds no more than
//! one that ran for a second.

use std::time::Duration;

use kemsphinx_node::{Discarded, DropCounts, Dropped, ForwardCounts};

/// Items the forwarder handed out (due and durable) that the demo could
/// not send: its own drops, beside the crate's ([`DropCounts`] of the
/// keyring, [`ForwardCounts`] of the forwarder).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unsent {
    /// A packet (or the service's answer) for a node not in the
    /// directory.
    pub unknown_next_hop: u64,
    /// A SURB reply for a client not in the directory.
    pub unknown_recipient: u64,
    /// Delivered here but not for this node's service, or without a SURB
    /// to answer on.
    pub not_for_service: u64,
}

impl Unsent {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.unknown_next_hop + self.unknown_recipient + self.not_for_service
    }

    fn merge(&mut self, other: &Unsent) {
        self.unknown_next_hop += other.unknown_next_hop;
        self.unknown_recipient += other.unknown_recipient;
        self.not_for_service += other.not_for_service;
    }
}

/// Sub-buckets per power of two: values are kept to within 1/8 (12.5 %).
const SUB_BITS: u32 = 3;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets: exact below `SUB`, then `SUB` per power of two up to 2^40 µs
/// (12 days; longer values land in the last bucket).
const BUCKETS: usize = ((40 - SUB_BITS + 1) * SUB as u32 + SUB as u32) as usize;

/// A latency histogram of fixed size (2.5 KiB): counts in log-linear
/// buckets of microseconds, each 1/8 of a power of two wide, so a quantile
/// is read to within 12.5 % (exact below 8 µs), and the exact maximum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    counts: [u64; BUCKETS],
    total: u64,
    max: Duration,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: [0; BUCKETS],
            total: 0,
            max: Duration::ZERO,
        }
    }
}

impl Histogram {
    /// Count one sample.
    pub fn record(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.counts[bucket(us).min(BUCKETS - 1)] += 1;
        self.total += 1;
        self.max = self.max.max(d);
    }

    /// Add the samples of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    /// Samples counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest sample.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The `q`-quantile (0..=1) by nearest rank, as the upper end of its
    /// bucket (so at most 12.5 % above the true sample, never below it) and
    /// never above the maximum; zero if empty.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.total == 0 {
            return Duration::ZERO;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank && i + 1 < BUCKETS {
                return Duration::from_micros(upper(i)).min(self.max);
            }
        }
        // The last bucket has no upper end.
        self.max
    }
}

/// The bucket of `us` microseconds.
fn bucket(us: u64) -> usize {
    if us < SUB {
        return us as usize;
    }
    let e = 63 - us.leading_zeros(); // us in [2^e, 2^(e+1)), e >= SUB_BITS
    let sub = (us >> (e - SUB_BITS)) & (SUB - 1);
    ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The largest value in bucket `i`.
fn upper(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let e = (i / SUB - 1) as u32 + SUB_BITS;
    let sub = i % SUB;
    let low = (1u64 << e) + (sub << (e - SUB_BITS));
    low + (1u64 << (e - SUB_BITS)) - 1
}

/// What one node saw and did.
#[derive(Clone, Debug, Default)]
pub struct NodeStats {
    /// Datagrams received.
    pub received: u64,
    /// Packets its keyring accepted ([`Keyring::accepted`](kemsphinx_node::Keyring::accepted)).
    pub accepted: u64,
    /// Packets sent on to their next hop (due and durable).
    pub forwarded: u64,
    /// Payloads delivered to the service at this node and answered.
    pub delivered: u64,
    /// Encrypted replies handed to the client.
    pub replies: u64,
    /// Datagrams the keyring dropped, by reason.
    pub dropped: DropCounts,
    /// What the forwarder held, released and dropped, by reason.
    pub discarded: ForwardCounts,
    /// What the forwarder released and the demo could not send.
    pub unsent: Unsent,
    /// Key epochs started after the first (by count or by time).
    pub rotations: u64,
    /// Time spent in [`Forwarder::receive`](kemsphinx_node::Forwarder::receive)
    /// (replay check, key trial, unwrap, test-and-set, hold), per packet
    /// it accepted.
    pub receive_time: Histogram,
    /// How much later than it was due (its arrival plus its
    /// `node_delay`) each item the forwarder released left: in disk mode
    /// this includes the wait for its replay tag's group commit (never
    /// negative: nothing is sent early).
    pub lateness: Histogram,
    /// Disk mode: group commits made.
    pub commits: u64,
    /// Inserts into the current epoch's filter at shutdown.
    pub filter_len: usize,
    /// Log lines not written (rate limit, or the writer falling behind).
    pub log_suppressed: u64,
}

impl NodeStats {
    /// Add what one thread counted (its counters and histograms).
    pub fn merge(&mut self, w: &NodeStats) {
        self.received += w.received;
        self.forwarded += w.forwarded;
        self.delivered += w.delivered;
        self.replies += w.replies;
        self.unsent.merge(&w.unsent);
        self.receive_time.merge(&w.receive_time);
        self.lateness.merge(&w.lateness);
        self.log_suppressed += w.log_suppressed;
    }

    /// Every drop: the keyring's, the forwarder's and the demo's.
    pub fn drops_total(&self) -> u64 {
        self.dropped.total() + self.discarded.discarded() + self.unsent.total()
    }
}

/// What the client saw.
#[derive(Clone, Debug, Default)]
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
    pub round_trip: Histogram,
    /// Sum of the `node_delay`s on both paths, per request (the floor of
    /// its round trip).
    pub delay_floor: Histogram,
    /// Requests whose round trip was shorter than their delays allow.
    pub too_fast: u64,
    /// Datagrams the client sent to node 0 that should be dropped there:
    /// (replays, malformed).
    pub injected: (u64, u64),
    /// Attack datagrams sent to node 0 before the requests: (1-byte,
    /// forged packets that pass its MAC).
    pub attacked: (u64, u64),
}

/// `p50/p90/p99` in microseconds.
fn triple_us(h: &Histogram) -> String {
    let us = |q| h.quantile(q).as_micros();
    format!("{}/{}/{}", us(0.5), us(0.9), us(0.99))
}

/// One table row per node, then the drops by reason.
pub fn print_nodes(nodes: &[NodeStats]) {
    println!(
        "\n{:<5}{:>6}{:>6}{:>9}{:>7}{:>8}{:>9}{:>7}  {:<24}late p50/p99 µs",
        "node",
        "recv",
        "fwd",
        "deliver",
        "reply",
        "replay",
        "dropped",
        "epochs",
        "receive p50/p90/p99 µs",
    );
    for (i, n) in nodes.iter().enumerate() {
        let late = |q| n.lateness.quantile(q).as_micros();
        println!(
            "n{:<4}{:>6}{:>6}{:>9}{:>7}{:>8}{:>9}{:>7}  {:<24}{}/{}",
            i,
            n.received,
            n.forwarded,
            n.delivered,
            n.replies,
            n.dropped.get(Dropped::Replay),
            n.drops_total(),
            n.rotations + 1,
            triple_us(&n.receive_time),
            late(0.5),
            late(0.99)
        );
    }
    for (i, n) in nodes.iter().enumerate() {
        let keyring = n.dropped.iter().map(|(why, c)| (why.to_string(), c));
        let forwarder = Discarded::ALL.map(|why| (why.to_string(), n.discarded.get(why)));
        let u = &n.unsent;
        let demo = [
            ("unknown next hop", u.unknown_next_hop),
            ("unknown reply recipient", u.unknown_recipient),
            ("not for this service, or no SURB", u.not_for_service),
        ];
        let demo = demo.map(|(why, c)| (why.to_owned(), c));
        for (why, count) in keyring.chain(forwarder).chain(demo) {
            if count > 0 {
                println!("n{i}: dropped {count} ({why})");
            }
        }
        if n.commits > 0 {
            println!("n{i}: disk mode: {} group commits", n.commits);
        }
        if n.log_suppressed > 0 {
            println!("n{i}: {} log lines not written", n.log_suppressed);
        }
    }
}

/// The client's summary.
pub fn print_client(c: &ClientStats) {
    let ms = |q| c.round_trip.quantile(q).as_secs_f64() * 1e3;
    println!(
        "\nclient: sent {}, replies verified {}, bad {}, lost {}, shorter than their delays {}",
        c.sent, c.replies_ok, c.replies_bad, c.lost, c.too_fast
    );
    println!(
        "round trip (ms, within 12.5 %): p50 {:.1}, p90 {:.1}, p99 {:.1}, max {:.1}; \
         node_delay floor p50 {:.1}",
        ms(0.5),
        ms(0.9),
        ms(0.99),
        c.round_trip.max().as_secs_f64() * 1e3,
        c.delay_floor.quantile(0.5).as_secs_f64() * 1e3
    );
}
