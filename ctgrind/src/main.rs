//! kemsphinx's secret-independence check under valgrind memcheck (the
//! method of SUPERCOP's TIMECOP, as mlkem-native and BoringSSL use it).
//!
//! Every secret is marked *undefined* where it enters: the node's private
//! keys once loaded, the creator's randomness (ephemeral KEM secrets and
//! payload keys), the messages, the SURB and its decryption keys, AEZ keys.
//! Memcheck then reports every branch and every memory address computed
//! from one. The library declares the values that become public by design
//! (its `ct` module: the MAC and payload-tag verdicts, the all-zero test of
//! a Diffie–Hellman output, the routing commands a hop returns, a key's
//! public half); this harness marks public what leaves on the wire or is
//! handed to the caller. Then it runs every packet operation, valid and
//! invalid, and `aez5` on its own.
//!
//! ```text
//! kemsphinx-ctgrind check           every operation; memcheck must report nothing
//! kemsphinx-ctgrind control         a deliberately secret-dependent branch:
//!                                   memcheck must report it (the positive control)
//! kemsphinx-ctgrind undeclassified  `check` without the library's
//!                                   declassifications: memcheck must report
//!                                   the verdicts (secrets reach the library)
//! ```
//!
//! Built with `RUSTFLAGS='--cfg kemsphinx_ctgrind'` and run under
//! `valgrind --error-exitcode=1` by `.ci/ctgrind`, once per code path.

// A harness: it unwraps and indexes freely.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(not(kemsphinx_ctgrind))]
compile_error!("build with RUSTFLAGS='--cfg kemsphinx_ctgrind' (see .ci/ctgrind)");

mod memcheck;

use std::convert::Infallible;
use std::process::ExitCode;

use kemsphinx::geometry::{MLKEM_EK_LEN, PACKET_LEN, PAYLOAD_LEN, X25519_LEN, layout};
use kemsphinx::{
    Action, Command, Error, NodeId, Path, PrivateKey, RecipientId, SurbId, SurbKeys, create_packet,
    create_surb, unwrap, unwrap_batch,
};
use rand_core::{TryCryptoRng, TryRng};

/// Deterministic bytes (SplitMix64), every one marked secret as it is
/// handed out: the creator's randomness is secret wherever it goes.
struct SecretRng(u64);

impl SecretRng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl TryRng for SecretRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut v = self.next() as u32;
        memcheck::secret(&mut v);
        Ok(v)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut v = self.next();
        memcheck::secret(&mut v);
        Ok(v)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let n = chunk.len();
            chunk.copy_from_slice(&self.next().to_le_bytes()[..n]);
        }
        memcheck::secret(dst);
        Ok(())
    }
}

impl TryCryptoRng for SecretRng {}

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("check") => check(true),
        Some("undeclassified") => check(false),
        Some("control") => control(),
        _ => {
            eprintln!("usage: kemsphinx-ctgrind check|undeclassified|control");
            ExitCode::from(2)
        }
    }
}

/// Every operation, with every secret undefined; with `declassify` false,
/// the library's declassifications are left out (the second control: the
/// check must then fail, at the verdicts the library declassifies).
fn check(declassify: bool) -> ExitCode {
    if !memcheck::running() {
        eprintln!("not under valgrind: the marks are no-ops (run it through .ci/ctgrind)");
    }
    if declassify {
        assert!(kemsphinx::ctgrind::set_declassify(memcheck::public_raw));
    }
    println!("code paths: {}", paths());

    let keys = node_keys();
    packets(&keys);
    batches(&keys);
    surbs(&keys);
    keys_as_text(&keys[0]);
    aez_alone();

    let errors = memcheck::errors();
    println!("operations done; memcheck errors so far: {errors}");
    if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The positive control: a branch on a secret byte, which memcheck must
/// report (the CI step fails if this run succeeds).
fn control() -> ExitCode {
    let before = memcheck::errors();
    let mut secret = [0x5a_u8; 16];
    memcheck::secret(&mut secret);
    if secret_dependent_branch(&secret) {
        println!("the secret's low bit is set");
    }
    println!(
        "control: memcheck errors {before} -> {}",
        memcheck::errors()
    );
    ExitCode::SUCCESS
}

/// Branches on a secret: exactly what the check exists to catch.
#[inline(never)]
fn secret_dependent_branch(secret: &[u8; 16]) -> bool {
    std::hint::black_box(secret[3]) & 1 == 0
}

/// The backend, X25519, ML-KEM and AEZ paths this build takes here (under
/// valgrind, whose CPUID shows the features it can run).
fn paths() -> String {
    use kemsphinx::hazmat::kem_backends;
    let x25519 = match kemsphinx::KEM_BACKEND {
        "libcrux" if kem_backends::x25519_asm_active() => "s2n-asm",
        "libcrux" => "hacl",
        _ => "dalek",
    };
    let mlkem = match kemsphinx::KEM_BACKEND {
        "libcrux" if mlkem_avx2() => "libcrux-avx2",
        "libcrux" => "libcrux-portable",
        _ => "rustcrypto",
    };
    let aez = aez5::Aez::new(&[0; 48]).backend();
    format!(
        "{} x25519={x25519} x25519-batch={} mlkem={mlkem} aez={aez:?} aes-soft={}; CPU as seen: {}",
        kemsphinx::KEM_BACKEND,
        kem_backends::x25519_batch_path(),
        cfg!(aes_backend = "soft"),
        cpu()
    )
}

/// The CPU features that decide the paths, as this process sees them
/// (under valgrind: as valgrind's CPUID shows them).
#[cfg(target_arch = "x86_64")]
fn cpu() -> String {
    use std::arch::is_x86_feature_detected as has;
    [
        ("aes", has!("aes")),
        ("avx2", has!("avx2")),
        ("bmi2", has!("bmi2")),
        ("adx", has!("adx")),
        ("vaes", has!("vaes")),
        ("avx512f", has!("avx512f")),
    ]
    .iter()
    .map(|(name, on)| format!("{name}{}", if *on { "+" } else { "-" }))
    .collect::<Vec<_>>()
    .join(" ")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu() -> String {
    std::env::consts::ARCH.to_owned()
}

#[cfg(feature = "libcrux")]
fn mlkem_avx2() -> bool {
    kemsphinx::hazmat::kem_backends::mlkem_avx2_active()
}

#[cfg(not(feature = "libcrux"))]
fn mlkem_avx2() -> bool {
    false
}

/// Four node keys, each loaded from its 1,280-byte encoding with every
/// secret byte undefined: the X25519 secret and the ML-KEM seed `d ‖ z`
/// (the encapsulation key between them is public).
fn node_keys() -> Vec<PrivateKey> {
    (0..4u8)
        .map(|i| {
            let mut bytes = *PrivateKey::from_seed(&[i; 96]).to_bytes();
            memcheck::secret(&mut bytes[..X25519_LEN]);
            memcheck::secret(&mut bytes[X25519_LEN + MLKEM_EK_LEN..]);
            let key = PrivateKey::from_bytes(&bytes).unwrap();
            let mut matches = key.check_public_key(key.public_key()).is_ok();
            memcheck::public(&mut matches);
            assert!(matches);
            key
        })
        .collect()
}

/// Four hops over `keys`: a delay at the mixes, `last` at the terminal.
fn path<'a>(keys: &'a [PrivateKey], last: &'a [Command]) -> Path<'a> {
    const DELAY: &[Command] = &[Command::NodeDelay(100)];
    let nodes = std::array::from_fn(|i| (NodeId([i as u8; 32]), keys[i].public_key()));
    kemsphinx::path(nodes, [DELAY, DELAY, DELAY, last])
}

/// A secret message.
fn message(byte: u8) -> Box<[u8; PAYLOAD_LEN]> {
    let mut m = Box::new([byte; PAYLOAD_LEN]);
    memcheck::secret(&mut m[..]);
    m
}

/// A batch unwrap (on `x25519-batch`'s AVX2 ladder where the CPU as
/// valgrind shows it has AVX2: valgrind has no AVX-512, so never IFMA):
/// eleven packets for the first hop, one of them for another key (tried
/// under the second key alone) and one with a small-order ephemeral key,
/// under the first hop's secret key.
fn batches(keys: &[PrivateKey]) {
    let mut rng = SecretRng(3);
    let deliver = [Command::Recipient(RecipientId([9; 32]))];
    let path = path(keys, &deliver);
    let mut packets: Vec<[u8; PACKET_LEN]> = (0..11)
        .map(|_| {
            let mut p = [0u8; PACKET_LEN];
            create_packet(&mut rng, &path, &message(0x43), &mut p).unwrap();
            memcheck::public(&mut p[..]); // on the wire
            p
        })
        .collect();
    let mut moved = path;
    moved.swap(0, 1);
    create_packet(&mut rng, &moved, &message(0x44), &mut packets[4]).unwrap();
    memcheck::public(&mut packets[4][..]);
    packets[7][layout::packet::KEM_X25519].fill(0);
    let mut results: Vec<Result<usize, Error>> =
        unwrap_batch([&keys[0], &keys[1]], packets.iter_mut())
            .map(|r| {
                r.map(|(key, hop)| {
                    key + usize::from(matches!(hop.action, Action::Forward { .. })) * 10
                })
            })
            .collect();
    memcheck::public(&mut results[..]);
    for (i, r) in results.iter().enumerate() {
        let want = match i {
            4 => Ok(11),
            7 => Err(Error::Kem),
            _ => Ok(10),
        };
        assert_eq!(*r, want, "packet {i}");
    }
    println!("batch: 11 packets unwrapped together (one under the second key, one refused)");
}

/// Forward packets: created with secret randomness and message, unwrapped
/// at every hop; then every kind of invalid packet.
fn packets(keys: &[PrivateKey]) {
    let mut rng = SecretRng(1);
    let deliver = [Command::Recipient(RecipientId([9; 32]))];
    let path = path(keys, &deliver);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    create_packet(&mut rng, &path, &message(0x42), &mut packet).unwrap();
    memcheck::public(&mut packet[..]); // on the wire
    let sent = packet.clone();

    for key in &keys[..3] {
        let hop = unwrap(key, &mut packet).unwrap();
        assert!(matches!(hop.action, Action::Forward { .. }));
        memcheck::public(&mut packet[..]); // on the wire again
    }
    let mut last = packet.clone();
    match unwrap(&keys[3], &mut last).unwrap().action {
        Action::Deliver { payload, .. } => {
            let mut got = *payload;
            memcheck::public(&mut got[..]);
            assert_eq!(got[0], 0x42);
        }
        _ => panic!("the last hop delivers"),
    }
    println!("forward packet: created, unwrapped at four hops");

    // Each refused before the buffer is touched, as the API promises.
    type Damage = fn(&mut [u8; PACKET_LEN]);
    let invalid: [(&str, Damage, Error); 5] = [
        (
            "header MAC flipped",
            |p| p[layout::packet::MAC.start] ^= 1,
            Error::Mac,
        ),
        (
            "ML-KEM ciphertext flipped",
            |p| p[layout::packet::KEM_MLKEM.start] ^= 1,
            Error::Mac,
        ),
        (
            "routing information flipped",
            |p| p[layout::packet::ROUTING_INFO.start] ^= 1,
            Error::Mac,
        ),
        // The u-coordinate 0: a point of small order.
        (
            "X25519 point of small order",
            |p| p[layout::packet::KEM_X25519].fill(0),
            Error::Kem,
        ),
        (
            "version byte",
            |p| p[layout::packet::VERSION.start] ^= 1,
            Error::Version,
        ),
    ];
    for (what, damage, error) in invalid {
        let mut bad = sent.clone();
        damage(&mut bad);
        let damaged = bad.clone();
        assert_eq!(unwrap(&keys[0], &mut bad).err(), Some(error), "{what}");
        assert!(bad == damaged, "{what}: buffer changed");
    }
    let mut wrong_key = sent.clone();
    assert_eq!(unwrap(&keys[1], &mut wrong_key).err(), Some(Error::Mac));

    let mut tampered = packet.clone();
    tampered[layout::packet::PAYLOAD.start + 100] ^= 1;
    assert_eq!(
        unwrap(&keys[3], &mut tampered).err(),
        Some(Error::PayloadTag)
    );
    println!(
        "invalid packets: MAC, ML-KEM and routing bits, small-order X25519, version, wrong key, payload tag: all refused"
    );
}

/// SURBs: created with secret randomness, the SURB and its keys secret;
/// a secret reply sent through it, walked, and decrypted; a tampered reply
/// refused.
fn surbs(keys: &[PrivateKey]) {
    let mut rng = SecretRng(2);
    let reply = [
        Command::SurbReply(SurbId([5; 16])),
        Command::Recipient(RecipientId([8; 32])),
    ];
    let path = path(keys, &reply);
    let (mut surb, mut surb_keys) = create_surb(&mut rng, &path).unwrap();
    memcheck::secret(&mut surb);
    memcheck::secret(&mut surb_keys);

    let mut packet = Box::new([0u8; PACKET_LEN]);
    let mut first_hop = surb.reply(&message(0x17), &mut packet);
    memcheck::public(&mut first_hop);
    memcheck::public(&mut packet[..]);
    assert_eq!(first_hop, NodeId([0; 32]));

    for key in &keys[..3] {
        unwrap(key, &mut packet).unwrap();
        memcheck::public(&mut packet[..]);
    }
    let mut encrypted = match unwrap(&keys[3], &mut packet).unwrap().action {
        Action::SurbReply {
            encrypted_reply, ..
        } => Box::new(*encrypted_reply),
        _ => panic!("the last hop hands over a SURB reply"),
    };
    memcheck::public(&mut encrypted[..]);

    let mut tampered = encrypted.clone();
    tampered[7] ^= 1;
    assert_eq!(
        surb_keys.decrypt_reply(&mut tampered).err(),
        Some(Error::PayloadTag)
    );

    let mut again = SurbKeys::from_bytes(&surb_keys.to_bytes());
    memcheck::secret(&mut again);
    let mut got = *again.decrypt_reply(&mut encrypted).unwrap();
    memcheck::public(&mut got[..]);
    assert_eq!(got[0], 0x17);
    println!("SURB: created, replied to, walked, decrypted; a tampered reply refused");
}

/// A secret key written as PEM (base64ct's constant-time encoder). Reading
/// PEM is not part of the check: the parser finds the boundary lines by
/// scanning the text and base64ct sizes the body by decoding its last line,
/// so both branch on a private key file's characters (SPEC.md §12).
fn keys_as_text(key: &PrivateKey) {
    let mut text = key.to_pem();
    memcheck::public(&mut text[..]);
    assert!(text.starts_with(b"-----BEGIN MLKEM768-X25519 PRIVATE KEY-----\n"));
    println!("private key: written as PEM");
}

/// `aez5` alone, on every implementation this CPU (as valgrind shows it)
/// offers: a secret key enciphers and deciphers secret messages of every
/// length class (AEZ-tiny below 32 bytes, AEZ-core above).
fn aez_alone() {
    let mut key = [7u8; 48];
    memcheck::secret(&mut key);
    let mut ran = Vec::new();
    for backend in [
        aez5::Backend::Portable,
        aez5::Backend::AesNi,
        aez5::Backend::Vaes,
        aez5::Backend::Vaes512,
    ] {
        let Some(aez) = aez5::Aez::with_backend(&key, backend) else {
            continue;
        };
        for len in [1, 15, 16, 17, 31, 32, 33, 64, 100, 10_188] {
            let mut buf = vec![0x33u8; len];
            memcheck::secret(&mut buf[..]);
            aez.encipher(&[1; 16], &mut buf);
            memcheck::public(&mut buf[..]);
            aez.decipher(&[1; 16], &mut buf);
            memcheck::public(&mut buf[..]);
            assert!(buf.iter().all(|&b| b == 0x33), "{backend:?} at {len} bytes");
        }
        ran.push(format!("{backend:?}"));
    }
    println!("aez5 alone: {}", ran.join(", "));
}
