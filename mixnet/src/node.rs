//! One mix node: receive, drop replays, unwrap, remember the tag in the
//! key epoch's filter, hold for `node_delay`, send.
//!
//! Everything is bounded: every receive and wait has a timeout, the hold
//! queue has a fixed size, the filters and statistics a fixed memory, the
//! log a fixed rate (and it never blocks), and the loops end when `stop` is
//! set.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
use crate::journal::Journal;
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
/// Disk mode: how long past its delay a packet may wait for its replay
/// tag to be durable; then it is dropped (the store cannot be written).
pub const DURABLE_WAIT: Duration = Duration::from_secs(1);

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
    /// A packet, or (disk mode) a reply datagram for a client.
    bytes: Box<[u8]>,
    /// Its replay tag's group commit (disk mode; 0: nothing to wait for).
    group: u64,
}

/// What the egress thread hears.
enum ToEgress {
    /// A packet to hold.
    Held(Held),
    /// A group commit finished (disk mode).
    Durable,
}

/// What the egress thread counted.
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
    /// Two threads: this one receives and unwraps; an egress thread holds
    /// packets for their delay and sends them. (A socket's receive timeout
    /// is only as fine as the kernel's tick, a few milliseconds; a channel
    /// wait is not, so the egress thread can honour a 1 ms delay.)
    pub fn run(mut self, dir: &Directory, stop: &AtomicBool) -> NodeStats {
        let mut stats = NodeStats::default();
        let (tx, rx) = mpsc::sync_channel::<ToEgress>(MAX_QUEUE);
        let out = self.socket.try_clone().expect("clone the socket");
        self.socket
            .set_read_timeout(Some(TICK))
            .expect("nonzero timeout");
        let mut buf = vec![0u8; PACKET_LEN + 1]; // one byte over: catches oversize
        let journal = self.epochs.journal().cloned();
        let index = self.index;
        let egress = thread::scope(|s| {
            let committer = journal.as_deref().map(|j| {
                let tx = tx.clone();
                s.spawn(move || {
                    let mut log = Log::stderr();
                    j.run_committer(index, &mut log, || {
                        let _ = tx.try_send(ToEgress::Durable);
                    });
                    log.suppressed()
                })
            });
            let journal_ref = journal.as_deref();
            let settled = &dir.nodes[index].settled;
            let egress = s.spawn(move || egress(&out, &rx, index, journal_ref, settled));
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
                let settled = &dir.nodes[self.index].settled;
                let Some(h) = self.handle(&mut buf[..n], dir, &mut stats) else {
                    settled.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                if tx.try_send(ToEgress::Held(h)).is_err() {
                    stats.drops.add(DropReason::QueueFull, 1);
                    settled.fetch_add(1, Ordering::Relaxed);
                }
            }
            let committer_log = committer.map_or(0, |c| {
                journal.as_deref().map(Journal::stop);
                c.join().expect("committer thread")
            });
            drop(tx);
            let mut egress = egress.join().expect("egress thread");
            egress.log_suppressed += committer_log;
            egress
        });
        stats.lateness = egress.lateness;
        stats.durable_wait = egress.durable_wait;
        stats.commits = journal.as_deref().map_or(0, Journal::commits);
        stats.drops.add(DropReason::QueueFull, egress.overflow);
        stats.drops.add(DropReason::NotDurable, egress.not_durable);
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
                Turn::Retired { number, early } => {
                    let why = if early {
                        "early: a new epoch was due within its grace"
                    } else {
                        "grace over"
                    };
                    self.log
                        .line(now, || format!("n{i}: epoch {number} retired ({why})"));
                }
            }
        }
        if let Some(e) = self.epochs.take_disk_error() {
            let i = self.index;
            self.log.line(now, || format!("n{i}: {e}"));
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
        // Disk mode with a store that cannot be written (a full or failing
        // disk): nothing new could be made durable, so nothing new could
        // leave; dropped before any work, and nothing remembered, so memory
        // does not grow with traffic while the disk is down.
        if self.epochs.journal().is_some_and(|j| j.failing()) {
            stats.drops.add(DropReason::NotDurable, 1);
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
        let group = match self.epochs.remember_durably(which, &tag) {
            Ok(group) => group,
            Err(Full { number, first }) => {
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
        };
        if which == crate::epoch::Which::Previous {
            stats.previous_key += 1;
        }
        match hop.action {
            Action::Forward { next_hop, delay } => self
                .forward(next_hop, delay, packet, received, dir, stats)
                .map(|h| Held { group, ..h }),
            Action::Deliver { recipient, payload } => self
                .deliver(recipient, payload, received, dir, stats)
                .map(|h| Held { group, ..h }),
            Action::SurbReply {
                recipient,
                surb_id,
                encrypted_reply,
            } => {
                let mut datagram = surb_id.0.to_vec();
                datagram.extend_from_slice(encrypted_reply);
                let Some(to) = dir.client_addr(&recipient) else {
                    stats.drops.add(DropReason::UnknownRecipient, 1);
                    return None;
                };
                stats.replies += 1;
                if group == 0 {
                    let _ = self.socket.send_to(&datagram, to);
                    return None;
                }
                // Disk mode: it too leaves only once its tag is durable.
                Some(Held {
                    due: received,
                    received,
                    requested: Duration::ZERO,
                    to,
                    bytes: datagram.into_boxed_slice(),
                    group,
                })
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
            bytes: Box::new(*packet) as Box<[u8]>,
            group: 0,
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
            bytes: bytes as Box<[u8]>,
            group: 0,
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

/// Hold each packet until it is due (and, in disk mode, its replay tag
/// durable), then send it; once the receiving side hangs up (a clean
/// stop), send what is still held as it comes due (at most [`MAX_DELAY`]
/// and [`DURABLE_WAIT`] later) and return: a packet counted forwarded is
/// sent or counted dropped, never silently lost. Counts how
/// late each packet left and how long it waited for its tag, how many were
/// dropped because [`MAX_QUEUE`] were already held, and how many because
/// their tag was not durable [`DURABLE_WAIT`] after their delay.
fn egress(
    socket: &UdpSocket,
    rx: &Receiver<ToEgress>,
    index: usize,
    journal: Option<&Journal>,
    settled: &AtomicU64,
) -> Egress {
    let mut log = Log::stderr();
    let mut held = Vec::<Held>::new();
    let mut e = Egress {
        lateness: Histogram::default(),
        durable_wait: Histogram::default(),
        overflow: 0,
        not_durable: 0,
        log_suppressed: 0,
    };
    let durable = || journal.map_or(u64::MAX, Journal::durable);
    let mut closed = false;
    loop {
        let now = Instant::now();
        let done = durable();
        while let Some(i) = held.iter().position(|h| h.due <= now && h.group <= done) {
            let h = held.swap_remove(i);
            e.lateness
                .record(h.received.elapsed().saturating_sub(h.requested));
            if h.group > 0 {
                e.durable_wait.record(now.saturating_duration_since(h.due));
            }
            if let Err(err) = socket.send_to(&h.bytes[..], h.to) {
                log.line(Instant::now(), || format!("n{index}: send failed: {err}"));
            }
            settled.fetch_add(1, Ordering::Relaxed);
        }
        let before = held.len();
        held.retain(|h| h.group <= done || now < h.due + DURABLE_WAIT);
        if held.len() < before {
            e.not_durable += (before - held.len()) as u64;
            settled.fetch_add((before - held.len()) as u64, Ordering::Relaxed);
            log.line(now, || {
                format!(
                    "n{index}: dropped {} packet(s) whose replay tag was not durable {} ms after \
                     their delay",
                    before - held.len(),
                    DURABLE_WAIT.as_millis()
                )
            });
        }
        // Due packets still waiting for their group are woken by the
        // committer's message (or the next packet, or at the latest by
        // their drop time).
        let next = held
            .iter()
            .map(|h| {
                if h.group <= done {
                    h.due
                } else {
                    h.due + DURABLE_WAIT
                }
            })
            .min();
        let wait = next.map_or(TICK, |due| due.saturating_duration_since(Instant::now()));
        if closed {
            if held.is_empty() {
                e.log_suppressed = log.suppressed();
                return e;
            }
            thread::sleep(wait);
            continue;
        }
        match rx.recv_timeout(wait) {
            Ok(ToEgress::Held(h)) if held.len() < MAX_QUEUE => held.push(h),
            Ok(ToEgress::Held(_)) => {
                e.overflow += 1;
                settled.fetch_add(1, Ordering::Relaxed);
            }
            Ok(ToEgress::Durable) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => closed = true,
        }
    }
}
