//! The client: requests with SURBs out, verified replies back; and, when
//! asked, the datagrams an attacker would send to the first node.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use getrandom::SysRng;
use kemsphinx_node::framing;
use kemsphinx_node::kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, HEADER_LEN, HOPS, PACKET_LEN, PAYLOAD_LEN, SURB_ID_LEN,
};
use kemsphinx_node::kemsphinx::{
    Command, NodeId, PublicKey, SurbId, SurbKeys, create_packet, create_surb, encrypted_reply_mut,
    path,
};
use rand_core::{Rng, UnwrapErr};

use super::node::Counters;
use super::stats::ClientStats;
use super::{Config, Directory, answer};

type Packet = Box<[u8; PACKET_LEN]>;

/// A request waiting for its reply.
struct Pending {
    keys: SurbKeys,
    expected: Box<[u8; PAYLOAD_LEN]>,
    sent: Instant,
    floor: Duration,
}

/// Send `cfg.packets` requests, at most `cfg.window` outstanding, until all
/// are answered or lost, or `cfg.timeout` has passed.
///
/// `entry` counts what node 0 has received: the attacks are paced by it.
pub fn run(
    socket: &UdpSocket,
    dir: &Directory,
    entry_counters: &Counters,
    cfg: &Config,
) -> ClientStats {
    let mut rng = UnwrapErr(SysRng);
    let deadline = Instant::now() + cfg.timeout;
    let entry = dir.nodes[0].addr;
    let mut stats = ClientStats::default();
    let mut pending: HashMap<SurbId, Pending> = HashMap::new();
    let mut captured: Option<Packet> = None;
    let mut attacked = !cfg.attacks;
    let mut buf = vec![0u8; SURB_ID_LEN + ENCRYPTED_REPLY_LEN + 1];
    socket
        .set_read_timeout(Some(Duration::from_millis(10)))
        .expect("nonzero timeout");
    stats.attacked = attack_first(socket, dir, &entry_counters.received, cfg, &mut rng);
    while Instant::now() < deadline && (stats.sent < cfg.packets || !pending.is_empty()) {
        // The first request travels alone, so the attacks can follow it.
        let window = if attacked { cfg.window } else { 1 };
        while stats.sent < cfg.packets && pending.len() < window {
            let (id, p, packet) = request(&mut rng, dir, cfg);
            if !attacked && captured.is_none() {
                send_forged_copy(socket, entry, &packet, &mut stats);
                captured = Some(packet.clone());
            }
            let _ = socket.send_to(&packet[..], entry);
            pending.insert(id, p);
            stats.sent += 1;
        }
        if let Ok((n, _)) = socket.recv_from(&mut buf) {
            on_reply(&mut buf[..n], &mut pending, &mut stats);
        }
        if let (false, Some(first), 1..) = (attacked, &captured, stats.replies_ok) {
            inject(socket, entry, first, &mut rng, &mut stats);
            attacked = true;
        }
        let before = pending.len();
        pending.retain(|_, p| p.sent.elapsed() < cfg.request_timeout);
        stats.lost += (before - pending.len()) as u64;
    }
    stats.lost += pending.len() as u64;
    stats
}

/// One request: a SURB back to the client, framed into the payload with a
/// random message, in a packet for the service, both built with the keys
/// the directory lists now. Delays are random in `0..=cfg.max_delay_ms` on
/// every hop but the last.
fn request(
    rng: &mut UnwrapErr<SysRng>,
    dir: &Directory,
    cfg: &Config,
) -> (SurbId, Pending, Packet) {
    let keys: [PublicKey; HOPS] = std::array::from_fn(|i| dir.public_key(i));
    let nodes: [(NodeId, &PublicKey); HOPS] = std::array::from_fn(|i| (dir.nodes[i].id, &keys[i]));
    let mut id = SurbId::default();
    rng.fill_bytes(&mut id.0);
    let mut delay = || [Command::NodeDelay(rng.next_u32() % (cfg.max_delay_ms + 1))];
    let there: [[Command; 1]; HOPS - 1] = std::array::from_fn(|_| delay());
    let back: [[Command; 1]; HOPS - 1] = std::array::from_fn(|_| delay());
    let floor = there.iter().chain(&back).map(|[c]| match c {
        Command::NodeDelay(ms) => Duration::from_millis(u64::from(*ms)),
        _ => Duration::ZERO,
    });
    let floor = floor.sum();

    let to_client = [Command::Recipient(dir.client.0), Command::SurbReply(id)];
    let ([n0, n1, n2, n3], [b0, b1, b2]) = (nodes, &back);
    let reply_path = path([n3, n2, n1, n0], [b0, b1, b2, &to_client]);
    let (surb, keys) = create_surb(rng, &reply_path).expect("valid reply path");

    let mut message = [0u8; framing::MESSAGE_LEN];
    rng.fill_bytes(&mut message);
    let mut payload = Box::new([0u8; PAYLOAD_LEN]);
    framing::encode(Some(&surb), &message, &mut payload).expect("a message of the slot's length");
    let to_service = [Command::Recipient(dir.service)];
    let [t0, t1, t2] = &there;
    let forward_path = path(nodes, [t0, t1, t2, &to_service]);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    create_packet(rng, &forward_path, &payload, &mut packet).expect("valid forward path");
    let expected = answer(&message);
    (
        id,
        Pending {
            keys,
            expected,
            sent: Instant::now(),
            floor,
        },
        packet,
    )
}

/// A reply datagram, `SURB id ‖ encrypted reply`: decrypt and check it.
fn on_reply(datagram: &mut [u8], pending: &mut HashMap<SurbId, Pending>, stats: &mut ClientStats) {
    let Some((id, reply)) = datagram.split_first_chunk_mut::<SURB_ID_LEN>() else {
        stats.replies_bad += 1;
        return;
    };
    let (Some(p), Ok(reply)) = (pending.remove(&SurbId(*id)), encrypted_reply_mut(reply)) else {
        stats.replies_bad += 1;
        return;
    };
    match p.keys.decrypt_reply(reply) {
        Ok(plain) if plain[..] == p.expected[..] => {
            let rtt = p.sent.elapsed();
            stats.replies_ok += 1;
            stats.too_fast += u64::from(rtt < p.floor);
            stats.round_trip.record(rtt);
            stats.delay_floor.record(p.floor);
        }
        _ => stats.replies_bad += 1,
    }
}

/// Before the first real packet: a copy with a corrupted MAC. It keeps the
/// real packet's KEM ciphertext, hence its replay tag; the node must drop
/// it as malformed without remembering the tag, or the real one would then
/// be dropped as a "replay".
fn send_forged_copy(socket: &UdpSocket, to: SocketAddr, packet: &Packet, stats: &mut ClientStats) {
    let mut forged = packet.clone();
    forged[HEADER_LEN - 1] ^= 1;
    let _ = socket.send_to(&forged[..], to);
    stats.injected.1 += 1;
}

/// After the first reply: the first packet again (a replay), and four
/// malformed datagrams (short, long, wrong version, random bytes).
fn inject(
    socket: &UdpSocket,
    to: SocketAddr,
    first: &Packet,
    rng: &mut UnwrapErr<SysRng>,
    stats: &mut ClientStats,
) {
    let _ = socket.send_to(&first[..], to);
    stats.injected.0 += 1;
    let mut random = vec![0u8; PACKET_LEN];
    rng.fill_bytes(&mut random);
    random[..2].fill(0);
    let mut bad_version = vec![0u8; PACKET_LEN];
    rng.fill_bytes(&mut bad_version);
    bad_version[..2].copy_from_slice(&[0, 1]);
    for datagram in [
        vec![0u8; 100],
        vec![0u8; PACKET_LEN + 1],
        bad_version,
        random,
    ] {
        let _ = socket.send_to(&datagram, to);
        stats.injected.1 += 1;
    }
}

/// Before any request: `cfg.flood` 1-byte datagrams, then `cfg.forged`
/// packets that pass node 0's MAC (built with the key the directory lists
/// for it at the time) but name an unknown next hop. Sent in small
/// batches, each once node 0 has received the last (a loopback socket
/// buffers only a few datagrams; the rest would be lost). Returns what was
/// sent: (1-byte, forged).
fn attack_first(
    socket: &UdpSocket,
    dir: &Directory,
    seen: &AtomicU64,
    cfg: &Config,
    rng: &mut UnwrapErr<SysRng>,
) -> (u64, u64) {
    let entry = dir.nodes[0].addr;
    let mut sent = seen.load(Ordering::Relaxed);
    let mut paced = |batch: u64, send: &mut dyn FnMut()| {
        for _ in 0..batch {
            send();
        }
        sent += batch;
        let deadline = Instant::now() + Duration::from_secs(10);
        while seen.load(Ordering::Relaxed) < sent && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
    };
    for done in (0..cfg.flood).step_by(64) {
        paced((cfg.flood - done).min(64), &mut || {
            let _ = socket.send_to(&[0], entry);
        });
    }
    let unknown = NodeId([0xee; 32]);
    let delay = [Command::NodeDelay(0)];
    let terminal = [Command::Recipient(dir.service)];
    let others: [PublicKey; HOPS - 1] = std::array::from_fn(|i| dir.public_key(i + 1));
    let [b, c, d] = &others;
    let mut packet = Box::new([0u8; PACKET_LEN]);
    for done in (0..cfg.forged).step_by(4) {
        paced((cfg.forged - done).min(4), &mut || {
            let target = dir.public_key(0);
            let forged = [
                (dir.nodes[0].id, &target),
                (unknown, b),
                (unknown, c),
                (unknown, d),
            ];
            let forged_path = path(forged, [&delay, &delay, &delay, &terminal]);
            create_packet(rng, &forged_path, &[0; PAYLOAD_LEN], &mut packet).expect("valid path");
            let _ = socket.send_to(&packet[..], entry);
        });
    }
    (cfg.flood, cfg.forged)
}
