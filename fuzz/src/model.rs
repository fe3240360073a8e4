//! An independent model of unwrapping one hop (SPEC.md §6), and the check
//! that the library agrees with it on every input.
//!
//! The model is written from the specification with public building blocks
//! only: decapsulation (the library's, fuzzed by `keys`), the KDF with the
//! `hkdf` crate, the header keystream with the `aes` and `ctr` crates, the
//! header MAC with the `hmac` crate, the replay tag with `sha2`, and AEZ
//! and the commands parser (each fuzzed on its own). So "unwrap succeeded"
//! is checked against a MAC recomputed outside the library, and every
//! success is checked byte for byte: the outgoing packet, the delivered
//! payload, the encrypted reply. On every error the buffer must be what it
//! was.
//!
//! Everything after the KEM is a function of the hop's shared secret
//! ([`expected_with_shared_secret`]), so the same model checks
//! [`unwrap`] with a key and `hazmat::unwrap_with_shared_secret` with a
//! secret taken from the fuzzer's input.

use aes::Aes256;
use aez5::Aez;
use ctr::Ctr128BE;
use ctr::cipher::{KeyIvInit, StreamCipher};
use hkdf::Hkdf;
use hmac::{Hmac, KeyInit, Mac};
use kemsphinx::geometry::{
    COMMANDS_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, PACKET_LEN, PAYLOAD_TAG_LEN,
    PER_HOP_ROUTING_LEN, ROUTING_INFO_LEN, SHARED_SECRET_LEN, STREAM_LEN, VERSION_LEN,
};
use kemsphinx::hazmat::{self, unwrap_with_shared_secret};
use kemsphinx::{
    Action, Command, CommandError, Commands, Error, NodeId, PrivateKey, RecipientId, SurbId,
    Unwrapped, replay_tag, unwrap,
};
use sha2::{Digest, Sha256, Sha512_256};

// The model states the header's layout itself, from the sizes alone, and
// does not use `kemsphinx::geometry::layout`: an independent model must not
// share the offsets it is checking.

/// Offset of the KEM ciphertext.
pub const KEM_CT: usize = VERSION_LEN;
/// Offset of the routing information.
pub const ROUTING: usize = KEM_CT + KEM_CIPHERTEXT_LEN;
/// Offset of the header MAC.
pub const MAC: usize = ROUTING + ROUTING_INFO_LEN;
/// Offset of the encrypted payload.
pub const PAYLOAD: usize = HEADER_LEN;
/// The hop's own routing block (commands, then the next KEM ciphertext).
pub const BLOCK: std::ops::Range<usize> = ROUTING..ROUTING + PER_HOP_ROUTING_LEN;

/// What one hop did, owned, so that walks can be compared.
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum Step {
    /// Forwarded (the buffer became the outgoing packet).
    Forward {
        next_hop: NodeId,
        delay: Option<u32>,
        commands: Commands,
    },
    /// Delivered a payload whose tag verified.
    Deliver {
        recipient: RecipientId,
        commands: Commands,
        payload: Vec<u8>,
    },
    /// Handed over an encrypted reply.
    Reply {
        recipient: RecipientId,
        surb_id: SurbId,
        commands: Commands,
        reply: Vec<u8>,
    },
    /// Refused the packet.
    Failed(Error),
}

/// The action named by a hop's commands (SPEC.md §4, "Actions").
enum Plan {
    Forward(NodeId, [u8; MAC_LEN]),
    Deliver(RecipientId),
    Reply(RecipientId, SurbId),
}

fn plan(commands: &Commands) -> Result<Plan, Error> {
    let (mut next, mut recipient, mut surb) = (None, None, None);
    for cmd in commands.iter() {
        match *cmd {
            Command::NextNodeHop { id, mac } => next = Some((id, mac)),
            Command::Recipient(r) => recipient = Some(r),
            Command::SurbReply(s) => surb = Some(s),
            Command::NodeDelay(_) => {}
        }
    }
    match (next, recipient, surb) {
        (Some((id, mac)), None, None) => Ok(Plan::Forward(id, mac)),
        (None, Some(r), None) => Ok(Plan::Deliver(r)),
        (None, Some(r), Some(s)) => Ok(Plan::Reply(r, s)),
        _ => Err(Error::Command(CommandError::NoAction)),
    }
}

/// HMAC-SHA256, recomputed with the `hmac` crate.
pub fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; MAC_LEN] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap();
    mac.update(msg);
    mac.finalize().into_bytes().into()
}

/// A hop's keys from its shared secret (SPEC.md §3.1):
/// `HKDF-SHA256-Expand(ss, "katzenpost-kdf-v0-hkdf-sha256", 160)` with the
/// `hkdf` crate, split into MAC key, stream key, IV, payload SPRP key.
pub struct Keys {
    okm: [u8; 160],
}

impl Keys {
    /// Derive them.
    pub fn derive(shared_secret: &[u8; SHARED_SECRET_LEN]) -> Self {
        let mut okm = [0u8; 160];
        Hkdf::<Sha256>::from_prk(shared_secret)
            .unwrap()
            .expand(b"katzenpost-kdf-v0-hkdf-sha256", &mut okm)
            .unwrap();
        Self { okm }
    }

    fn mac_key(&self) -> &[u8] {
        &self.okm[..32]
    }

    fn iv(&self) -> [u8; 16] {
        self.okm[64..80].try_into().unwrap()
    }

    /// The header MAC of `packet` (HMAC-SHA256 over the header before it).
    pub fn mac(&self, packet: &[u8; PACKET_LEN]) -> [u8; MAC_LEN] {
        hmac_sha256(self.mac_key(), &packet[..MAC])
    }

    /// The hop's 6,010 bytes of header keystream: AES-256-CTR with the
    /// `aes` and `ctr` crates, 128-bit big-endian counter from the IV.
    pub fn stream(&self) -> Vec<u8> {
        let key: [u8; 32] = self.okm[32..64].try_into().unwrap();
        let mut stream = vec![0u8; STREAM_LEN];
        Ctr128BE::<Aes256>::new(&key.into(), &self.iv().into()).apply_keystream(&mut stream);
        stream
    }

    /// Remove the hop's payload layer (AEZ decipher, the IV as nonce).
    pub fn decipher_payload(&self, body: &mut [u8]) {
        self.sprp().decipher(&self.iv(), body);
    }

    /// Add the hop's payload layer.
    pub fn encipher_payload(&self, body: &mut [u8]) {
        self.sprp().encipher(&self.iv(), body);
    }

    fn sprp(&self) -> Aez {
        Aez::new(&self.okm[80..128].try_into().unwrap())
    }
}

/// The payload with the hop's layer removed, as the model learns it.
#[derive(Clone, Copy)]
enum Body<'a> {
    /// AEZ-decipher the packet's payload with the hop's key.
    Decipher,
    /// The caller enciphered this plaintext with the hop's key, so removing
    /// the layer gives it back (AEZ is a permutation; `aez_roundtrip`
    /// checks that).
    Known(&'a [u8]),
}

/// The model's outcome for `packet` at the hop holding `key`, and the
/// buffer it must leave.
pub fn expected(key: &PrivateKey, packet: &[u8; PACKET_LEN]) -> (Step, Box<[u8; PACKET_LEN]>) {
    let kem = |ct: &[u8]| hazmat::decapsulate(key, ct.try_into().unwrap()).map(|ss| *ss.as_bytes());
    outcome(packet, kem, Body::Decipher)
}

/// The model's outcome for `packet` at a hop whose KEM gave
/// `shared_secret`, and the buffer it must leave.
pub fn expected_with_shared_secret(
    shared_secret: &[u8; SHARED_SECRET_LEN],
    packet: &[u8; PACKET_LEN],
) -> (Step, Box<[u8; PACKET_LEN]>) {
    outcome(packet, |_| Ok(*shared_secret), Body::Decipher)
}

/// The outcome with the shared secret from `kem` (given the KEM
/// ciphertext), after the version check, as SPEC.md §6 orders them.
fn outcome(
    packet: &[u8; PACKET_LEN],
    kem: impl FnOnce(&[u8]) -> Result<[u8; SHARED_SECRET_LEN], Error>,
    body: Body<'_>,
) -> (Step, Box<[u8; PACKET_LEN]>) {
    let mut out = Box::new(*packet);
    let result = if packet[..VERSION_LEN] != [0, 0] {
        Err(Error::Version)
    } else {
        kem(&packet[KEM_CT..ROUTING])
            .and_then(|ss| after_kem(&Keys::derive(&ss), packet, body, &mut out))
    };
    match result {
        Ok(step) => (step, out),
        Err(e) => (Step::Failed(e), Box::new(*packet)),
    }
}

/// Steps 4–7 of SPEC.md §6 with the hop's keys: MAC, routing block,
/// commands, payload layer and the action's effect on the buffer.
fn after_kem(
    keys: &Keys,
    packet: &[u8; PACKET_LEN],
    body: Body<'_>,
    out: &mut [u8; PACKET_LEN],
) -> Result<Step, Error> {
    if keys.mac(packet) != packet[MAC..PAYLOAD] {
        return Err(Error::Mac);
    }
    let stream = keys.stream();
    let block: Vec<u8> = packet[BLOCK]
        .iter()
        .zip(&stream)
        .map(|(a, b)| a ^ b)
        .collect();
    let commands = hazmat::parse_commands(block[..COMMANDS_LEN].try_into().unwrap())?;
    let plan = plan(&commands)?;
    let payload = &mut out[PAYLOAD..];
    match body {
        Body::Decipher => keys.decipher_payload(payload),
        Body::Known(plain) => payload.copy_from_slice(plain),
    }
    match plan {
        Plan::Forward(next_hop, mac) => {
            shift_routing(packet, &stream, out);
            out[KEM_CT..ROUTING].copy_from_slice(&block[COMMANDS_LEN..]);
            out[MAC..PAYLOAD].copy_from_slice(&mac);
            Ok(Step::Forward {
                next_hop,
                delay: commands.delay(),
                commands,
            })
        }
        Plan::Deliver(recipient) if payload[..PAYLOAD_TAG_LEN] == [0; PAYLOAD_TAG_LEN] => {
            Ok(Step::Deliver {
                recipient,
                commands,
                payload: payload[PAYLOAD_TAG_LEN..].to_vec(),
            })
        }
        Plan::Deliver(_) => Err(Error::PayloadTag),
        Plan::Reply(recipient, surb_id) => Ok(Step::Reply {
            recipient,
            surb_id,
            commands,
            reply: payload.to_vec(),
        }),
    }
}

/// Outgoing routing: `(routing[1202..] ‖ 0^1202) ^ S[1202..6010)`.
fn shift_routing(packet: &[u8; PACKET_LEN], stream: &[u8], out: &mut [u8; PACKET_LEN]) {
    let incoming = &packet[BLOCK.end..MAC];
    for (i, o) in out[ROUTING..MAC].iter_mut().enumerate() {
        let b = incoming.get(i).copied().unwrap_or(0);
        *o = b ^ stream[PER_HOP_ROUTING_LEN + i];
    }
}

/// Unwrap `packet` at the hop holding `key` and assert that the library
/// agrees with the model: the same outcome, the same replay tag (recomputed
/// here), the same buffer afterwards (unchanged on error).
pub fn check_hop(key: &PrivateKey, packet: &mut [u8; PACKET_LEN]) -> Step {
    let want = expected(key, packet);
    check(want, packet, |p| unwrap(key, p))
}

/// [`check_hop`] for `hazmat::unwrap_with_shared_secret`: everything after
/// the KEM, with the hop's shared secret given.
pub fn check_hop_with_shared_secret(
    shared_secret: &[u8; SHARED_SECRET_LEN],
    packet: &mut [u8; PACKET_LEN],
) -> Step {
    let want = expected_with_shared_secret(shared_secret, packet);
    check(want, packet, |p| {
        unwrap_with_shared_secret(shared_secret, p)
    })
}

/// [`check_hop_with_shared_secret`] for a packet whose payload is given
/// as plaintext: the hop's layer is added (AEZ-enciphered here) only if
/// the model says the hop gets as far as the payload, since a hop that
/// refuses the header (version, MAC, commands) must refuse it whatever the
/// payload holds, and leave it as it was. The model takes the plaintext as
/// the payload with the layer removed, so an execution costs one AEZ call
/// here and one in the library, or none when the header is refused.
pub fn check_hop_with_plain_payload(
    shared_secret: &[u8; SHARED_SECRET_LEN],
    packet: &mut [u8; PACKET_LEN],
) -> Step {
    let plain = packet[PAYLOAD..].to_vec();
    let (want, mut want_buffer) = outcome(packet, |_| Ok(*shared_secret), Body::Known(&plain));
    let header_refused = matches!(
        want,
        Step::Failed(Error::Version | Error::Mac | Error::Command(_))
    );
    if !header_refused {
        Keys::derive(shared_secret).encipher_payload(&mut packet[PAYLOAD..]);
        if want == Step::Failed(Error::PayloadTag) {
            want_buffer = Box::new(*packet);
        }
    }
    check((want, want_buffer), packet, |p| {
        unwrap_with_shared_secret(shared_secret, p)
    })
}

fn check(
    (want, want_buffer): (Step, Box<[u8; PACKET_LEN]>),
    packet: &mut [u8; PACKET_LEN],
    unwrap: impl FnOnce(&mut [u8; PACKET_LEN]) -> Result<Unwrapped<'_>, Error>,
) -> Step {
    let tag: [u8; 32] = Sha512_256::digest(&packet[KEM_CT..ROUTING]).into();
    assert_eq!(replay_tag(packet).0, tag, "replay tag");
    let got = match unwrap(packet) {
        Ok(u) => {
            assert_eq!(u.replay_tag.0, tag, "replay tag in the result");
            owned(u.commands, u.action)
        }
        Err(e) => Step::Failed(e),
    };
    assert_eq!(got, want, "outcome differs from the model");
    assert!(
        packet[..] == want_buffer[..],
        "buffer after {got:?} differs from the model"
    );
    got
}

fn owned(commands: Commands, action: Action<'_>) -> Step {
    match action {
        Action::Forward { next_hop, delay } => Step::Forward {
            next_hop,
            delay,
            commands,
        },
        Action::Deliver { recipient, payload } => Step::Deliver {
            recipient,
            commands,
            payload: payload.to_vec(),
        },
        Action::SurbReply {
            recipient,
            surb_id,
            encrypted_reply,
        } => Step::Reply {
            recipient,
            surb_id,
            commands,
            reply: encrypted_reply.to_vec(),
        },
    }
}
