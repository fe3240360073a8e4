//! `negative` cases: one per class of malformed input, each with the
//! outcome this library gives (`expect`, and its exact error in
//! `expect_detail`) and what the Go reference did with it.
//!
//! The cases are data rows (`cases.txt`, read by [`table`]); [`Base`] makes each one's inputs from
//! one scenario, as the table says. `expect` is written there by hand from
//! SPEC.md §7, never read back from the library; every case is run through
//! the conformance runner before anything is written. What the reference did
//! is observed, not predicted: `vectors/observed/` records it per case, and
//! it is copied into `reference_class`, `reference_result` and
//! `reference_agrees_with_expect`; a case whose observed class differs from
//! `expect` must say why in `library_choice`, and no other case may.

mod table;

use aez5::Aez;
use kemsphinx::geometry::layout::packet;
use kemsphinx::geometry::{
    HOPS, MAC_LEN, PACKET_LEN, PAYLOAD_LEN, RECIPIENT_ID_LEN, SPRP_IV_LEN, SPRP_KEY_BLOCK_LEN,
    SPRP_KEY_LEN, SURB_ID_LEN, X25519_LEN,
};
use kemsphinx::hazmat::kdf_layout as kdf;
use kemsphinx::{Command, RecipientId, Surb, SurbId, SurbKeys, hazmat, unwrap};
use kemsphinx_support::{Node, P_PLUS_2, area, encoded};
use serde_json::{Map, Value, json};

use self::table::{Spec, number, offset};
use super::drbg::{Drbg, Gen};
use super::scenario::{
    Encaps, Terminal, Walk, commands_json, forward_packet, make_surb, nodes, packet_buffer, path,
    walk,
};
use crate::case::hex;
use crate::json::part;

/// What the Go reference did with each case (see `vectors/observed/README.md`).
const OBSERVED: &str =
    include_str!("../../../../vectors/observed/own-negative-reference-outcomes.json");

/// The scenario every negative case starts from: a valid forward packet
/// and a valid SURB (with its reply) over the same four nodes.
struct Base {
    nodes: [Node; HOPS],
    commands: Vec<Vec<Command>>,
    payload: Box<[u8; PAYLOAD_LEN]>,
    encaps: Encaps,
    walk: Walk,
    surb: Surb,
    surb_keys: SurbKeys,
    reply_payload: Box<[u8; PAYLOAD_LEN]>,
    reply_walk: Walk,
    other_keys: SurbKeys,
}

impl Base {
    fn new(rng: &mut Drbg) -> Gen<Self> {
        let nodes = nodes(rng);
        let recipient = Command::Recipient(RecipientId(rng.array()));
        let surb_id = Command::SurbReply(SurbId(rng.array()));
        let delays = [10, 20, 30].map(|d| vec![Command::NodeDelay(d)]);
        let mut commands = delays.to_vec();
        commands.push(vec![recipient]);
        let payload = rng.payload();
        let (packet, encaps) = forward_packet(rng, &path(&nodes, &commands)?, &payload)?;
        let forward_walk = walk(&nodes, &packet, Terminal::Deliver)?;

        let mut surb_commands = delays.to_vec();
        surb_commands.push(vec![recipient, surb_id]);
        let surb_path = path(&nodes, &surb_commands)?;
        let (surb, surb_keys, _) = make_surb(rng, &surb_path)?;
        let (_, other_keys, _) = make_surb(rng, &surb_path)?;
        let reply_payload = rng.payload();
        let mut reply = packet_buffer();
        // A copy: `reply` spends the SURB it is called on.
        Surb::from_bytes(surb.as_bytes())
            .map_err(|e| e.to_string())?
            .reply(&reply_payload, &mut reply);
        let reply_walk = walk(&nodes, &reply, Terminal::Reply)?;
        Ok(Self {
            nodes,
            commands,
            payload,
            encaps,
            walk: forward_walk,
            surb,
            surb_keys,
            reply_payload,
            reply_walk,
            other_keys,
        })
    }

    fn node(&self, i: usize) -> Gen<&Node> {
        self.nodes.get(i).ok_or_else(|| format!("no node {i}"))
    }

    /// One input of the base scenario, by its field name.
    fn input(&self, name: &str) -> Gen<Vec<u8>> {
        Ok(match name {
            "surb" => self.surb.as_bytes().to_vec(),
            "payload" => self.reply_payload.to_vec(),
            "encrypted_reply" => self.reply_walk.terminal.clone(),
            "surb_keys" => self.surb_keys.to_bytes().to_vec(),
            "private_key" => self.node(0)?.key.to_bytes().to_vec(),
            "public_key" => self.node(0)?.key.public_key().to_bytes().to_vec(),
            _ => return Err(format!("unknown input `{name}`")),
        })
    }

    /// The operation's name and its input fields, made as the row's
    /// operation and change say.
    fn inputs(&self, op: &str, change: &str) -> Gen<(&'static str, Value)> {
        Ok(match op.split(' ').collect::<Vec<_>>()[..] {
            ["unwrap", key, packet] => (
                "unwrap",
                json!({
                    "private_key": hex(&self.node(number(key)?)?.key.to_bytes()[..]),
                    "packet": hex(self.packet(packet, change)?),
                }),
            ),
            ["edit", edited] => {
                let (op, names): (_, &[_]) = match edited {
                    "surb" | "payload" => ("reply_from_surb", &["surb", "payload"]),
                    "encrypted_reply" | "surb_keys" => {
                        ("decrypt_reply", &["surb_keys", "encrypted_reply"])
                    }
                    "private_key" => ("load_private_key", &["private_key"]),
                    "public_key" => ("load_public_key", &["public_key"]),
                    _ => return Err(format!("unknown input `{edited}`")),
                };
                let mut fields = json!({});
                for &name in names {
                    let bytes = self.input(name)?;
                    fields[name] = hex(if name == edited {
                        self.edited(&bytes, change)?
                    } else {
                        bytes
                    });
                }
                (op, fields)
            }
            [create @ ("create_packet" | "create_surb"), hop] => {
                let mut all = self.commands.clone();
                *all.get_mut(number::<usize>(hop)?).ok_or("no such hop")? = change
                    .split(' ')
                    .map(|c| self.command(c))
                    .collect::<Gen<_>>()?;
                let nodes: Vec<Value> = self
                    .nodes
                    .iter()
                    .map(|n| {
                        json!({ "id": hex(n.id.0), "public_key": hex(n.key.public_key().as_bytes()) })
                    })
                    .collect();
                let mut fields = json!({ "nodes": nodes, "commands": commands_json(&all) });
                if create == "create_surb" {
                    ("create_surb", fields)
                } else {
                    fields["payload"] = hex(&self.payload[..]);
                    ("create_packet", fields)
                }
            }
            _ => return Err(format!("unknown operation `{op}`")),
        })
    }

    /// A packet of the base scenario, made as an `unwrap` row says (see
    /// [`table`]).
    fn packet(&self, spec: &str, change: &str) -> Gen<Vec<u8>> {
        let (kind, hop) = spec.split_once(':').unwrap_or((spec, "0"));
        let hop = number(hop)?;
        match kind {
            "fwd" => self.edited(received(&self.walk, hop)?, change),
            "reply" => self.edited(received(&self.reply_walk, hop)?, change),
            "zero" => Ok(vec![0; PACKET_LEN]),
            "raw" => self.raw_area(hop, change),
            "rebuilt" => self.rebuilt(change),
            "reenc" => self.reenciphered(hop, change),
            _ => Err(format!("unknown packet `{spec}`")),
        }
    }

    /// A command of the table.
    fn command(&self, text: &str) -> Gen<Command> {
        Ok(match text {
            // Hop 0's real one carries the MAC of the header hop 1 receives.
            "next_hop" | "next_hop_zero_mac" => Command::NextNodeHop {
                id: self.node(1)?.id,
                mac: match text {
                    "next_hop" => part(received(&self.walk, 1)?, packet::MAC)?,
                    _ => [0; MAC_LEN],
                },
            },
            "recipient" => Command::Recipient(RecipientId([0x52; RECIPIENT_ID_LEN])),
            "surb_reply" => Command::SurbReply(SurbId([0x53; SURB_ID_LEN])),
            _ => match text.strip_prefix("delay:") {
                Some(ms) => Command::NodeDelay(number(ms)?),
                None => return Err(format!("unknown command `{text}`")),
            },
        })
    }

    /// The forward packet as hop `hop` receives it when its commands area
    /// is made of `area_parts` (every other hop's as in the base scenario,
    /// valid MACs throughout).
    fn raw_area(&self, hop: usize, area_parts: &str) -> Gen<Vec<u8>> {
        let pieces = area_parts
            .split(' ')
            .filter(|p| *p != "-")
            .map(|part| {
                if let Some(bytes) = part.strip_prefix("bytes:") {
                    return hex::decode(bytes).map_err(|e| e.to_string());
                }
                let Some((cmd, n)) = part.strip_prefix("head:").and_then(|h| h.rsplit_once(':'))
                else {
                    return Ok(encoded(&self.command(part)?));
                };
                let head = encoded(&self.command(cmd)?)
                    .get(..number(n)?)
                    .map(<[u8]>::to_vec);
                head.ok_or_else(|| "command shorter than its head".into())
            })
            .collect::<Gen<Vec<_>>>()?;
        let mut areas = [None; HOPS];
        *areas.get_mut(hop).ok_or("no such hop")? =
            Some(area(&pieces).ok_or("raw area longer than 82 bytes")?);
        let mut buf = packet_buffer();
        hazmat::create_packet_with_raw_command_areas(
            &path(&self.nodes, &self.commands)?,
            &self.encaps.parts,
            &areas,
            &self.payload,
            &mut buf,
        )
        .map_err(|e| e.to_string())?;
        for (i, node) in self.nodes.iter().take(hop).enumerate() {
            unwrap(&node.key, &mut buf).map_err(|e| format!("raw packet, hop {i}: {e}"))?;
        }
        Ok(buf.to_vec())
    }

    /// The forward packet rebuilt for the KEM ciphertext `edit` leaves in
    /// hop 0's packet, with the secret hop 0 derives from it.
    fn rebuilt(&self, edit: &str) -> Gen<Vec<u8>> {
        let ciphertext = part(
            &self.edited(received(&self.walk, 0)?, edit)?,
            packet::KEM_CIPHERTEXT,
        )?;
        let secret =
            hazmat::decapsulate(&self.node(0)?.key, &ciphertext).map_err(|e| e.to_string())?;
        let mut encaps = self.encaps.parts;
        if let Some(first) = encaps.first_mut() {
            *first = (ciphertext, *secret.as_bytes());
        }
        let mut built = packet_buffer();
        hazmat::create_packet_from_encapsulations(
            &path(&self.nodes, &self.commands)?,
            &encaps,
            &self.payload,
            &mut built,
        )
        .map_err(|e| e.to_string())?;
        Ok(built.to_vec())
    }

    /// The forward packet as hop `hop` receives it, its payload edited
    /// under that hop's layer: deciphered with the hop's key, edited,
    /// enciphered again (the header untouched).
    fn reenciphered(&self, hop: usize, edit: &str) -> Gen<Vec<u8>> {
        let mut pkt = received(&self.walk, hop)?.to_vec();
        let secret =
            hazmat::decapsulate(&self.node(hop)?.key, &part(&pkt, packet::KEM_CIPHERTEXT)?)
                .map_err(|e| e.to_string())?;
        let okm = hazmat::kdf(secret.as_bytes());
        let key: [u8; SPRP_KEY_LEN] = part(&okm[..], kdf::SPRP_KEY)?;
        let iv: [u8; SPRP_IV_LEN] = part(&okm[..], kdf::STREAM_IV)?;
        let aez = Aez::new(&key);
        let body = pkt.get_mut(packet::PAYLOAD).ok_or("short packet")?;
        aez.decipher(&iv, body);
        let changed = self.edited(body, edit)?;
        if changed.len() != body.len() {
            return Err("an edit under a layer must keep the length".into());
        }
        body.copy_from_slice(&changed);
        aez.encipher(&iv, body);
        Ok(pkt)
    }

    /// `bytes` changed as the row's `change` says (see [`table`]).
    fn edited(&self, bytes: &[u8], change: &str) -> Gen<Vec<u8>> {
        let mut out = bytes.to_vec();
        let outside = || format!("an edit outside the {} input bytes", bytes.len());
        match change.split(' ').collect::<Vec<_>>()[..] {
            ["keep"] => {}
            ["resize", len] => out.resize(number(len)?, 0),
            ["flip", at, bit] => {
                *out.get_mut(offset(at)?).ok_or_else(outside)? ^= 1 << number::<u8>(bit)?
            }
            ["put", at, value] => {
                let new = match value.strip_prefix("point:") {
                    Some(name) => table::point(name)?.u.to_vec(),
                    None if value == "p+2" => P_PLUS_2.to_vec(),
                    None => hex::decode(value).map_err(|e| e.to_string())?,
                };
                let at = offset(at)?;
                out.get_mut(at..at + new.len())
                    .ok_or_else(outside)?
                    .copy_from_slice(&new);
            }
            ["coefficient", value] => {
                // Byte 0 and the low nibble of byte 1 of the encapsulation key.
                let [lo, hi] = number::<u16>(value)?.to_le_bytes();
                let Some([first, second]) = out.get_mut(X25519_LEN..X25519_LEN + 2) else {
                    return Err(outside());
                };
                *first = lo;
                *second = (*second & 0xf0) | hi;
            }
            ["other_block", block] => {
                let block: usize = number(block)?;
                let range = block * SPRP_KEY_BLOCK_LEN..(block + 1) * SPRP_KEY_BLOCK_LEN;
                let other = self.other_keys.to_bytes();
                out.get_mut(range.clone())
                    .ok_or_else(outside)?
                    .copy_from_slice(other.get(range).ok_or_else(outside)?);
            }
            _ => return Err(format!("unknown change `{change}`")),
        }
        Ok(out)
    }
}

/// The packet hop `hop` received in `walk`.
fn received(walk: &Walk, hop: usize) -> Gen<&[u8]> {
    walk.packets
        .get(hop)
        .map(|p| &p[..])
        .ok_or_else(|| format!("no packet for hop {hop}"))
}

/// One case: its inputs, `expect`, and what the reference did (`seen`).
fn build(base: &Base, spec: &Spec, id: &str, seen: &Value) -> Gen<Value> {
    let (op, mut case) = base.inputs(spec.op, spec.change)?;
    let (expect, detail) = &spec.expect;
    case["id"] = json!(id);
    case["op"] = json!(op);
    case["expect"] = json!(expect);
    if let Some(detail) = detail {
        case["expect_detail"] = json!(detail);
    }
    case["note"] = json!(spec.note);
    let field = |name: &str| {
        seen.get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("observed outcome without `{name}`"))
    };
    if field("expect")? != *expect {
        return Err(format!("observed when `expect` was {}", field("expect")?));
    }
    let class = field("reference_class")?;
    let agrees = class == *expect;
    match (agrees, spec.choice) {
        (false, Some(why)) => case["library_choice"] = json!(why),
        (true, None) => {}
        (false, None) => return Err(format!("the reference gives {class}: say why (choice)")),
        (true, Some(_)) => return Err(format!("the reference also gives {class}: no choice")),
    }
    case["reference_class"] = json!(class);
    case["reference_result"] = json!(field("reference_message")?);
    case["reference_agrees_with_expect"] = json!(agrees);
    Ok(case)
}

/// `negative`: every case of the table, each checked against the library.
pub(crate) fn negative(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let base = Base::new(rng)?;
    let mut observed: Map<String, Value> = serde_json::from_str::<Value>(OBSERVED)
        .ok()
        .and_then(|doc| doc.get("cases")?.as_object().cloned())
        .ok_or("the observed reference outcomes have no `cases` object")?;
    let cases = table::table()?
        .iter()
        .map(|spec| {
            let id = format!("neg-own-{}", spec.id);
            let seen = observed
                .remove(&id)
                .ok_or_else(|| format!("{id}: no observed reference outcome"))?;
            let case = build(&base, spec, &id, &seen).map_err(|e| format!("{id}: {e}"))?;
            crate::conformance::check_negative(&case).map_err(|e| {
                format!("{id}: the library disagrees with the intended outcome: {e}")
            })?;
            Ok(case)
        })
        .collect::<Gen<Vec<_>>>()?;
    match observed.keys().next() {
        Some(id) => Err(format!("{id}: observed, but not generated")),
        None => Ok(cases),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The observation decides `library_choice`: required where the
    /// reference differs from `expect`, refused where it agrees, and an
    /// observation made for another `expect` is refused.
    #[test]
    fn the_observation_decides_library_choice() {
        let base = Base::new(&mut Drbg::new(&[7; 32], 9)).unwrap();
        let plain = table::table()
            .unwrap()
            .into_iter()
            .find(|s| s.id == "unwrap-wrong-hop-key")
            .unwrap();
        let seen = |expect: &str, class: &str| json!({ "expect": expect, "reference_class": class, "reference_message": "m" });
        let case = build(&base, &plain, "x", &seen("err_mac", "err_mac")).unwrap();
        assert_eq!(case["reference_agrees_with_expect"], true);
        assert!(case.get("library_choice").is_none());
        assert!(build(&base, &plain, "x", &seen("err_mac", "ok_forward")).is_err());
        assert!(build(&base, &plain, "x", &seen("ok_forward", "err_mac")).is_err());
        let chosen = Spec {
            choice: Some("why"),
            ..plain
        };
        assert!(build(&base, &chosen, "x", &seen("err_mac", "err_mac")).is_err());
        let case = build(&base, &chosen, "x", &seen("err_mac", "panic")).unwrap();
        assert_eq!(case["library_choice"], "why");
        assert_eq!(case["reference_class"], "panic");
        assert_eq!(case["reference_result"], "m");
        assert_eq!(case["reference_agrees_with_expect"], false);
    }
}
