//! One mix node: receive, drop replays, unwrap, remember the tag in the
//! key epoch's filter, hold for `node_delay`, send.
//!
//! Everything is bounded: every receive and wait has a timeout, the hold
//! queue has a fixed size, the filters and statistics a fixed memory, the
//! log a fixed rate (and it never blocks), and the loops end when `stop` is
//! set.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use getrandom::SysRng;
use kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN, SURB_LEN};
use kemsphinx::{
    Action, Error, NodeId, PrivateKey, RecipientId, Surb, packet_mut, replay_tag, unwrap,
};
use rand_core::UnwrapErr;

use crate::epoch::{Epochs, Full, Turn};
use crate::log::Log;
use crate::stats::{DropReason, Histogram, NodeStats};
use crate::{Directory, MESSAGE_OFFSET, SURB_FLAG, answer};

/// Packets a node may hold at once; more are dropped (and counted).
const MAX_QUEUE: usize = 1024;
/// The longest `node_delay` a node honours; longer ones are dropped.
const MAX_DELAY: Duration = Duration::from_secs(2);
/// Longest wait for a datagram, so `stop` and epoch changes are seen
/// promptly.
const TICK: Duration = Duration::from_millis(10);

/// A node and everything it owns.
pub struct Node {
    /// Position in the directory (for logs and for publishing keys).
    pub index: usize,
    /// The node's mix keys and their replay filters.
    pub epochs: Epochs,
    /// Bound to 127.0.0.1.
    pub socket: UdpSocket,
    /// Where the service at this node answers from (terminal hop only).
    pub service: Option<RecipientId>,
    /// Where the node reports.
    pub log: Log,
}

/// A packet waiting for its `node_delay`.
struct Held {
    due: Instant,
    received: Instant,
    requested: Duration,
    to: SocketAddr,
    bytes: Box<[u8; PACKET_LEN]>,
}

/// What the egress thread counted.
struct Egress {
    lateness: Histogram,
    overflow: u64,
    log_suppressed: u64,
}

impl Node {
    /// Run until `stop` is set; return what happened.
    ///
    /// Two threads: this one receives and unwraps; an egress thread holds
    /// packets for their delay and sends them. (A socket's receive timeout
    /// is only as fine as the kernel's tick, a few milliseconds; a channel
    /// wait is not, so the egress thread can honour a 1 ms delay.)
    pub fn run(mut self, dir: &Directory, stop: &AtomicBool) -> NodeStats {
        let mut stats = NodeStats::default();
        let (tx, rx) = mpsc::sync_channel::<Held>(MAX_QUEUE);
        let out = self.socket.try_clone().expect("clone the socket");
        self.socket
            .set_read_timeout(Some(TICK))
            .expect("nonzero timeout");
        let mut buf = vec![0u8; PACKET_LEN + 1]; // one byte over: catches oversize
        let egress = thread::scope(|s| {
            let egress = s.spawn(move || egress(&out, &rx, self.index));
            while !stop.load(Ordering::Relaxed) {
                self.turn_epochs(dir, &mut stats);
                let n = match self.socket.recv_from(&mut buf) {
                    Ok((n, _)) => n,
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                        continue;
                    }
                    Err(e) => {
                        let i = self.index;
                        self.log
                            .line(Instant::now(), || format!("n{i}: receive failed: {e}"));
                        continue;
                    }
                };
                stats.received += 1;
                dir.nodes[self.index]
                    .progress
                    .fetch_add(1, Ordering::Relaxed);
                let Some(h) = self.handle(&mut buf[..n], dir, &mut stats) else {
                    continue;
                };
                if tx.try_send(h).is_err() {
                    stats.drops.add(DropReason::QueueFull, 1);
                }
            }
            drop(tx);
            egress.join().expect("egress thread")
        });
        stats.lateness = egress.lateness;
        stats.drops.add(DropReason::QueueFull, egress.overflow);
        stats.filter_len = self.epochs.current().filter().len();
        stats.log_suppressed = self.log.suppressed() + egress.log_suppressed;
        stats
    }

    /// Retire the previous epoch when its grace is over, and start a new
    /// one (new key, published; new filter) when the current one is used
    /// up or its time is over.
    fn turn_epochs(&mut self, dir: &Directory, stats: &mut NodeStats) {
        let now = Instant::now();
        let new_key = || PrivateKey::generate(&mut UnwrapErr(SysRng));
        while let Some(turn) = self.epochs.turn(now, new_key) {
            let i = self.index;
            match turn {
                Turn::Started {
                    number,
                    took,
                    by_count,
                } => {
                    stats.rotations += 1;
                    dir.publish(i, number, self.epochs.current().public_key());
                    let why = if by_count {
                        "its share of"
                    } else {
                        "its time, at"
                    };
                    self.log.line(now, || {
                        format!(
                            "n{i}: epoch {} ended ({why} {took} packets); new key and filter, \
                             epoch {number}",
                            number - 1
                        )
                    });
                }
                Turn::Retired { number } => {
                    self.log
                        .line(now, || format!("n{i}: epoch {number} retired (grace over)"));
                }
            }
        }
    }

    /// One datagram: the replay check, then the unwrap, then the action.
    /// Returns a packet to hold and forward, if any.
    fn handle(
        &mut self,
        datagram: &mut [u8],
        dir: &Directory,
        stats: &mut NodeStats,
    ) -> Option<Held> {
        let received = Instant::now();
        let len = datagram.len();
        let packet = match packet_mut(datagram) {
            Ok(p) => p,
            Err(e) => return self.malformed(e, len, received, stats),
        };
        // Cheap and before any public-key work: one hash of the ciphertext,
        // looked up in every live epoch's filter.
        let tag = replay_tag(packet);
        if self.epochs.seen(&tag) {
            stats.drops.add(DropReason::Replay, 1);
            let i = self.index;
            self.log.line(received, || {
                format!("n{i}: dropped replayed packet {:02x?}…", &tag.0[..4])
            });
            return None;
        }
        // The current key, then the previous one (a packet for the other
        // key fails on its MAC and is left unchanged).
        let start = Instant::now();
        let mut tried = Err(Error::Mac);
        for (which, key) in self.epochs.keys() {
            tried = unwrap(key, &mut *packet).map(|hop| (which, hop));
            if !matches!(tried, Err(Error::Mac)) {
                break;
            }
        }
        let (which, hop) = match tried {
            Ok(t) => t,
            Err(e) => return self.malformed(e, len, received, stats),
        };
        stats.unwrap_time.record(start.elapsed());
        // Remembered only now that the header MAC verified: a copy that
        // keeps a real packet's KEM ciphertext but not its header cannot get
        // the real one dropped by arriving first. (One thread unwraps for
        // this node, so check and insert cannot race; a node unwrapping on
        // several threads needs an atomic test-and-set here.) Every insert
        // counts against the epoch's capacity, whatever happens next.
        if let Err(Full { number, first }) = self.epochs.remember(which, &tag) {
            stats.drops.add(DropReason::EpochFull, 1);
            if first {
                let i = self.index;
                self.log.line(received, || {
                    format!(
                        "n{i}: epoch {number}'s filter holds its capacity; refusing packets \
                         for its key until it retires"
                    )
                });
            }
            return None;
        }
        if which == crate::epoch::Which::Previous {
            stats.previous_key += 1;
        }
        match hop.action {
            Action::Forward { next_hop, delay } => {
                self.forward(next_hop, delay, packet, received, dir, stats)
            }
            Action::Deliver { recipient, payload } => {
                self.deliver(recipient, payload, received, dir, stats)
            }
            Action::SurbReply {
                recipient,
                surb_id,
                encrypted_reply,
            } => {
                let mut datagram = surb_id.0.to_vec();
                datagram.extend_from_slice(encrypted_reply);
                match dir.client_addr(&recipient) {
                    Some(to) => {
                        stats.replies += 1;
                        let _ = self.socket.send_to(&datagram, to);
                    }
                    None => stats.drops.add(DropReason::UnknownRecipient, 1),
                }
                None
            }
        }
    }

    /// Hold a forward packet for its delay, if the delay and hop are sane.
    fn forward(
        &self,
        next_hop: NodeId,
        delay: Option<u32>,
        packet: &[u8; PACKET_LEN],
        received: Instant,
        dir: &Directory,
        stats: &mut NodeStats,
    ) -> Option<Held> {
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
        Some(Held {
            due: received + requested,
            received,
            requested,
            to,
            bytes: Box::new(*packet),
        })
    }

    /// The service at the terminal hop: answer on the SURB in the payload.
    fn deliver(
        &self,
        recipient: RecipientId,
        payload: &[u8; PAYLOAD_LEN],
        received: Instant,
        dir: &Directory,
        stats: &mut NodeStats,
    ) -> Option<Held> {
        let surb = (self.service == Some(recipient) && payload[0] == SURB_FLAG)
            .then(|| Surb::try_from(&payload[2..2 + SURB_LEN]).ok())
            .flatten();
        let Some(surb) = surb else {
            stats.drops.add(DropReason::NotForService, 1);
            return None;
        };
        stats.delivered += 1;
        let mut bytes = Box::new([0u8; PACKET_LEN]);
        let first_hop = surb.reply(&answer(&payload[MESSAGE_OFFSET..]), &mut bytes);
        let to = dir.node_addr(&first_hop)?;
        Some(Held {
            due: received,
            received,
            requested: Duration::ZERO,
            to,
            bytes,
        })
    }

    /// Count a malformed datagram by its class, and log it if the log's
    /// rate allows; nothing is forwarded.
    fn malformed(
        &mut self,
        e: Error,
        len: usize,
        now: Instant,
        stats: &mut NodeStats,
    ) -> Option<Held> {
        let why = match e {
            Error::Length { .. } => DropReason::Length,
            Error::Version => DropReason::Version,
            Error::Kem => DropReason::Kem,
            Error::Mac => DropReason::Mac,
            Error::Command(_) => DropReason::Commands,
            Error::PayloadTag => DropReason::PayloadTag,
            _ => DropReason::OtherError,
        };
        stats.drops.add(why, 1);
        let i = self.index;
        self.log.line(now, || {
            format!("n{i}: dropped malformed datagram ({len} bytes): {e}")
        });
        None
    }
}

/// Hold each packet until it is due, then send it; until the receiving side
/// hangs up. Counts how late each packet left, and how many were dropped
/// because [`MAX_QUEUE`] were already held.
fn egress(socket: &UdpSocket, rx: &Receiver<Held>, index: usize) -> Egress {
    let mut log = Log::stderr();
    let (mut held, mut lateness, mut overflow) = (Vec::<Held>::new(), Histogram::default(), 0);
    loop {
        while let Some(i) = held.iter().position(|h| h.due <= Instant::now()) {
            let h = held.swap_remove(i);
            lateness.record(h.received.elapsed().saturating_sub(h.requested));
            if let Err(e) = socket.send_to(&h.bytes[..], h.to) {
                log.line(Instant::now(), || format!("n{index}: send failed: {e}"));
            }
        }
        let next = held.iter().map(|h| h.due).min();
        let wait = next.map_or(TICK, |due| due.saturating_duration_since(Instant::now()));
        match rx.recv_timeout(wait) {
            Ok(h) if held.len() < MAX_QUEUE => held.push(h),
            Ok(_) => overflow += 1,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Egress {
                    lateness,
                    overflow,
                    log_suppressed: log.suppressed(),
                };
            }
        }
    }
}
