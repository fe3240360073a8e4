//! `negative` cases: one per class of malformed input, each with the
//! outcome this library gives (`expect`, and its exact error in
//! `expect_detail`) and what the reference does (`reference_result`).
//!
//! `expect` is written here by hand from SPEC.md §7, never read back from
//! the library; the generator then runs every case through the
//! conformance runner and refuses to write a corpus the library disagrees
//! with.

mod commands;
mod inputs;
mod packets;
mod replies;

use kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{Command, RecipientId, Surb, SurbId, SurbKeys};
use serde_json::{Value, json};

use kemsphinx_support::Node;

use super::scenario::{Encap, Walk, forward_packet, make_surb, nodes, packet_buffer, path, walk};
use super::{Drbg, Gen, hex};

/// The reference's outcome for the same class of input as recorded in
/// `vectors/reference/negative.json`.
pub(crate) fn recorded(case: &str, result: &str) -> String {
    format!(
        "not run against the reference; its recorded outcome for the same class of input \
         (vectors/reference/negative.json, {case}): {result}"
    )
}

/// The reference's outcome as read from its source.
pub(crate) fn by_source(text: &str) -> String {
    format!("not run against the reference; expected from its source: {text}")
}

/// Mark a case whose outcome is this library's choice, where the
/// reference behaves otherwise or defines no outcome: `library_choice`
/// says what was chosen and why.
pub(crate) fn choice(mut case: Value, why: &str) -> Value {
    case["library_choice"] = json!(why);
    case
}

/// A negative case: `fields` plus the common ones.
pub(crate) fn neg(
    id: &str,
    op: &str,
    expect: &str,
    detail: Option<&str>,
    note: &str,
    reference: String,
    mut fields: Value,
) -> Value {
    fields["id"] = json!(format!("neg-own-{id}"));
    fields["op"] = json!(op);
    fields["expect"] = json!(expect);
    if let Some(d) = detail {
        fields["expect_detail"] = json!(d);
    }
    fields["note"] = json!(note);
    fields["reference_result"] = json!(reference);
    fields
}

/// The scenario every negative case starts from: a valid forward packet
/// and a valid SURB (with its reply) over the same four nodes.
pub(crate) struct Base {
    pub(crate) nodes: [Node; HOPS],
    pub(crate) commands: Vec<Vec<Command>>,
    pub(crate) payload: Box<[u8; PAYLOAD_LEN]>,
    pub(crate) encaps: Vec<Encap>,
    pub(crate) walk: Walk,
    pub(crate) surb: Surb,
    pub(crate) surb_keys: SurbKeys,
    pub(crate) reply_payload: Box<[u8; PAYLOAD_LEN]>,
    pub(crate) reply_walk: Walk,
    pub(crate) other_keys: SurbKeys,
}

impl Base {
    fn new(rng: &mut Drbg) -> Gen<Self> {
        let nodes = nodes(rng);
        let recipient = Command::Recipient(RecipientId(rng.array()));
        let surb_id = Command::SurbReply(SurbId(rng.array()));
        let delays = [10, 20, 30].map(|d| vec![Command::NodeDelay(d)]);
        let mut commands = delays.to_vec();
        commands.push(vec![recipient]);
        let mut payload = Box::new([0u8; PAYLOAD_LEN]);
        payload.copy_from_slice(&rng.bytes(PAYLOAD_LEN));
        let (packet, encaps) = forward_packet(rng, &path(&nodes, &commands)?, &payload)?;
        let forward_walk = walk(&nodes, &packet)?;

        let mut surb_commands = delays.to_vec();
        surb_commands.push(vec![recipient, surb_id]);
        let surb_path = path(&nodes, &surb_commands)?;
        let (surb, surb_keys, _) = make_surb(rng, &surb_path)?;
        let (_, other_keys, _) = make_surb(rng, &surb_path)?;
        let mut reply_payload = Box::new([0u8; PAYLOAD_LEN]);
        reply_payload.copy_from_slice(&rng.bytes(PAYLOAD_LEN));
        let mut reply = packet_buffer();
        Surb::from_bytes(surb.as_bytes())
            .map_err(|e| e.to_string())?
            .reply(&reply_payload, &mut reply);
        let reply_walk = walk(&nodes, &reply)?;
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

    /// The packet hop `i` receives.
    pub(crate) fn packet(&self, i: usize) -> &[u8; PACKET_LEN] {
        self.walk.packets.get(i).map_or(&[0; PACKET_LEN], |p| p)
    }

    /// Node `i`'s 1,280-byte private key, as hex.
    pub(crate) fn key(&self, i: usize) -> Value {
        self.nodes
            .get(i)
            .map_or(Value::Null, |n| hex(&n.key.to_bytes()[..]))
    }

    /// The encrypted reply the SURB's terminal hop hands over.
    pub(crate) fn encrypted_reply(&self) -> &[u8] {
        &self.reply_walk.terminal
    }
}

/// `bytes` cut or zero-extended to `len`.
pub(crate) fn resized(bytes: &[u8], len: usize) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.resize(len, 0);
    v
}

/// `bytes` with bit `bit` of byte `at` flipped.
pub(crate) fn flipped(bytes: &[u8], at: usize, bit: u8) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if let Some(b) = v.get_mut(at) {
        *b ^= 1 << bit;
    }
    v
}

/// The `Debug` form of a length error, the `expect_detail` vocabulary.
pub(crate) fn length(input: &str, expected: usize, got: usize) -> String {
    format!("Length {{ input: {input}, expected: {expected}, got: {got} }}")
}

/// `negative`: every class, then every case checked against the library.
pub(crate) fn negative(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let base = Base::new(rng)?;
    let mut cases = packets::unwrap_cases(&base)?;
    cases.extend(commands::commands(&base)?);
    cases.extend(inputs::lengths(&base));
    cases.extend(inputs::keys(&base));
    cases.extend(replies::replies(&base));
    cases.extend(replies::creation(&base));
    for case in &cases {
        crate::conformance::check_negative(case).map_err(|e| {
            let id = case.get("id").and_then(Value::as_str).unwrap_or("?");
            format!("{id}: the library disagrees with the intended outcome: {e}")
        })?;
    }
    Ok(cases)
}
