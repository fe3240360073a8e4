//! The performance evidence report: `cargo run --release --example report`.
//!
//! Verifies the reference vectors first (and refuses to time a build that
//! fails them), then measures every operation of the Go reference's
//! published baseline plus the primitives, tail latency, multi-thread
//! throughput, peak memory, stack and code size, and writes
//! `results/<date>-<host>.md` and `.json`.
//!
//! Options: `--quick` (fewer samples, for a smoke test), `--out DIR`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::cast_possible_truncation)]

mod env;
mod harness;
mod probes;
mod write;

use std::path::Path;
use std::time::Duration;

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{ENCRYPTED_REPLY_LEN, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{
    Action, Command, Hop, NodeId, PrivateKey, RecipientId, SurbId, create_packet, unwrap,
};
use rand_core::SeedableRng;

use harness::{Timing, measure};

#[global_allocator]
static ALLOC: harness::Counting = harness::Counting;

/// Four mixes and the commands of a forward path and a SURB path.
pub(crate) struct Net {
    pub(crate) keys: Vec<PrivateKey>,
    ids: Vec<NodeId>,
    delay: [Command; 1],
    deliver: [Command; 1],
    reply: [Command; 2],
}

impl Net {
    pub(crate) fn new() -> Self {
        Self {
            keys: (0..4u8).map(|i| PrivateKey::from_seed(&[i; 96])).collect(),
            ids: (0..4u8).map(|i| NodeId([i; 32])).collect(),
            delay: [Command::NodeDelay(100)],
            deliver: [Command::Recipient(RecipientId([7; 32]))],
            reply: [
                Command::Recipient(RecipientId([8; 32])),
                Command::SurbReply(SurbId([9; 16])),
            ],
        }
    }

    fn path<'a>(&'a self, terminal: &'a [Command]) -> [Hop<'a>; 4] {
        std::array::from_fn(|i| Hop {
            id: self.ids[i],
            public_key: self.keys[i].public_key(),
            commands: if i < 3 { &self.delay } else { terminal },
        })
    }

    /// The forward packet as each hop receives it.
    pub(crate) fn forward_packets(&self) -> Vec<Box<[u8; PACKET_LEN]>> {
        let mut rng = ChaCha20Rng::from_seed([1; 32]);
        let mut p = Box::new([0u8; PACKET_LEN]);
        create_packet(
            &mut rng,
            &self.path(&self.deliver),
            &[3; PAYLOAD_LEN],
            &mut p,
        )
        .unwrap();
        let mut out = vec![p.clone()];
        for key in &self.keys[..3] {
            unwrap(key, &mut p).unwrap();
            out.push(p.clone());
        }
        out
    }

    /// One request carrying a SURB and its reply, all the crypto of both,
    /// in the caller's buffers.
    pub(crate) fn request_reply(&self, rng: &mut ChaCha20Rng, bufs: &mut Buffers) -> u8 {
        let Buffers {
            packet,
            payload,
            reply,
        } = bufs;
        let (surb, keys) = kemsphinx::create_surb(rng, &self.path(&self.reply)).unwrap();
        payload[2..2 + surb.as_bytes().len()].copy_from_slice(surb.as_bytes());
        create_packet(rng, &self.path(&self.deliver), payload, packet).unwrap();
        for key in &self.keys {
            unwrap(key, packet).unwrap();
        }
        surb.reply(payload, packet);
        for key in &self.keys {
            if let Action::SurbReply {
                encrypted_reply, ..
            } = unwrap(key, packet).unwrap().action
            {
                **reply = *encrypted_reply;
            }
        }
        keys.decrypt_reply(reply).unwrap()[0]
    }
}

/// The buffers a client and its mixes work in.
pub(crate) struct Buffers {
    packet: Box<[u8; PACKET_LEN]>,
    payload: Box<[u8; PAYLOAD_LEN]>,
    reply: Box<[u8; ENCRYPTED_REPLY_LEN]>,
}

impl Buffers {
    pub(crate) fn new() -> Self {
        Self {
            packet: Box::new([0; PACKET_LEN]),
            payload: Box::new([0; PAYLOAD_LEN]),
            reply: Box::new([0; ENCRYPTED_REPLY_LEN]),
        }
    }
}

/// Everything measured, for the writers.
pub(crate) struct Results {
    pub(crate) env: env::Environment,
    pub(crate) vectors_passed: usize,
    pub(crate) ops: Vec<Timing>,
    pub(crate) parts: Vec<Timing>,
    pub(crate) tail: Vec<(f64, Duration)>,
    pub(crate) tail_n: usize,
    pub(crate) threads: Vec<(usize, f64)>,
    pub(crate) rss: (Option<u64>, Option<u64>),
    pub(crate) stack: Option<(usize, usize)>,
    pub(crate) code: (Option<u64>, Option<u64>),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        std::process::exit(probes::child(
            &args[i + 1],
            args.get(i + 2).map(String::as_str),
        ));
    }
    let quick = args.iter().any(|a| a == "--quick");
    let out_dir = args
        .iter()
        .position(|a| a == "--out")
        .map_or("results", |i| args[i + 1].as_str());

    let vectors_passed = conformance_first();
    eprintln!("vectors: {vectors_passed} passed; measuring (this takes a few minutes)…");
    let (samples, target) = if quick {
        (11, Duration::from_millis(2))
    } else {
        (101, Duration::from_millis(10))
    };
    let net = Net::new();
    let ops = operations(&net, samples, target);
    let parts = primitives(samples, target);
    let tail_n = if quick { 10_000 } else { 100_000 };
    let packet = net.forward_packets().swap_remove(0);
    let tail = harness::percentiles(
        tail_n,
        || packet.clone(),
        |p| unwrap(&net.keys[0], p).is_ok(),
    );
    let secs = Duration::from_secs(if quick { 1 } else { 3 });
    // Best of two alternating runs per thread count: the VM's other tenants
    // only ever slow a run down.
    let runs: Vec<(usize, f64)> = [1, 2, 1, 2]
        .iter()
        .map(|&t| (t, probes::throughput(&net, t, secs)))
        .collect();
    let best = |t: usize| {
        runs.iter()
            .filter(|r| r.0 == t)
            .map(|r| r.1)
            .fold(0.0, f64::max)
    };
    let threads = vec![(1, best(1)), (2, best(2))];
    let results = Results {
        env: env::Environment::read(),
        vectors_passed,
        ops,
        parts,
        tail,
        tail_n,
        threads,
        rss: probes::peak_rss(),
        stack: probes::unwrap_stack(),
        code: probes::code_size(),
    };
    let (md, json) = write::files(&results, Path::new(out_dir));
    print!("{}", std::fs::read_to_string(&md).unwrap_or_default());
    eprintln!("wrote {} and {}", md.display(), json.display());
}

/// Run the reference vectors; refuse to go on if any fails.
fn conformance_first() -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let mut report = kemsphinx_cli::conformance::Report::default();
    report.verify_path(&root.join("reference"));
    report.verify_path(&root.join("aez"));
    if !report.ok() {
        eprint!("{}", report.failure_lines());
        eprintln!(
            "{} — refusing to time a build that fails the vectors",
            report.summary()
        );
        std::process::exit(1);
    }
    report.passed
}

/// The operations of the reference's baseline.
fn operations(net: &Net, samples: usize, target: Duration) -> Vec<Timing> {
    let mut rng = ChaCha20Rng::from_seed([3; 32]);
    let key = &net.keys[0];
    let (ct, _) = key.public_key().encapsulate(&mut rng).unwrap();
    let encoded = key.to_bytes();
    let packets = net.forward_packets();
    let fwd = net.path(&net.deliver);
    let back = net.path(&net.reply);
    let payload = Box::new([5u8; PAYLOAD_LEN]);
    let (surb, keys) = kemsphinx::create_surb(&mut rng, &back).unwrap();
    let reply = {
        let mut p = Box::new([0u8; PACKET_LEN]);
        surb.reply(&payload, &mut p);
        let mut r = Box::new([0u8; ENCRYPTED_REPLY_LEN]);
        for k in &net.keys {
            if let Action::SurbReply {
                encrypted_reply, ..
            } = unwrap(k, &mut p).unwrap().action
            {
                *r = *encrypted_reply;
            }
        }
        r
    };
    let mut out_packet = Box::new([0u8; PACKET_LEN]);
    let mut rng2 = ChaCha20Rng::from_seed([4; 32]);
    let mut rng3 = ChaCha20Rng::from_seed([5; 32]);
    let mut rng4 = ChaCha20Rng::from_seed([6; 32]);
    let mut rng5 = ChaCha20Rng::from_seed([7; 32]);
    let mut bufs = Buffers::new();
    vec![
        measure(
            "KEM key generation",
            samples,
            target,
            || (),
            |()| PrivateKey::generate(&mut rng),
        ),
        measure(
            "KEM encapsulation",
            samples,
            target,
            || (),
            |()| key.public_key().encapsulate(&mut rng2).unwrap(),
        ),
        measure(
            "KEM decapsulation (loaded key)",
            samples,
            target,
            || (),
            |()| key.decapsulate(&ct).unwrap(),
        ),
        measure(
            "KEM decapsulation (from 1,280-byte encoding)",
            samples,
            target,
            || (),
            |()| {
                PrivateKey::from_bytes(&encoded)
                    .unwrap()
                    .decapsulate(&ct)
                    .unwrap()
            },
        ),
        measure(
            "build forward packet",
            samples,
            target,
            || (),
            |()| create_packet(&mut rng3, &fwd, &payload, &mut out_packet).unwrap(),
        ),
        measure(
            "create SURB",
            samples,
            target,
            || (),
            |()| kemsphinx::create_surb(&mut rng4, &back).unwrap(),
        ),
        measure(
            "unwrap one hop",
            samples,
            target,
            || packets[0].clone(),
            |p| unwrap(key, p).is_ok(),
        ),
        measure(
            "unwrap all four hops",
            samples,
            target,
            || packets[0].clone(),
            |p| net.keys.iter().all(|k| unwrap(k, p).is_ok()),
        ),
        measure(
            "reply from SURB",
            samples,
            target,
            || Box::new([0u8; PACKET_LEN]),
            |p| surb.reply(&payload, p),
        ),
        measure(
            "decrypt reply",
            samples,
            target,
            || reply.clone(),
            |r| keys.decrypt_reply(r).is_ok(),
        ),
        measure(
            "full request/reply",
            samples,
            target,
            || (),
            |()| net.request_reply(&mut rng5, &mut bufs),
        ),
    ]
}

/// The primitives of one unwrap, each alone.
fn primitives(samples: usize, target: Duration) -> Vec<Timing> {
    use aes::Aes256;
    use ctr::Ctr128BE;
    use ctr::cipher::{KeyIvInit, StreamCipher};
    use hmac::{Hmac, KeyInit, Mac};
    use kemsphinx::geometry::{
        ENCRYPTED_PAYLOAD_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, STREAM_LEN,
    };

    let ct = [0x77u8; KEM_CIPHERTEXT_LEN];
    let mut point = [0u8; 32];
    libcrux_curve25519::secret_to_public(&mut point, &[5; 32]);
    let msg = [0x5au8; 1_143];
    let mut mlkem = write::MlKem::new();
    vec![
        measure(
            "ML-KEM-768 decapsulation",
            samples,
            target,
            || (),
            |()| mlkem.decapsulate(),
        ),
        measure(
            "X25519 shared secret",
            samples,
            target,
            || [0u8; 32],
            |out| libcrux_curve25519::ecdh(out, &point, &[3; 32]).is_ok(),
        ),
        measure(
            "BLAKE2b (adapter XOF + split PRF)",
            samples,
            target,
            || (),
            |()| {
                let root = blake2b_simd::Params::new()
                    .hash_length(64)
                    .key(&[1; 32])
                    .node_offset(32 << 32)
                    .hash(&[2; 64]);
                let node = blake2b_simd::Params::new()
                    .hash_length(32)
                    .fanout(0)
                    .max_depth(0)
                    .max_leaf_length(64)
                    .node_offset(32 << 32)
                    .inner_hash_length(64)
                    .hash(root.as_bytes());
                let kx = blake2b_simd::Params::new()
                    .hash_length(32)
                    .hash(node.as_bytes());
                let km = blake2b_simd::Params::new().hash_length(32).hash(&[3; 32]);
                let hx = blake2b_simd::Params::new()
                    .hash_length(32)
                    .key(kx.as_bytes())
                    .hash(&msg);
                let hm = blake2b_simd::Params::new()
                    .hash_length(32)
                    .key(km.as_bytes())
                    .hash(&msg);
                (hx, hm)
            },
        ),
        measure(
            "HKDF-SHA256-Expand, 160 B",
            samples,
            target,
            || (),
            |()| kemsphinx::hop::debug_kdf(&[4; 32]),
        ),
        measure(
            "AES-256-CTR, 6,010 B",
            samples,
            target,
            || Box::new([0u8; STREAM_LEN]),
            |b| {
                Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into())
                    .apply_keystream(&mut b[..]);
            },
        ),
        measure(
            "HMAC-SHA256, 5,930 B",
            samples,
            target,
            || Box::new([0u8; HEADER_LEN - MAC_LEN]),
            |b| {
                let mut m = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&[6; 32]).unwrap();
                m.update(&b[..]);
                m.finalize()
            },
        ),
        measure(
            "AEZ decipher, 10,188 B",
            samples,
            target,
            || Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]),
            |b| {
                kemsphinx::aez::Aez::new(&[8; 48]).decipher(&[9; 16], &mut b[..]);
            },
        ),
        measure(
            "replay tag (SHA-512/256, 1,120 B)",
            samples,
            target,
            || (),
            |()| kemsphinx::ReplayTag::of_ciphertext(&ct),
        ),
        measure(
            "AEZ encipher, 10,188 B",
            samples,
            target,
            || Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]),
            |b| {
                kemsphinx::aez::Aez::new(&[8; 48]).encipher(&[9; 16], &mut b[..]);
            },
        ),
        measure(
            "AES-256-CTR, 10,188 B",
            samples,
            target,
            || Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]),
            |b| {
                Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into())
                    .apply_keystream(&mut b[..]);
            },
        ),
    ]
}
