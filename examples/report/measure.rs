//! The tables' cases: the reference's operations, one unwrap beside the
//! primitives it performs, AEZ beside AES-256-CTR, and the operations the
//! two KEM backends are compared on.

use aes::Aes256;
use chacha20::ChaCha20Rng;
use ctr::Ctr128BE;
use ctr::cipher::{KeyIvInit, StreamCipher};
use hmac::{Hmac, KeyInit, Mac};
use kemsphinx::geometry::{
    ENCRYPTED_PAYLOAD_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, PACKET_LEN, PAYLOAD_LEN,
    STREAM_LEN,
};
use kemsphinx::hazmat::kem_backends::{self, Backend};
use kemsphinx::{PrivateKey, Surb, create_packet, create_surb, hazmat, unwrap};
use kemsphinx_support::bench::{Buffers, MlKemAlone, Net, blake2b_kem_work};
use rand_core::SeedableRng;

use crate::harness::{Case, Plan, Timing, case, interleaved};
use crate::reference::DECAPS_FROM_ENCODING;

/// Names shared between tables.
pub(crate) const UNWRAP: &str = "unwrap one hop";
pub(crate) const MLKEM: &str = "ML-KEM-768 decapsulation";
pub(crate) const X25519: &str = "X25519 shared secret";
pub(crate) const X25519_BASE: &str = "X25519 base point";
pub(crate) const DECAPS: &str = "KEM decapsulation (loaded key)";
pub(crate) const CTR: &str = "AES-256-CTR, 10,188 B";

/// The operations of the reference's baseline (and decapsulation with a
/// loaded key, which the reference has no benchmark for).
pub(crate) fn operations(net: &Net, plan: Plan) -> Vec<Timing> {
    let key = net.first_key();
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut ChaCha20Rng::from_seed([3; 32]))
        .expect("encapsulate");
    let encoded = key.to_bytes();
    let first = net.first_packet().expect("packets");
    let fwd = net.forward_path();
    let back = net.reply_path();
    let payload = Box::new([5u8; PAYLOAD_LEN]);
    let (surb, keys, reply) = net.surb_reply(&payload).expect("SURB reply");
    let mut out = Box::new([0u8; PACKET_LEN]);
    let mut rngs = [1u8, 4, 5, 6, 7].map(|s| ChaCha20Rng::from_seed([s; 32]));
    let [r1, r2, r3, r4, r5] = &mut rngs;
    let mut bufs = Buffers::new();
    let cases: Vec<Case<'_>> = vec![
        case("KEM key generation", || (), |()| PrivateKey::generate(r1)),
        case(
            "KEM encapsulation",
            || (),
            |()| hazmat::encapsulate(key.public_key(), r2).expect("encapsulate"),
        ),
        case(
            DECAPS,
            || (),
            |()| hazmat::decapsulate(key, &ct).expect("decapsulate"),
        ),
        case(
            DECAPS_FROM_ENCODING,
            || (),
            |()| {
                let k = PrivateKey::from_bytes(&encoded).expect("key");
                hazmat::decapsulate(&k, &ct).expect("decapsulate")
            },
        ),
        case(
            "build forward packet",
            || (),
            |()| create_packet(r3, &fwd, &payload, &mut out).expect("create"),
        ),
        case(
            "create SURB",
            || (),
            |()| create_surb(r4, &back).expect("SURB"),
        ),
        case(UNWRAP, || first.clone(), |p| unwrap(key, p).is_ok()),
        case(
            "unwrap all four hops",
            || first.clone(),
            |p| net.keys().all(|k| unwrap(k, p).is_ok()),
        ),
        case(
            "reply from SURB",
            || {
                (
                    Some(Surb::from_bytes(&surb).expect("SURB")),
                    Box::new([0u8; PACKET_LEN]),
                )
            },
            |(s, p)| s.take().map(|s| s.reply(&payload, p)),
        ),
        case(
            "decrypt reply",
            || reply.clone(),
            |r| keys.decrypt_reply(r).is_ok(),
        ),
        case(
            "full request/reply",
            || (),
            |()| net.request_reply(r5, &mut bufs).expect("request/reply"),
        ),
    ];
    interleaved(cases, plan)
}

/// The primitives of one unwrap, each alone, on the code the library runs
/// (the selected KEM backend's X25519 through the hazmat hooks, its ML-KEM
/// code path), interleaved with an unwrap of the first hop.
pub(crate) fn unwrap_and_parts(net: &Net, plan: Plan) -> Vec<Timing> {
    let key = net.first_key();
    let first = net.first_packet().expect("packets");
    let ct = [0x77u8; KEM_CIPHERTEXT_LEN];
    let point = kem_backends::x25519_base_point(Backend::SELECTED, &[5; 32]);
    let msg = [0x5au8; 1_143];
    let mut mlkem = MlKemAlone::new();
    let mut stream = Box::new([0u8; STREAM_LEN]);
    let header = Box::new([0u8; HEADER_LEN - MAC_LEN]);
    let mut payload = Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]);
    let cases = vec![
        case(UNWRAP, || first.clone(), |p| unwrap(key, p).is_ok()),
        case(MLKEM, || (), |()| mlkem.decapsulate()),
        case(
            X25519,
            || (),
            |()| kem_backends::x25519(Backend::SELECTED, &[3; 32], &point),
        ),
        case(
            "BLAKE2b (adapter XOF + split PRF)",
            || (),
            |()| blake2b_kem_work(&msg),
        ),
        case(
            "HKDF-SHA256-Expand, 160 B",
            || (),
            |()| hazmat::kdf(&[4; 32]),
        ),
        case(
            "AES-256-CTR, 6,010 B",
            || (),
            |()| {
                Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into())
                    .apply_keystream(&mut stream[..]);
            },
        ),
        case(
            "HMAC-SHA256, 5,930 B",
            || (),
            |()| {
                let mut m = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&[6; 32]).expect("key");
                m.update(&header[..]);
                m.finalize()
            },
        ),
        case(
            "AEZ decipher, 10,188 B",
            || (),
            |()| aez5::Aez::new(&[8; 48]).decipher(&[9; 16], &mut payload[..]),
        ),
        case(
            "replay tag (SHA-512/256, 1,120 B)",
            || (),
            |()| hazmat::replay_tag_of(&ct),
        ),
    ];
    interleaved(cases, plan)
}

/// AEZ encipher and decipher of 10,188 bytes on every implementation this
/// CPU has (key setup included, as per hop), beside AES-256-CTR over the
/// same bytes. Returns the timings and the implementations measured.
pub(crate) fn aez_vs_ctr(plan: Plan) -> (Vec<Timing>, Vec<aez5::Backend>) {
    let all = [
        aez5::Backend::Portable,
        aez5::Backend::AesNi,
        aez5::Backend::Vaes,
        aez5::Backend::Vaes512,
    ];
    let have: Vec<aez5::Backend> = all
        .into_iter()
        .filter(|b| aez5::Aez::with_backend(&[8; 48], *b).is_some())
        .collect();
    let mut ctr_buf = Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]);
    let mut cases = vec![case(
        CTR,
        || (),
        move |()| {
            Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into())
                .apply_keystream(&mut ctr_buf[..]);
        },
    )];
    for &b in &have {
        let mut enc = Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]);
        let mut dec = Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]);
        cases.push(case(
            aez_name("encipher", b),
            || (),
            move |()| {
                aez5::Aez::with_backend(&[8; 48], b)
                    .expect("backend")
                    .encipher(&[9; 16], &mut enc[..]);
            },
        ));
        cases.push(case(
            aez_name("decipher", b),
            || (),
            move |()| {
                aez5::Aez::with_backend(&[8; 48], b)
                    .expect("backend")
                    .decipher(&[9; 16], &mut dec[..]);
            },
        ));
    }
    (interleaved(cases, plan), have)
}

/// The row name of AEZ `dir` on implementation `b`.
pub(crate) fn aez_name(dir: &str, b: aez5::Backend) -> String {
    format!("AEZ {dir}, 10,188 B ({b:?})")
}

/// The operations the KEM backends are compared on (`--child-ops`).
pub(crate) fn backend_ops(net: &Net, plan: Plan) -> Vec<Timing> {
    let key = net.first_key();
    let first = net.first_packet().expect("packets");
    let fwd = net.forward_path();
    let back = net.reply_path();
    let payload = Box::new([5u8; PAYLOAD_LEN]);
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut ChaCha20Rng::from_seed([3; 32]))
        .expect("encapsulate");
    let point = kem_backends::x25519_base_point(Backend::SELECTED, &[5; 32]);
    let mut out = Box::new([0u8; PACKET_LEN]);
    let mut mlkem = MlKemAlone::new();
    let mut r1 = ChaCha20Rng::from_seed([4; 32]);
    let mut r2 = ChaCha20Rng::from_seed([5; 32]);
    let cases = vec![
        case(UNWRAP, || first.clone(), |p| unwrap(key, p).is_ok()),
        case(
            "build forward packet",
            || (),
            |()| create_packet(&mut r1, &fwd, &payload, &mut out).expect("create"),
        ),
        case(
            "create SURB",
            || (),
            |()| create_surb(&mut r2, &back).expect("SURB"),
        ),
        case(
            DECAPS,
            || (),
            |()| hazmat::decapsulate(key, &ct).expect("decapsulate"),
        ),
        case(MLKEM, || (), |()| mlkem.decapsulate()),
        case(
            X25519,
            || (),
            |()| kem_backends::x25519(Backend::SELECTED, &[3; 32], &point),
        ),
        case(
            X25519_BASE,
            || (),
            |()| kem_backends::x25519_base_point(Backend::SELECTED, &[3; 32]),
        ),
    ];
    interleaved(cases, plan)
}
