//! Rebuild the seed corpora in `fuzz/corpus/<target>/` from the
//! conformance vectors (`vectors/`) and the fixed fuzzing keys:
//!
//! ```sh
//! cargo run --manifest-path fuzz/Cargo.toml --example seeds
//! ```
//!
//! Deterministic: the same vectors give the same files. Packets are 16 KB,
//! so only a few of them are kept.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::fs;
use std::path::{Path, PathBuf};

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{PACKET_LEN, PRIVATE_KEY_LEN, SPRP_KEY_BLOCK_LEN};
use kemsphinx::{Action, Command, RecipientId, SurbId, create_packet, create_surb, unwrap};
use kemsphinx_fuzz::input::{
    HOP_KEYS_LEN, KemCase, KemCiphertext, KemKey, KemOp, Keyed, Mutated, Mutation, Reply, commands,
    serialise,
};
use kemsphinx_fuzz::model::{KEM_CT, PAYLOAD, ROUTING, Step};
use kemsphinx_fuzz::trip::Trip;
use kemsphinx_fuzz::{nodes, padded, raw_key};
use rand_core::SeedableRng;
use serde_json::Value;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let vectors = |name: &str| -> Vec<Value> {
        let path = root.join("../vectors").join(name);
        let file: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
        file["cases"].as_array().unwrap().clone()
    };
    let corpus = Corpus(root.join("corpus"));
    let (forward, surb, negative) = (
        vectors("reference/forward.json"),
        vectors("reference/surb.json"),
        vectors("reference/negative.json"),
    );
    unwrap_raw(&corpus.dir("unwrap_raw"), &forward, &negative);
    unwrap_mutated(&corpus.dir("unwrap_mutated"), &forward, &surb);
    commands_seeds(&corpus.dir("commands"), &forward, &surb);
    surb_reply(&corpus.dir("surb_reply"), &surb);
    keys(
        &corpus.dir("keys"),
        &vectors("reference/kem.json"),
        &negative,
    );
    aez(
        &corpus.dir("aez_roundtrip"),
        &vectors("../aez5/tests/data/sprp_go_reference.json"),
    );
    kem_differential(
        &corpus.dir("kem_differential"),
        &vectors("reference/kem.json"),
    );
    unwrap_header(&corpus.dir("unwrap_header"), &forward, &surb);
}

/// `fuzz/corpus`, with one emptied directory per target.
struct Corpus(PathBuf);

impl Corpus {
    fn dir(&self, target: &str) -> PathBuf {
        let dir = self.0.join(target);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    fs::write(dir.join(name), bytes).unwrap();
    println!("{:>6}  {}/{name}", bytes.len(), dir.display());
}

fn hex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

/// A case's commands for each hop, serialised.
fn hop_commands(case: &Value) -> [Vec<u8>; 4] {
    let hops = case["commands"].as_array().unwrap();
    std::array::from_fn(|i| hops[i].as_array().unwrap().iter().flat_map(hex).collect())
}

/// Vector packets (for other keys: the MAC path), the negative cases that
/// fail before the MAC, and packets for the fixed key at every hop.
fn unwrap_raw(dir: &Path, forward: &[Value], negative: &[Value]) {
    write(dir, "vector-hop0", &hex(&forward[0]["packets"][0]));
    for id in ["all-zero-packet", "x25519-small-order-u0", "length-16149"] {
        let case = negative
            .iter()
            .find(|c| c["id"] == format!("neg-unwrap-{id}"));
        write(dir, id, &hex(&case.unwrap()["packet"]));
    }
    // Every hop is the fixed key, so every stage of the trip unwraps.
    let key = raw_key();
    let cmds = hop_commands(&forward[0]).map(|bytes| commands(&bytes));
    let hops = [(nodes()[0].id, key.public_key()); 4];
    let path = kemsphinx::path(hops, cmds.each_ref().map(Vec::as_slice));
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let payload = padded(&hex(&forward[0]["payload"]));
    create_packet(&mut rng, &path, &payload, &mut packet).unwrap();
    write(dir, "fixed-key-hop0", &packet[..]);
    for _ in 0..3 {
        assert!(matches!(
            unwrap(key, &mut packet).unwrap().action,
            Action::Forward { .. }
        ));
    }
    write(dir, "fixed-key-hop3-deliver", &packet[..]);
    let mut reply_cmds = cmds.clone();
    reply_cmds[3] = vec![
        Command::Recipient(RecipientId([7; 32])),
        Command::SurbReply(SurbId([8; 16])),
    ];
    let path = kemsphinx::path(hops, reply_cmds.each_ref().map(Vec::as_slice));
    let (surb, _) = create_surb(&mut rng, &path).unwrap();
    surb.reply(&payload, &mut packet);
    for _ in 0..3 {
        assert!(matches!(
            unwrap(key, &mut packet).unwrap().action,
            Action::Forward { .. }
        ));
    }
    write(dir, "fixed-key-hop3-reply", &packet[..]);
}

/// Each vector case's commands with a short payload, starting at every
/// hop, unmutated and with one header and one payload mutation.
fn unwrap_mutated(dir: &Path, forward: &[Value], surb: &[Value]) {
    let cases = forward
        .iter()
        .map(|c| (c, false))
        .chain(surb.iter().map(|c| (c, true)));
    for (n, (case, is_surb)) in cases.enumerate() {
        let payload_key = if is_surb { "reply_payload" } else { "payload" };
        let mut input = Mutated {
            surb: is_surb,
            start_hop: n % 4,
            seed: [u8::try_from(n).unwrap(); 32],
            commands: hop_commands(case),
            mutations: Vec::new(),
            payload: hex(&case[payload_key])[..64].to_vec(),
        };
        let id = case["id"].as_str().unwrap();
        write(dir, id, &input.encode());
        let header = Mutation {
            offset: 1500 + 97 * u16::try_from(n).unwrap(),
            xor: 0x01,
        };
        let body = Mutation {
            offset: 9000 + 13 * u16::try_from(n).unwrap(),
            xor: 0x80,
        };
        input.mutations = vec![header];
        write(dir, &format!("{id}-header"), &input.encode());
        input.mutations = vec![body];
        write(dir, &format!("{id}-payload"), &input.encode());
    }
}

/// One command list of each shape given to the creators and seen by the
/// hops, and two that parsing refuses.
fn commands_seeds(dir: &Path, forward: &[Value], surb: &[Value]) {
    let mut seen = Vec::new();
    for case in forward.iter().chain(surb) {
        let given = hop_commands(case).into_iter();
        let parsed = case["unwrap"].as_array().unwrap().iter().map(|hop| {
            hop["commands"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(hex)
                .collect::<Vec<u8>>()
        });
        for bytes in given.chain(parsed) {
            let shape = |b: &[u8]| {
                commands(b)
                    .iter()
                    .map(|c| kemsphinx::hazmat::encode_command(c).as_bytes()[0])
                    .collect::<Vec<_>>()
            };
            if !seen.iter().any(|s: &Vec<u8>| shape(s) == shape(&bytes)) {
                seen.push(bytes);
            }
        }
    }
    seen.push(vec![0x7f, 0x00]);
    seen.push(serialise(&[
        Command::Recipient(RecipientId([1; 32])),
        Command::SurbReply(SurbId([2; 16])),
        Command::SurbReply(SurbId([3; 16])),
    ]));
    for (i, bytes) in seen.iter().enumerate() {
        write(dir, &format!("area-{i:02}"), bytes);
    }
}

/// The vector SURBs with their hop keys (in the order hops apply them) and
/// the start of the reply payload.
fn surb_reply(dir: &Path, surb: &[Value]) {
    for (n, case) in surb.iter().enumerate() {
        let keys = hex(&case["surb_keys"]);
        let mut hop_keys = [0u8; HOP_KEYS_LEN];
        let blocks = keys[..HOP_KEYS_LEN].chunks_exact(SPRP_KEY_BLOCK_LEN).rev();
        for (out, block) in hop_keys.chunks_exact_mut(SPRP_KEY_BLOCK_LEN).zip(blocks) {
            out.copy_from_slice(block);
        }
        let input = Reply {
            corrupt_bit: 97 * u16::try_from(n).unwrap(),
            surb: hex(&case["surb"]).try_into().unwrap(),
            hop_keys,
            rest: hex(&case["reply_payload"])[..64].to_vec(),
        };
        write(dir, case["id"].as_str().unwrap(), &input.encode());
    }
}

/// The vectors' key pairs and seeds, and the refused keys.
fn keys(dir: &Path, kem: &[Value], negative: &[Value]) {
    for case in kem.iter().filter(|c| c["op"] == "derive_key_pair").take(2) {
        let id = case["id"].as_str().unwrap();
        write(dir, &format!("{id}-seed"), &hex(&case["seed"]));
        write(dir, &format!("{id}-public"), &hex(&case["public_key"]));
        write(dir, &format!("{id}-private"), &hex(&case["private_key"]));
        let private: [u8; PRIVATE_KEY_LEN] = hex(&case["private_key"]).try_into().unwrap();
        let key = kemsphinx::PrivateKey::from_bytes(&private).unwrap();
        write(dir, &format!("{id}-public-pem"), &key.public_key().to_pem());
        write(dir, &format!("{id}-private-pem"), &key.to_pem()[..]);
    }
    for case in negative
        .iter()
        .filter(|c| c["op"].as_str().unwrap().starts_with("load_"))
    {
        let field = if case["op"] == "load_public_key" {
            "public_key"
        } else {
            "private_key"
        };
        write(dir, case["id"].as_str().unwrap(), &hex(&case[field]));
    }
}

/// AEZ vector messages up to 1,000 bytes (longer lengths are one mutation
/// away), with their keys and nonces.
fn aez(dir: &Path, cases: &[Value]) {
    for case in cases {
        let plaintext = hex(&case["plaintext"]);
        if plaintext.len() > 1000 {
            continue;
        }
        let mut input = hex(&case["key"]);
        input.extend(hex(&case["nonce"]));
        input.extend([0, 0]);
        input.extend(plaintext);
        write(dir, case["id"].as_str().unwrap(), &input);
    }
}

/// The vectors' seeds with a fresh encapsulation, and their private keys
/// with their ciphertexts, each followed by one operation of every kind.
fn kem_differential(dir: &Path, kem: &[Value]) {
    let ops = |n: u8| {
        vec![
            KemOp::Flip {
                at: 40 + u16::from(n),
                xor: 1,
            },
            KemOp::FlipPublicKey { at: 32, xor: 0xff },
            KemOp::FlipPrivateKey { at: 1_000, xor: 1 },
            KemOp::X25519 { point: [n; 32] },
            KemOp::X25519Half { bytes: [9; 32] },
            KemOp::SmallOrder { which: n },
        ]
    };
    let mut n = 0u8;
    for case in kem {
        let (key, ciphertext) = match case["op"].as_str().unwrap() {
            "derive_key_pair" => (
                KemKey::Seed(hex(&case["seed"]).try_into().unwrap()),
                KemCiphertext::Encapsulated([n; 32], [n ^ 0xff; 32]),
            ),
            "decapsulate" => (
                KemKey::Encoded(padded(&hex(&case["private_key"]))),
                KemCiphertext::Given(padded(&hex(&case["ciphertext"]))),
            ),
            _ => continue,
        };
        let input = KemCase {
            key,
            ciphertext,
            ops: ops(n),
        };
        write(dir, case["id"].as_str().unwrap(), &input.encode());
        n += 1;
    }
}

/// For `unwrap_header`: a forward packet and a SURB reply over the fixed
/// nodes (a vector case's commands, a short payload), at every hop with the
/// shared secret that hop decapsulates, so every seed passes the MAC. The
/// forward packet's first and last hops as received (16 KB each); every
/// hop with its routing block and payload in plaintext and `SEAL` (the
/// payload zero where the hop does not check it, which keeps seeds short).
fn unwrap_header(dir: &Path, forward: &[Value], surb: &[Value]) {
    for (name, case, is_surb) in [("forward", &forward[3], false), ("reply", &surb[3], true)] {
        let input = Mutated {
            surb: is_surb,
            start_hop: 0,
            seed: [0x5e; 32],
            commands: hop_commands(case),
            mutations: Vec::new(),
            payload: b"unwrap_header seed".to_vec(),
        };
        let trip = Trip::create(&input).unwrap();
        let walk = trip.walk(0, trip.first.clone());
        trip.assert_delivers(&walk);
        for (hop, packet) in walk.received.iter().enumerate() {
            let ct = packet[KEM_CT..ROUTING].try_into().unwrap();
            let ss = *kemsphinx::hazmat::decapsulate(&nodes()[hop].key, ct)
                .unwrap()
                .as_bytes();
            let step = &walk.steps[hop];
            if !is_surb && (hop == 0 || hop == 3) {
                let raw = Keyed {
                    flags: 0,
                    shared_secret: ss,
                    packet: packet.clone(),
                };
                assert_eq!(&raw.check(), step);
                write(dir, &format!("{name}-hop{hop}"), &raw.encode());
            }
            let flags = Keyed::PLAIN_PAYLOAD | Keyed::PLAIN_BLOCK | Keyed::SEAL;
            let mut plain = Keyed::plain(flags, ss, packet);
            if !matches!(step, Step::Deliver { .. }) {
                plain.packet[PAYLOAD..].fill(0);
            }
            // The same step; a reply's bytes differ (its payload was zeroed).
            let got = plain.check();
            assert_eq!(without_reply(got), without_reply(step.clone()));
            write(dir, &format!("{name}-hop{hop}-plain"), &plain.encode());
        }
    }
}

/// A step with a reply's bytes dropped.
fn without_reply(step: Step) -> Step {
    match step {
        Step::Reply {
            recipient,
            surb_id,
            commands,
            ..
        } => Step::Reply {
            recipient,
            surb_id,
            commands,
            reply: Vec::new(),
        },
        other => other,
    }
}
