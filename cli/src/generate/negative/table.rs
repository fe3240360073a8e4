//! Every negative case as a data row of `cases.txt`: its id, the
//! operation, how its input is made from the base scenario, the outcome
//! this library gives (by hand from SPEC.md §7), the reason where the
//! reference behaves otherwise, and a note.
//!
//! A row is `id | operation | change | expect | expect_detail | reason |
//! note` (`-` for none); a line `= NAME | text` names a reason. Operations:
//! `unwrap KEY PACKET` (node `KEY` unwraps a packet: `fwd:HOP` or
//! `reply:HOP`, the forward packet or the reply as hop `HOP` receives it;
//! `zero`, 16,150 zero bytes; `raw:HOP`, the forward packet with hop
//! `HOP`'s commands area made of the change's parts, valid MACs
//! throughout; `rebuilt`, the forward packet rebuilt for the KEM ciphertext
//! the change leaves in hop 0's packet; `reenc:HOP`, the payload changed
//! under hop `HOP`'s layer), `edit INPUT` (the operation that takes this
//! input of the base scenario, changed), `create_packet HOP` /
//! `create_surb HOP` (hop `HOP` given the change's commands). Changes:
//! `keep`, `resize LEN`, `flip AT BIT`, `put AT BYTES` (hex, `p+2`, or
//! `point:NAME`, a small-order encoding, whose description fills `{what}`
//! in the note), `coefficient VALUE` (the ML-KEM encapsulation key's first
//! coefficient), `other_block I` (SURB key block `I` from other keys).
//! `AT` is a byte offset, or a layout name (`version`, `x25519`,
//! `x25519_end`, `mlkem`, `routing0`..`routing3`, `mac`, `payload`,
//! `tag_end`) with an optional `+N` or `-N`. Commands and parts:
//! `next_hop` (hop 0's real one), `next_hop_zero_mac`, `delay:MS`,
//! `recipient` (32 bytes 0x52), `surb_reply` (16 bytes 0x53),
//! `head:COMMAND:N` (its first `N` encoded bytes), `bytes:HEX`.

use kemsphinx::geometry::layout::{packet, payload};
use kemsphinx_support::{P_PLUS_2, small_order_encodings};

use crate::generate::drbg::Gen;

/// The rows.
const ROWS: &str = include_str!("cases.txt");

/// One case.
pub(super) struct Spec {
    /// The id, less the `neg-own-` every id starts with.
    pub(super) id: &'static str,
    pub(super) op: Op,
    /// `expect`, and `expect_detail` (this library's error in `Debug` form).
    pub(super) expect: (&'static str, Option<&'static str>),
    pub(super) note: String,
    /// `library_choice`: why this library gives `expect` where the
    /// reference does otherwise (required exactly there).
    pub(super) choice: Option<&'static str>,
}

/// The operation and how each of its inputs is made.
pub(super) enum Op {
    /// `unwrap` of `packet` with node `key`'s private key.
    Unwrap { packet: Packet, key: usize },
    /// The operation that takes this input, given it edited and every
    /// other input as in the base scenario.
    Edited(Input, Edit),
    /// `create_packet` (or, with `surb`, `create_surb`) over the base nodes
    /// with the base commands, but hop `hop` given `commands`.
    Create {
        surb: bool,
        hop: usize,
        commands: Vec<Cmd>,
    },
}

/// An input of the base scenario.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Input {
    Surb,
    Payload,
    EncryptedReply,
    SurbKeys,
    PrivateKey,
    PublicKey,
}

/// A packet made from the base scenario (see the module documentation).
pub(super) enum Packet {
    Forward(usize, Edit),
    Reply(usize, Edit),
    Zero,
    RawArea(usize, Vec<Part>),
    Rebuilt(Edit),
    Reenciphered(usize, Edit),
}

/// A change to an input's bytes.
pub(super) enum Edit {
    Keep,
    Resize(usize),
    Flip(usize, u8),
    Put(usize, Vec<u8>),
    Coefficient(u16),
    OtherKeyBlock(usize),
}

/// A command, as the cases use them.
#[derive(Clone, Copy)]
pub(super) enum Cmd {
    NextHop,
    NextHopZeroMac,
    Delay(u32),
    Recipient,
    SurbReply,
}

/// A piece of a raw commands area.
pub(super) enum Part {
    Whole(Cmd),
    Head(Cmd, usize),
    Bytes(Vec<u8>),
}

/// Every case, in the order of the file.
pub(super) fn table() -> Gen<Vec<Spec>> {
    let mut reasons = Vec::new();
    let mut specs = Vec::new();
    for line in ROWS
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if let Some((name, text)) = line.strip_prefix("= ").and_then(|r| r.split_once(" | ")) {
            reasons.push((name, text));
        } else {
            specs.push(row(line, &reasons).map_err(|e| format!("cases.txt: {e}: {line}"))?);
        }
    }
    Ok(specs)
}

/// One row.
fn row(line: &'static str, reasons: &[(&str, &'static str)]) -> Gen<Spec> {
    let fields: Vec<&'static str> = line.splitn(7, " | ").collect();
    let [id, op, change, expect, detail, reason, note] = fields[..] else {
        return Err("not seven fields".into());
    };
    let mut what = None;
    let op = match op.split(' ').collect::<Vec<_>>()[..] {
        ["unwrap", key, packet] => Op::Unwrap {
            key: number(key)?,
            packet: packet_of(packet, change, &mut what)?,
        },
        ["edit", input] => Op::Edited(input_of(input)?, edit(change, &mut what)?),
        [create @ ("create_packet" | "create_surb"), hop] => Op::Create {
            surb: create == "create_surb",
            hop: number(hop)?,
            commands: change.split(' ').map(cmd).collect::<Gen<_>>()?,
        },
        _ => return Err(format!("unknown operation `{op}`")),
    };
    let choice = match reason {
        "-" => None,
        name => Some(
            reasons
                .iter()
                .find(|r| r.0 == name)
                .ok_or("unknown reason")?
                .1,
        ),
    };
    Ok(Spec {
        id,
        op,
        expect: (expect, (detail != "-").then_some(detail)),
        note: what.map_or_else(|| note.to_owned(), |w| note.replace("{what}", &w)),
        choice,
    })
}

/// A packet of an `unwrap` row.
fn packet_of(spec: &str, change: &str, what: &mut Option<String>) -> Gen<Packet> {
    let (kind, hop) = spec.split_once(':').unwrap_or((spec, "0"));
    let hop = number(hop)?;
    Ok(match kind {
        "fwd" => Packet::Forward(hop, edit(change, what)?),
        "reply" => Packet::Reply(hop, edit(change, what)?),
        "zero" => Packet::Zero,
        "raw" => Packet::RawArea(
            hop,
            change
                .split(' ')
                .filter(|p| *p != "-")
                .map(part)
                .collect::<Gen<_>>()?,
        ),
        "rebuilt" => Packet::Rebuilt(edit(change, what)?),
        "reenc" => Packet::Reenciphered(hop, edit(change, what)?),
        _ => return Err(format!("unknown packet `{spec}`")),
    })
}

/// An input of an `edit` row.
fn input_of(name: &str) -> Gen<Input> {
    Ok(match name {
        "surb" => Input::Surb,
        "payload" => Input::Payload,
        "encrypted_reply" => Input::EncryptedReply,
        "surb_keys" => Input::SurbKeys,
        "private_key" => Input::PrivateKey,
        "public_key" => Input::PublicKey,
        _ => return Err(format!("unknown input `{name}`")),
    })
}

/// A change; a small-order point's description goes to `what`.
fn edit(change: &str, what: &mut Option<String>) -> Gen<Edit> {
    Ok(match change.split(' ').collect::<Vec<_>>()[..] {
        ["keep"] => Edit::Keep,
        ["resize", len] => Edit::Resize(number(len)?),
        ["flip", at, bit] => Edit::Flip(offset(at)?, number(bit)?),
        ["put", at, "p+2"] => Edit::Put(offset(at)?, P_PLUS_2.to_vec()),
        ["put", at, value] => Edit::Put(
            offset(at)?,
            match value.strip_prefix("point:") {
                Some(name) => {
                    let point = small_order_encodings().into_iter().find(|p| p.name == name);
                    let point = point.ok_or_else(|| format!("no small-order point `{name}`"))?;
                    *what = Some(point.what);
                    point.u.to_vec()
                }
                None => hex::decode(value).map_err(|e| e.to_string())?,
            },
        ),
        ["coefficient", value] => Edit::Coefficient(number(value)?),
        ["other_block", block] => Edit::OtherKeyBlock(number(block)?),
        _ => return Err(format!("unknown change `{change}`")),
    })
}

/// A byte offset: a number, or a layout name with an optional `+N`/`-N`.
fn offset(at: &str) -> Gen<usize> {
    let (name, delta) = at.split_at(at.find(['+', '-']).unwrap_or(at.len()));
    let base = match name {
        "version" => packet::VERSION.start,
        "x25519" => packet::KEM_X25519.start,
        "x25519_end" => packet::KEM_X25519.end,
        "mlkem" => packet::KEM_MLKEM.start,
        "mac" => packet::MAC.start,
        "payload" => packet::PAYLOAD.start,
        "tag_end" => payload::TAG.end,
        _ => match name.strip_prefix("routing") {
            Some(block) => packet::routing_block(number(block)?).start,
            None => number(name)?,
        },
    };
    match delta.split_at_checked(1) {
        Some(("+", n)) => Ok(base + number::<usize>(n)?),
        Some(("-", n)) => base.checked_sub(number(n)?).ok_or("offset below 0".into()),
        _ => Ok(base),
    }
}

/// A command.
fn cmd(text: &str) -> Gen<Cmd> {
    Ok(match text.split_once(':') {
        Some(("delay", ms)) => Cmd::Delay(number(ms)?),
        _ => match text {
            "next_hop" => Cmd::NextHop,
            "next_hop_zero_mac" => Cmd::NextHopZeroMac,
            "recipient" => Cmd::Recipient,
            "surb_reply" => Cmd::SurbReply,
            _ => return Err(format!("unknown command `{text}`")),
        },
    })
}

/// A part of a raw commands area.
fn part(text: &str) -> Gen<Part> {
    if let Some(bytes) = text.strip_prefix("bytes:") {
        return Ok(Part::Bytes(hex::decode(bytes).map_err(|e| e.to_string())?));
    }
    if let Some((command, n)) = text.strip_prefix("head:").and_then(|h| h.rsplit_once(':')) {
        return Ok(Part::Head(cmd(command)?, number(n)?));
    }
    cmd(text).map(Part::Whole)
}

/// A decimal number.
fn number<T: std::str::FromStr>(text: &str) -> Gen<T> {
    text.parse().map_err(|_| format!("not a number: `{text}`"))
}
