//! The benchmark cases, defined once: the divan benches (`benches/`) and
//! the report (`examples/report`) both run these tables, so the two time
//! the same operation on the same inputs under the same name.
//!
//! A case is a name, a setup that makes one operation's input outside the
//! timed region, and the operation on that input. Inputs are the few kinds
//! the operations take ([`Input`]); everything else a case needs (keys,
//! paths, random generators seeded per case) it owns.
//!
//! The tables: the reference's operations ([`operations`]), one unwrap and
//! its primitives ([`unwrap_parts`]), AEZ beside AES-256-CTR
//! ([`aez_and_ctr`]), and batched X25519 and the batch unwrap beside their
//! one-at-a-time forms ([`batch`]).

use aes::Aes256;
use chacha20::ChaCha20Rng;
use ctr::Ctr128BE;
use ctr::cipher::{KeyIvInit, StreamCipher};
use hmac::{Hmac, KeyInit, Mac};
use kemsphinx::geometry::{
    ENCRYPTED_PAYLOAD_LEN, ENCRYPTED_REPLY_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN,
    PACKET_LEN, PAYLOAD_LEN, STREAM_LEN,
};
use kemsphinx::hazmat::kem_backends::{self, Backend};
use kemsphinx::{PrivateKey, Surb, create_packet, create_surb, hazmat, unwrap};
use rand_core::SeedableRng;

use super::{Broken, Buffers, MlKemAlone, Net, Packet, blake2b_kem_work};

mod batch;

pub use batch::{
    AVX2, BatchRow, UNWRAP_AVX2_SIZES, UNWRAP_SIZES, UnwrapOnAvx2, Way, X25519_SIZES, batch,
    batch_names, batch_row, batch_rows, unwrap_on_avx2, x25519_batch_backends,
    x25519_batch_selected,
};

/// "unwrap one hop": in both tables.
pub const UNWRAP: &str = "unwrap one hop";
/// Decapsulation from the key's 1,280-byte encoding, what the reference
/// does per packet.
pub const DECAPS_FROM_ENCODING: &str = "KEM decapsulation (from 1,280-byte encoding)";
/// Decapsulation with the key expanded once at load, what unwrap does.
pub const DECAPS: &str = "KEM decapsulation (loaded key)";
/// ML-KEM-768 decapsulation alone.
pub const MLKEM: &str = "ML-KEM-768 decapsulation";
/// X25519 with a variable point.
pub const X25519: &str = "X25519 shared secret";

/// The operations of the reference's published baseline, in its order
/// (and decapsulation with a loaded key, which it has no benchmark for).
pub const OPERATIONS: [&str; 11] = [
    "KEM key generation",
    "KEM encapsulation",
    DECAPS,
    DECAPS_FROM_ENCODING,
    "build forward packet",
    "create SURB",
    UNWRAP,
    "unwrap all four hops",
    "reply from SURB",
    "decrypt reply",
    "full request/reply",
];

/// One unwrap and the primitives it is made of, each alone, at the sizes a
/// hop processes.
pub const UNWRAP_PARTS: [&str; 9] = [
    UNWRAP,
    MLKEM,
    X25519,
    "BLAKE2b (adapter XOF + split PRF)",
    "HKDF-SHA256-Expand, 160 B",
    "AES-256-CTR, 6,010 B",
    "HMAC-SHA256, 5,930 B",
    "AEZ decipher, 10,188 B",
    "replay tag (SHA-512/256, 1,120 B)",
];

/// One operation's input, made outside the timed region.
// Inline, not boxed: a boxed SURB would be moved out of its box inside the
// timed region.
#[allow(clippy::large_enum_variant)]
pub enum Input {
    /// Nothing: the operation works on what its case owns.
    None,
    /// A packet as a hop receives it.
    Packet(Packet),
    /// A SURB to reply on (taken by the reply), and the reply's buffer.
    Surb(Option<Surb>, Packet),
    /// An encrypted reply as the SURB's creator receives it.
    Reply(Box<[u8; ENCRYPTED_REPLY_LEN]>),
    /// A queue of packets as a hop receives them, unwrapped in one
    /// operation (the batch table's unwrap rows).
    Packets(Vec<Packet>),
}

/// One benchmark case of a table.
pub struct Case<'a> {
    /// Its name, the same in every table, bench and report.
    pub name: &'static str,
    /// Makes one operation's input (untimed).
    pub setup: Box<dyn FnMut() -> Input + 'a>,
    /// The operation on an input from `setup`; what it returns is only to
    /// keep the optimiser from dropping the work.
    pub run: Box<dyn FnMut(&mut Input) -> u64 + 'a>,
}

fn case<'a>(
    name: &'static str,
    setup: impl FnMut() -> Input + 'a,
    run: impl FnMut(&mut Input) -> u64 + 'a,
) -> Case<'a> {
    Case {
        name,
        setup: Box::new(setup),
        run: Box::new(run),
    }
}

/// A case whose operation needs no input.
fn plain<'a>(name: &'static str, mut run: impl FnMut() -> u64 + 'a) -> Case<'a> {
    case(name, || Input::None, move |_| run())
}

/// The case named `name` of `table`.
///
/// # Errors
/// [`Broken`] if the table could not be prepared; `Ok(None)` if it has no
/// such case.
pub fn find<'a>(
    table: Result<Vec<Case<'a>>, Broken>,
    name: &str,
) -> Result<Option<Case<'a>>, Broken> {
    Ok(table?.into_iter().find(|c| c.name == name))
}

/// [`UNWRAP`]: `first` (a packet for the first hop) unwrapped with `key`.
fn unwrap_one_hop(key: &PrivateKey, first: Packet) -> Case<'_> {
    case(
        UNWRAP,
        move || Input::Packet(first.clone()),
        move |i| match i {
            Input::Packet(p) => u64::from(unwrap(key, p).is_ok()),
            _ => 0,
        },
    )
}

fn byte(b: &[u8]) -> u64 {
    b.first().copied().map_or(0, u64::from)
}

/// The [`OPERATIONS`] table over `net`.
///
/// # Errors
/// [`Broken`] if a fixture could not be made.
pub fn operations(net: &Net) -> Result<Vec<Case<'_>>, Broken> {
    let key = net.first_key();
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut ChaCha20Rng::from_seed([3; 32]))?;
    let encoded = key.to_bytes();
    let first = net.first_packet()?;
    let payload = Box::new([5u8; PAYLOAD_LEN]);
    let (surb, keys, reply) = net.surb_reply(&payload)?;
    let rng = |seed: u8| ChaCha20Rng::from_seed([seed; 32]);
    let (mut r1, mut r2, mut r3, mut r4, mut r5) = (rng(1), rng(4), rng(5), rng(6), rng(7));
    let (fwd, back) = (net.forward_path(), net.reply_path());
    let mut out = Box::new([0u8; PACKET_LEN]);
    let mut bufs = Buffers::new();
    let ct2 = ct;
    let first2 = first.clone();
    let payload2 = payload.clone();
    Ok(vec![
        plain("KEM key generation", move || {
            byte(&PrivateKey::generate(&mut r1).public_key().to_bytes()[..])
        }),
        plain("KEM encapsulation", move || {
            hazmat::encapsulate(key.public_key(), &mut r2).map_or(0, |(_, ss)| byte(ss.as_bytes()))
        }),
        plain(DECAPS, move || {
            hazmat::decapsulate(key, &ct).map_or(0, |ss| byte(ss.as_bytes()))
        }),
        plain(DECAPS_FROM_ENCODING, move || {
            PrivateKey::from_bytes(&encoded)
                .and_then(|k| hazmat::decapsulate(&k, &ct2))
                .map_or(0, |ss| byte(ss.as_bytes()))
        }),
        plain("build forward packet", move || {
            create_packet(&mut r3, &fwd, &payload, &mut out).map_or(0, |()| byte(&out[..]))
        }),
        plain("create SURB", move || {
            create_surb(&mut r4, &back).map_or(0, |(s, _)| byte(&s.as_bytes()[..]))
        }),
        unwrap_one_hop(key, first),
        case(
            "unwrap all four hops",
            move || Input::Packet(first2.clone()),
            move |i| match i {
                Input::Packet(p) => u64::from(net.keys().all(|k| unwrap(k, p).is_ok())),
                _ => 0,
            },
        ),
        case(
            "reply from SURB",
            move || Input::Surb(Surb::from_bytes(&surb).ok(), Box::new([0u8; PACKET_LEN])),
            move |i| match i {
                Input::Surb(s, p) => s.take().map_or(0, |s| byte(&s.reply(&payload2, p).0)),
                _ => 0,
            },
        ),
        case(
            "decrypt reply",
            move || Input::Reply(reply.clone()),
            move |i| match i {
                Input::Reply(r) => keys.decrypt_reply(r).map_or(0, |p| byte(&p[..])),
                _ => 0,
            },
        ),
        plain("full request/reply", move || {
            net.request_reply(&mut r5, &mut bufs).map_or(0, u64::from)
        }),
    ])
}

/// The [`UNWRAP_PARTS`] table over `net`: the primitives on the code the
/// library runs (the selected KEM backend's X25519 through the hazmat
/// hooks, its ML-KEM code path).
///
/// # Errors
/// [`Broken`] if a fixture could not be made.
pub fn unwrap_parts(net: &Net) -> Result<Vec<Case<'_>>, Broken> {
    let key = net.first_key();
    let first = net.first_packet()?;
    let tag_input = [0x77u8; KEM_CIPHERTEXT_LEN];
    let point = kem_backends::x25519_base_point(Backend::SELECTED, &[5; 32]);
    let msg = [0x5au8; 1_143];
    let mut mlkem = MlKemAlone::new();
    let mut stream = Box::new([0u8; STREAM_LEN]);
    let header = Box::new([0u8; HEADER_LEN - MAC_LEN]);
    let mut payload = Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]);
    Ok(vec![
        unwrap_one_hop(key, first),
        plain(MLKEM, move || byte(&mlkem.decapsulate())),
        plain(X25519, move || {
            kem_backends::x25519(Backend::SELECTED, &[3; 32], &point).map_or(0, |s| byte(&s))
        }),
        plain("BLAKE2b (adapter XOF + split PRF)", move || {
            byte(blake2b_kem_work(&msg)[0].as_bytes())
        }),
        plain("HKDF-SHA256-Expand, 160 B", || {
            byte(&hazmat::kdf(&[4; 32])[..])
        }),
        plain("AES-256-CTR, 6,010 B", move || {
            Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into())
                .apply_keystream(&mut stream[..]);
            byte(&stream[..])
        }),
        plain("HMAC-SHA256, 5,930 B", move || {
            <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&[6; 32]).map_or(0, |mut m| {
                m.update(&header[..]);
                byte(&m.finalize().into_bytes())
            })
        }),
        plain("AEZ decipher, 10,188 B", move || {
            aez5::Aez::new(&[8; 48]).decipher(&[9; 16], &mut payload[..]);
            byte(&payload[..])
        }),
        plain("replay tag (SHA-512/256, 1,120 B)", move || {
            byte(&hazmat::replay_tag_of(&tag_input).0)
        }),
    ])
}

/// AES-256-CTR over 10,188 bytes, the yardstick for AEZ.
pub const CTR: &str = "AES-256-CTR, 10,188 B";

/// The name of AEZ `direction` ("encipher" or "decipher") on `backend`.
#[must_use]
pub fn aez_name(direction: &str, backend: aez5::Backend) -> String {
    format!("AEZ {direction}, 10,188 B ({backend:?})")
}

/// The AEZ implementations this CPU has.
#[must_use]
pub fn aez_backends() -> Vec<aez5::Backend> {
    [
        aez5::Backend::Portable,
        aez5::Backend::AesNi,
        aez5::Backend::Vaes,
        aez5::Backend::Vaes512,
    ]
    .into_iter()
    .filter(|b| aez5::Aez::with_backend(&[8; 48], *b).is_some())
    .collect()
}

/// The names of [`aez_and_ctr`]'s cases, in its order.
#[must_use]
pub fn aez_and_ctr_names() -> Vec<String> {
    let mut names = vec![CTR.to_owned()];
    for b in aez_backends() {
        names.push(aez_name("encipher", b));
        names.push(aez_name("decipher", b));
    }
    names
}

/// AES-256-CTR over 10,188 bytes, then AEZ encipher and decipher of the
/// same bytes (key setup included, as per hop) on every implementation
/// this CPU has ([`aez_backends`]).
#[must_use]
pub fn aez_and_ctr() -> Vec<OwnedCase> {
    let mut buf = Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]);
    let mut cases = vec![OwnedCase::plain(CTR.to_owned(), move || {
        Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into()).apply_keystream(&mut buf[..]);
        byte(&buf[..])
    })];
    for b in aez_backends() {
        for direction in ["encipher", "decipher"] {
            let mut buf = Box::new([0u8; ENCRYPTED_PAYLOAD_LEN]);
            cases.push(OwnedCase::plain(aez_name(direction, b), move || {
                if let Some(aez) = aez5::Aez::with_backend(&[8; 48], b) {
                    if direction == "encipher" {
                        aez.encipher(&[9; 16], &mut buf[..]);
                    } else {
                        aez.decipher(&[9; 16], &mut buf[..]);
                    }
                }
                byte(&buf[..])
            }));
        }
    }
    cases
}

/// A case whose name is made at run time (the AEZ cases name their
/// implementation) and that borrows nothing.
pub struct OwnedCase {
    /// Its name.
    pub name: String,
    /// Makes one operation's input (untimed).
    pub setup: Box<dyn FnMut() -> Input>,
    /// The operation on an input from `setup`.
    pub run: Box<dyn FnMut(&mut Input) -> u64>,
}

impl OwnedCase {
    fn plain(name: String, mut run: impl FnMut() -> u64 + 'static) -> Self {
        Self {
            name,
            setup: Box::new(|| Input::None),
            run: Box::new(move |_| run()),
        }
    }

    /// The case named `name` among `cases`.
    #[must_use]
    pub fn find(cases: Vec<Self>, name: &str) -> Option<Self> {
        cases.into_iter().find(|c| c.name == name)
    }
}
