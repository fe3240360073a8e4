//! One mix node: worker threads receive datagrams and hand each to the
//! node's [`Forwarder`] (the `kemsphinx-node` crate: its keyring's checks,
//! key epochs and replay filters, then the hold until the packet's delay
//! has passed and its ticket is durable); one egress thread sends what
//! the forwarder hands out; this thread turns the key epochs and
//! publishes the keys. This file holds the sockets and what the demo does
//! with a packet that is due (where it goes, the service's answer),
//! nothing of the packet's checks or of when it may leave.
//!
//! Everything is bounded: every receive and wait has a timeout, the
//! forwarder holds a fixed number of packets, the filters and statistics
//! a fixed memory, the log a fixed rate (and it never blocks), and the
//! loops end when `stop` is set.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use kemsphinx_node::kemsphinx::geometry::PACKET_LEN;
use kemsphinx_node::kemsphinx::{NodeId, RecipientId};
use kemsphinx_node::{Forwarder, Outgoing, Turn, framing};

use crate::log::Log;
use crate::stats::NodeStats;
use crate::{Directory, answer};

/// Longest wait for a datagram or a due packet, so `stop` and epoch
/// changes are seen promptly.
const TICK: Duration = Duration::from_millis(10);
/// A receive buffer: one byte more than a packet, so that an oversize
/// datagram arrives truncated to `PACKET_LEN + 1` bytes and is refused for
/// its length, never cut to a packet's length.
pub const RECEIVE_BUFFER: usize = PACKET_LEN + 1;

/// What a node has done so far, readable while it runs.
#[derive(Debug, Default)]
pub struct Counters {
    /// Datagrams received.
    pub received: AtomicU64,
    /// Datagrams the node is done with: refused by the forwarder, handed
    /// out by it (and sent, or dropped by the demo), or dropped by it
    /// after holding them. `received - settled` is what it holds.
    pub settled: AtomicU64,
}

/// A node and everything it owns.
pub struct Node {
    /// Position in the directory (for logs and for publishing keys).
    pub index: usize,
    /// The node's keyring (key epochs, replay filters, checks; shared with
    /// whoever monitors it through [`Forwarder::keyring`]) and the packets
    /// it holds.
    pub forwarder: Forwarder,
    /// Bound to 127.0.0.1 (see [`crate::bind`] for its buffer sizes).
    pub socket: UdpSocket,
    /// Where the service at this node answers from (terminal hop only).
    pub service: Option<RecipientId>,
    /// Worker threads receiving and unwrapping (at least 1).
    pub workers: usize,
    /// What it has done so far.
    pub counters: std::sync::Arc<Counters>,
}

impl Node {
    /// Run until `stop` is set; return what happened.
    ///
    /// Threads: [`workers`](Self::workers) receive and hand datagrams to
    /// the forwarder; an egress thread sends what it hands out; this one
    /// turns the key epochs over and publishes new keys. A clean stop, in
    /// order: the workers end, [`Forwarder::stop`] drops (counted) what is
    /// not yet due, the egress thread sends what is and ends.
    pub fn run(self, dir: &Directory, stop: &AtomicBool) -> NodeStats {
        self.socket
            .set_read_timeout(Some(TICK))
            .expect("nonzero timeout");
        let node = &self;
        let mut stats = thread::scope(|s| {
            let egress = s.spawn(|| node.egress(dir));
            let workers: Vec<_> = (0..self.workers.max(1))
                .map(|_| s.spawn(|| node.work(stop)))
                .collect();
            let mut log = Log::stderr();
            let mut stats = NodeStats::default();
            while !stop.load(Ordering::Relaxed) {
                node.turn_epochs(dir, &mut stats, &mut log);
                node.forwarder.keyring().wait_for_turn(TICK);
            }
            for w in workers {
                stats.merge(&w.join().expect("worker thread"));
            }
            node.forwarder.stop();
            stats.merge(&egress.join().expect("egress thread"));
            stats.log_suppressed += log.suppressed();
            stats
        });
        let keyring = self.forwarder.keyring();
        stats.accepted = keyring.accepted();
        stats.dropped = keyring.drops();
        stats.discarded = self.forwarder.counts();
        stats.commits = keyring.commits();
        stats.filter_len = keyring.current().taken;
        stats
    }

    /// One worker: receive, hand to the forwarder, until `stop`.
    fn work(&self, stop: &AtomicBool) -> NodeStats {
        let (i, mut stats, mut log) = (self.index, NodeStats::default(), Log::stderr());
        let mut buf = vec![0u8; RECEIVE_BUFFER];
        while !stop.load(Ordering::Relaxed) {
            let n = match self.socket.recv_from(&mut buf) {
                Ok((n, _)) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    continue;
                }
                Err(e) => {
                    log.line(Instant::now(), || format!("n{i}: receive failed: {e}"));
                    continue;
                }
            };
            stats.received += 1;
            self.counters.received.fetch_add(1, Ordering::Relaxed);
            let received = Instant::now();
            match self.forwarder.receive(&mut buf[..n], received) {
                Ok(_) => stats.receive_time.record(received.elapsed()),
                Err(why) => {
                    self.counters.settled.fetch_add(1, Ordering::Relaxed);
                    log.line(received, || {
                        format!("n{i}: dropped datagram ({n} bytes): {why}")
                    });
                }
            }
        }
        stats.log_suppressed = log.suppressed();
        stats
    }

    /// Retire the previous epoch when its grace is over, and start a new
    /// one (published) when the current one is used up or its time is
    /// over; log what the keyring's disk reports.
    fn turn_epochs(&self, dir: &Directory, stats: &mut NodeStats, log: &mut Log) {
        let (now, i, keyring) = (Instant::now(), self.index, self.forwarder.keyring());
        while let Some(turn) = keyring.turn(now) {
            match turn {
                Turn::Started {
                    number,
                    took,
                    by_count,
                } => {
                    stats.rotations += 1;
                    dir.publish(i, number, &keyring.current().public_key);
                    let why = if by_count {
                        "its share of"
                    } else {
                        "its time, at"
                    };
                    log.line(now, || {
                        format!(
                            "n{i}: epoch {} ended ({why} {took} packets); new key and filter, \
                             epoch {number}",
                            number - 1
                        )
                    });
                }
                Turn::Retired { number, early } => {
                    let why = if early {
                        "early: a new epoch was due within its grace"
                    } else {
                        "grace over"
                    };
                    log.line(now, || format!("n{i}: epoch {number} retired ({why})"));
                }
                _ => {}
            }
        }
        if let Some(e) = keyring.take_disk_error() {
            log.line(now, || {
                format!("n{i}: {e}; not forwarding until tags are durable")
            });
        }
    }

    /// The egress thread: send each packet the forwarder hands out (due
    /// and durable), until it is stopped and empty. Counts how late each
    /// left, and what the demo could not send. Keeps
    /// [`Counters::settled`] up to date with the forwarder's own drops of
    /// packets it held (not durable in time, not due at the stop: the
    /// workers have ended before the stop, so no `Stopped` is a refusal
    /// they settled already), looking at least every [`TICK`].
    fn egress(&self, dir: &Directory) -> NodeStats {
        let (mut stats, mut log) = (NodeStats::default(), Log::stderr());
        let mut answer = Box::new([0u8; PACKET_LEN]);
        let mut dropped_held = 0;
        loop {
            let due = self.forwarder.recv_until(Instant::now() + TICK);
            let counts = self.forwarder.counts();
            let now_dropped = counts.not_durable + counts.stopped;
            let settled = &self.counters.settled;
            settled.fetch_add(now_dropped - dropped_held, Ordering::Relaxed);
            dropped_held = now_dropped;
            let Some(due) = due else {
                if self.forwarder.is_finished() {
                    break;
                }
                continue;
            };
            let now = Instant::now();
            stats
                .lateness
                .record(now.saturating_duration_since(due.due()));
            if let Some((to, bytes)) = self.route(due.outgoing(), dir, &mut answer, &mut stats)
                && let Err(e) = self.socket.send_to(bytes, to)
            {
                let i = self.index;
                log.line(now, || format!("n{i}: send failed: {e}"));
            }
            settled.fetch_add(1, Ordering::Relaxed);
        }
        stats.log_suppressed = log.suppressed();
        stats
    }

    /// Where a due item goes and what is sent: a packet to its next hop,
    /// a SURB reply to its client, a payload for the service answered on
    /// its SURB (`answer` holds the answer). Counts what it sends and
    /// what it cannot.
    fn route<'a>(
        &self,
        out: Outgoing<'a>,
        dir: &Directory,
        answer: &'a mut [u8; PACKET_LEN],
        stats: &mut NodeStats,
    ) -> Option<(SocketAddr, &'a [u8])> {
        let (to, bytes): (_, &[u8]) = match out {
            Outgoing::Packet { next_hop, packet } => {
                let to = self.hop(next_hop, dir, stats)?;
                stats.forwarded += 1;
                (to, packet)
            }
            Outgoing::SurbReply { recipient, reply } => {
                let Some(to) = dir.client_addr(&recipient) else {
                    stats.unsent.unknown_recipient += 1;
                    return None;
                };
                stats.replies += 1;
                (to, reply)
            }
            Outgoing::Deliver { recipient, payload } => {
                let Some(first_hop) = self.serve(recipient, payload, answer) else {
                    stats.unsent.not_for_service += 1;
                    return None;
                };
                stats.delivered += 1;
                (self.hop(first_hop, dir, stats)?, &answer[..])
            }
        };
        Some((to, bytes))
    }

    /// The address of node `id`, or `None`, counted.
    fn hop(&self, id: NodeId, dir: &Directory, stats: &mut NodeStats) -> Option<SocketAddr> {
        let to = dir.node_addr(&id);
        stats.unsent.unknown_next_hop += u64::from(to.is_none());
        to
    }

    /// The service at the terminal hop: a request for it that carries a
    /// SURB is answered on that SURB into `out` (safe to send at once: the
    /// forwarder hands out nothing before its ticket is durable). Returns
    /// the answer's first hop.
    fn serve(
        &self,
        recipient: RecipientId,
        payload: &[u8],
        out: &mut [u8; PACKET_LEN],
    ) -> Option<NodeId> {
        let framed = framing::decode(payload)
            .ok()
            .filter(|_| self.service == Some(recipient))?;
        Some(framed.surb?.reply(&answer(framed.message), out))
    }
}
