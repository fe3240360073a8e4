//! One mix node: worker threads receive datagrams and hand each to the
//! node's [`Keyring`] (which keeps the order of checks, the key epochs and
//! the replay filters); what it accepts is held for its `node_delay` and
//! sent by the egress thread, in disk mode only once its replay tag is
//! durable. This file holds the sockets and the scheduling, nothing of
//! the packet's checks.
//!
//! Everything is bounded: every receive and wait has a timeout, the hold
//! queue has a fixed size, the filters and statistics a fixed memory, the
//! log a fixed rate (and it never blocks), and the loops end when `stop`
//! is set.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use kemsphinx_node::kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN};
use kemsphinx_node::kemsphinx::{Action, NodeId, RecipientId};
use kemsphinx_node::{Dropped, Keyring, Ticket, Turn, framing};

use crate::log::Log;
use crate::stats::{DropReason, Histogram, NodeStats};
use crate::{Directory, answer};

/// Packets a node may hold at once; more are dropped (and counted).
const MAX_QUEUE: usize = 1024;
/// The longest `node_delay` a node honours; longer ones are dropped.
const MAX_DELAY: Duration = Duration::from_secs(2);
/// Longest wait for a datagram, so `stop` and epoch changes are seen
/// promptly.
const TICK: Duration = Duration::from_millis(10);
/// Disk mode: how long past its delay a packet may wait for its replay
/// tag to be durable; then it is dropped (the store cannot be written).
pub const DURABLE_WAIT: Duration = Duration::from_secs(1);
/// A receive buffer: one byte more than a packet, so that an oversize
/// datagram arrives truncated to `PACKET_LEN + 1` bytes and is refused for
/// its length, never cut to a packet's length.
pub const RECEIVE_BUFFER: usize = PACKET_LEN + 1;

/// What a node has done so far, readable while it runs.
#[derive(Debug, Default)]
pub struct Counters {
    /// Datagrams received.
    pub received: AtomicU64,
    /// Datagrams the node is done with: dropped, or sent on (after their
    /// delay and, in disk mode, their tag's commit). `received - settled`
    /// is what it holds.
    pub settled: AtomicU64,
}

/// A node and everything it owns.
pub struct Node {
    /// Position in the directory (for logs and for publishing keys).
    pub index: usize,
    /// The node's key epochs, replay filters and checks (shared with
    /// whoever monitors it).
    pub keyring: std::sync::Arc<Keyring>,
    /// Bound to 127.0.0.1 (see [`crate::bind`] for its buffer sizes).
    pub socket: UdpSocket,
    /// Where the service at this node answers from (terminal hop only).
    pub service: Option<RecipientId>,
    /// Worker threads receiving and unwrapping (at least 1).
    pub workers: usize,
    /// What it has done so far.
    pub counters: std::sync::Arc<Counters>,
}

/// A datagram waiting for its delay (and, in disk mode, its tag).
struct Held {
    due: Instant,
    received: Instant,
    requested: Duration,
    to: SocketAddr,
    /// A packet, or a reply datagram for a client.
    bytes: Box<[u8]>,
    ticket: Ticket,
}

/// What the egress thread counted.
#[derive(Default)]
struct Egress {
    lateness: Histogram,
    durable_wait: Histogram,
    overflow: u64,
    not_durable: u64,
    log_suppressed: u64,
}

impl Node {
    /// Run until `stop` is set; return what happened.
    ///
    /// Threads: [`workers`](Self::workers) receive and hand datagrams to
    /// the keyring; this one turns the key epochs over and publishes new
    /// keys; an egress thread holds packets for their delay and sends them
    /// (a channel wait is finer than a socket's receive timeout, so it can
    /// honour a 1 ms delay). On a clean stop the egress thread sends what
    /// it still holds as it comes due.
    pub fn run(self, dir: &Directory, stop: &AtomicBool) -> NodeStats {
        let (tx, rx) = mpsc::sync_channel::<Held>(MAX_QUEUE);
        let out = self.socket.try_clone().expect("clone the socket");
        self.socket
            .set_read_timeout(Some(TICK))
            .expect("nonzero timeout");
        let node = &self;
        let (mut stats, egress) = thread::scope(|s| {
            let egress = s.spawn(move || egress(&out, &rx, node));
            let workers: Vec<_> = (0..self.workers.max(1))
                .map(|_| {
                    let tx = tx.clone();
                    s.spawn(move || node.work(dir, &tx, stop))
                })
                .collect();
            drop(tx);
            let mut log = Log::stderr();
            let mut stats = NodeStats::default();
            while !stop.load(Ordering::Relaxed) {
                node.turn_epochs(dir, &mut stats, &mut log);
                node.keyring.wait_for_turn(TICK);
            }
            for w in workers {
                stats.merge(&w.join().expect("worker thread"));
            }
            stats.log_suppressed += log.suppressed();
            (stats, egress.join().expect("egress thread"))
        });
        for (why, n) in self.keyring.drops().iter() {
            stats.drops.add(DropReason::from(why), n);
        }
        stats.lateness = egress.lateness;
        stats.durable_wait = egress.durable_wait;
        stats.commits = self.keyring.commits();
        stats.drops.add(DropReason::QueueFull, egress.overflow);
        stats.drops.add(DropReason::NotDurable, egress.not_durable);
        stats.filter_len = self.keyring.current().taken;
        stats.log_suppressed += egress.log_suppressed;
        stats
    }

    /// One worker: receive, hand to the keyring, act, until `stop`.
    fn work(&self, dir: &Directory, tx: &SyncSender<Held>, stop: &AtomicBool) -> NodeStats {
        let socket = self.socket.try_clone().expect("clone the socket");
        let mut stats = NodeStats::default();
        let mut log = Log::stderr();
        let mut buf = vec![0u8; RECEIVE_BUFFER];
        while !stop.load(Ordering::Relaxed) {
            let n = match socket.recv_from(&mut buf) {
                Ok((n, _)) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    continue;
                }
                Err(e) => {
                    let i = self.index;
                    log.line(Instant::now(), || format!("n{i}: receive failed: {e}"));
                    continue;
                }
            };
            stats.received += 1;
            self.counters.received.fetch_add(1, Ordering::Relaxed);
            let held = self.handle(&mut buf[..n], dir, &mut stats, &mut log);
            let queued = held.is_some_and(|h| {
                tx.try_send(h).is_ok() || {
                    stats.drops.add(DropReason::QueueFull, 1);
                    false
                }
            });
            if !queued {
                self.counters.settled.fetch_add(1, Ordering::Relaxed);
            }
        }
        stats.log_suppressed = log.suppressed();
        stats
    }

    /// Retire the previous epoch when its grace is over, and start a new
    /// one (published) when the current one is used up or its time is
    /// over; log what the keyring's disk reports.
    fn turn_epochs(&self, dir: &Directory, stats: &mut NodeStats, log: &mut Log) {
        let now = Instant::now();
        let i = self.index;
        while let Some(turn) = self.keyring.turn(now) {
            match turn {
                Turn::Started {
                    number,
                    took,
                    by_count,
                } => {
                    stats.rotations += 1;
                    dir.publish(i, number, &self.keyring.current().public_key);
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
                Turn::Replaced { filled, number } => {
                    log.line(now, || {
                        format!("n{i}: next epoch {filled} filled before its start; replaced by {number}")
                    });
                }
                _ => {}
            }
        }
        if let Some(e) = self.keyring.take_disk_error() {
            log.line(now, || {
                format!("n{i}: {e}; not forwarding until tags are durable")
            });
        }
    }

    /// One datagram through the keyring, then its action. Returns what to
    /// hold and send, if anything.
    fn handle(
        &self,
        datagram: &mut [u8],
        dir: &Directory,
        stats: &mut NodeStats,
        log: &mut Log,
    ) -> Option<Held> {
        let received = Instant::now();
        let len = datagram.len();
        let accepted = match self.keyring.receive(datagram) {
            Ok(a) => a,
            Err(why) => {
                let i = self.index;
                log.line(received, || {
                    format!("n{i}: dropped datagram ({len} bytes): {why}")
                });
                return None;
            }
        };
        stats.receive_time.record(received.elapsed());
        stats.previous_key += u64::from(accepted.previous_key);
        let ticket = accepted.ticket;
        let (to, bytes, requested) = match accepted.action {
            Action::Forward { next_hop, delay } => {
                let (to, requested) = self.forward(next_hop, delay, dir, stats)?;
                (to, datagram.to_vec().into_boxed_slice(), requested)
            }
            Action::Deliver { recipient, payload } => {
                let (to, reply) = self.deliver(recipient, payload, dir, stats)?;
                (to, reply, Duration::ZERO)
            }
            Action::SurbReply {
                recipient,
                surb_id,
                encrypted_reply,
            } => {
                let Some(to) = dir.client_addr(&recipient) else {
                    stats.drops.add(DropReason::UnknownRecipient, 1);
                    return None;
                };
                stats.replies += 1;
                let bytes = [&surb_id.0[..], &encrypted_reply[..]].concat();
                (to, bytes.into_boxed_slice(), Duration::ZERO)
            }
        };
        Some(Held {
            due: received + requested,
            received,
            requested,
            to,
            bytes,
            ticket,
        })
    }

    /// Where a forward packet goes and after how long, if the hop and the
    /// delay are sane.
    fn forward(
        &self,
        next_hop: NodeId,
        delay: Option<u32>,
        dir: &Directory,
        stats: &mut NodeStats,
    ) -> Option<(SocketAddr, Duration)> {
        let requested = Duration::from_millis(u64::from(delay.unwrap_or(0)));
        let Some(to) = dir.node_addr(&next_hop) else {
            stats.drops.add(DropReason::UnknownNextHop, 1);
            return None;
        };
        if requested > MAX_DELAY {
            stats.drops.add(DropReason::DelayOverCap, 1);
            return None;
        }
        stats.forwarded += 1;
        Some((to, requested))
    }

    /// The service at the terminal hop: answer on the SURB in the payload.
    fn deliver(
        &self,
        recipient: RecipientId,
        payload: &[u8; PAYLOAD_LEN],
        dir: &Directory,
        stats: &mut NodeStats,
    ) -> Option<(SocketAddr, Box<[u8]>)> {
        let framed = (self.service == Some(recipient))
            .then(|| framing::decode(payload).ok())
            .flatten();
        let Some((Some(surb), message)) = framed.map(|f| (f.surb, &f.message[..])) else {
            stats.drops.add(DropReason::NotForService, 1);
            return None;
        };
        stats.delivered += 1;
        let mut bytes = Box::new([0u8; PACKET_LEN]);
        let first_hop = surb.reply(&answer(message), &mut bytes);
        Some((dir.node_addr(&first_hop)?, bytes as Box<[u8]>))
    }
}

/// Hold each packet until it is due (and, in disk mode, its replay tag
/// durable), then send it; once every worker has hung up (a clean stop),
/// send what is still held as it comes due (at most [`MAX_DELAY`] and
/// [`DURABLE_WAIT`] later) and return: a packet counted forwarded is sent
/// or counted dropped, never silently lost. Counts how late each packet
/// left and how long it waited for its tag, how many were dropped because
/// [`MAX_QUEUE`] were already held, and how many because their tag was not
/// durable [`DURABLE_WAIT`] after their delay.
fn egress(socket: &UdpSocket, rx: &Receiver<Held>, node: &Node) -> Egress {
    let (keyring, index, settled) = (&node.keyring, node.index, &node.counters.settled);
    let mut log = Log::stderr();
    let mut held = Vec::<Held>::new();
    let mut e = Egress::default();
    let mut closed = false;
    loop {
        let now = Instant::now();
        while let Some(i) = held
            .iter()
            .position(|h| h.due <= now && keyring.is_durable(h.ticket))
        {
            let h = held.swap_remove(i);
            e.lateness
                .record(h.received.elapsed().saturating_sub(h.requested));
            if keyring.is_disk_mode() {
                e.durable_wait.record(now.saturating_duration_since(h.due));
            }
            if let Err(err) = socket.send_to(&h.bytes[..], h.to) {
                log.line(Instant::now(), || format!("n{index}: send failed: {err}"));
            }
            settled.fetch_add(1, Ordering::Relaxed);
        }
        let before = held.len();
        held.retain(|h| now < h.due + DURABLE_WAIT || keyring.is_durable(h.ticket));
        if held.len() < before {
            let n = (before - held.len()) as u64;
            e.not_durable += n;
            settled.fetch_add(n, Ordering::Relaxed);
            log.line(now, || {
                format!(
                    "n{index}: dropped {n} packet(s) whose replay tag was not durable {} ms \
                     after their delay",
                    DURABLE_WAIT.as_millis()
                )
            });
        }
        let waiting = held.iter().filter(|h| h.due <= now).map(|h| h.ticket).min();
        let next = held
            .iter()
            .map(|h| {
                if h.due > now {
                    h.due
                } else {
                    h.due + DURABLE_WAIT
                }
            })
            .min();
        let wait = next.map_or(TICK, |due| due.saturating_duration_since(Instant::now()));
        if closed && held.is_empty() {
            e.log_suppressed = log.suppressed();
            return e;
        }
        if let Some(ticket) = waiting {
            // Due packets wait for their group commit: woken by it.
            // Not durable yet (or timed out): the loop checks again.
            let _ = keyring.wait_durable(ticket, wait.min(TICK));
        } else if closed {
            thread::sleep(wait);
        } else {
            match rx.recv_timeout(wait) {
                Ok(h) if held.len() < MAX_QUEUE => held.push(h),
                Ok(_) => {
                    e.overflow += 1;
                    settled.fetch_add(1, Ordering::Relaxed);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => closed = true,
            }
        }
        loop {
            match rx.try_recv() {
                Ok(_) if held.len() >= MAX_QUEUE => {
                    e.overflow += 1;
                    settled.fetch_add(1, Ordering::Relaxed);
                }
                Ok(h) => held.push(h),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    closed = true;
                    break;
                }
            }
        }
    }
}

impl From<Dropped> for DropReason {
    fn from(why: Dropped) -> Self {
        match why {
            Dropped::Length => Self::Length,
            Dropped::Replay => Self::Replay,
            Dropped::DiskFailing => Self::NotDurable,
            Dropped::Version => Self::Version,
            Dropped::Kem => Self::Kem,
            Dropped::Mac => Self::Mac,
            Dropped::Commands => Self::Commands,
            Dropped::PayloadTag => Self::PayloadTag,
            Dropped::EpochFull => Self::EpochFull,
            _ => Self::OtherError,
        }
    }
}
