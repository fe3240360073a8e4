//! `forward` and `surb` cases: every hop's packet, key and expected
//! result, plus the per-hop encapsulation randomness that recreates them.

use kemsphinx::geometry::PAYLOAD_LEN;
use kemsphinx::{Command, RecipientId, SurbId};
use serde_json::{Value, json};

use super::drbg::{Drbg, Gen};
use super::scenario::{
    Terminal, commands_json, encaps_json, forward_packet, make_surb, node_json, nodes,
    packets_json, path, walk,
};
use crate::case::hex;

/// How a case's payload is chosen.
#[derive(Clone, Copy)]
enum Fill {
    Drbg,
    Byte(u8),
}

impl Fill {
    fn payload(self, rng: &mut Drbg) -> Box<[u8; PAYLOAD_LEN]> {
        match self {
            Self::Drbg => rng.payload(),
            Self::Byte(b) => Box::new([b; PAYLOAD_LEN]),
        }
    }

    fn describe(self) -> String {
        match self {
            Self::Drbg => "from the DRBG".into(),
            Self::Byte(b) => format!("all 0x{b:02x}"),
        }
    }
}

/// Forward-hop commands: a `node_delay` where given, else none.
fn forward_hops(delays: [Option<u32>; 3]) -> Vec<Vec<Command>> {
    delays
        .iter()
        .map(|d| d.map(Command::NodeDelay).into_iter().collect())
        .collect()
}

/// `forward`: three packets with different commands and payloads.
pub(crate) fn forward(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let shapes: [([Option<u32>; 3], Option<u32>, Fill); 3] = [
        ([Some(0), Some(1_000), Some(u32::MAX)], None, Fill::Drbg),
        ([None, None, None], Some(0), Fill::Byte(0)),
        ([Some(50), None, Some(7)], Some(300), Fill::Byte(0xff)),
    ];
    shapes
        .into_iter()
        .enumerate()
        .map(|(n, (delays, terminal_delay, fill))| {
            let nodes = nodes(rng);
            let recipient = Command::Recipient(RecipientId(rng.array()));
            let mut commands = forward_hops(delays);
            commands.push(match terminal_delay {
                Some(d) => vec![Command::NodeDelay(d), recipient],
                None => vec![recipient],
            });
            let payload = fill.payload(rng);
            let path = path(&nodes, &commands)?;
            let (packet, encaps) = forward_packet(rng, &path, &payload)?;
            let walk = walk(&nodes, &packet, Terminal::Deliver)?;
            if walk.terminal != payload[..] {
                return Err(format!("forward-{n:02}: delivered payload differs"));
            }
            Ok(json!({
                "id": format!("forward-{n:02}"),
                "note": format!(
                    "node_delay per forward hop {delays:?}; terminal node_delay {terminal_delay:?} \
                     then recipient; payload {}",
                    fill.describe()
                ),
                "nodes": nodes.iter().map(node_json).collect::<Vec<_>>(),
                "commands": commands_json(&commands),
                "payload": hex(&payload[..]),
                "packets": packets_json(&walk),
                "unwrap": walk.unwrap,
                "encapsulations": encaps_json(&encaps),
            }))
        })
        .collect()
}

/// `surb`: two SURBs, each with the reply built from it, every hop, and
/// the decrypted reply.
pub(crate) fn surb(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let shapes: [([Option<u32>; 3], bool, Fill); 2] = [
        ([Some(10), Some(20), Some(30)], false, Fill::Drbg),
        ([None, None, None], true, Fill::Byte(0)),
    ];
    shapes
        .into_iter()
        .enumerate()
        .map(|(n, (delays, reordered, fill))| {
            let nodes = nodes(rng);
            let recipient = Command::Recipient(RecipientId(rng.array()));
            let surb_id = Command::SurbReply(SurbId(rng.array()));
            let mut commands = forward_hops(delays);
            commands.push(if reordered {
                vec![surb_id, Command::NodeDelay(5), recipient]
            } else {
                vec![recipient, surb_id]
            });
            let path = path(&nodes, &commands)?;
            let (surb, keys, encaps) = make_surb(rng, &path)?;
            let surb_bytes = hex(surb.as_bytes());
            let reply_payload = fill.payload(rng);
            let mut reply = super::scenario::packet_buffer();
            let first_hop = surb.reply(&reply_payload, &mut reply);
            let walk = walk(&nodes, &reply, Terminal::Reply)?;
            let mut encrypted: [u8; kemsphinx::geometry::ENCRYPTED_REPLY_LEN] = walk
                .terminal
                .clone()
                .try_into()
                .map_err(|_| "encrypted reply of the wrong length")?;
            let decrypted = keys
                .decrypt_reply(&mut encrypted)
                .map_err(|e| format!("surb-{n:02}: {e}"))?;
            Ok(json!({
                "id": format!("surb-{n:02}"),
                "note": format!(
                    "node_delay per forward hop {delays:?}; terminal {}; reply payload {}; \
                     packets[0] is the reply built from the SURB (deterministic)",
                    if reordered { "surb_reply, node_delay, recipient" } else { "recipient, surb_reply" },
                    fill.describe()
                ),
                "nodes": nodes.iter().map(node_json).collect::<Vec<_>>(),
                "commands": commands_json(&commands),
                "surb": surb_bytes,
                "surb_keys": hex(keys.to_bytes()),
                "first_hop": hex(first_hop.0),
                "reply_payload": hex(&reply_payload[..]),
                "decrypted_reply": hex(decrypted),
                "packets": packets_json(&walk),
                "unwrap": walk.unwrap,
                "encapsulations": encaps_json(&encaps),
            }))
        })
        .collect()
}
