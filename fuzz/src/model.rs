//! An independent model of unwrapping one hop (SPEC.md §6), and the check
//! that the library agrees with it on every input.
//!
//! The model is written from the specification with public building blocks
//! only: decapsulation, the KDF and header keystream (hidden conformance
//! hooks), AEZ and the commands parser (each fuzzed on its own), and HMAC
//! and SHA-512/256 straight from the RustCrypto crates. So "unwrap
//! succeeded" is checked against a MAC recomputed outside the library, and
//! every success is checked byte for byte: the outgoing packet, the
//! delivered payload, the encrypted reply. On every error the buffer must
//! be what it was.

use aez5::Aez;
use hmac::{Hmac, KeyInit, Mac};
use kemsphinx::geometry::{
    COMMANDS_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, PACKET_LEN, PAYLOAD_TAG_LEN,
    PER_HOP_ROUTING_LEN, ROUTING_INFO_LEN, STREAM_LEN, VERSION_LEN,
};
use kemsphinx::hazmat::{self, kdf as debug_kdf, keystream as debug_keystream};
use kemsphinx::{
    Action, Command, CommandError, Commands, Error, NodeId, PrivateKey, RecipientId, SurbId,
    replay_tag, unwrap,
};
use sha2::{Digest, Sha256, Sha512_256};

/// Offset of the KEM ciphertext.
pub const KEM_CT: usize = VERSION_LEN;
/// Offset of the routing information.
pub const ROUTING: usize = KEM_CT + KEM_CIPHERTEXT_LEN;
/// Offset of the header MAC.
pub const MAC: usize = ROUTING + ROUTING_INFO_LEN;
/// Offset of the encrypted payload.
pub const PAYLOAD: usize = HEADER_LEN;

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

/// The hop's keys: MAC key, stream key, IV, payload SPRP key.
struct Keys {
    okm: [u8; 160],
}

impl Keys {
    fn mac(&self) -> &[u8] {
        &self.okm[..32]
    }
    fn stream(&self) -> [u8; 32] {
        self.okm[32..64].try_into().unwrap()
    }
    fn iv(&self) -> [u8; 16] {
        self.okm[64..80].try_into().unwrap()
    }
    fn sprp(&self) -> Aez {
        Aez::new(&self.okm[80..128].try_into().unwrap())
    }
}

/// The model's outcome for `packet` at the hop holding `key`, and the
/// buffer it must leave.
pub fn expected(key: &PrivateKey, packet: &[u8; PACKET_LEN]) -> (Step, Box<[u8; PACKET_LEN]>) {
    let mut out = Box::new(*packet);
    match expected_into(key, packet, &mut out) {
        Ok(step) => (step, out),
        Err(e) => (Step::Failed(e), Box::new(*packet)),
    }
}

fn expected_into(
    key: &PrivateKey,
    packet: &[u8; PACKET_LEN],
    out: &mut [u8; PACKET_LEN],
) -> Result<Step, Error> {
    if packet[..VERSION_LEN] != [0, 0] {
        return Err(Error::Version);
    }
    let ss = hazmat::decapsulate(key, packet[KEM_CT..ROUTING].try_into().unwrap())?;
    let keys = Keys {
        okm: *debug_kdf(ss.as_bytes()),
    };
    if hmac_sha256(keys.mac(), &packet[..MAC]) != packet[MAC..PAYLOAD] {
        return Err(Error::Mac);
    }
    let mut stream = vec![0u8; STREAM_LEN];
    debug_keystream(&keys.stream(), &keys.iv(), &mut stream);
    let block: Vec<u8> = packet[ROUTING..ROUTING + PER_HOP_ROUTING_LEN]
        .iter()
        .zip(&stream)
        .map(|(a, b)| a ^ b)
        .collect();
    let commands = hazmat::parse_commands(block[..COMMANDS_LEN].try_into().unwrap())?;
    let body = &mut out[PAYLOAD..];
    keys.sprp().decipher(&keys.iv(), body);
    match plan(&commands)? {
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
        Plan::Deliver(recipient) if body[..PAYLOAD_TAG_LEN] == [0; PAYLOAD_TAG_LEN] => {
            Ok(Step::Deliver {
                recipient,
                commands,
                payload: body[PAYLOAD_TAG_LEN..].to_vec(),
            })
        }
        Plan::Deliver(_) => Err(Error::PayloadTag),
        Plan::Reply(recipient, surb_id) => Ok(Step::Reply {
            recipient,
            surb_id,
            commands,
            reply: body.to_vec(),
        }),
    }
}

/// Outgoing routing: `(routing[1202..] ‖ 0^1202) ^ S[1202..6010)`.
fn shift_routing(packet: &[u8; PACKET_LEN], stream: &[u8], out: &mut [u8; PACKET_LEN]) {
    let incoming = &packet[ROUTING + PER_HOP_ROUTING_LEN..MAC];
    for (i, o) in out[ROUTING..MAC].iter_mut().enumerate() {
        let b = incoming.get(i).copied().unwrap_or(0);
        *o = b ^ stream[PER_HOP_ROUTING_LEN + i];
    }
}

/// Unwrap `packet` at the hop holding `key` and assert that the library
/// agrees with the model: the same outcome, the same replay tag (recomputed
/// here), the same buffer afterwards (unchanged on error).
pub fn check_hop(key: &PrivateKey, packet: &mut [u8; PACKET_LEN]) -> Step {
    let (want, want_buffer) = expected(key, packet);
    let tag: [u8; 32] = Sha512_256::digest(&packet[KEM_CT..ROUTING]).into();
    assert_eq!(replay_tag(packet).0, tag, "replay tag");
    let got = match unwrap(key, packet) {
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
