//! The forwarder with real packets, through the public API: packets leave
//! in the order they fall due, never before their delay nor before their
//! ticket is durable; a full pool, too long a delay and a missed deadline
//! are counted drops; a clean stop sends what is due and counts the rest;
//! SURB replies and delivered payloads take the same path.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use kemsphinx_node::kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN, SURB_ID_LEN};
use kemsphinx_node::kemsphinx::{
    Command, Hop, NodeId, PrivateKey, PublicKey, RecipientId, SurbId, create_packet, create_surb,
    encrypted_reply_mut,
};
use kemsphinx_node::{
    Discarded, EpochPolicy, ForwardPolicy, Forwarder, Keyring, Outgoing, Refused, SURB_REPLY_LEN,
    Ticket, framing,
};
use rand_core::SeedableRng;

const HOUR: Duration = Duration::from_secs(3600);
const MS: Duration = Duration::from_millis(1);
/// The node under test.
const NODE: NodeId = NodeId([1; 32]);
/// The client SURB replies go to, and the recipient of delivered packets.
const CLIENT: RecipientId = RecipientId([9; 32]);

/// A scratch directory's path, unique to this test and process, not yet
/// made.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kemsphinx-node-forward-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn policy() -> EpochPolicy {
    EpochPolicy {
        capacity: 1_000,
        fp_rate: 1e-9,
        rotate_after: 1_000,
        length: HOUR,
        grace: HOUR,
        publish_ahead: false,
        schedule: None,
        ..EpochPolicy::default()
    }
}

fn memory_keyring(seed: u64) -> Arc<Keyring> {
    let key = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(seed));
    Arc::new(Keyring::new(policy(), key).unwrap())
}

fn forwarder(keyring: &Arc<Keyring>, capacity: usize, deadline: Duration) -> Forwarder {
    let p = ForwardPolicy {
        capacity,
        max_delay: Duration::from_secs(10),
        durable_deadline: deadline,
    };
    Forwarder::new(Arc::clone(keyring), p)
}

/// Makes packets whose first hop is the node under test.
struct Client {
    rng: ChaCha20Rng,
    others: Vec<PrivateKey>,
}

impl Client {
    fn new(seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let others = (1..HOPS).map(|_| PrivateKey::generate(&mut rng)).collect();
        Self { rng, others }
    }

    /// A packet the node forwards after `delay_ms` to a next hop whose
    /// id is `[mark; 32]` (so a test can tell packets apart on the way
    /// out).
    fn packet(&mut self, node: &PublicKey, delay_ms: u32, mark: u8) -> Vec<u8> {
        let (delay, deliver) = ([Command::NodeDelay(delay_ms)], [Command::Recipient(CLIENT)]);
        let path: [Hop<'_>; HOPS] = std::array::from_fn(|i| Hop {
            id: if i == 0 { NODE } else { NodeId([mark; 32]) },
            public_key: if i == 0 {
                node
            } else {
                self.others[i - 1].public_key()
            },
            commands: if i + 1 < HOPS { &delay } else { &deliver },
        });
        datagram(&mut self.rng, &path, &[0x42; PAYLOAD_LEN])
    }
}

/// A datagram buffer one byte longer than the packet over `path`.
fn datagram(rng: &mut ChaCha20Rng, path: &[Hop<'_>; HOPS], payload: &[u8; PAYLOAD_LEN]) -> Vec<u8> {
    let mut packet = Box::new([0u8; PACKET_LEN]);
    create_packet(rng, path, payload, &mut packet).unwrap();
    let mut buf = packet.to_vec();
    buf.push(0);
    buf
}

/// Every hop the node itself, with `delays[i]` ms at hop `i` (the last
/// one's is unused): a path to itself.
fn self_path<'a>(
    node: &'a PublicKey,
    delays: &'a [[Command; 1]; HOPS - 1],
    terminal: &'a [Command],
) -> [Hop<'a>; HOPS] {
    std::array::from_fn(|i| Hop {
        id: NODE,
        public_key: node,
        commands: if i + 1 < HOPS { &delays[i] } else { terminal },
    })
}

/// The next hop of a forward packet, or a panic.
fn next_hop(o: &Outgoing<'_>) -> NodeId {
    match o {
        Outgoing::Packet { next_hop, .. } => *next_hop,
        other => panic!("expected a packet, got {other:?}"),
    }
}

fn receive(fwd: &Forwarder, buf: &mut [u8], now: Instant) -> Result<Ticket, Refused> {
    fwd.receive(&mut buf[..PACKET_LEN], now)
}

/// Packets leave in the order their delays end, not the order they came
/// in; equal due times leave in arrival order; none leaves before its
/// delay (each is checked a millisecond before, and at, its due time).
#[test]
fn packets_leave_by_due_time_and_never_before_their_delay() {
    let keyring = memory_keyring(1);
    let fwd = forwarder(&keyring, 16, HOUR);
    let node = keyring.current().public_key;
    let mut client = Client::new(2);
    let now = Instant::now();
    // (delay ms, mark); 20 ms twice: marks 3 then 4 in arrival order.
    let sent = [(30u32, 1u8), (10, 2), (20, 3), (0, 5), (20, 4)];
    for (delay, mark) in sent {
        let mut buf = client.packet(&node, delay, mark);
        assert_eq!(
            receive(&fwd, &mut buf, now).unwrap(),
            fwd.keyring().durable_ticket()
        );
    }
    assert_eq!(fwd.len(), 5);
    assert_eq!(fwd.next_due(), Some(now));
    let mut out = Vec::new();
    for at in [0u32, 10, 20, 30] {
        let due = now + MS * at;
        if at > 0 {
            assert!(
                fwd.pop_due(due - MS).is_none(),
                "a packet left before its {at} ms delay"
            );
        }
        while let Some(p) = fwd.pop_due(due) {
            assert_eq!(p.due(), due);
            out.push(next_hop(&p.outgoing()).0[0]);
        }
    }
    assert_eq!(out, [5, 2, 3, 4, 1]);
    assert!(fwd.is_empty());
    let counts = fwd.counts();
    assert_eq!(
        (counts.held, counts.released, counts.discarded()),
        (5, 5, 0)
    );
}

/// The forwarded bytes are the unwrapped packet, exactly as
/// `Keyring::receive` left it.
#[test]
fn the_packet_sent_is_the_one_unwrapped() {
    let (a, b) = (memory_keyring(3), memory_keyring(3));
    let fwd = forwarder(&a, 4, HOUR);
    let node = a.current().public_key;
    let mut buf = Client::new(4).packet(&node, 0, 7);
    let mut copy = buf.clone();
    let _ = receive(&fwd, &mut buf, Instant::now()).unwrap();
    let _ = b.receive(&mut copy[..PACKET_LEN]).unwrap();
    let p = fwd.pop_due(Instant::now()).unwrap();
    let Outgoing::Packet { next_hop, packet } = p.outgoing() else {
        panic!("not a packet")
    };
    assert_eq!(next_hop, NodeId([7; 32]));
    assert_eq!(&packet[..], &copy[..PACKET_LEN]);
}

/// Disk mode, one group commit a second: a packet received just after a
/// commit waits for the next one. While its ticket is not durable it is
/// never handed out, however late it is asked for; once durable it is.
#[test]
fn nothing_leaves_before_its_ticket_is_durable() {
    let dir = scratch("fwd-durable");
    let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
    let keyring = Arc::new(keyring);
    keyring.set_group_interval(Duration::from_secs(1));
    let fwd = forwarder(&keyring, 16, HOUR);
    let node = keyring.current().public_key;
    let mut client = Client::new(5);

    // A first packet starts a group commit (and the committer's wait).
    let mut first = client.packet(&node, 0, 1);
    let t1 = receive(&fwd, &mut first, Instant::now()).unwrap();
    assert!(keyring.wait_durable(t1, Duration::from_secs(10)).is_ok());
    let mut second = client.packet(&node, 0, 2);
    let t2 = receive(&fwd, &mut second, Instant::now()).unwrap();
    assert!(t2 > t1);

    let mut out = Vec::new();
    let mut seen_waiting = 0;
    let give_up = Instant::now() + Duration::from_secs(10);
    while out.len() < 2 && Instant::now() < give_up {
        // Far past every delay: only the ticket can hold a packet back.
        let p = fwd.pop_due(Instant::now() + Duration::from_secs(1));
        let durable = keyring.is_durable(t2);
        match p {
            Some(p) => {
                let mark = next_hop(&p.outgoing()).0[0];
                assert!(mark == 1 || durable, "packet 2 left before its ticket");
                out.push(mark);
            }
            None => {
                seen_waiting += u32::from(!durable);
                std::thread::sleep(5 * MS);
            }
        }
    }
    assert_eq!(out, [1, 2]);
    assert!(seen_waiting > 0, "the second ticket was never seen waiting");
    assert_eq!(fwd.counts().not_durable, 0);
    drop(fwd);
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Disk mode: a packet whose ticket is still not durable its deadline
/// after its delay is dropped and counted, and its buffer freed.
#[test]
fn a_packet_not_durable_by_its_deadline_is_dropped_and_counted() {
    let dir = scratch("fwd-deadline");
    let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
    let keyring = Arc::new(keyring);
    keyring.set_group_interval(Duration::from_secs(3));
    let fwd = forwarder(&keyring, 1, 20 * MS);
    let node = keyring.current().public_key;
    let mut client = Client::new(6);

    let mut first = client.packet(&node, 0, 1);
    let t1 = receive(&fwd, &mut first, Instant::now()).unwrap();
    assert!(keyring.wait_durable(t1, Duration::from_secs(10)).is_ok());
    drop(fwd.pop_due(Instant::now()).unwrap());

    let now = Instant::now();
    let mut second = client.packet(&node, 5, 2);
    let t2 = receive(&fwd, &mut second, now).unwrap();
    // Due at 5 ms, deadline at 25 ms: blocked in between, dropped after.
    let blocked = fwd.pop_due(now + 10 * MS).is_none();
    let expired = fwd.pop_due(now + 26 * MS).is_none();
    assert!(
        !keyring.is_durable(t2),
        "the commit came too soon for this test"
    );
    assert!(blocked && expired);
    let counts = fwd.counts();
    assert_eq!(
        (counts.held, counts.released, counts.not_durable),
        (2, 1, 1)
    );
    assert!(fwd.is_empty());
    // Its buffer is free again: the pool of one takes another packet.
    let mut third = client.packet(&node, 0, 3);
    let _ = receive(&fwd, &mut third, Instant::now()).unwrap();
    drop(fwd);
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A full pool drops the next packet, counted, after the keyring accepted
/// it; a buffer handed out counts until it is dropped, then is reused.
/// Too long a delay is a drop of its own.
#[test]
fn a_full_queue_and_too_long_a_delay_are_counted_drops() {
    let keyring = memory_keyring(7);
    let p = ForwardPolicy {
        capacity: 2,
        max_delay: 50 * MS,
        ..ForwardPolicy::default()
    };
    let fwd = Forwarder::new(Arc::clone(&keyring), p);
    let node = keyring.current().public_key;
    let mut client = Client::new(8);
    let now = Instant::now();
    for mark in [1, 2] {
        let _ = receive(&fwd, &mut client.packet(&node, 0, mark), now).unwrap();
    }
    assert_eq!(
        receive(&fwd, &mut client.packet(&node, 0, 3), now),
        Err(Refused::Discarded(Discarded::QueueFull))
    );
    let out = fwd.pop_due(now).unwrap();
    assert_eq!(fwd.len(), 1);
    // Handed out and not yet sent: still the pool's.
    assert_eq!(
        receive(&fwd, &mut client.packet(&node, 0, 4), now),
        Err(Refused::Discarded(Discarded::QueueFull))
    );
    drop(out);
    let _ = receive(&fwd, &mut client.packet(&node, 0, 5), now).unwrap();
    assert_eq!(
        receive(&fwd, &mut client.packet(&node, 51, 6), now),
        Err(Refused::Discarded(Discarded::DelayTooLong))
    );
    receive(&fwd, &mut client.packet(&node, 50, 7), now).unwrap_err();
    let counts = fwd.counts();
    assert_eq!(counts.queue_full, 3);
    assert_eq!(counts.delay_too_long, 1);
    assert_eq!(counts.held, 3);
    assert_eq!(counts.get(Discarded::QueueFull), 3);
    assert_eq!(counts.discarded(), 4);
    // Every one of them passed the keyring: these are the forwarder's.
    assert_eq!(keyring.accepted(), 7);
    assert_eq!(keyring.drops().total(), 0);
}

/// A clean stop: what is due is still sent (by `recv`, which then returns
/// `None`), what is not yet due is dropped and counted, and nothing new
/// is taken.
#[test]
fn a_clean_stop_sends_what_is_due_and_counts_the_rest() {
    let keyring = memory_keyring(9);
    let fwd = forwarder(&keyring, 16, HOUR);
    let node = keyring.current().public_key;
    let mut client = Client::new(10);
    let now = Instant::now();
    // Due now (received 1 s ago with a 1 ms delay, and one with none)...
    let past = now.checked_sub(Duration::from_secs(1)).unwrap();
    let _ = receive(&fwd, &mut client.packet(&node, 1, 1), past).unwrap();
    let _ = receive(&fwd, &mut client.packet(&node, 0, 2), now).unwrap();
    // ... and not for a while.
    for mark in [3, 4, 5] {
        let _ = receive(&fwd, &mut client.packet(&node, 5_000, mark), now).unwrap();
    }
    assert_eq!(fwd.stop(), 3);
    let mut sent = Vec::new();
    while let Some(p) = fwd.recv() {
        sent.push(next_hop(&p.outgoing()).0[0]);
    }
    assert_eq!(sent, [1, 2]);
    assert!(fwd.is_finished());
    assert_eq!(
        receive(&fwd, &mut client.packet(&node, 0, 6), now),
        Err(Refused::Discarded(Discarded::Stopped))
    );
    let counts = fwd.counts();
    assert_eq!((counts.held, counts.released, counts.stopped), (5, 2, 4));
    assert_eq!(counts.discarded(), 4);
}

/// `recv` on its own thread sleeps until the packet's delay has passed
/// (measured against the moment it was received), and the stop wakes it.
#[test]
fn recv_waits_for_the_delay_and_ends_at_the_stop() {
    let keyring = memory_keyring(11);
    let fwd = forwarder(&keyring, 16, HOUR);
    let node = keyring.current().public_key;
    let mut buf = Client::new(12).packet(&node, 40, 1);
    std::thread::scope(|s| {
        let egress = s.spawn(|| {
            let mut left = Vec::new();
            while let Some(p) = fwd.recv() {
                left.push((Instant::now(), p.due()));
            }
            left
        });
        let received = Instant::now();
        let _ = receive(&fwd, &mut buf, received).unwrap();
        while fwd.counts().released == 0 {
            std::thread::sleep(5 * MS);
        }
        fwd.stop();
        let left = egress.join().unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].1, received + 40 * MS);
        assert!(left[0].0 >= received + 40 * MS, "left before its delay");
    });
}

/// A SURB reply over four hops, all of them this node, with a delay at
/// each: every hop's packet comes out of the forwarder after its delay,
/// and at the end the client gets SURB id ‖ encrypted reply
/// (`SURB_REPLY_LEN` bytes), which its SURB keys open to the answer.
/// Run in disk mode, so each hop also waits for its ticket.
#[test]
fn a_surb_reply_takes_the_same_path_and_the_client_gets_id_then_reply() {
    let dir = scratch("fwd-surb");
    let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
    let keyring = Arc::new(keyring);
    keyring.set_group_interval(5 * MS);
    let fwd = forwarder(&keyring, 4, HOUR);
    let node = keyring.current().public_key;
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    let id = SurbId([0x5a; SURB_ID_LEN]);
    let delays = [
        [Command::NodeDelay(3)],
        [Command::NodeDelay(7)],
        [Command::NodeDelay(11)],
    ];
    let terminal = [Command::Recipient(CLIENT), Command::SurbReply(id)];
    let (surb, keys) = create_surb(&mut rng, &self_path(&node, &delays, &terminal)).unwrap();
    let mut answer = Box::new([0u8; PAYLOAD_LEN]);
    framing::encode_reply(b"the answer", &mut answer).unwrap();
    let mut packet = Box::new([0u8; PACKET_LEN]);
    assert_eq!(surb.reply(&answer, &mut packet), NODE);

    let mut buf = packet.to_vec();
    buf.push(0);
    let mut hop_delays = vec![];
    let reply = loop {
        let now = Instant::now();
        let ticket = receive(&fwd, &mut buf, now).unwrap();
        let out = loop {
            // Far enough ahead for any delay: time cannot hold it back.
            let p = fwd.pop_due(now + Duration::from_secs(1));
            let durable = keyring.is_durable(ticket);
            match p {
                Some(p) => break p,
                None => {
                    assert!(!durable, "due, durable, and not handed out");
                    assert!(
                        keyring
                            .wait_durable(ticket, Duration::from_secs(10))
                            .is_ok()
                    );
                }
            }
        };
        assert!(keyring.is_durable(ticket));
        hop_delays.push(out.due() - now);
        let o = out.outgoing();
        match o {
            Outgoing::Packet { next_hop, packet } => {
                assert_eq!(next_hop, NODE);
                buf[..PACKET_LEN].copy_from_slice(packet);
            }
            Outgoing::SurbReply { recipient, reply } => {
                assert_eq!(recipient, CLIENT);
                break reply.to_vec();
            }
            Outgoing::Deliver { .. } => panic!("a SURB reply delivered as a message"),
        }
    };
    // 3, 7 and 11 ms at the first three hops; the terminal hop hands the
    // reply over at once.
    assert_eq!(hop_delays, [3 * MS, 7 * MS, 11 * MS, Duration::ZERO]);
    assert_eq!(reply.len(), SURB_REPLY_LEN);
    assert_eq!(SURB_REPLY_LEN, 16 + 32 + 10_156);
    let (got_id, rest) = reply.split_at(SURB_ID_LEN);
    assert_eq!(got_id, &id.0);
    let mut rest = rest.to_vec();
    let opened = keys
        .decrypt_reply(encrypted_reply_mut(&mut rest).unwrap())
        .unwrap();
    assert_eq!(opened, &*answer);
    let counts = fwd.counts();
    assert_eq!((counts.held, counts.released), (4, 4));
    drop(fwd);
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A packet for a recipient at this node, over four hops to itself: the
/// payload is handed out (as `Deliver`) only through the forwarder, and
/// is the framed message.
#[test]
fn a_delivered_payload_takes_the_same_path() {
    let keyring = memory_keyring(14);
    let fwd = forwarder(&keyring, 4, HOUR);
    let node = keyring.current().public_key;
    let mut rng = ChaCha20Rng::seed_from_u64(15);
    let delays = [[Command::NodeDelay(0)]; HOPS - 1];
    let terminal = [Command::Recipient(CLIENT)];
    let mut payload = Box::new([0u8; PAYLOAD_LEN]);
    framing::encode(None, b"hello", &mut payload).unwrap();
    let mut buf = datagram(&mut rng, &self_path(&node, &delays, &terminal), &payload);
    for hop in 0..HOPS {
        let now = Instant::now();
        let _ = receive(&fwd, &mut buf, now).unwrap();
        let out = fwd.pop_due(now).unwrap();
        match out.outgoing() {
            Outgoing::Packet { packet, .. } if hop + 1 < HOPS => {
                buf[..PACKET_LEN].copy_from_slice(packet);
            }
            Outgoing::Deliver { recipient, payload } if hop + 1 == HOPS => {
                assert_eq!(recipient, CLIENT);
                let framed = framing::decode(payload).unwrap();
                assert!(framed.surb.is_none());
                assert_eq!(&framed.message[..5], b"hello");
            }
            other => panic!("hop {hop}: {other:?}"),
        }
    }
    assert_eq!(fwd.counts().released, HOPS as u64);
}

/// A packet the node made itself (`hold`) is queued like the others, and
/// any `Duration` the policy holds, however large, panics nowhere.
#[test]
fn held_packets_and_extreme_durations() {
    let keyring = memory_keyring(16);
    let p = ForwardPolicy {
        capacity: 4,
        max_delay: Duration::MAX,
        durable_deadline: Duration::MAX,
    };
    let fwd = Forwarder::new(Arc::clone(&keyring), p);
    let now = Instant::now();
    let packet = Box::new([0xabu8; PACKET_LEN]);
    fwd.hold(
        NodeId([3; 32]),
        &packet,
        fwd.keyring().durable_ticket(),
        now + 10 * MS,
    )
    .unwrap();
    // The longest delay a packet can ask for (u32::MAX ms, 49 days).
    let node = keyring.current().public_key;
    let mut client = Client::new(17);
    let _ = receive(&fwd, &mut client.packet(&node, u32::MAX, 1), now).unwrap();
    assert!(fwd.pop_due(now).is_none());
    let out = fwd.pop_due(now + 10 * MS).unwrap();
    let Outgoing::Packet {
        next_hop,
        packet: sent,
    } = out.outgoing()
    else {
        panic!("not a packet")
    };
    assert_eq!((next_hop, &sent[..]), (NodeId([3; 32]), &packet[..]));
    drop(out);
    // A deadline in the far future: recv_until returns at once for one
    // already passed, and never overflows for one that cannot be reached.
    assert!(fwd.recv_until(now).is_none());
    assert_eq!(fwd.stop(), 1);
    assert!(fwd.recv().is_none());
}

/// Disk mode: a packet due at the stop whose ticket is not durable yet is
/// still sent, once its group commit completes: the stop does not cut a
/// packet the node already owes.
#[test]
fn a_clean_stop_waits_for_the_commit_of_what_is_due() {
    let dir = scratch("fwd-stop");
    let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
    let keyring = Arc::new(keyring);
    keyring.set_group_interval(Duration::from_millis(500));
    let fwd = forwarder(&keyring, 4, HOUR);
    let node = keyring.current().public_key;
    let mut client = Client::new(18);
    let mut first = client.packet(&node, 0, 1);
    let t1 = receive(&fwd, &mut first, Instant::now()).unwrap();
    assert!(keyring.wait_durable(t1, Duration::from_secs(10)).is_ok());
    drop(fwd.pop_due(Instant::now()).unwrap());

    let t2 = receive(&fwd, &mut client.packet(&node, 0, 2), Instant::now()).unwrap();
    assert_eq!(fwd.stop(), 0, "due already: not dropped at the stop");
    let was_durable = keyring.is_durable(t2);
    let out = fwd.recv().unwrap();
    assert_eq!(next_hop(&out.outgoing()), NodeId([2; 32]));
    assert!(keyring.is_durable(t2));
    drop(out);
    assert!(fwd.recv().is_none());
    assert!(!was_durable, "the commit came too soon for this test");
    let counts = fwd.counts();
    assert_eq!((counts.released, counts.discarded()), (2, 0));
    drop(fwd);
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Four receive threads and one egress thread at once: every packet comes
/// out exactly once, and the counts add up.
#[test]
fn workers_and_an_egress_thread_share_it() {
    let keyring = memory_keyring(19);
    let fwd = forwarder(&keyring, 64, HOUR);
    let node = keyring.current().public_key;
    let mut client = Client::new(20);
    let batches: Vec<Vec<Vec<u8>>> = (0..4u8)
        .map(|w| {
            (0..8u8)
                .map(|i| client.packet(&node, u32::from(i % 3), w * 8 + i + 1))
                .collect()
        })
        .collect();
    let mut marks = std::thread::scope(|s| {
        let egress = s.spawn(|| {
            let mut marks = Vec::new();
            while let Some(p) = fwd.recv() {
                marks.push(next_hop(&p.outgoing()).0[0]);
            }
            marks
        });
        let workers: Vec<_> = batches
            .into_iter()
            .map(|batch| {
                let fwd = &fwd;
                s.spawn(move || {
                    for mut buf in batch {
                        let _ = receive(fwd, &mut buf, Instant::now()).unwrap();
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        while fwd.counts().released < 32 {
            std::thread::sleep(MS);
        }
        fwd.stop();
        egress.join().unwrap()
    });
    marks.sort_unstable();
    assert_eq!(marks, (1..=32).collect::<Vec<u8>>());
    let counts = fwd.counts();
    assert_eq!(
        (counts.held, counts.released, counts.discarded()),
        (32, 32, 0)
    );
}
