//! Paths, packets and SURBs made from the DRBG, and the hop-by-hop walk
//! that records what each hop sees: shared by the `forward`, `surb` and
//! `negative` files.

use kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN, SPRP_KEY_BLOCK_LEN};
use kemsphinx::{
    Action, Command, NodeId, Path, Surb, SurbKeys, create_packet, create_surb, hazmat, replay_tag,
    unwrap,
};
use kemsphinx_support::{Node, encoded};
use serde_json::{Value, json};

use super::{Drbg, Gen, hex};

/// A packet buffer.
pub(crate) type Packet = Box<[u8; PACKET_LEN]>;

/// A fresh, zeroed packet buffer.
pub(crate) fn packet_buffer() -> Packet {
    Box::new([0u8; PACKET_LEN])
}

/// Four nodes: for each, a key seed then an id from the DRBG.
pub(crate) fn nodes(rng: &mut Drbg) -> [Node; HOPS] {
    kemsphinx_support::nodes(&mut rng.0)
}

/// A node as a case lists it (with the optional `seed`).
pub(crate) fn node_json(n: &Node) -> Value {
    json!({
        "id": hex(n.id.0),
        "public_key": hex(n.key.public_key().as_bytes()),
        "private_key": hex(&n.key.to_bytes()[..]),
        "seed": hex(n.seed),
    })
}

/// The path over `nodes` with per-hop `commands`.
pub(crate) fn path<'a>(nodes: &'a [Node], commands: &'a [Vec<Command>]) -> Gen<Path<'a>> {
    kemsphinx_support::nodes_path(nodes, commands).map_err(|e| e.to_string())
}

/// Per-hop command lists as a case lists them.
pub(crate) fn commands_json(commands: &[Vec<Command>]) -> Value {
    commands
        .iter()
        .map(|hop| hop.iter().map(|c| hex(encoded(c))).collect::<Vec<_>>())
        .collect()
}

/// One hop's encapsulation, with the randomness that made it.
pub(crate) struct Encap {
    pub(crate) x25519_ephemeral: [u8; 32],
    pub(crate) mlkem_m: [u8; 32],
    pub(crate) encapsulation: hazmat::Encapsulation,
}

/// Encapsulate to every hop, drawing (as `create_packet` does) the X25519
/// ephemeral secret and then the ML-KEM `m` for each hop in path order.
pub(crate) fn encapsulate(rng: &mut Drbg, path: &Path<'_>) -> Gen<Vec<Encap>> {
    path.iter()
        .map(|hop| {
            let (x25519_ephemeral, mlkem_m) = (rng.array(), rng.array());
            let (ciphertext, ss) = hop
                .public_key
                .encapsulate_deterministic(&x25519_ephemeral, &mlkem_m)
                .map_err(|e| e.to_string())?;
            Ok(Encap {
                x25519_ephemeral,
                mlkem_m,
                encapsulation: (ciphertext, *ss.as_bytes()),
            })
        })
        .collect()
}

/// The encapsulations in the form the hazmat creators take.
pub(crate) fn parts(encaps: &[Encap]) -> Gen<[hazmat::Encapsulation; HOPS]> {
    let v: Vec<_> = encaps.iter().map(|e| e.encapsulation).collect();
    v.try_into()
        .map_err(|_| format!("{HOPS} encapsulations expected"))
}

/// The `encapsulations` field of a case.
pub(crate) fn encaps_json(encaps: &[Encap]) -> Value {
    encaps
        .iter()
        .map(|e| {
            json!({
                "x25519_ephemeral": hex(e.x25519_ephemeral),
                "mlkem_m": hex(e.mlkem_m),
                "shared_secret": hex(e.encapsulation.1),
            })
        })
        .collect()
}

/// A forward packet from the DRBG. It is made twice, by `create_packet`
/// fed a copy of the DRBG and from the explicitly drawn encapsulations,
/// and the two must agree: the corpus is what the normal API creates.
pub(crate) fn forward_packet(
    rng: &mut Drbg,
    path: &Path<'_>,
    payload: &[u8; PAYLOAD_LEN],
) -> Gen<(Packet, Vec<Encap>)> {
    let mut normal = packet_buffer();
    create_packet(&mut rng.fork(), path, payload, &mut normal).map_err(|e| e.to_string())?;
    let encaps = encapsulate(rng, path)?;
    let mut explicit = packet_buffer();
    hazmat::create_packet_from_encapsulations(path, &parts(&encaps)?, payload, &mut explicit)
        .map_err(|e| e.to_string())?;
    if normal != explicit {
        return Err("create_packet and the recorded randomness disagree".into());
    }
    Ok((explicit, encaps))
}

/// A SURB from the DRBG (reply key block first, then the encapsulations,
/// as `create_surb` draws them), checked against `create_surb` likewise.
pub(crate) fn make_surb(rng: &mut Drbg, path: &Path<'_>) -> Gen<(Surb, SurbKeys, Vec<Encap>)> {
    let (normal, normal_keys) = create_surb(&mut rng.fork(), path).map_err(|e| e.to_string())?;
    let reply_key = rng.array::<SPRP_KEY_BLOCK_LEN>();
    let encaps = encapsulate(rng, path)?;
    let (surb, keys) = hazmat::create_surb_from_encapsulations(path, &parts(&encaps)?, &reply_key)
        .map_err(|e| e.to_string())?;
    if normal.as_bytes() != surb.as_bytes() || normal_keys.to_bytes() != keys.to_bytes() {
        return Err("create_surb and the recorded randomness disagree".into());
    }
    Ok((surb, keys, encaps))
}

/// What a walk through the four hops recorded.
pub(crate) struct Walk {
    /// The packet as received by hop 0..3.
    pub(crate) packets: Vec<Packet>,
    /// Per hop: `replay_tag`, `commands` (serialised), `payload` (terminal).
    pub(crate) unwrap: Vec<Value>,
    /// Hop 0's `next_node_hop`: the next id and header MAC.
    pub(crate) first_next_hop: Option<(NodeId, [u8; 32])>,
    /// The terminal hop's payload (10,156) or encrypted reply (10,188).
    pub(crate) terminal: Vec<u8>,
}

/// Unwrap `first` at every node in turn and record each hop.
pub(crate) fn walk(nodes: &[Node], first: &[u8; PACKET_LEN]) -> Gen<Walk> {
    let mut buf = Box::new(*first);
    let mut out = Walk {
        packets: Vec::new(),
        unwrap: Vec::new(),
        first_next_hop: None,
        terminal: Vec::new(),
    };
    for (i, node) in nodes.iter().enumerate() {
        out.packets.push(buf.clone());
        let tag = replay_tag(&buf);
        let result = unwrap(&node.key, &mut buf).map_err(|e| format!("hop {i}: {e}"))?;
        let commands: Vec<Value> = result.commands.iter().map(|c| hex(encoded(c))).collect();
        if i == 0 {
            out.first_next_hop = result.commands.iter().find_map(|c| match c {
                Command::NextNodeHop { id, mac } => Some((*id, *mac)),
                _ => None,
            });
        }
        let payload = match result.action {
            Action::Forward { .. } if i + 1 < HOPS => Value::Null,
            Action::Deliver { payload, .. } if i + 1 == HOPS => {
                out.terminal = payload.to_vec();
                hex(payload)
            }
            Action::SurbReply {
                encrypted_reply, ..
            } if i + 1 == HOPS => {
                out.terminal = encrypted_reply.to_vec();
                hex(encrypted_reply)
            }
            other => return Err(format!("hop {i}: unexpected action {other:?}")),
        };
        out.unwrap.push(json!({
            "replay_tag": hex(tag.0), "commands": commands, "payload": payload,
        }));
    }
    Ok(out)
}

/// The packets of a walk as a case lists them.
pub(crate) fn packets_json(walk: &Walk) -> Value {
    walk.packets.iter().map(|p| hex(&p[..])).collect()
}
