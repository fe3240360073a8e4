//! kemsphinx beside Nym's `sphinx-packet` (classical Sphinx) and Outfox
//! (`nym-outfox`, X25519 as the KEM): create a four-hop packet, and unwrap
//! one hop, each at its own payload size and at about 10 KB.
//!
//! All measurements run in one process, interleaved round by round (after
//! a second of unrecorded warm-up rounds), so
//! the ratios compare like with like on a noisy machine. A round times a
//! batch of operations on inputs prepared outside the timed region (the
//! peers consume their packet on unwrap, so each gets a fresh copy); the
//! figure is the median of the rounds' per-operation means. The peers'
//! figures leave out serialising the outgoing packet (kemsphinx works in
//! place and has nothing to serialise).
//!
//! `cargo run --release --manifest-path benches/peers/Cargo.toml [-- --rounds N] [--json FILE] [--only TEXT]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{Command, NodeId, PrivateKey, RecipientId};
use rand_core::SeedableRng;

/// Operations per timed batch.
const BATCH: usize = 20;

/// One measured operation: who, at which payload size, what, and a
/// closure that times one batch.
struct Bench {
    implementation: String,
    payload: usize,
    operation: &'static str,
    run: Box<dyn FnMut() -> Duration>,
    samples: Vec<f64>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds = flag(&args, "--rounds").map_or(31, |s| s.parse().unwrap());
    let mut benches = Vec::new();
    benches.extend(kemsphinx_benches());
    benches.extend(sphinx_benches(1_024));
    benches.extend(sphinx_benches(10_240));
    benches.extend(outfox_benches(1_024));
    benches.extend(outfox_benches(10_156));
    // `--only TEXT`: keep the implementations whose name contains TEXT.
    if let Some(only) = flag(&args, "--only") {
        benches.retain(|b| b.implementation.contains(only));
    }
    // Warm up: a second of whole rounds, not recorded. Without it the
    // first few hundred milliseconds of the process run up to twice as
    // slow on the VMs (kemsphinx's create measured 430 µs cold, 245 µs
    // warm), and with few rounds that skews the medians.
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_secs(1) {
        for b in &mut benches {
            (b.run)();
        }
    }
    for _ in 0..rounds {
        for b in &mut benches {
            let t = (b.run)();
            b.samples.push(t.as_secs_f64() / BATCH as f64);
        }
    }
    println!("| implementation | operation | median | samples |\n| --- | --- | ---: | ---: |");
    let mut json = Vec::new();
    for b in &mut benches {
        b.samples.sort_by(f64::total_cmp);
        let median = b.samples[b.samples.len() / 2];
        println!(
            "| {} ({} B payload) | {} | {:.1} µs | {} × {BATCH} |",
            b.implementation,
            b.payload,
            b.operation,
            median * 1e6,
            b.samples.len()
        );
        json.push(serde_json::json!({
            "implementation": b.implementation,
            "payload_bytes": b.payload,
            "operation": b.operation,
            "median_s": median,
            "rounds": b.samples.len(),
            "batch": BATCH,
        }));
    }
    if let Some(path) = flag(&args, "--json") {
        std::fs::write(path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    }
}

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .map(|i| args[i + 1].as_str())
}

/// The two operations each implementation is timed on.
const CREATE: &str = "create, 4 hops";
const UNWRAP: &str = "unwrap one hop";

fn bench(
    implementation: &str,
    payload: usize,
    operation: &'static str,
    run: impl FnMut() -> Duration + 'static,
) -> Bench {
    Bench {
        implementation: implementation.into(),
        payload,
        operation,
        run: Box::new(run),
        samples: Vec::new(),
    }
}

/// Time `op` over `BATCH` inputs made by `input` beforehand.
fn timed<T>(mut input: impl FnMut() -> T, mut op: impl FnMut(T)) -> Duration {
    let inputs: Vec<T> = (0..BATCH).map(|_| input()).collect();
    let start = Instant::now();
    for x in inputs {
        op(x);
    }
    start.elapsed()
}

fn kemsphinx_benches() -> Vec<Bench> {
    let keys: &'static [PrivateKey] =
        Vec::leak((0..4u8).map(|i| PrivateKey::from_seed(&[i; 96])).collect());
    let delay: &'static [Command] = Vec::leak(vec![Command::NodeDelay(10)]);
    let deliver: &'static [Command] = Vec::leak(vec![Command::Recipient(RecipientId([9; 32]))]);
    let nodes = std::array::from_fn(|i| (NodeId([i as u8; 32]), keys[i].public_key()));
    let path = move || kemsphinx::path(nodes, [delay, delay, delay, deliver]);
    let payload: &'static [u8; PAYLOAD_LEN] = Box::leak(Box::new([0x42; PAYLOAD_LEN]));
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    let mut first = Box::new([0u8; PACKET_LEN]);
    kemsphinx::create_packet(&mut rng, &path(), payload, &mut first).unwrap();
    let first: &'static [u8; PACKET_LEN] = Box::leak(first);
    let name = "kemsphinx (PQ hybrid)";
    let mut out_buf = Box::new([0u8; PACKET_LEN]);
    vec![
        bench(name, PAYLOAD_LEN, CREATE, move || {
            timed(
                || (),
                |()| {
                    kemsphinx::create_packet(&mut rng, &path(), payload, &mut out_buf).unwrap();
                    black_box(&out_buf);
                },
            )
        }),
        bench(name, PAYLOAD_LEN, UNWRAP, move || {
            timed(
                || Box::new(*first),
                |mut p| {
                    black_box(kemsphinx::unwrap(&keys[0], &mut p).unwrap().replay_tag);
                },
            )
        }),
    ]
}

fn sphinx_benches(payload_size: usize) -> Vec<Bench> {
    use sphinx_packet::SphinxPacket;
    use sphinx_packet::header::delays;
    use sphinx_packet::packet::builder::SphinxPacketBuilder;
    use sphinx_packet::route::{Destination, DestinationAddressBytes, Node, NodeAddressBytes};
    use x25519_dalek::{PublicKey, StaticSecret};

    let secrets: Vec<StaticSecret> = (0..4u8).map(|i| StaticSecret::from([i + 1; 32])).collect();
    let route: Vec<Node> = secrets
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Node::new(
                NodeAddressBytes::from_bytes([i as u8; 32]),
                PublicKey::from(s),
            )
        })
        .collect();
    let route: &'static [Node] = Vec::leak(route);
    let delays: &'static [delays::Delay] = Vec::leak(delays::generate_from_average_duration(
        4,
        Duration::from_millis(10),
    ));
    let destination: &'static Destination = Box::leak(Box::new(Destination::new(
        DestinationAddressBytes::from_bytes([9; 32]),
        [7; 16],
    )));
    let message: &'static [u8] = Vec::leak(vec![0x42; payload_size / 2]);
    let builder = move || SphinxPacketBuilder::new().with_payload_size(payload_size);
    let bytes: &'static [u8] = Vec::leak(
        builder()
            .build_packet(message, route, destination, delays)
            .unwrap()
            .to_bytes(),
    );
    let key: &'static StaticSecret = Box::leak(Box::new(secrets[0].clone()));
    let name = "Nym sphinx-packet 0.8 (X25519)";
    vec![
        bench(name, payload_size, CREATE, move || {
            timed(
                || (),
                |()| {
                    black_box(
                        builder()
                            .build_packet(message, route, destination, delays)
                            .unwrap(),
                    );
                },
            )
        }),
        bench(name, payload_size, UNWRAP, move || {
            timed(
                || SphinxPacket::from_bytes(bytes).unwrap(),
                |p| {
                    black_box(p.process(key).unwrap());
                },
            )
        }),
    ]
}

fn outfox_benches(payload_size: usize) -> Vec<Bench> {
    use nym_outfox::packet::OutfoxPacket;
    use sphinx_packet_06::route::{Destination, DestinationAddressBytes, Node, NodeAddressBytes};
    use x25519_dalek_2::{PublicKey, StaticSecret};

    let secrets: Vec<StaticSecret> = (0..4u8).map(|i| StaticSecret::from([i + 1; 32])).collect();
    let route: [Node; 4] = std::array::from_fn(|i| {
        Node::new(
            NodeAddressBytes::from_bytes([i as u8; 32]),
            PublicKey::from(&secrets[i]),
        )
    });
    let route: &'static [Node; 4] = Box::leak(Box::new(route));
    let destination: &'static Destination = Box::leak(Box::new(Destination::new(
        DestinationAddressBytes::from_bytes([9; 32]),
        [7; 16],
    )));
    let message: &'static [u8] = Vec::leak(vec![0x42; payload_size / 2]);
    let packet = OutfoxPacket::build(message, route, destination, Some(payload_size)).unwrap();
    let bytes: &'static [u8] = Vec::leak(packet.to_bytes().unwrap());
    let key: &'static StaticSecret = Box::leak(Box::new(secrets[0].clone()));
    let name = "Nym Outfox 1.21.6 (X25519 KEM)";
    vec![
        bench(name, payload_size, CREATE, move || {
            timed(
                || (),
                |()| {
                    black_box(
                        OutfoxPacket::build(message, route, destination, Some(payload_size))
                            .unwrap(),
                    );
                },
            )
        }),
        bench(name, payload_size, UNWRAP, move || {
            timed(
                || OutfoxPacket::try_from(bytes).unwrap(),
                |mut p| {
                    black_box(p.decode_next_layer(key).unwrap());
                },
            )
        }),
    ]
}
