//! Negative cases for SURB replies and for creation.

use kemsphinx::geometry::SPRP_KEY_BLOCK_LEN;
use kemsphinx::{Command, NodeId, RecipientId, SurbId};
use serde_json::{Value, json};

use super::{Base, by_source, choice, flipped, neg, recorded};
use crate::generate::hex;
use crate::generate::scenario::commands_json;

/// SURB replies and their decryption.
pub(super) fn replies(base: &Base) -> Vec<Value> {
    let mut cases = Vec::new();
    let keys = &base.surb_keys.to_bytes()[..];
    let reply = base.encrypted_reply();
    cases.push(neg(
        "decrypt-reply-valid",
        "decrypt_reply",
        "ok",
        None,
        "control: the right keys and the untouched reply decrypt",
        by_source("ok"),
        json!({ "surb_keys": hex(keys), "encrypted_reply": hex(reply) }),
    ));
    cases.push(neg(
        "decrypt-reply-bitflip",
        "decrypt_reply",
        "err_payload_tag",
        Some("PayloadTag"),
        "one bit flipped in the encrypted reply",
        recorded(
            "neg-decrypt-reply-corrupted-reply",
            "sphinx: payload auth failed",
        ),
        json!({ "surb_keys": hex(keys), "encrypted_reply": hex(flipped(reply, 5_000, 7)) }),
    ));
    for block in 0..5 {
        let mut wrong = keys.to_vec();
        let range = block * SPRP_KEY_BLOCK_LEN..(block + 1) * SPRP_KEY_BLOCK_LEN;
        if let (Some(dst), Some(src)) = (
            wrong.get_mut(range.clone()),
            base.other_keys.to_bytes().get(range),
        ) {
            dst.copy_from_slice(src);
        }
        let reference = if block == 0 {
            recorded(
                "neg-decrypt-reply-key-block-0-corrupted",
                "sphinx: payload auth failed",
            )
        } else {
            by_source("sphinx: payload auth failed")
        };
        cases.push(neg(
            &format!("decrypt-reply-wrong-key-block-{block}"),
            "decrypt_reply",
            "err_payload_tag",
            Some("PayloadTag"),
            &format!(
                "key block {block} of 5 replaced by the same block of another SURB's keys \
                 (blocks 0-3 undo the hops, last hop first; block 4 is the reply's own key)"
            ),
            reference,
            json!({ "surb_keys": hex(&wrong), "encrypted_reply": hex(reply) }),
        ));
    }
    let mut versioned = base.surb.as_bytes().to_vec();
    if let Some(b) = versioned.get_mut(1) {
        *b = 1;
    }
    cases.push(choice(
        neg(
            "reply-from-surb-version-0001",
            "reply_from_surb",
            "err_version",
            Some("Version"),
            "a SURB whose header version is 00 01: refused when the SURB is read, before any reply \
         is built",
            by_source(
                "NewPacketFromSURB does not look at the version: ok (the first hop then \
                   refuses the packet: unknown version)",
            ),
            json!({ "surb": hex(&versioned), "payload": hex(&base.reply_payload[..]) }),
        ),
        "a SURB's header version is checked when the SURB is read, so no reply is \
         built from a SURB no hop would accept",
    ));
    cases
}

/// Why creation refuses what the reference creates.
const CHECKED: &str = "creation checks every hop's commands as its hop will parse them, and \
                       writes nothing unless all can be created (SPEC.md section 4)";

/// One creation that must be refused.
struct Create {
    id: &'static str,
    op: &'static str,
    commands: Vec<Vec<Command>>,
    /// This library's error (`expect` is always `err_command`).
    detail: &'static str,
    note: &'static str,
    reference: &'static str,
}

/// Creation refusing commands it cannot create; nothing is written.
pub(super) fn creation(base: &Base) -> Vec<Value> {
    let nodes: Vec<Value> = base
        .nodes
        .iter()
        .map(|n| json!({ "id": hex(n.id.0), "public_key": hex(n.key.public_key().as_bytes()) }))
        .collect();
    creations(base)
        .into_iter()
        .map(|c| {
            let mut fields = json!({ "nodes": nodes, "commands": commands_json(&c.commands) });
            if c.op == "create_packet" {
                fields["payload"] = hex(&base.payload[..]);
            }
            let reference = by_source(c.reference);
            let detail = Some(c.detail);
            let case = neg(c.id, c.op, "err_command", detail, c.note, reference, fields);
            choice(case, CHECKED)
        })
        .collect()
}

/// The refused creations: the base commands with one hop changed.
fn creations(base: &Base) -> Vec<Create> {
    let recipient = Command::Recipient(RecipientId([0x52; 32]));
    let surb_id = Command::SurbReply(SurbId([0x53; 16]));
    let next = Command::NextNodeHop {
        id: base.nodes.get(1).map_or(NodeId([0; 32]), |n| n.id),
        mac: [0; 32],
    };
    let with = |hop: usize, cmds: Vec<Command>| {
        let mut c = base.commands.clone();
        if let Some(h) = c.get_mut(hop) {
            *h = cmds;
        }
        c
    };
    let created = "creates the packet (SPEC.md section 9)";
    vec![
        Create {
            id: "create-packet-commands-too-long",
            op: "create_packet",
            commands: with(1, vec![Command::NodeDelay(1), recipient]),
            detail: "Command(TooLong)",
            note: "hop 1 given node_delay and recipient: with the next_node_hop the creator \
                   adds that is 103 bytes, more than the 82-byte area",
            reference: "creates the packet: commands are checked only against the 1,202-byte \
                        block, and the next hop's KEM ciphertext then overwrites everything \
                        past byte 82 (SPEC.md section 9)",
        },
        Create {
            id: "create-packet-next-node-hop-supplied",
            op: "create_packet",
            commands: with(0, vec![next]),
            detail: "Command(ReservedCommand)",
            note: "hop 0 given a next_node_hop: only the creator writes it (with the real MAC)",
            reference: created,
        },
        Create {
            id: "create-packet-terminal-without-recipient",
            op: "create_packet",
            commands: with(3, vec![Command::NodeDelay(1)]),
            detail: "Command(NoAction)",
            note: "terminal hop given only node_delay: no action for it",
            reference: created,
        },
        Create {
            id: "create-packet-terminal-surb-reply",
            op: "create_packet",
            commands: with(3, vec![recipient, surb_id]),
            detail: "Command(WrongTerminalAction)",
            note: "a forward packet whose terminal hop would hand the payload over as a SURB \
                   reply",
            reference: created,
        },
        Create {
            id: "create-surb-terminal-deliver",
            op: "create_surb",
            commands: with(3, vec![recipient]),
            detail: "Command(WrongTerminalAction)",
            note: "a SURB whose terminal hop has recipient but no surb_reply: the reply would \
                   be delivered as a forward payload",
            reference: "creates the SURB (SPEC.md section 9)",
        },
    ]
}
