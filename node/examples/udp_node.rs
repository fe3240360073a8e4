//! A whole mix node on UDP, in disk mode: worker threads receive, a
//! [`Forwarder`] holds each packet for its delay and its group commit, an
//! egress thread sends, a housekeeping thread turns the key epochs, and
//! Ctrl-C or SIGTERM stops it cleanly.
//!
//! ```text
//! cargo run --example udp_node -- --demo
//!     four such nodes on 127.0.0.1 and a client: requests with a SURB go
//!     n0 → n1 → n2 → n3, whose service answers on the SURB, n3 → … → n0,
//!     back to the client, which checks every answer
//! cargo run --example udp_node -- [--listen 127.0.0.1:30001] [--state DIR | --memory]
//!         [--schedule START,PERIOD | --schedule katzenpost] [--publish FILE]
//!         [--peer ID=ADDR]... [--batch N] [--seconds N]
//!     one node, until Ctrl-C / SIGTERM (or N seconds).
//! ```
//!
//! `--state DIR` (default `udp-node-state`) is disk mode; `--memory` keeps
//! keys and replay filters in memory only. `--schedule` puts the epochs on
//! a PKI's clock ([`Schedule`]): epoch 0 begins at `START` (seconds since
//! the Unix epoch), each lasts `PERIOD` seconds, and the next epoch's key
//! is made ahead; `katzenpost` is Katzenpost's clock. `--publish FILE`
//! writes the current epoch's public key there as PEM at start and after
//! each turn (replaced whole, never half-written), where a PKI client, or
//! `examples/load.rs`, reads it. A real node learns the others' addresses
//! from its PKI; here each `--peer` names one: `ID` is the node id in 64
//! hex digits, `ADDR` its UDP address.
//!
//! `--batch N` (1 to 8, default 8): each worker drains its socket up to N
//! datagrams at a time through [`Forwarder::receive_batch`]; `--batch 1`
//! takes the single path ([`Forwarder::receive`]), one at a time.

use std::error::Error;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use getrandom::SysRng;
use kemsphinx_node::kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN, SURB_ID_LEN};
use kemsphinx_node::kemsphinx::{
    BATCH, Command, Hop, NodeId, PrivateKey, PublicKey, RecipientId, SurbId, SurbKeys,
    create_packet, create_surb, encrypted_reply_mut,
};
use kemsphinx_node::{
    EpochPolicy, ForwardPolicy, Forwarder, Keyring, Outgoing, SURB_REPLY_LEN, Schedule, framing,
};
use rand_core::{Rng, UnwrapErr};
use rustix::net::{RecvFlags, recvfrom};

/// Set by Ctrl-C / SIGTERM (or the end of a bounded run): every loop ends.
static STOP: AtomicBool = AtomicBool::new(false);
/// Receive threads per node.
const WORKERS: usize = 2;
/// How often a blocked receive or the housekeeping wait looks at `STOP`.
const TICK: Duration = Duration::from_millis(100);
/// Each socket asks for 256 packets of buffer each way. Linux's default
/// (`net.core.rmem_default`, 212,992 bytes) holds about 13 datagrams of
/// 16,150 bytes: a burst longer than that, while the workers are busy
/// unwrapping, is lost in the kernel, and no counter of the node sees it.
/// The kernel caps what it grants at `net.core.rmem_max` / `wmem_max`:
/// raise those on a real node (the granted size is printed at start).
const SOCKET_BUFFER: usize = 256 * PACKET_LEN;

/// Who is where. A real node reads this from its PKI.
struct Directory {
    nodes: Vec<(NodeId, SocketAddr)>,
    clients: Vec<(RecipientId, SocketAddr)>,
}

impl Directory {
    fn node(&self, id: NodeId) -> Option<SocketAddr> {
        self.nodes.iter().find(|n| n.0 == id).map(|n| n.1)
    }

    fn client(&self, id: RecipientId) -> Option<SocketAddr> {
        self.clients.iter().find(|c| c.0 == id).map(|c| c.1)
    }
}

/// One node: its socket and its forwarder (which holds its keyring).
struct Node {
    name: String,
    socket: UdpSocket,
    forwarder: Forwarder,
    /// A service at this node answers requests for this recipient.
    service: Option<RecipientId>,
    /// Where the current epoch's public key is written (`--publish`).
    publish: Option<PathBuf>,
    /// Datagrams a worker takes at most at once (1: the single path).
    batch: usize,
}

impl Node {
    /// A node on `addr`: in disk mode with its state in `state`, or in
    /// memory mode (`None`) with a fresh key.
    fn open(
        name: &str,
        addr: SocketAddr,
        state: Option<&Path>,
        policy: EpochPolicy,
    ) -> Result<Self, Box<dyn Error>> {
        let keyring = if let Some(state) = state {
            let (keyring, resumed) = Keyring::open(policy, state)?;
            println!("{name}: state in {}: {resumed}", state.display());
            keyring
        } else {
            println!("{name}: memory mode: nothing written, a fresh key");
            Keyring::new(policy, PrivateKey::generate(&mut UnwrapErr(SysRng)))?
        };
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None)?;
        socket.set_recv_buffer_size(SOCKET_BUFFER)?;
        socket.set_send_buffer_size(SOCKET_BUFFER)?;
        socket.bind(&addr.into())?;
        println!(
            "{name}: on {}, receive buffer {} bytes granted",
            socket.local_addr()?.as_socket().ok_or("not an IP socket")?,
            socket.recv_buffer_size()?
        );
        let socket: UdpSocket = socket.into();
        socket.set_read_timeout(Some(TICK))?;
        Ok(Self {
            name: name.to_owned(),
            socket,
            forwarder: Forwarder::new(Arc::new(keyring), ForwardPolicy::default()),
            service: None,
            publish: None,
            batch: BATCH,
        })
    }

    /// Write the current epoch's public key to `--publish`'s file as PEM:
    /// into a temporary file renamed over it, so a reader never sees half
    /// a key.
    fn publish_key(&self) -> std::io::Result<()> {
        let Some(file) = &self.publish else {
            return Ok(());
        };
        let pem = self.keyring().current().public_key.to_pem();
        let tmp = file.with_extension("tmp");
        std::fs::write(&tmp, pem)?;
        std::fs::rename(&tmp, file)
    }

    fn keyring(&self) -> &Keyring {
        self.forwarder.keyring()
    }

    /// Run until [`STOP`]: the workers, the egress thread, and (on this
    /// thread) the housekeeping. Then stop in order: the workers end, the
    /// forwarder sends what is due, and the summary is printed.
    fn run(&self, dir: &Directory) {
        thread::scope(|s| {
            let workers: Vec<_> = (0..WORKERS).map(|_| s.spawn(|| self.receive())).collect();
            let egress = s.spawn(|| self.egress(dir));
            self.housekeeping();
            for w in workers {
                let _ = w.join();
            }
            let not_due = self.forwarder.stop();
            let _ = egress.join();
            println!("{}: stopped; {not_due} held packets not yet due", self.name);
        });
        println!(
            "{}: accepted {}, dropped: {}; forwarder: {}; {}",
            self.name,
            self.keyring().accepted(),
            self.keyring().drops(),
            self.forwarder.counts(),
            self.keyring().health()
        );
    }

    /// A worker: each datagram into a buffer one byte longer than a packet
    /// (so an oversize one is refused, not cut), then the keyring's checks
    /// and the forwarder's hold. Every refusal is counted there.
    fn receive(&self) {
        if self.batch > 1 {
            return self.receive_batched();
        }
        let mut buf = vec![0u8; PACKET_LEN + 1];
        while !STOP.load(Ordering::Relaxed) {
            if let Ok((n, _)) = self.socket.recv_from(&mut buf)
                && let Some(datagram) = buf.get_mut(..n)
            {
                let _ = self.forwarder.receive(datagram, Instant::now());
            }
        }
    }

    /// A worker taking up to `batch` datagrams at a time. What a batch
    /// waits for: its first datagram, as the single path waits (up to
    /// [`TICK`], to look at [`STOP`]); then it takes whatever else the
    /// socket holds already, up to `batch`, and waits for nothing more
    /// (`MSG_DONTWAIT`: a flag of the call, not of the socket, which the
    /// other worker blocks on). Under light traffic a batch is one
    /// datagram, handled as soon as it arrives: batching adds no delay;
    /// under load the socket's queue fills the batches.
    fn receive_batched(&self) {
        let mut bufs = vec![[0u8; PACKET_LEN + 1]; self.batch.min(BATCH)];
        let mut lens = [0usize; BATCH];
        while !STOP.load(Ordering::Relaxed) {
            let mut taken = 0;
            for (buf, len) in bufs.iter_mut().zip(&mut lens) {
                let got = if taken == 0 {
                    self.socket.recv_from(buf).map(|(n, _)| n)
                } else {
                    recvfrom(&self.socket, &mut buf[..], RecvFlags::DONTWAIT)
                        .map(|(n, _, _)| n)
                        .map_err(std::io::Error::from)
                };
                let Ok(n) = got else {
                    break;
                };
                *len = n;
                taken += 1;
            }
            let mut views: [&mut [u8]; BATCH] = Default::default();
            for ((view, buf), &n) in views.iter_mut().zip(&mut bufs).zip(&lens) {
                *view = buf.get_mut(..n).unwrap_or_default();
            }
            let batch = views.get_mut(..taken).unwrap_or_default();
            self.forwarder
                .receive_batch(batch, Instant::now(), |_, _| {});
        }
    }

    /// The egress thread: send each packet once it is due and durable,
    /// until the forwarder is stopped and empty.
    fn egress(&self, dir: &Directory) {
        let mut answer = Box::new([0u8; PACKET_LEN]);
        while let Some(due) = self.forwarder.recv() {
            let sent = match due.outgoing() {
                Outgoing::Packet { next_hop, packet } => {
                    dir.node(next_hop).map(|to| self.socket.send_to(packet, to))
                }
                Outgoing::SurbReply { recipient, reply } => dir
                    .client(recipient)
                    .map(|to| self.socket.send_to(reply, to)),
                Outgoing::Deliver { recipient, payload } => self
                    .answer(recipient, payload, &mut answer)
                    .and_then(|first_hop| dir.node(first_hop))
                    .map(|to| self.socket.send_to(&answer[..], to)),
            };
            match sent {
                Some(Ok(_)) => {}
                Some(Err(e)) => eprintln!("{}: send failed: {e}", self.name),
                None => eprintln!("{}: no address for {:?}", self.name, due.outgoing()),
            }
        }
    }

    /// The service: answer a request on the SURB it carries, echoing its
    /// message. Durable already (the forwarder hands out nothing before),
    /// so the answer may leave at once. Returns where to send it.
    fn answer(
        &self,
        recipient: RecipientId,
        payload: &[u8],
        out: &mut [u8; PACKET_LEN],
    ) -> Option<NodeId> {
        let request = framing::decode(payload)
            .ok()
            .filter(|_| self.service == Some(recipient))?;
        let mut reply = [0u8; PAYLOAD_LEN];
        framing::encode_reply(request.message, &mut reply).ok()?;
        Some(request.surb?.reply(&reply, out))
    }

    /// Turn the key epochs when due (woken early when an epoch fills), and
    /// report what the disk says, until [`STOP`].
    fn housekeeping(&self) {
        let keyring = self.keyring();
        while !STOP.load(Ordering::Relaxed) {
            while let Some(turn) = keyring.turn(Instant::now()) {
                let number = keyring.current().number;
                println!("{}: {turn:?}; publish epoch {number}'s key", self.name);
                if let Err(e) = self.publish_key() {
                    eprintln!("{}: publishing the key: {e}", self.name);
                }
            }
            if let Some(e) = keyring.take_disk_error() {
                eprintln!("{}: {e}", self.name);
            }
            keyring.wait_for_turn(TICK);
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    ctrlc::set_handler(|| STOP.store(true, Ordering::Relaxed))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        let at = args.iter().position(|a| a == name)?;
        args.get(at + 1).cloned()
    };
    if args.iter().any(|a| a == "--demo") {
        return demo();
    }
    let listen: SocketAddr = arg("--listen")
        .unwrap_or("127.0.0.1:30001".into())
        .parse()?;
    let state = PathBuf::from(arg("--state").unwrap_or("udp-node-state".into()));
    let memory = args.iter().any(|a| a == "--memory");
    let mut policy = EpochPolicy::default();
    if let Some(schedule) = arg("--schedule") {
        // A PKI publishes each epoch's keys ahead: make the next one early.
        policy.schedule = Some(parse_schedule(&schedule)?);
        policy.publish_ahead = true;
    }
    if let Some(seconds) = arg("--seconds") {
        let seconds = Duration::from_secs(seconds.parse()?);
        thread::spawn(move || {
            thread::sleep(seconds);
            STOP.store(true, Ordering::Relaxed);
        });
    }
    let mut node = Node::open("node", listen, (!memory).then_some(&*state), policy)?;
    node.publish = arg("--publish").map(PathBuf::from);
    node.publish_key()?;
    let mut nodes = vec![(NodeId([0; 32]), node.socket.local_addr()?)];
    for (at, a) in args.iter().enumerate() {
        if a == "--peer" {
            nodes.push(parse_peer(args.get(at + 1).ok_or("--peer needs ID=ADDR")?)?);
        }
    }
    if let Some(batch) = arg("--batch") {
        node.batch = batch.parse()?;
        if !(1..=BATCH).contains(&node.batch) {
            return Err(format!("--batch: 1 to {BATCH}").into());
        }
    }
    println!(
        "node: workers take up to {} datagrams at a time",
        node.batch
    );
    let dir = Directory {
        nodes,
        clients: vec![],
    };
    println!("node: running; Ctrl-C or SIGTERM stops it");
    node.run(&dir);
    Ok(())
}

/// `--schedule`'s value: `START,PERIOD` in seconds (START since the Unix
/// epoch), or `katzenpost`.
fn parse_schedule(text: &str) -> Result<Schedule, Box<dyn Error>> {
    if text == "katzenpost" {
        return Ok(Schedule::katzenpost());
    }
    let (start, period) = text.split_once(',').ok_or("--schedule START,PERIOD")?;
    let start = std::time::UNIX_EPOCH + Duration::from_secs(start.parse()?);
    Ok(Schedule::new(start, Duration::from_secs(period.parse()?)))
}

/// `--peer`'s value: `ID=ADDR`, the id in 64 hex digits.
fn parse_peer(text: &str) -> Result<(NodeId, SocketAddr), Box<dyn Error>> {
    let (hex, addr) = text.split_once('=').ok_or("--peer ID=ADDR")?;
    let mut id = [0u8; 32];
    if hex.len() != 64 {
        return Err("--peer: the id is 64 hex digits".into());
    }
    for (byte, at) in id.iter_mut().zip((0..64).step_by(2)) {
        *byte = u8::from_str_radix(hex.get(at..at + 2).ok_or("--peer: not hex")?, 16)?;
    }
    Ok((NodeId(id), addr.parse()?))
}

/// Four nodes and a client in this process, on 127.0.0.1; state in a
/// temporary directory, deleted after.
fn demo() -> Result<(), Box<dyn Error>> {
    let state = std::env::temp_dir().join(format!("udp_node-demo-{}", std::process::id()));
    let service = RecipientId([0x5e; 32]);
    let mut nodes = Vec::new();
    for i in 0..HOPS {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let path = state.join(format!("n{i}"));
        let mut node = Node::open(&format!("n{i}"), addr, Some(&path), EpochPolicy::default())?;
        // Delays here are milliseconds: commit more often than the default.
        node.keyring().set_group_interval(Duration::from_millis(5));
        node.service = (i == HOPS - 1).then_some(service);
        nodes.push(node);
    }
    let client = UdpSocket::bind("127.0.0.1:0")?;
    client.set_read_timeout(Some(Duration::from_secs(5)))?;
    let me = RecipientId([0xc1; 32]);
    let mut dir = Directory {
        nodes: vec![],
        clients: vec![(me, client.local_addr()?)],
    };
    for (i, n) in (0u8..).zip(&nodes) {
        dir.nodes
            .push((NodeId([i + 1; 32]), n.socket.local_addr()?));
    }
    let answered = thread::scope(|s| {
        for n in &nodes {
            let dir = &dir;
            s.spawn(move || n.run(dir));
        }
        let answered = (0..8)
            .filter(|&k| request(k, &client, &dir, &nodes, me, service))
            .count();
        STOP.store(true, Ordering::Relaxed);
        answered
    });
    drop(nodes);
    std::fs::remove_dir_all(&state)?;
    println!("demo: {answered} of 8 requests answered and checked");
    if answered == 8 {
        Ok(())
    } else {
        Err("some requests were not answered".into())
    }
}

/// The client: send request `k` with a SURB back to `me` over the four
/// nodes and the service at the last, and check the answer; whether it
/// came back right.
fn request(
    k: u8,
    socket: &UdpSocket,
    dir: &Directory,
    nodes: &[Node],
    me: RecipientId,
    service: RecipientId,
) -> bool {
    let mut rng = UnwrapErr(SysRng);
    let keys: Vec<PublicKey> = nodes
        .iter()
        .map(|n| n.keyring().current().public_key)
        .collect();
    let mut id = SurbId([0; SURB_ID_LEN]);
    rng.fill_bytes(&mut id.0);
    let delay = [Command::NodeDelay(u32::from(k) * 3)];
    let back = [Command::Recipient(me), Command::SurbReply(id)];
    let there = [Command::Recipient(service)];
    let back = path(dir, &keys, [3, 2, 1, 0], &delay, &back);
    let there = path(dir, &keys, [0, 1, 2, 3], &delay, &there);
    let (Some(back), Some(there)) = (back, there) else {
        return false;
    };
    let Ok((surb, surb_keys)) = create_surb(&mut rng, &back) else {
        return false;
    };
    let message = format!("request {k}");
    let mut payload = Box::new([0u8; PAYLOAD_LEN]);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let built = framing::encode(Some(&surb), message.as_bytes(), &mut payload)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            create_packet(&mut rng, &there, &payload, &mut packet).map_err(|e| e.to_string())
        });
    let Some(entry) = dir.nodes.first().map(|n| n.1) else {
        return false;
    };
    let sent_at = Instant::now();
    if built.is_err() || socket.send_to(&packet[..], entry).is_err() {
        return false;
    }
    let ok = receive_answer(socket, id, &surb_keys, message.as_bytes());
    println!(
        "client: {message}: {} after {:?} (delays {} ms per hop)",
        if ok { "answered" } else { "NOT answered" },
        sent_at.elapsed(),
        u32::from(k) * 3
    );
    ok
}

/// Wait for the answer on SURB `id`: SURB id ‖ encrypted reply, opened with
/// the SURB's keys; whether it echoes `message`.
fn receive_answer(socket: &UdpSocket, id: SurbId, keys: &SurbKeys, message: &[u8]) -> bool {
    let mut buf = vec![0u8; SURB_REPLY_LEN + 1];
    let Ok((n, _)) = socket.recv_from(&mut buf) else {
        return false;
    };
    let Some((got, reply)) = buf
        .get_mut(..n)
        .and_then(|b| b.split_first_chunk_mut::<SURB_ID_LEN>())
    else {
        return false;
    };
    let Ok(reply) = encrypted_reply_mut(reply) else {
        return false;
    };
    *got == id.0
        && keys
            .decrypt_reply(reply)
            .is_ok_and(|p| p.starts_with(message))
}

/// The nodes in `order`, with `delay` at each hop but the last and
/// `terminal` there.
fn path<'a>(
    dir: &Directory,
    keys: &'a [PublicKey],
    order: [usize; HOPS],
    delay: &'a [Command],
    terminal: &'a [Command],
) -> Option<[Hop<'a>; HOPS]> {
    let mut hops = Vec::with_capacity(HOPS);
    for (at, i) in order.into_iter().enumerate() {
        hops.push(Hop {
            id: dir.nodes.get(i)?.0,
            public_key: keys.get(i)?,
            commands: if at + 1 < HOPS { delay } else { terminal },
        });
    }
    hops.try_into().ok()
}
