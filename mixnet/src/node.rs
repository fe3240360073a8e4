//! One mix node: receive, drop replays, unwrap, hold for `node_delay`, send.
//!
//! Everything is bounded: every receive and wait has a timeout, the hold
//! queue has a fixed size, and the loops end when `stop` is set.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN, SURB_LEN};
use kemsphinx::{
    Action, Error, NodeId, PrivateKey, RecipientId, Surb, packet_mut, replay_tag, unwrap,
};

use super::replay::ReplayFilter;
use super::stats::NodeStats;
use super::{Directory, MESSAGE_OFFSET, SURB_FLAG, answer};

/// Packets a node may hold at once; more are dropped (and counted).
const MAX_QUEUE: usize = 1024;
/// The longest `node_delay` a node honours; longer ones are dropped.
const MAX_DELAY: Duration = Duration::from_secs(2);
/// Longest wait for a datagram, so `stop` is seen promptly.
const TICK: Duration = Duration::from_millis(10);

/// A node and everything it owns.
pub struct Node<'a> {
    /// Position in the directory (for logs).
    pub index: usize,
    /// This node's mix key.
    pub key: &'a PrivateKey,
    /// Bound to 127.0.0.1.
    pub socket: UdpSocket,
    /// Tags of packets this node has unwrapped.
    pub filter: ReplayFilter,
    /// Where the service at this node answers from (terminal hop only).
    pub service: Option<RecipientId>,
}

/// A packet waiting for its `node_delay`.
struct Held {
    due: Instant,
    received: Instant,
    requested: Duration,
    to: SocketAddr,
    bytes: Box<[u8; PACKET_LEN]>,
}

impl Node<'_> {
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
        let (lateness, overflow) = thread::scope(|s| {
            let egress = s.spawn(move || egress(&out, &rx, self.index));
            while !stop.load(Ordering::Relaxed) {
                let n = match self.socket.recv_from(&mut buf) {
                    Ok((n, _)) => n,
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                        continue;
                    }
                    Err(e) => {
                        eprintln!("n{}: receive failed: {e}", self.index);
                        continue;
                    }
                };
                stats.received += 1;
                let Some(h) = self.handle(&mut buf[..n], dir, &mut stats) else {
                    continue;
                };
                if tx.try_send(h).is_err() {
                    *stats.other_drops.entry("hold queue full").or_default() += 1;
                }
            }
            drop(tx);
            egress.join().expect("egress thread")
        });
        stats.lateness = lateness;
        if overflow > 0 {
            *stats.other_drops.entry("hold queue full").or_default() += overflow;
        }
        stats.filter_len = self.filter.len();
        stats
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
        let packet = match packet_mut(datagram) {
            Ok(p) => p,
            Err(e) => return self.malformed(e, stats),
        };
        // Cheap and before any public-key work: one hash of the ciphertext.
        let tag = replay_tag(packet);
        if self.filter.contains(&tag) {
            stats.replays += 1;
            eprintln!(
                "n{}: dropped replayed packet {:02x?}…",
                self.index,
                &tag.0[..4]
            );
            return None;
        }
        let start = Instant::now();
        let hop = match unwrap(self.key, packet) {
            Ok(hop) => hop,
            Err(e) => return self.malformed(e, stats),
        };
        stats.unwrap_time.push(start.elapsed());
        // Remembered only now that the header MAC verified: a copy that
        // keeps a real packet's KEM ciphertext but not its header cannot get
        // the real one dropped by arriving first. (One thread unwraps for
        // this node, so check and insert cannot race; a node unwrapping on
        // several threads needs an atomic test-and-set here.)
        self.filter.insert(&tag);
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
                    None => {
                        *stats
                            .other_drops
                            .entry("unknown reply recipient")
                            .or_default() += 1
                    }
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
        let (Some(to), true) = (dir.node_addr(&next_hop), requested <= MAX_DELAY) else {
            *stats
                .other_drops
                .entry("unknown next hop or delay over the cap")
                .or_default() += 1;
            return None;
        };
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
            *stats
                .other_drops
                .entry("not for this service, or no SURB")
                .or_default() += 1;
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

    /// Count and log a malformed packet; nothing is forwarded.
    fn malformed(&self, e: Error, stats: &mut NodeStats) -> Option<Held> {
        let why = match e {
            Error::Length { .. } => "length",
            Error::Version => "version",
            Error::Kem => "kem",
            Error::Mac => "mac",
            Error::Command(_) => "commands",
            Error::PayloadTag => "payload tag",
            _ => "other",
        };
        *stats.malformed.entry(why).or_default() += 1;
        eprintln!("n{}: dropped malformed packet: {e}", self.index);
        None
    }
}

/// Hold each packet until it is due, then send it; until the receiving side
/// hangs up. Returns how late each packet left, and how many were dropped
/// because [`MAX_QUEUE`] were already held.
fn egress(socket: &UdpSocket, rx: &Receiver<Held>, index: usize) -> (Vec<Duration>, u64) {
    let (mut held, mut lateness, mut overflow) = (Vec::<Held>::new(), Vec::new(), 0);
    loop {
        while let Some(i) = held.iter().position(|h| h.due <= Instant::now()) {
            let h = held.swap_remove(i);
            lateness.push(h.received.elapsed().saturating_sub(h.requested));
            if let Err(e) = socket.send_to(&h.bytes[..], h.to) {
                eprintln!("n{index}: send failed: {e}");
            }
        }
        let next = held.iter().map(|h| h.due).min();
        let wait = next.map_or(TICK, |due| due.saturating_duration_since(Instant::now()));
        match rx.recv_timeout(wait) {
            Ok(h) if held.len() < MAX_QUEUE => held.push(h),
            Ok(_) => overflow += 1,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return (lateness, overflow),
        }
    }
}
