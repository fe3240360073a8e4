//! Counters and latency histograms, and how they are printed. Everything
//! here has a fixed size: a node that runs for a year holds no more than
//! one that ran for a second.

use std::time::Duration;

/// Why a node dropped a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    /// Not 16,150 bytes.
    Length,
    /// Unknown header version.
    Version,
    /// KEM ciphertext refused (small-order X25519 point).
    Kem,
    /// Header MAC wrong under every live key: corrupted, or not for this
    /// node (or for a retired key).
    Mac,
    /// Routing commands malformed.
    Commands,
    /// Payload tag wrong at the terminal hop.
    PayloadTag,
    /// Any other error the library reports.
    OtherError,
    /// Replay tag already in a live epoch's filter.
    Replay,
    /// For a key whose epoch has taken its filter's capacity.
    EpochFull,
    /// Next hop not in the directory.
    UnknownNextHop,
    /// `node_delay` over the node's cap.
    DelayOverCap,
    /// Reply for a client not in the directory.
    UnknownRecipient,
    /// Delivered to this node but not for its service, or without a SURB.
    NotForService,
    /// The hold queue was full.
    QueueFull,
    /// Disk mode: the packet's replay tag was not durable within
    /// `DURABLE_WAIT` after its delay (the replay store cannot be written).
    NotDurable,
}

impl DropReason {
    /// Every reason, in order.
    pub const ALL: [Self; 15] = [
        Self::Length,
        Self::Version,
        Self::Kem,
        Self::Mac,
        Self::Commands,
        Self::PayloadTag,
        Self::OtherError,
        Self::Replay,
        Self::EpochFull,
        Self::UnknownNextHop,
        Self::DelayOverCap,
        Self::UnknownRecipient,
        Self::NotForService,
        Self::QueueFull,
        Self::NotDurable,
    ];

    /// How the reason is printed.
    pub fn name(self) -> &'static str {
        match self {
            Self::Length => "length",
            Self::Version => "version",
            Self::Kem => "kem",
            Self::Mac => "mac",
            Self::Commands => "commands",
            Self::PayloadTag => "payload tag",
            Self::OtherError => "other error",
            Self::Replay => "replay",
            Self::EpochFull => "key epoch full",
            Self::UnknownNextHop => "unknown next hop",
            Self::DelayOverCap => "delay over the cap",
            Self::UnknownRecipient => "unknown reply recipient",
            Self::NotForService => "not for this service, or no SURB",
            Self::QueueFull => "hold queue full",
            Self::NotDurable => "replay tag not durable (store not writable)",
        }
    }

    /// Whether the datagram itself was bad (as opposed to a replay or a
    /// node's policy).
    pub fn is_malformed(self) -> bool {
        self <= Self::OtherError
    }
}

/// Drops, counted per reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Drops([u64; DropReason::ALL.len()]);

impl Drops {
    /// Count one drop.
    pub fn add(&mut self, why: DropReason, n: u64) {
        self.0[why as usize] += n;
    }

    /// Drops for one reason.
    pub fn get(&self, why: DropReason) -> u64 {
        self.0[why as usize]
    }

    /// The reasons that occurred, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL
            .into_iter()
            .map(|r| (r, self.get(r)))
            .filter(|(_, n)| *n > 0)
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
    /// Packets unwrapped and handed on for the next hop (in disk mode one
    /// may still be dropped as [`DropReason::NotDurable`]).
    pub forwarded: u64,
    /// Payloads delivered to the service at this node.
    pub delivered: u64,
    /// Encrypted replies handed to the client.
    pub replies: u64,
    /// Datagrams dropped, by reason.
    pub drops: Drops,
    /// Packets unwrapped with the previous epoch's key, during its grace.
    pub previous_key: u64,
    /// Key epochs started after the first (by count or by time).
    pub rotations: u64,
    /// Time spent in [`Keyring::receive`](kemsphinx_node::Keyring::receive)
    /// (replay check, key trial, unwrap, test-and-set), per packet it
    /// accepted.
    pub receive_time: Histogram,
    /// How much later than its `node_delay` each forwarded packet left
    /// (never negative: packets are never sent early).
    pub lateness: Histogram,
    /// Disk mode: how long each packet, once due, still waited for its
    /// replay tag's group to be durable.
    pub durable_wait: Histogram,
    /// Disk mode: group commits made.
    pub commits: u64,
    /// Inserts into the current epoch's filter at shutdown.
    pub filter_len: usize,
    /// Log lines not written (rate limit, or the writer falling behind).
    pub log_suppressed: u64,
}

impl NodeStats {
    /// Add what one worker thread counted (the histograms and counters a
    /// worker keeps).
    pub fn merge(&mut self, w: &NodeStats) {
        self.received += w.received;
        self.forwarded += w.forwarded;
        self.delivered += w.delivered;
        self.replies += w.replies;
        for (why, n) in w.drops.iter() {
            self.drops.add(why, n);
        }
        self.previous_key += w.previous_key;
        self.receive_time.merge(&w.receive_time);
        self.log_suppressed += w.log_suppressed;
    }

    /// All drops of malformed datagrams.
    pub fn malformed_total(&self) -> u64 {
        self.drops
            .iter()
            .filter(|(r, _)| r.is_malformed())
            .map(|(_, n)| n)
            .sum()
    }

    /// Drops for one reason.
    pub fn dropped(&self, why: DropReason) -> u64 {
        self.drops.get(why)
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
        "\n{:<5}{:>6}{:>6}{:>9}{:>7}{:>8}{:>11}{:>7}  {:<24}late p50/p99 µs",
        "node",
        "recv",
        "fwd",
        "deliver",
        "reply",
        "replay",
        "malformed",
        "epochs",
        "receive p50/p90/p99 µs",
    );
    for (i, n) in nodes.iter().enumerate() {
        let late = |q| n.lateness.quantile(q).as_micros();
        println!(
            "n{:<4}{:>6}{:>6}{:>9}{:>7}{:>8}{:>11}{:>7}  {:<24}{}/{}",
            i,
            n.received,
            n.forwarded,
            n.delivered,
            n.replies,
            n.dropped(DropReason::Replay),
            n.malformed_total(),
            n.rotations + 1,
            triple_us(&n.receive_time),
            late(0.5),
            late(0.99)
        );
    }
    for (i, n) in nodes.iter().enumerate() {
        for (why, count) in n.drops.iter() {
            println!("n{i}: dropped {count} ({})", why.name());
        }
        if n.commits > 0 {
            let us = |q| n.durable_wait.quantile(q).as_micros();
            println!(
                "n{i}: disk mode: {} group commits; due packets waited for their tag's group \
                 p50 {} µs, p99 {} µs, max {} µs",
                n.commits,
                us(0.5),
                us(0.99),
                n.durable_wait.max().as_micros()
            );
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
