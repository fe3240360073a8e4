//! Negative `unwrap` cases for malformed commands areas that carry a
//! valid MAC, made with the crate's hidden raw-commands creator.

use kemsphinx::geometry::{COMMANDS_LEN, HOPS};
use kemsphinx::{Command, RecipientId, SurbId, hazmat, unwrap};
use serde_json::Value;

use super::packets::case;
use super::{Base, by_source, choice, recorded};
use crate::generate::Gen;
use crate::generate::scenario::{packet_buffer, parts, path};
use kemsphinx_support::encoded;

/// A commands area from its parts, zero-padded to 82 bytes.
fn area(parts: &[&[u8]]) -> Gen<[u8; COMMANDS_LEN]> {
    let bytes = parts.concat();
    let mut out = [0u8; COMMANDS_LEN];
    out.get_mut(..bytes.len())
        .ok_or("raw area longer than 82 bytes")?
        .copy_from_slice(&bytes);
    Ok(out)
}

/// The packet that hop `at` receives when its commands area is `raw`
/// (every other hop's commands as in the base scenario, valid MACs).
fn raw_packet(base: &Base, at: usize, raw: [u8; COMMANDS_LEN]) -> Gen<Vec<u8>> {
    let mut areas = [None; HOPS];
    if let Some(slot) = areas.get_mut(at) {
        *slot = Some(raw);
    }
    let mut buf = packet_buffer();
    hazmat::create_packet_with_raw_command_areas(
        &path(&base.nodes, &base.commands)?,
        &parts(&base.encaps)?,
        &areas,
        &base.payload,
        &mut buf,
    )
    .map_err(|e| e.to_string())?;
    for (i, node) in base.nodes.iter().take(at).enumerate() {
        unwrap(&node.key, &mut buf).map_err(|e| format!("raw packet, hop {i}: {e}"))?;
    }
    Ok(buf.to_vec())
}

/// One malformed commands area and what it must give.
struct Raw {
    name: &'static str,
    /// The hop whose area it is (and who receives the case's packet).
    hop: usize,
    area: [u8; COMMANDS_LEN],
    /// This library's error (`expect` is always `err_command`).
    detail: &'static str,
    reference: String,
    note: &'static str,
    /// Whether refusing it is this library's choice (stricter parsing).
    strict: bool,
}

/// Why the stricter cases are refused.
const STRICT: &str = "commands are parsed strictly: each at most once, and exactly one action \
                      (forward, deliver, or SURB reply) per hop (SPEC.md section 4)";

/// Malformed commands areas with a valid MAC, at hop 0 or the terminal hop.
pub(super) fn commands(base: &Base) -> Gen<Vec<Value>> {
    cases(base)?
        .into_iter()
        .map(|raw| {
            let pkt = raw_packet(base, raw.hop, raw.area)?;
            let note = format!(
                "{}; built with valid MACs by the hidden raw-commands creator, given to hop {}",
                raw.note, raw.hop
            );
            let id = format!("unwrap-cmd-{}", raw.name);
            let expect = ("err_command", Some(raw.detail));
            let case = case(base, &id, raw.hop, &pkt, expect, &note, raw.reference);
            Ok(if raw.strict {
                choice(case, STRICT)
            } else {
                case
            })
        })
        .collect()
}

/// The areas: every class the parser refuses, at the hop where it matters.
fn cases(base: &Base) -> Gen<Vec<Raw>> {
    let (next_id, next_mac) = base
        .walk
        .first_next_hop
        .ok_or("no next_node_hop at hop 0")?;
    let nnh = encoded(&Command::NextNodeHop {
        id: next_id,
        mac: next_mac,
    });
    let delay = encoded(&Command::NodeDelay(10));
    let recipient = encoded(&Command::Recipient(RecipientId([0x52; 32])));
    let surb = encoded(&Command::SurbReply(SurbId([0x53; 16])));
    let invalid = "sphinx: invalid per-hop command";
    let mut trailing = area(&[&nnh])?;
    if let Some(b) = trailing.last_mut() {
        *b = 0x01;
    }
    Ok(vec![
        Raw {
            name: "unknown-id",
            hop: 0,
            area: area(&[&[0x04]])?,
            detail: "Command(UnknownId(4))",
            reference: recorded("neg-unwrap-cmd-unknown-id-0x7f", invalid),
            note: "commands area 04 00 ...: 0x04 is not a command id",
            strict: false,
        },
        Raw {
            name: "truncated-body",
            hop: 0,
            area: area(&[&delay, &nnh, recipient.get(..12).unwrap_or_default()])?,
            detail: "Command(Truncated)",
            reference: by_source(invalid),
            note: "node_delay, next_node_hop, then a recipient command cut by the end of the \
                   area after 11 of its 32 body bytes",
            strict: false,
        },
        Raw {
            name: "nonzero-after-null",
            hop: 0,
            area: trailing,
            detail: "Command(TrailingData)",
            reference: by_source(&format!(
                "the null command requires every later byte to be zero: {invalid}"
            )),
            note: "next_node_hop, null, then 01 in the last byte of the area",
            strict: false,
        },
        Raw {
            name: "two-next-node-hop",
            hop: 0,
            area: area(&[&nnh, nnh.get(..17).unwrap_or_default()])?,
            detail: "Command(Truncated)",
            reference: by_source(&format!("the second next_node_hop is cut short: {invalid}")),
            note: "next_node_hop twice: two take 130 bytes, so the second is cut after 16 of \
                   its 64 body bytes; this library reports the truncation, which it meets \
                   before a repeat could be seen",
            strict: false,
        },
        Raw {
            name: "two-node-delay",
            hop: 0,
            area: area(&[&delay, &delay, &nnh])?,
            detail: "Command(Duplicate)",
            reference: by_source(
                "only next_node_hop and surb_reply are checked for repeats: ok_forward",
            ),
            note: "node_delay twice, then next_node_hop (with the real next MAC)",
            strict: true,
        },
        Raw {
            name: "next-node-hop-with-surb-reply",
            hop: 0,
            area: area(&[&nnh, &surb])?,
            detail: "Command(NoAction)",
            reference: by_source(
                "forwards whenever next_node_hop is present, ignoring surb_reply: ok_forward",
            ),
            note: "next_node_hop together with surb_reply: two actions",
            strict: true,
        },
        Raw {
            name: "delay-only",
            hop: 0,
            area: area(&[&delay])?,
            detail: "Command(NoAction)",
            reference: by_source(
                "no next_node_hop and no surb_reply: treated as a terminal hop, and the \
                 payload (still under three layers) fails the tag check: sphinx: payload \
                 auth failed",
            ),
            note: "node_delay alone at hop 0: no action",
            strict: true,
        },
        Raw {
            name: "two-surb-reply",
            hop: 3,
            area: area(&[&recipient, &surb, &surb])?,
            detail: "Command(Duplicate)",
            reference: recorded(
                "neg-unwrap-cmd-two-surb-reply",
                "KEMSphinx: invalid packet, > 1 surb_reply",
            ),
            note: "terminal hop: recipient then surb_reply twice",
            strict: false,
        },
        Raw {
            name: "two-recipient",
            hop: 3,
            area: area(&[&recipient, &recipient])?,
            detail: "Command(Duplicate)",
            reference: by_source("recipient is not checked for repeats: ok_deliver"),
            note: "terminal hop: recipient twice",
            strict: true,
        },
        Raw {
            name: "empty-terminal",
            hop: 3,
            area: [0; COMMANDS_LEN],
            detail: "Command(NoAction)",
            reference: by_source(
                "no next_node_hop and no surb_reply: the tag is checked and the payload \
                 delivered with no recipient command: ok_deliver",
            ),
            note: "terminal hop with an all-zero commands area: no recipient",
            strict: true,
        },
        Raw {
            name: "surb-reply-without-recipient",
            hop: 3,
            area: area(&[&surb])?,
            detail: "Command(NoAction)",
            reference: by_source(
                "surb_reply without recipient: the encrypted reply is handed over: ok_reply",
            ),
            note: "terminal hop: surb_reply alone",
            strict: true,
        },
    ])
}
