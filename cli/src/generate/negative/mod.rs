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
use kemsphinx_support::{Node, area, encoded};
use serde_json::{Map, Value, json};

use self::table::{Cmd, Edit, Input, Op, Packet, Part, Spec};
use super::drbg::{Drbg, Gen};
use super::scenario::{
    Encap, Terminal, Walk, commands_json, forward_packet, make_surb, nodes, packet_buffer, parts,
    path, walk,
};
use crate::case::hex;

/// What the Go reference did with each case (see `vectors/observed/README.md`).
const OBSERVED: &str =
    include_str!("../../../../vectors/observed/own-negative-reference-outcomes.json");

/// The scenario every negative case starts from: a valid forward packet
/// and a valid SURB (with its reply) over the same four nodes.
struct Base {
    nodes: [Node; HOPS],
    commands: Vec<Vec<Command>>,
    payload: Box<[u8; PAYLOAD_LEN]>,
    encaps: Vec<Encap>,
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

    /// One input of the base scenario.
    fn input(&self, input: Input) -> Gen<Vec<u8>> {
        Ok(match input {
            Input::Surb => self.surb.as_bytes().to_vec(),
            Input::Payload => self.reply_payload.to_vec(),
            Input::EncryptedReply => self.reply_walk.terminal.clone(),
            Input::SurbKeys => self.surb_keys.to_bytes().to_vec(),
            Input::PrivateKey => self.node(0)?.key.to_bytes().to_vec(),
            Input::PublicKey => self.node(0)?.key.public_key().to_bytes().to_vec(),
        })
    }

    /// The operation's name and its input fields.
    fn inputs(&self, op: &Op) -> Gen<(&'static str, Value)> {
        Ok(match op {
            Op::Unwrap { packet, key } => (
                "unwrap",
                json!({
                    "private_key": hex(&self.node(*key)?.key.to_bytes()[..]),
                    "packet": hex(self.packet(packet)?),
                }),
            ),
            Op::Edited(edited, edit) => {
                use Input::{EncryptedReply, Payload, PrivateKey, PublicKey, Surb, SurbKeys};
                let (op, inputs): (_, &[_]) = match edited {
                    Surb | Payload => ("reply_from_surb", &[("surb", Surb), ("payload", Payload)]),
                    EncryptedReply | SurbKeys => (
                        "decrypt_reply",
                        &[("surb_keys", SurbKeys), ("encrypted_reply", EncryptedReply)],
                    ),
                    PrivateKey => ("load_private_key", &[("private_key", PrivateKey)]),
                    PublicKey => ("load_public_key", &[("public_key", PublicKey)]),
                };
                let mut fields = json!({});
                for &(name, input) in inputs {
                    let bytes = self.input(input)?;
                    let bytes = if input == *edited {
                        self.edited(&bytes, edit)?
                    } else {
                        bytes
                    };
                    fields[name] = hex(bytes);
                }
                (op, fields)
            }
            Op::Create {
                surb,
                hop,
                commands,
            } => {
                let mut all = self.commands.clone();
                *all.get_mut(*hop).ok_or("no such hop")? = commands
                    .iter()
                    .map(|c| self.command(*c))
                    .collect::<Gen<_>>()?;
                let nodes: Vec<Value> = self
                    .nodes
                    .iter()
                    .map(|n| {
                        json!({ "id": hex(n.id.0), "public_key": hex(n.key.public_key().as_bytes()) })
                    })
                    .collect();
                let mut fields = json!({ "nodes": nodes, "commands": commands_json(&all) });
                if *surb {
                    ("create_surb", fields)
                } else {
                    fields["payload"] = hex(&self.payload[..]);
                    ("create_packet", fields)
                }
            }
        })
    }

    /// A packet of the base scenario, made as `packet` says.
    fn packet(&self, packet: &Packet) -> Gen<Vec<u8>> {
        match packet {
            Packet::Forward(hop, edit) => self.edited(received(&self.walk, *hop)?, edit),
            Packet::Reply(hop, edit) => self.edited(received(&self.reply_walk, *hop)?, edit),
            Packet::Zero => Ok(vec![0; PACKET_LEN]),
            Packet::RawArea(hop, area_parts) => self.raw_area(*hop, area_parts),
            Packet::Rebuilt(edit) => self.rebuilt(edit),
            Packet::Reenciphered(hop, edit) => self.reenciphered(*hop, edit),
        }
    }

    /// A command of the table.
    fn command(&self, cmd: Cmd) -> Gen<Command> {
        Ok(match cmd {
            Cmd::NextHop => self
                .walk
                .commands
                .first()
                .and_then(|hop0| {
                    hop0.iter()
                        .find(|c| matches!(c, Command::NextNodeHop { .. }))
                })
                .cloned()
                .ok_or("no next_node_hop at hop 0")?,
            Cmd::NextHopZeroMac => Command::NextNodeHop {
                id: self.node(1)?.id,
                mac: [0; MAC_LEN],
            },
            Cmd::Delay(ms) => Command::NodeDelay(ms),
            Cmd::Recipient => Command::Recipient(RecipientId([0x52; RECIPIENT_ID_LEN])),
            Cmd::SurbReply => Command::SurbReply(SurbId([0x53; SURB_ID_LEN])),
        })
    }

    /// The forward packet as hop `hop` receives it when its commands area
    /// is made of `area_parts` (every other hop's as in the base scenario,
    /// valid MACs throughout).
    fn raw_area(&self, hop: usize, area_parts: &[Part]) -> Gen<Vec<u8>> {
        let pieces = area_parts
            .iter()
            .map(|part| {
                Ok(match part {
                    Part::Whole(cmd) => encoded(&self.command(*cmd)?),
                    Part::Head(cmd, n) => encoded(&self.command(*cmd)?)
                        .get(..*n)
                        .ok_or("command shorter than its head")?
                        .to_vec(),
                    Part::Bytes(bytes) => bytes.clone(),
                })
            })
            .collect::<Gen<Vec<_>>>()?;
        let mut areas = [None; HOPS];
        *areas.get_mut(hop).ok_or("no such hop")? =
            Some(area(&pieces).ok_or("raw area longer than 82 bytes")?);
        let mut buf = packet_buffer();
        hazmat::create_packet_with_raw_command_areas(
            &path(&self.nodes, &self.commands)?,
            &parts(&self.encaps)?,
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
    fn rebuilt(&self, edit: &Edit) -> Gen<Vec<u8>> {
        let ciphertext = kem_ciphertext(&self.edited(received(&self.walk, 0)?, edit)?)?;
        let secret =
            hazmat::decapsulate(&self.node(0)?.key, &ciphertext).map_err(|e| e.to_string())?;
        let mut encaps = parts(&self.encaps)?;
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
    fn reenciphered(&self, hop: usize, edit: &Edit) -> Gen<Vec<u8>> {
        let mut pkt = received(&self.walk, hop)?.to_vec();
        let secret = hazmat::decapsulate(&self.node(hop)?.key, &kem_ciphertext(&pkt)?)
            .map_err(|e| e.to_string())?;
        let okm = hazmat::kdf(secret.as_bytes());
        let key: &[u8; SPRP_KEY_LEN] = key_part(&okm[..], kdf::SPRP_KEY)?;
        let iv: &[u8; SPRP_IV_LEN] = key_part(&okm[..], kdf::STREAM_IV)?;
        let aez = Aez::new(key);
        let body = pkt.get_mut(packet::PAYLOAD).ok_or("short packet")?;
        aez.decipher(iv, body);
        let changed = self.edited(body, edit)?;
        if changed.len() != body.len() {
            return Err("an edit under a layer must keep the length".into());
        }
        body.copy_from_slice(&changed);
        aez.encipher(iv, body);
        Ok(pkt)
    }

    /// `bytes` changed as `edit` says.
    fn edited(&self, bytes: &[u8], edit: &Edit) -> Gen<Vec<u8>> {
        let mut out = bytes.to_vec();
        let outside = || format!("an edit outside the {} input bytes", bytes.len());
        match edit {
            Edit::Keep => {}
            Edit::Resize(len) => out.resize(*len, 0),
            Edit::Flip(at, bit) => *out.get_mut(*at).ok_or_else(outside)? ^= 1 << bit,
            Edit::Put(at, new) => out
                .get_mut(*at..*at + new.len())
                .ok_or_else(outside)?
                .copy_from_slice(new),
            Edit::Coefficient(value) => {
                // Byte 0 and the low nibble of byte 1 of the encapsulation key.
                let [lo, hi] = value.to_le_bytes();
                let Some([first, second]) = out.get_mut(X25519_LEN..X25519_LEN + 2) else {
                    return Err(outside());
                };
                *first = lo;
                *second = (*second & 0xf0) | hi;
            }
            Edit::OtherKeyBlock(block) => {
                let range = block * SPRP_KEY_BLOCK_LEN..(block + 1) * SPRP_KEY_BLOCK_LEN;
                let other = self.other_keys.to_bytes();
                out.get_mut(range.clone())
                    .ok_or_else(outside)?
                    .copy_from_slice(other.get(range).ok_or_else(outside)?);
            }
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

/// A packet's KEM ciphertext.
fn kem_ciphertext(pkt: &[u8]) -> Gen<hazmat::KemCiphertext> {
    pkt.get(packet::KEM_CIPHERTEXT)
        .and_then(|c| c.try_into().ok())
        .ok_or_else(|| "short packet".into())
}

/// One part of the per-hop key material.
fn key_part<const N: usize>(okm: &[u8], range: std::ops::Range<usize>) -> Gen<&[u8; N]> {
    okm.get(range)
        .and_then(|k| k.try_into().ok())
        .ok_or_else(|| "key material too short".into())
}

/// One case: its inputs, `expect`, and what the reference did (`seen`).
fn build(base: &Base, spec: &Spec, id: &str, seen: &Value) -> Gen<Value> {
    let (op, mut case) = base.inputs(&spec.op)?;
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
