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
#[path = "../../benches/support/mod.rs"]
mod support;
mod write;

use std::path::Path;
use std::time::Duration;

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{PrivateKey, create_packet, hazmat, unwrap};
use rand_core::SeedableRng;

use harness::{Timing, measure};
use support::{Buffers, Net};

#[global_allocator]
static ALLOC: harness::Counting = harness::Counting;

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
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut rng).unwrap();
    let encoded = key.to_bytes();
    let packets = net.forward_packets();
    let fwd = net.forward_path();
    let back = net.reply_path();
    let payload = Box::new([5u8; PAYLOAD_LEN]);
    let (surb, keys, reply) = net.surb_reply(&payload);
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
            |()| hazmat::encapsulate(key.public_key(), &mut rng2).unwrap(),
        ),
        measure(
            "KEM decapsulation (loaded key)",
            samples,
            target,
            || (),
            |()| hazmat::decapsulate(key, &ct).unwrap(),
        ),
        measure(
            "KEM decapsulation (from 1,280-byte encoding)",
            samples,
            target,
            || (),
            |()| hazmat::decapsulate(&PrivateKey::from_bytes(&encoded).unwrap(), &ct).unwrap(),
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
            || {
                (
                    Some(kemsphinx::Surb::from_bytes(&surb).unwrap()),
                    Box::new([0u8; PACKET_LEN]),
                )
            },
            |(s, p)| s.take().map(|s| s.reply(&payload, p)),
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
    let mut mlkem = support::MlKemAlone::new();
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
            |()| support::blake2b_kem_work(&msg),
        ),
        measure(
            "HKDF-SHA256-Expand, 160 B",
            samples,
            target,
            || (),
            |()| hazmat::kdf(&[4; 32]),
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
                aez5::Aez::new(&[8; 48]).decipher(&[9; 16], &mut b[..]);
            },
        ),
        measure(
            "replay tag (SHA-512/256, 1,120 B)",
            samples,
            target,
            || (),
            |()| hazmat::replay_tag_of(&ct),
        ),
        measure(
            "AEZ encipher, 10,188 B",
            samples,
            target,
            || Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]),
            |b| {
                aez5::Aez::new(&[8; 48]).encipher(&[9; 16], &mut b[..]);
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
