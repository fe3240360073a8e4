//! Checks for `forward` and `surb` cases: every hop unwrapped, and every
//! packet the reference created recreated here byte for byte.

use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, HOPS, KEM_CIPHERTEXT_LEN, PACKET_LEN, SHARED_SECRET_LEN, SURB_LEN, layout,
};
use kemsphinx::{Command, NodeId, Path, PrivateKey, PublicKey, Surb, SurbKeys, hazmat};
use kemsphinx_support::decode;
use serde_json::Value;

use super::primitives::{from_randomness, key_pair};
use crate::case::{self, Terminal};
use crate::json::{Outcome, array, bytes, decode_value, list, part, same};

/// One node of a case: id and loaded key.
pub(crate) struct Node {
    pub(crate) id: NodeId,
    pub(crate) key: PrivateKey,
}

/// Load the four nodes, each key checked as [`key_pair`] does.
pub(crate) fn nodes(case: &Value) -> Result<Vec<Node>, String> {
    let nodes = list(case, "nodes")?;
    if nodes.len() != HOPS {
        return Err(format!("expected {HOPS} nodes, got {}", nodes.len()));
    }
    nodes
        .iter()
        .map(|n| {
            let key = key_pair(n).map_err(|e| format!("node: {e}"))?;
            Ok(Node {
                id: NodeId(array(n, "id")?),
                key,
            })
        })
        .collect()
}

/// The case's `nodes` as a creator sees them: `id` and loaded `public_key`
/// (a refused key is a malformed case).
pub(crate) fn public_hops(case: &Value) -> Result<Vec<(NodeId, PublicKey)>, String> {
    list(case, "nodes")?
        .iter()
        .map(|n| {
            let key = PublicKey::try_from(&bytes(n, "public_key")?[..])
                .map_err(|e| format!("node public key refused: {e}"))?;
            Ok((NodeId(array(n, "id")?), key))
        })
        .collect()
}

/// The commands given to the creator, per hop.
pub(crate) fn creator_commands(case: &Value) -> Result<Vec<Vec<Command>>, String> {
    list(case, "commands")?
        .iter()
        .map(|hop| {
            hop.as_array()
                .ok_or("commands: expected a list per hop")?
                .iter()
                .map(|c| decode(&decode_value(c)?).map_err(|e| format!("command: {e}")))
                .collect()
        })
        .collect()
}

/// The path through `hops` with `commands`.
pub(crate) fn path<'a>(
    hops: impl IntoIterator<Item = (NodeId, &'a PublicKey)>,
    commands: &'a [Vec<Command>],
) -> Result<Path<'a>, String> {
    kemsphinx_support::path(hops, commands).map_err(|e| e.to_string())
}

/// Walk `packets[0]` through the nodes and compare every hop with the
/// case: the packet it receives (`packets[i]`) and what it does
/// (`unwrap[i]`); returns the terminal payload (10,156 or 10,188 bytes).
fn walk(case: &Value, nodes: &[Node], terminal: Terminal) -> Result<Vec<u8>, String> {
    let packets = list(case, "packets")?;
    let expected = list(case, "unwrap")?;
    if packets.len() != HOPS || expected.len() != HOPS {
        return Err(format!("expected {HOPS} packets and {HOPS} unwrap entries"));
    }
    let first = decode_value(packets.first().ok_or("no packets")?)?;
    let first: [u8; PACKET_LEN] = first
        .try_into()
        .map_err(|_| format!("packets[0]: not {PACKET_LEN} bytes"))?;
    let keys: Vec<_> = nodes.iter().map(|n| (n.id, &n.key)).collect();
    let seen = case::walk(&keys, &first, terminal)?;
    let hops = seen
        .packets
        .iter()
        .zip(&seen.unwrap)
        .zip(packets.iter().zip(expected));
    for (i, ((packet, got), (want_packet, want))) in hops.enumerate() {
        same(
            &format!("hop {i} packet"),
            &packet[..],
            &decode_value(want_packet)?,
        )?;
        let field = |v: &Value, name: &str| -> Result<Vec<u8>, String> {
            match v.get(name) {
                Some(Value::Array(list)) => Ok(list
                    .iter()
                    .map(decode_value)
                    .collect::<Result<Vec<_>, _>>()?
                    .concat()),
                Some(Value::Null) | None if name == "payload" => Ok(Vec::new()),
                Some(hex) => decode_value(hex),
                None => Err(format!("unwrap[{i}]: missing field `{name}`")),
            }
        };
        for name in ["replay_tag", "commands", "payload"] {
            same(
                &format!("hop {i} {name}"),
                &field(got, name)?,
                &field(want, name)?,
            )?;
        }
    }
    Ok(seen.terminal)
}

/// The KEM ciphertext and shared secret each hop recovers. When the case
/// lists its `encapsulations` (the randomness per hop), each is also
/// recreated with that randomness and must give the same ciphertext and
/// secret.
fn encapsulations(case: &Value, nodes: &[Node]) -> Result<[hazmat::Encapsulation; HOPS], String> {
    let packets = list(case, "packets")?;
    let mut out = [([0u8; KEM_CIPHERTEXT_LEN], [0u8; SHARED_SECRET_LEN]); HOPS];
    for ((slot, node), pkt) in out.iter_mut().zip(nodes).zip(packets) {
        let pkt = decode_value(pkt)?;
        let ct = part(&pkt, layout::packet::KEM_CIPHERTEXT)?;
        let ss = hazmat::decapsulate(&node.key, &ct).map_err(|e| format!("decapsulation: {e}"))?;
        *slot = (ct, *ss.as_bytes());
    }
    if let Some(recorded) = case.get("encapsulations") {
        let recorded = recorded
            .as_array()
            .filter(|r| r.len() == HOPS)
            .ok_or("`encapsulations`: expected one entry per hop")?;
        for (i, ((want, node), r)) in out.iter().zip(nodes).zip(recorded).enumerate() {
            let what = format!("hop {i} ");
            from_randomness(r, node.key.public_key(), &want.0, &want.1, &what)?;
            if r.get("shared_secret").is_some() {
                same(
                    &format!("hop {i} shared_secret"),
                    &want.1,
                    &bytes(r, "shared_secret")?,
                )?;
            }
        }
    }
    Ok(out)
}

/// `forward`: unwrap every hop, then recreate the first packet from the
/// recovered encapsulations.
pub(crate) fn forward(case: &Value) -> Outcome {
    let nodes = nodes(case)?;
    let commands = creator_commands(case)?;
    let path = path(nodes.iter().map(|n| (n.id, n.key.public_key())), &commands)?;
    let payload = array(case, "payload")?;
    let delivered = walk(case, &nodes, Terminal::Deliver)?;
    same("delivered payload", &delivered, &payload)?;

    let encaps = encapsulations(case, &nodes)?;
    let mut ours = [0u8; PACKET_LEN];
    hazmat::create_packet_from_encapsulations(&path, &encaps, &payload, &mut ours)
        .map_err(|e| format!("recreating the packet: {e}"))?;
    let first = list(case, "packets")?.first().ok_or("no packets")?;
    same("recreated packet", &ours, &decode_value(first)?)
}

/// `surb`: the reply built from the SURB, every hop, the decrypted reply,
/// and the SURB and its keys recreated from the recovered encapsulations.
pub(crate) fn surb(case: &Value) -> Outcome {
    let nodes = nodes(case)?;
    let commands = creator_commands(case)?;
    let path = path(nodes.iter().map(|n| (n.id, n.key.public_key())), &commands)?;
    let surb_bytes: [u8; SURB_LEN] = array(case, "surb")?;
    let surb = Surb::from_bytes(&surb_bytes).map_err(|e| format!("SURB refused: {e}"))?;
    let mut reply = [0u8; PACKET_LEN];
    let first_hop = surb.reply(&array(case, "reply_payload")?, &mut reply);
    same("first hop", &first_hop.0, &bytes(case, "first_hop")?)?;
    let first = list(case, "packets")?.first().ok_or("no packets")?;
    same("reply packet", &reply, &decode_value(first)?)?;

    let mut encrypted: [u8; ENCRYPTED_REPLY_LEN] = walk(case, &nodes, Terminal::Reply)?
        .try_into()
        .map_err(|_| "encrypted reply of the wrong length")?;
    let keys = SurbKeys::from_bytes(&array(case, "surb_keys")?);
    let plain = keys
        .decrypt_reply(&mut encrypted)
        .map_err(|e| format!("decrypt reply: {e}"))?;
    same("decrypted reply", plain, &bytes(case, "decrypted_reply")?)?;

    let encaps = encapsulations(case, &nodes)?;
    let reply_key = part(&surb_bytes, layout::surb::REPLY_KEY_BLOCK)?;
    let (our_surb, our_keys) = hazmat::create_surb_from_encapsulations(&path, &encaps, &reply_key)
        .map_err(|e| format!("recreating the SURB: {e}"))?;
    same("recreated SURB", our_surb.as_bytes(), &surb_bytes)?;
    same(
        "recreated SURB keys",
        &our_keys.to_bytes()[..],
        &bytes(case, "surb_keys")?,
    )
}
