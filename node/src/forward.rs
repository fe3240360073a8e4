//! The forwarding half: everything a node holds between
//! [`Keyring::receive`] and the socket.
//!
//! A packet the keyring accepted may leave only once two things are true:
//! its `node_delay` has passed (the mixing), and its [`Ticket`] is durable
//! (disk mode: its replay tag is committed, so a crash cannot let a copy
//! through again). A [`Forwarder`] holds each accepted packet until both
//! are, in a bounded pool of packet buffers, and hands it to one egress
//! thread in the order it falls due:
//!
//! ```text
//! workers ── Forwarder::receive ──► waiting (by due time)
//!                                      │ due
//!                                      ▼
//!                   durable? ── no ──► blocked (by ticket) ── deadline ──► dropped
//!                      │ yes              │ durable
//!                      ▼                  ▼
//!              egress thread: Forwarder::recv ──► socket
//! ```
//!
//! Forward packets, SURB replies for a client of this node, and payloads
//! delivered here all take that path: nothing of an accepted packet,
//! not even a delivered message or an answer made from it, is acted on
//! before its ticket is durable.

use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use kemsphinx::geometry::{ENCRYPTED_REPLY_LEN, PACKET_LEN, PAYLOAD_LEN, SURB_ID_LEN};
use kemsphinx::{Action, BATCH, NodeId, RecipientId};

use crate::{Dropped, Keyring, Ticket};

/// Length of what a node hands a client for a SURB reply: the SURB id,
/// then the reply still encrypted under the SURB's keys (16 + 10,188 =
/// 10,204 bytes). See [`Outgoing::SurbReply`].
pub const SURB_REPLY_LEN: usize = SURB_ID_LEN + ENCRYPTED_REPLY_LEN;

/// Every kind of held item fits one packet buffer.
const _: () = assert!(SURB_REPLY_LEN <= PACKET_LEN && PAYLOAD_LEN <= PACKET_LEN);

/// The longest a blocking call waits before it looks again. Keeps every
/// wait finite (no `Instant` overflow from a far deadline) and bounds how
/// late a packet pushed while the egress thread waits for a group commit
/// can be seen (see [`Forwarder::recv_until`]).
const MAX_WAIT: Duration = Duration::from_millis(250);

/// How a [`Forwarder`] holds packets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardPolicy {
    /// Packets held at once (waiting for their delay or their ticket, or
    /// handed to the egress thread and not yet sent). One more is dropped,
    /// [`Discarded::QueueFull`]. Each takes a packet buffer of 16,150
    /// bytes, allocated the first time it is needed and reused after: the
    /// default, 1,024, holds at most 16.5 MB. A node needs about its
    /// packet rate times the mean delay; the rest is headroom for bursts.
    pub capacity: usize,
    /// The longest `node_delay` honoured; a packet asking for more is
    /// dropped, [`Discarded::DelayTooLong`]. With `capacity` it bounds
    /// how long a flood of long-delayed packets can fill the pool.
    pub max_delay: Duration,
    /// How long past its delay a packet may wait for its ticket. A packet
    /// still not durable then is dropped, [`Discarded::NotDurable`]: its
    /// disk is failing, and a packet sent much later than asked would
    /// stand out. `Duration::MAX`: never dropped for this (the pool still
    /// bounds memory).
    pub durable_deadline: Duration,
}

impl Default for ForwardPolicy {
    /// 1,024 packets, delays up to 60 s, 1 s to become durable.
    fn default() -> Self {
        Self {
            capacity: 1_024,
            max_delay: Duration::from_secs(60),
            durable_deadline: Duration::from_secs(1),
        }
    }
}

/// Why a [`Forwarder`] dropped a packet the keyring had accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum Discarded {
    /// [`ForwardPolicy::capacity`] packets were held already.
    #[error("forward queue full")]
    QueueFull,
    /// Its `node_delay` is longer than [`ForwardPolicy::max_delay`].
    #[error("delay longer than the node honours")]
    DelayTooLong,
    /// Its ticket was still not durable [`ForwardPolicy::durable_deadline`]
    /// after its delay (the replay store cannot be written).
    #[error("replay tag not durable in time")]
    NotDurable,
    /// The forwarder was stopped before the packet was due (or it arrived
    /// after [`Forwarder::stop`]).
    #[error("forwarder stopped")]
    Stopped,
}

impl Discarded {
    /// Every reason.
    pub const ALL: [Self; 4] = [
        Self::QueueFull,
        Self::DelayTooLong,
        Self::NotDurable,
        Self::Stopped,
    ];

    /// A short name for logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::QueueFull => "queue_full",
            Self::DelayTooLong => "delay_too_long",
            Self::NotDurable => "not_durable",
            Self::Stopped => "stopped",
        }
    }
}

/// Why [`Forwarder::receive`] holds nothing for a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    /// The keyring dropped it (counted in [`Keyring::drops`]).
    #[error(transparent)]
    Dropped(#[from] Dropped),
    /// The keyring accepted it and the forwarder dropped it (counted in
    /// [`Forwarder::counts`]).
    #[error(transparent)]
    Discarded(#[from] Discarded),
}

/// What a [`Forwarder`] has done so far. Every packet it was given is
/// `held` and then exactly one of `released` or a drop (or still held).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ForwardCounts {
    /// Packets taken into the pool.
    pub held: u64,
    /// Packets handed to the egress thread (due and durable).
    pub released: u64,
    /// Dropped: [`Discarded::QueueFull`] (never held).
    pub queue_full: u64,
    /// Dropped: [`Discarded::DelayTooLong`] (never held).
    pub delay_too_long: u64,
    /// Dropped: [`Discarded::NotDurable`] (held, then dropped).
    pub not_durable: u64,
    /// Dropped: [`Discarded::Stopped`] (held and not yet due at the stop,
    /// or given after it).
    pub stopped: u64,
}

impl ForwardCounts {
    /// How many were dropped for `why`.
    pub fn get(&self, why: Discarded) -> u64 {
        match why {
            Discarded::QueueFull => self.queue_full,
            Discarded::DelayTooLong => self.delay_too_long,
            Discarded::NotDurable => self.not_durable,
            Discarded::Stopped => self.stopped,
        }
    }

    /// Each drop reason with its count, in [`Discarded::ALL`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (Discarded, u64)> + '_ {
        Discarded::ALL.into_iter().map(|why| (why, self.get(why)))
    }

    /// All drops.
    pub fn discarded(&self) -> u64 {
        Discarded::ALL.iter().map(|&why| self.get(why)).sum()
    }

    fn add(&mut self, why: Discarded) {
        crate::instrument::discarded(why);
        let n = match why {
            Discarded::QueueFull => &mut self.queue_full,
            Discarded::DelayTooLong => &mut self.delay_too_long,
            Discarded::NotDurable => &mut self.not_durable,
            Discarded::Stopped => &mut self.stopped,
        };
        *n += 1;
    }
}

/// For a node's log: `held 5, released 3, queue_full 1, …` (each drop
/// by [`Discarded::name`]).
impl std::fmt::Display for ForwardCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "held {}, released {}", self.held, self.released)?;
        for (why, n) in self.iter() {
            write!(f, ", {} {n}", why.name())?;
        }
        Ok(())
    }
}

/// What to do with a packet that is due and durable.
#[derive(Debug)]
pub enum Outgoing<'a> {
    /// Send `packet` to the node `next_hop`: a forward packet, or a packet
    /// this node made and gave to [`Forwarder::hold`].
    Packet {
        /// Where it goes.
        next_hop: NodeId,
        /// The whole packet.
        packet: &'a [u8; PACKET_LEN],
    },
    /// Hand `reply` ([`SURB_REPLY_LEN`] bytes) to the client `recipient`:
    /// the 16-byte SURB id, then the 10,188-byte reply exactly as the
    /// last unwrap left it (the 32-byte payload tag and the 10,156-byte
    /// payload, still encrypted under the SURB's keys). The client splits
    /// it at 16, finds its [`SurbKeys`](kemsphinx::SurbKeys) by the id and
    /// opens the rest with
    /// [`decrypt_reply`](kemsphinx::SurbKeys::decrypt_reply), which also
    /// checks it: the node cannot.
    ///
    /// The same bytes in the same order as Katzenpost: its gateway
    /// (`server/internal/gateway/gateway.go`, `onSURBReply`) refuses a
    /// reply whose payload is not `PayloadTagLength +
    /// ForwardPayloadLength` bytes and spools the SURB id with that
    /// payload, and its client receives them in a `MessageACK`
    /// (`core/wire/commands`, `MessageACK.ToBytes`): after that command's
    /// own header (command, length, message type, queue-size hint,
    /// sequence number), the 16-byte id, then the 10,188-byte payload.
    /// Katzenpost carries them over its Noise link; this crate has no
    /// transport, so a UDP node sends these bytes as one datagram.
    SurbReply {
        /// The SURB's creator.
        recipient: RecipientId,
        /// SURB id ‖ encrypted reply.
        reply: &'a [u8],
    },
    /// The packet ends here: deliver `payload` (10,156 bytes, read with
    /// [`framing::decode`](crate::framing::decode)) to `recipient`. An
    /// answer on its SURB may be sent at once: this is only handed out
    /// once the packet's ticket is durable.
    Deliver {
        /// The recipient the sender named.
        recipient: RecipientId,
        /// The payload.
        payload: &'a [u8],
    },
}

#[derive(Clone, Copy, Debug)]
enum Route {
    Packet(NodeId),
    SurbReply(RecipientId),
    Deliver(RecipientId),
}

type Buffer = Box<[u8; PACKET_LEN]>;

/// One held item.
struct Entry {
    due: Instant,
    /// Arrival order: ties in `due` leave in it.
    seq: u64,
    ticket: Ticket,
    route: Route,
    buf: Buffer,
}

/// An entry in the heap of packets waiting for their delay: earliest due
/// first.
struct ByDue(Entry);

/// An entry in the heap of due packets waiting for their ticket: lowest
/// ticket first (tickets become durable in their order).
struct ByTicket(Entry);

impl ByDue {
    fn key(&self) -> (Instant, u64) {
        (self.0.due, self.0.seq)
    }
}

impl ByTicket {
    fn key(&self) -> (Ticket, Instant, u64) {
        (self.0.ticket, self.0.due, self.0.seq)
    }
}

// `BinaryHeap` is a max-heap: both orders are reversed.
macro_rules! min_heap_order {
    ($t:ty) => {
        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                self.key() == other.key()
            }
        }
        impl Eq for $t {}
        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $t {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                other.key().cmp(&self.key())
            }
        }
    };
}
min_heap_order!(ByDue);
min_heap_order!(ByTicket);

struct State {
    /// Not yet due.
    waiting: BinaryHeap<ByDue>,
    /// Due, waiting for their ticket.
    blocked: BinaryHeap<ByTicket>,
    /// No blocked entry expires before this (it may be early: an entry
    /// released since; the scan it triggers finds the true one).
    blocked_expiry: Option<Instant>,
    /// Buffers ready for reuse.
    free: Vec<Buffer>,
    /// Buffers made so far (at most the capacity).
    made: usize,
    seq: u64,
    stopped: bool,
    counts: ForwardCounts,
}

/// Holds each accepted packet until its delay has passed and its ticket
/// is durable, then hands it to the egress thread; drops, by named
/// reason, what does not fit, asks too long a delay, or does not become
/// durable in time.
///
/// Shared by reference (`Sync`): receive workers call
/// [`receive`](Self::receive) (or [`hold`](Self::hold)), one egress
/// thread calls [`recv`](Self::recv) (or [`recv_until`](Self::recv_until),
/// or [`pop_due`](Self::pop_due) with [`next_due`](Self::next_due) in an
/// event loop of its own) and sends what it gets. The egress thread sleeps
/// until the next packet is due, a packet arrives that is due sooner, or
/// (disk mode) the group commit it waits for completes: it never spins.
///
/// Memory: a fixed pool of at most [`ForwardPolicy::capacity`] packet
/// buffers, made as first needed and reused; after that, holding and
/// releasing a packet allocates nothing.
///
/// A clean stop: [`stop`](Self::stop) drops (counted) what is not yet due
/// and refuses anything new; [`recv`](Self::recv) then returns what was
/// due (once durable, or until its deadline) and `None` when nothing is
/// left, and [`counts`](Self::counts) says what was dropped.
pub struct Forwarder {
    keyring: Arc<Keyring>,
    policy: ForwardPolicy,
    state: Mutex<State>,
    /// Wakes the egress thread: a packet due sooner than what it waits
    /// for, or the stop.
    wake: Condvar,
}

impl Forwarder {
    /// A forwarder for the packets `keyring` accepts (its tickets decide
    /// when they are durable).
    pub fn new(keyring: Arc<Keyring>, policy: ForwardPolicy) -> Self {
        // The heaps and the free list never need more than the capacity;
        // reserving it up front keeps them from growing per packet. A
        // capacity too large to reserve is reserved as needed instead.
        let reserve = policy.capacity.min(1 << 16);
        Self {
            keyring,
            state: Mutex::new(State {
                waiting: BinaryHeap::with_capacity(reserve),
                blocked: BinaryHeap::with_capacity(reserve),
                blocked_expiry: None,
                free: Vec::with_capacity(reserve),
                made: 0,
                seq: 0,
                stopped: false,
                counts: ForwardCounts::default(),
            }),
            policy,
            wake: Condvar::new(),
        }
    }

    /// The keyring whose tickets this forwarder waits for.
    pub fn keyring(&self) -> &Arc<Keyring> {
        &self.keyring
    }

    /// The policy it runs.
    pub fn policy(&self) -> &ForwardPolicy {
        &self.policy
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One datagram: [`Keyring::receive`], then hold what it accepted
    /// (received at `now`): a forward packet until `now` plus its delay,
    /// a SURB reply and a delivered payload until `now`, each then until
    /// its ticket is durable. Give it the whole datagram, into a buffer
    /// larger than a packet, as to [`Keyring::receive`]. Returns the
    /// ticket the packet waits for (for a node's own log or metrics; the
    /// forwarder does the waiting).
    ///
    /// # Errors
    /// [`Refused::Dropped`] if the keyring dropped the datagram,
    /// [`Refused::Discarded`] if the forwarder cannot hold it
    /// ([`Discarded::QueueFull`], [`Discarded::DelayTooLong`],
    /// [`Discarded::Stopped`]). Each is counted where it says.
    pub fn receive(&self, datagram: &mut [u8], now: Instant) -> Result<Ticket, Refused> {
        let accepted = self.keyring.receive(datagram)?;
        let ticket = accepted.ticket;
        if let Some((next_hop, due)) = self.hold_action(accepted.action, ticket, now)? {
            // The keyring accepted exactly one packet's length.
            self.hold_parts(Route::Packet(next_hop), &[&*datagram], ticket, due)?;
        }
        Ok(ticket)
    }

    /// [`receive`](Self::receive) for many datagrams, through
    /// [`Keyring::receive_batch`] (its X25519 computed
    /// [`BATCH`](kemsphinx::BATCH) packets at a time): `each` is called
    /// once per datagram, in order, with its position and what `receive`
    /// would have returned for it. Allocates nothing beyond what `receive`
    /// does; a batch's forward packets are held once the keyring has
    /// handed back their datagrams, so within a batch they may be held
    /// after the SURB replies and payloads that came after them (each
    /// held with its own due time; only ties in due time keep arrival
    /// order).
    pub fn receive_batch(
        &self,
        datagrams: &mut [&mut [u8]],
        now: Instant,
        mut each: impl FnMut(usize, Result<Ticket, Refused>),
    ) {
        let mut position = 0usize;
        for chunk in datagrams.chunks_mut(BATCH) {
            let mut results: [Option<Result<Ticket, Refused>>; BATCH] = [None; BATCH];
            let mut forwards: [Option<(NodeId, Instant)>; BATCH] = [None; BATCH];
            let views = chunk.iter_mut().map(|d| &mut **d);
            self.keyring.receive_batch(views, |i, received| {
                let result = received.map_err(Refused::from).and_then(|accepted| {
                    let ticket = accepted.ticket;
                    let forward = self.hold_action(accepted.action, ticket, now)?;
                    if let Some(f) = forwards.get_mut(i) {
                        *f = forward;
                    }
                    Ok(ticket)
                });
                if let Some(r) = results.get_mut(i) {
                    *r = Some(result);
                }
            });
            let held = chunk.iter().zip(results).zip(forwards);
            for ((datagram, result), forward) in held {
                let result = match (result, forward) {
                    (Some(Ok(ticket)), Some((next_hop, due))) => self
                        .hold_parts(Route::Packet(next_hop), &[&**datagram], ticket, due)
                        .map(|()| ticket)
                        .map_err(Refused::from),
                    // The keyring gives every datagram a result.
                    (result, _) => result.unwrap_or(Err(Refused::Dropped(Dropped::Other))),
                };
                each(position, result);
                position += 1;
            }
        }
    }

    /// Hold what an accepted packet's `action` names (received at `now`,
    /// waiting for `ticket`), but a forward packet: its bytes are the
    /// datagram's, which the action does not borrow, so its next hop and
    /// due time are returned, to hold once the caller has the datagram
    /// back.
    fn hold_action(
        &self,
        action: Action<'_>,
        ticket: Ticket,
        now: Instant,
    ) -> Result<Option<(NodeId, Instant)>, Discarded> {
        match action {
            Action::Forward { next_hop, delay } => {
                let delay = Duration::from_millis(u64::from(delay.unwrap_or(0)));
                let due = (delay <= self.policy.max_delay)
                    .then(|| now.checked_add(delay))
                    .flatten();
                match due {
                    Some(due) => Ok(Some((next_hop, due))),
                    None => Err(self.discard(Discarded::DelayTooLong)),
                }
            }
            Action::SurbReply {
                recipient,
                surb_id,
                encrypted_reply,
            } => self
                .hold_parts(
                    Route::SurbReply(recipient),
                    &[surb_id.0.as_slice(), encrypted_reply.as_slice()],
                    ticket,
                    now,
                )
                .map(|()| None),
            Action::Deliver { recipient, payload } => self
                .hold_parts(
                    Route::Deliver(recipient),
                    &[payload.as_slice()],
                    ticket,
                    now,
                )
                .map(|()| None),
        }
    }

    /// Hold a packet this node made (say, an answer on a SURB sent later,
    /// or cover traffic) until `due` and `ticket`. A packet that nothing
    /// received made waits on no commit: give it the keyring's
    /// [`durable_ticket`](Keyring::durable_ticket). In disk mode,
    /// while the egress thread waits for a group commit, a packet held
    /// with a ticket that is durable already may wait up to 250 ms more.
    ///
    /// # Errors
    /// [`Discarded::QueueFull`] or [`Discarded::Stopped`], counted.
    pub fn hold(
        &self,
        next_hop: NodeId,
        packet: &[u8; PACKET_LEN],
        ticket: Ticket,
        due: Instant,
    ) -> Result<(), Discarded> {
        self.hold_parts(Route::Packet(next_hop), &[packet.as_slice()], ticket, due)
    }

    fn discard(&self, why: Discarded) -> Discarded {
        self.lock().counts.add(why);
        why
    }

    /// Take a buffer, copy `parts` into it one after the other (outside
    /// the lock), and queue it.
    fn hold_parts(
        &self,
        route: Route,
        parts: &[&[u8]],
        ticket: Ticket,
        due: Instant,
    ) -> Result<(), Discarded> {
        let mut buf = {
            let mut state = self.lock();
            let taken = if state.stopped {
                Err(Discarded::Stopped)
            } else {
                state.take_buffer(self.policy.capacity)
            };
            match taken {
                Ok(buf) => buf,
                Err(why) => {
                    state.counts.add(why);
                    return Err(why);
                }
            }
        };
        // The part drives each zip: when it ends, no byte of `to` has
        // been taken past it.
        let mut to = buf.iter_mut();
        for part in parts {
            for (s, d) in part.iter().zip(to.by_ref()) {
                *d = *s;
            }
        }
        let mut state = self.lock();
        if state.stopped {
            state.free.push(buf);
            state.counts.add(Discarded::Stopped);
            return Err(Discarded::Stopped);
        }
        let sooner = state.waiting.peek().is_none_or(|first| due < first.0.due);
        state.seq += 1;
        let seq = state.seq;
        state.counts.held += 1;
        state.waiting.push(ByDue(Entry {
            due,
            seq,
            ticket,
            route,
            buf,
        }));
        drop(state);
        if sooner {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// The next packet due at `now` and durable, if any (dropping, on the
    /// way, what waited past its deadline). Never blocks beyond the lock.
    pub fn pop_due(&self, now: Instant) -> Option<Due<'_>> {
        let entry = self.lock().pop(now, &self.keyring, &self.policy)?;
        Some(Due {
            forwarder: self,
            entry: Some(entry),
            taken_at: now,
        })
    }

    /// When the earliest held packet is (or was) due; `None` if none is
    /// held. A packet due already may still wait for its ticket:
    /// [`recv_until`](Self::recv_until) waits for both.
    pub fn next_due(&self) -> Option<Instant> {
        let state = self.lock();
        let waiting = state.waiting.peek().map(|e| e.0.due);
        let blocked = state.blocked.iter().map(|e| e.0.due).min();
        waiting.into_iter().chain(blocked).min()
    }

    /// Wait until a packet is due and durable, and return it; `None` at
    /// `deadline`, or once the forwarder is stopped and holds nothing
    /// more ([`is_finished`](Self::is_finished)). Sleeps on the
    /// forwarder (woken by a packet due sooner and by the stop) or, while
    /// due packets wait for their ticket, on the keyring's group commit;
    /// never longer than 250 ms at a time, so no wait overflows an
    /// `Instant` whatever the deadline.
    pub fn recv_until(&self, deadline: Instant) -> Option<Due<'_>> {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            if let Some(entry) = state.pop(now, &self.keyring, &self.policy) {
                return Some(Due {
                    forwarder: self,
                    entry: Some(entry),
                    taken_at: now,
                });
            }
            if (state.stopped && state.is_empty()) || now >= deadline {
                return None;
            }
            let until = state.next_event().map_or(deadline, |t| t.min(deadline));
            let wait = until.saturating_duration_since(now).min(MAX_WAIT);
            match state.blocked.peek().map(|e| e.0.ticket) {
                Some(ticket) => {
                    drop(state);
                    let _ = self.keyring.wait_durable(ticket, wait);
                    state = self.lock();
                }
                None => {
                    state = self
                        .wake
                        .wait_timeout(state, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
    }

    /// Wait until a packet is due and durable, and return it; `None` once
    /// the forwarder is stopped and holds nothing more: the egress
    /// thread's loop is `while let Some(p) = forwarder.recv() { … }`.
    pub fn recv(&self) -> Option<Due<'_>> {
        loop {
            let now = Instant::now();
            if let Some(due) = self.recv_until(now.checked_add(MAX_WAIT).unwrap_or(now)) {
                return Some(due);
            }
            if self.is_finished() {
                return None;
            }
        }
    }

    /// A clean stop: refuse new packets ([`Discarded::Stopped`]), drop
    /// (and count) those not yet due, and wake the egress thread, whose
    /// [`recv`](Self::recv) then returns the packets that were due (each
    /// once durable, or dropped at its deadline) and then `None`. Returns
    /// how many were dropped as not yet due; [`counts`](Self::counts),
    /// once `recv` returned `None`, is the whole summary.
    pub fn stop(&self) -> u64 {
        let now = Instant::now();
        let mut state = self.lock();
        state.stopped = true;
        let mut kept = std::mem::take(&mut state.waiting).into_vec();
        let mut dropped = 0;
        let mut i = 0;
        while let Some(e) = kept.get(i) {
            if e.0.due <= now {
                i += 1;
            } else {
                let e = kept.swap_remove(i);
                state.free.push(e.0.buf);
                dropped += 1;
            }
        }
        state.counts.stopped += dropped;
        state.waiting = BinaryHeap::from(kept);
        drop(state);
        self.wake.notify_all();
        dropped
    }

    /// Whether the forwarder was stopped and holds nothing more to send.
    pub fn is_finished(&self) -> bool {
        let state = self.lock();
        state.stopped && state.is_empty()
    }

    /// Packets held now (waiting for their delay or their ticket).
    pub fn len(&self) -> usize {
        let state = self.lock();
        state.waiting.len() + state.blocked.len()
    }

    /// Whether no packet is held.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// What it has done so far.
    pub fn counts(&self) -> ForwardCounts {
        self.lock().counts
    }

    fn give_back(&self, buf: Buffer) {
        self.lock().free.push(buf);
    }
}

impl State {
    fn is_empty(&self) -> bool {
        self.waiting.is_empty() && self.blocked.is_empty()
    }

    fn take_buffer(&mut self, capacity: usize) -> Result<Buffer, Discarded> {
        if let Some(buf) = self.free.pop() {
            return Ok(buf);
        }
        if self.made < capacity {
            self.made += 1;
            return Ok(Box::new([0; PACKET_LEN]));
        }
        Err(Discarded::QueueFull)
    }

    /// The earliest moment something may change without a push: a packet
    /// falls due, or a blocked one reaches its deadline.
    fn next_event(&self) -> Option<Instant> {
        let due = self.waiting.peek().map(|e| e.0.due);
        due.into_iter().chain(self.blocked_expiry).min()
    }

    /// The next entry due at `now` and durable: the blocked ones first
    /// (they were due earlier), then those that fall due, each either
    /// released or, not durable yet, moved to the blocked heap.
    fn pop(&mut self, now: Instant, keyring: &Keyring, policy: &ForwardPolicy) -> Option<Entry> {
        self.expire(now, policy);
        loop {
            if let Some(top) = self.blocked.peek()
                && keyring.is_durable(top.0.ticket)
            {
                let entry = self.blocked.pop()?.0;
                if self.blocked.is_empty() {
                    self.blocked_expiry = None;
                }
                return Some(self.release(entry));
            }
            if self.waiting.peek().is_none_or(|e| e.0.due > now) {
                return None;
            }
            let entry = self.waiting.pop()?.0;
            if keyring.is_durable(entry.ticket) {
                return Some(self.release(entry));
            }
            // `None` (an overflowing deadline): it never expires.
            if let Some(expires) = entry.due.checked_add(policy.durable_deadline) {
                self.blocked_expiry = Some(self.blocked_expiry.map_or(expires, |t| t.min(expires)));
            }
            self.blocked.push(ByTicket(entry));
        }
    }

    fn release(&mut self, entry: Entry) -> Entry {
        self.counts.released += 1;
        entry
    }

    /// Drop the blocked entries whose deadline has passed. Scans the
    /// blocked heap, but only when its earliest deadline is reached: the
    /// heap empties at every group commit while the disk keeps up, and
    /// while it does not, each scan drops what it finds.
    fn expire(&mut self, now: Instant, policy: &ForwardPolicy) {
        if self.blocked_expiry.is_none_or(|t| now < t) {
            return;
        }
        let mut kept = std::mem::take(&mut self.blocked).into_vec();
        let mut next: Option<Instant> = None;
        let mut i = 0;
        while let Some(e) = kept.get(i) {
            match e.0.due.checked_add(policy.durable_deadline) {
                Some(expires) if expires <= now => {
                    let e = kept.swap_remove(i);
                    self.free.push(e.0.buf);
                    self.counts.not_durable += 1;
                }
                expires => {
                    next = expires.into_iter().chain(next).min();
                    i += 1;
                }
            }
        }
        self.blocked_expiry = next;
        self.blocked = BinaryHeap::from(kept);
    }
}

/// A packet due and durable, handed to the egress thread: send what
/// [`outgoing`](Self::outgoing) says. Its buffer goes back to the pool
/// when this is dropped.
pub struct Due<'f> {
    forwarder: &'f Forwarder,
    /// `None` only inside `drop`, which gives the buffer back.
    entry: Option<Entry>,
    /// When it was handed out.
    taken_at: Instant,
}

/// What a [`Due`] shows in the moment its buffer is given back (never
/// seen: `entry` is `None` only inside `drop`).
static NO_BUFFER: [u8; PACKET_LEN] = [0; PACKET_LEN];

impl Due<'_> {
    /// What to send, and where.
    pub fn outgoing(&self) -> Outgoing<'_> {
        let (route, buf) = match &self.entry {
            Some(e) => (e.route, &*e.buf),
            None => (Route::Deliver(RecipientId([0; 32])), &NO_BUFFER),
        };
        // The assertion on the lengths above: neither `get` can fail.
        match route {
            Route::Packet(next_hop) => Outgoing::Packet {
                next_hop,
                packet: buf,
            },
            Route::SurbReply(recipient) => Outgoing::SurbReply {
                recipient,
                reply: buf.get(..SURB_REPLY_LEN).unwrap_or_default(),
            },
            Route::Deliver(recipient) => Outgoing::Deliver {
                recipient,
                payload: buf.get(..PAYLOAD_LEN).unwrap_or_default(),
            },
        }
    }

    /// When it was due (its arrival plus its delay): how late it leaves
    /// is `Instant::now()` minus this.
    pub fn due(&self) -> Instant {
        self.entry.as_ref().map_or(self.taken_at, |e| e.due)
    }
}

impl Drop for Due<'_> {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.forwarder.give_back(entry.buf);
        }
    }
}

impl std::fmt::Debug for Due<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Due")
            .field("route", &self.entry.as_ref().map(|e| e.route))
            .field("due", &self.due())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwarder")
            .field("policy", &self.policy)
            .field("held", &self.len())
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}
