//! Strategies and helpers of `tests/props.rs`: path specifications, packet
//! regions, lengths, and walks that check the unchanged-buffer rule at
//! every refusal.

use std::ops::Range;
use std::sync::OnceLock;

use kemsphinx::geometry::layout;
use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, MAC_LEN, NODE_ID_LEN, PACKET_LEN, PAYLOAD_LEN, PRIVATE_KEY_LEN,
    PUBLIC_KEY_LEN, RECIPIENT_ID_LEN, SURB_ID_LEN, SURB_KEYS_LEN, SURB_LEN,
};
use kemsphinx::{
    Action, Command, Error, NodeId, PrivateKey, RecipientId, SurbId, SurbKeys, create_packet,
    create_surb, unwrap,
};
use proptest::prelude::*;

use crate::common::{self, Node};

/// Four nodes whose keys come from `seed`.
pub(crate) fn random_nodes(seed: u64) -> Vec<Node> {
    common::nodes(&mut common::rng(seed))
}

/// Four nodes generated once per test binary (key generation dominates a
/// case otherwise).
pub(crate) fn fixed_nodes() -> &'static [Node] {
    static NODES: OnceLock<Vec<Node>> = OnceLock::new();
    NODES.get_or_init(|| random_nodes(0x5eed))
}

/// What to build: the hops' delays, the terminal's commands, and the seed
/// of creation and payload.
#[derive(Clone, Debug)]
pub(crate) struct Spec {
    delays: [Option<u32>; 3],
    recipient: [u8; 32],
    surb_id: [u8; 16],
    terminal_delay: Option<u32>,
    delay_first: bool,
    seed: u64,
}

pub(crate) fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<[Option<u32>; 3]>(),
        any::<[u8; 32]>(),
        any::<[u8; 16]>(),
        any::<Option<u32>>(),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(
            |(delays, recipient, surb_id, terminal_delay, delay_first, seed)| Spec {
                delays,
                recipient,
                surb_id,
                terminal_delay,
                delay_first,
                seed,
            },
        )
}

/// Any list of up to four commands, including ones creation refuses.
pub(crate) fn any_commands() -> impl Strategy<Value = Vec<Command>> {
    let command = prop_oneof![
        any::<u32>().prop_map(Command::NodeDelay),
        any::<[u8; 32]>().prop_map(|r| Command::Recipient(RecipientId(r))),
        any::<[u8; 16]>().prop_map(|s| Command::SurbReply(SurbId(s))),
        (any::<[u8; 32]>(), any::<[u8; MAC_LEN]>()).prop_map(|(id, mac)| Command::NextNodeHop {
            id: NodeId(id),
            mac
        }),
    ];
    prop::collection::vec(command, 0..5)
}

/// What one hop (or the SURB's creator) did with a packet.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Forward {
        next_hop: NodeId,
        delay: Option<u32>,
    },
    Deliver {
        recipient: RecipientId,
        payload: Vec<u8>,
    },
    Reply {
        recipient: RecipientId,
        surb_id: SurbId,
    },
    /// The SURB's creator decrypted the reply to this payload.
    Decrypted(Vec<u8>),
    /// The SURB's creator refused the reply.
    ReplyRefused(Error),
    /// The hop refused the packet.
    Failed(Error),
}

/// A packet built from a [`Spec`], and what it must deliver.
pub(crate) struct Built {
    pub(crate) commands: Vec<Vec<Command>>,
    pub(crate) payload: Box<[u8; PAYLOAD_LEN]>,
    pub(crate) packet: Box<[u8; PACKET_LEN]>,
    pub(crate) surb_keys: Option<SurbKeys>,
    spec: Spec,
}

/// A forward packet or, with `surb`, a SURB and the reply sent on it.
pub(crate) fn build(nodes: &[Node], spec: &Spec, surb: bool) -> Built {
    let mut terminal = vec![Command::Recipient(RecipientId(spec.recipient))];
    if surb {
        terminal.push(Command::SurbReply(SurbId(spec.surb_id)));
    }
    if let Some(d) = spec.terminal_delay {
        terminal.insert(if spec.delay_first { 0 } else { 1 }, Command::NodeDelay(d));
    }
    let mut commands: Vec<Vec<Command>> = spec
        .delays
        .iter()
        .map(|d| d.map(Command::NodeDelay).into_iter().collect())
        .collect();
    commands.push(terminal);
    let mut rng = common::rng(spec.seed);
    let payload = common::payload(&mut rng);
    let path = common::path(nodes, &commands);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let surb_keys = if surb {
        let (surb, keys) = create_surb(&mut rng, &path).unwrap();
        surb.reply(&payload, &mut packet);
        Some(keys)
    } else {
        create_packet(&mut rng, &path, &payload, &mut packet).unwrap();
        None
    };
    Built {
        commands,
        payload,
        packet,
        surb_keys,
        spec: spec.clone(),
    }
}

impl Built {
    /// What an honest walk from hop `from` must see, derived from the spec.
    pub(crate) fn expected_walk(&self, nodes: &[Node], from: usize) -> Vec<Outcome> {
        let mut out: Vec<Outcome> = (from..3)
            .map(|i| Outcome::Forward {
                next_hop: nodes[i + 1].id,
                delay: self.spec.delays[i],
            })
            .collect();
        let recipient = RecipientId(self.spec.recipient);
        if self.surb_keys.is_some() {
            let surb_id = SurbId(self.spec.surb_id);
            out.push(Outcome::Reply { recipient, surb_id });
            out.push(Outcome::Decrypted(self.payload.to_vec()));
        } else {
            let payload = self.payload.to_vec();
            out.push(Outcome::Deliver { recipient, payload });
        }
        out
    }

    /// The packet as hop `hop` receives it.
    pub(crate) fn packet_at(&self, nodes: &[Node], hop: usize) -> Box<[u8; PACKET_LEN]> {
        let mut packet = self.packet.clone();
        for node in &nodes[..hop] {
            let out = unwrap(&node.key, &mut packet).unwrap();
            assert!(matches!(out.action, Action::Forward { .. }));
        }
        packet
    }

    /// The encrypted reply the terminal hop hands over.
    pub(crate) fn encrypted_reply(&self, nodes: &[Node]) -> Box<[u8; ENCRYPTED_REPLY_LEN]> {
        let mut packet = self.packet_at(nodes, 3);
        match unwrap(&nodes[3].key, &mut packet).unwrap().action {
            Action::SurbReply {
                encrypted_reply, ..
            } => Box::new(*encrypted_reply),
            other => panic!("{other:?}"),
        }
    }
}

/// Unwrap at one hop; a refusal must leave the buffer unchanged.
pub(crate) fn unwrap_at(key: &PrivateKey, packet: &mut [u8; PACKET_LEN]) -> Outcome {
    let before = Box::new(*packet);
    let outcome = match unwrap(key, packet) {
        Ok(u) => match u.action {
            Action::Forward { next_hop, delay } => Outcome::Forward { next_hop, delay },
            Action::Deliver { recipient, payload } => Outcome::Deliver {
                recipient,
                payload: payload.to_vec(),
            },
            Action::SurbReply {
                recipient, surb_id, ..
            } => Outcome::Reply { recipient, surb_id },
        },
        Err(e) => Outcome::Failed(e),
    };
    if matches!(outcome, Outcome::Failed(_)) {
        assert!(packet[..] == before[..], "buffer changed on {outcome:?}");
    }
    outcome
}

/// Walk `packet` from hop `from` until a hop does not forward it; a reply
/// is then decrypted by the SURB's creator (unchanged on refusal too).
pub(crate) fn walk(
    nodes: &[Node],
    from: usize,
    mut packet: Box<[u8; PACKET_LEN]>,
    built: &Built,
) -> Vec<Outcome> {
    let mut out = Vec::new();
    for node in &nodes[from..] {
        let outcome = unwrap_at(&node.key, &mut packet);
        let next = matches!(outcome, Outcome::Forward { .. });
        let reply = matches!(outcome, Outcome::Reply { .. });
        out.push(outcome);
        if reply {
            let body: &mut [u8; ENCRYPTED_REPLY_LEN] =
                (&mut packet[layout::packet::PAYLOAD]).try_into().unwrap();
            let before = Box::new(*body);
            let keys = built.surb_keys.as_ref().unwrap();
            out.push(match keys.decrypt_reply(body) {
                Ok(payload) => Outcome::Decrypted(payload.to_vec()),
                Err(e) => {
                    assert!(body[..] == before[..], "reply changed on {e}");
                    Outcome::ReplyRefused(e)
                }
            });
        }
        if !next {
            break;
        }
    }
    out
}

/// The regions of a packet that property 2 flips bits in.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Region {
    Version,
    /// The KEM ciphertext's X25519 half (the ephemeral public key).
    KemX25519,
    /// The KEM ciphertext's ML-KEM-768 half.
    KemMlKem,
    /// The `j`-th 1,202-byte block of the routing information (block 0 is
    /// the receiving hop's own; later blocks are for later hops or filler).
    Routing(usize),
    Mac,
    Payload,
}

pub(crate) const ALL_REGIONS: [Region; 9] = [
    Region::Version,
    Region::KemX25519,
    Region::KemMlKem,
    Region::Routing(0),
    Region::Routing(1),
    Region::Routing(2),
    Region::Routing(3),
    Region::Mac,
    Region::Payload,
];

pub(crate) fn region() -> impl Strategy<Value = Region> {
    prop::sample::select(ALL_REGIONS.to_vec())
}

impl Region {
    /// The region's bytes in the packet.
    pub(crate) fn range(self) -> Range<usize> {
        match self {
            Self::Version => layout::packet::VERSION,
            Self::KemX25519 => layout::packet::KEM_X25519,
            Self::KemMlKem => layout::packet::KEM_MLKEM,
            Self::Routing(j) => layout::packet::routing_block(j),
            Self::Mac => layout::packet::MAC,
            Self::Payload => layout::packet::PAYLOAD,
        }
    }
}

/// Lengths: small, anything up to twice a packet, and every exact length
/// give or take two.
pub(crate) fn lengths() -> impl Strategy<Value = usize> {
    let exact = vec![
        PACKET_LEN,
        PAYLOAD_LEN,
        ENCRYPTED_REPLY_LEN,
        SURB_LEN,
        SURB_KEYS_LEN,
        PUBLIC_KEY_LEN,
        PRIVATE_KEY_LEN,
        NODE_ID_LEN,
        RECIPIENT_ID_LEN,
        SURB_ID_LEN,
    ];
    prop_oneof![
        0..64usize,
        0..2 * PACKET_LEN,
        (prop::sample::select(exact), 0..5usize).prop_map(|(n, d)| n + d - 2),
    ]
}
