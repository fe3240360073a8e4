//! What a case's computed fields hold, said once for the generator, which
//! writes them, and the runner, which recomputes and compares them.

use std::ops::Range;

use aez5::Aez;
use kemsphinx::geometry::{PACKET_LEN, SHARED_SECRET_LEN, STREAM_LEN, X25519_LEN};
use kemsphinx::hazmat::kdf_layout as kdf;
use kemsphinx::{Action, Command, NodeId, PrivateKey, hazmat, replay_tag, unwrap};
use kemsphinx_support::encoded;
use serde_json::{Value, json};

use crate::json::{array, bytes};

/// Lowercase hex, the corpus encoding.
pub(crate) fn hex(bytes: impl AsRef<[u8]>) -> Value {
    Value::String(hex::encode(bytes))
}

/// A `kdf` case's fields: the parts of the 160-byte output by name.
pub(crate) const KDF_FIELDS: [(&str, Range<usize>); 4] = [
    ("header_mac_key", kdf::MAC_KEY),
    ("header_encryption_key", kdf::STREAM_KEY),
    ("header_encryption_iv", kdf::STREAM_IV),
    ("payload_encryption_key", kdf::SPRP_KEY),
];

/// The fields a primitive case's inputs determine, by name: computed here
/// once for the generator, which writes them, and the runner, which
/// compares them with the case's. `aez`: `ciphertext` (and, when the case
/// has one, `plaintext` deciphered from it); `kdf`: `okm` and its parts;
/// `stream`: `keystream` (as long as the case's, else a hop's 6,010
/// bytes); `mac`; `replay_tag`; `kem` `derive_key_pair`: both keys.
///
/// # Errors
/// A missing or malformed input field, or an unknown kind.
pub(crate) fn computed(kind: &str, case: &Value) -> Result<Vec<(&'static str, Vec<u8>)>, String> {
    Ok(match kind {
        "aez" => {
            let aez = Aez::new(&array(case, "key")?);
            let nonce = array(case, "nonce")?;
            let mut out = bytes(case, "plaintext")?;
            aez.encipher(&nonce, &mut out);
            let mut fields = vec![("ciphertext", out)];
            if case.get("ciphertext").is_some() {
                let mut back = bytes(case, "ciphertext")?;
                aez.decipher(&nonce, &mut back);
                fields.push(("plaintext", back));
            }
            fields
        }
        "kdf" => {
            let okm = hazmat::kdf(&array(case, "ikm")?);
            let part = |range: Range<usize>| okm.get(range).unwrap_or_default().to_vec();
            let mut fields = vec![("okm", okm.to_vec())];
            fields.extend(KDF_FIELDS.map(|(name, range)| (name, part(range))));
            fields
        }
        "stream" => {
            let len = case.get("keystream").map_or(Ok(STREAM_LEN), |_| {
                bytes(case, "keystream").map(|k| k.len())
            })?;
            let mut keystream = vec![0u8; len];
            hazmat::keystream(&array(case, "key")?, &array(case, "iv")?, &mut keystream);
            vec![("keystream", keystream)]
        }
        "mac" => {
            let mac = hazmat::mac(&array(case, "key")?, &bytes(case, "message")?);
            vec![("mac", mac.to_vec())]
        }
        "replay_tag" => {
            let tag = hazmat::replay_tag_of(&array(case, "kem_ciphertext")?);
            vec![("replay_tag", tag.0.to_vec())]
        }
        "derive_key_pair" => {
            let key = PrivateKey::from_seed(&array(case, "seed")?);
            let public = key.public_key().as_bytes().to_vec();
            vec![
                ("public_key", public),
                ("private_key", key.to_bytes().to_vec()),
            ]
        }
        other => return Err(format!("no computed fields for `{other}`")),
    })
}

/// A `decapsulate` case's `shared_secret` and, for a `combiner` case,
/// every intermediate of the combiner before it, by field name.
///
/// # Errors
/// If decapsulation fails.
pub(crate) fn decapsulation(
    key: &PrivateKey,
    ciphertext: &hazmat::KemCiphertext,
    combiner: bool,
) -> Result<Vec<(&'static str, [u8; SHARED_SECRET_LEN])>, String> {
    let t = hazmat::debug_decapsulate(key, ciphertext)
        .map_err(|e| format!("decapsulation failed: {e}"))?;
    let mut fields = Vec::new();
    if combiner {
        fields.extend([
            ("x25519_shared_secret", x25519_raw(key, ciphertext)?),
            (
                "x25519_adapter_shared_secret",
                t.x25519_adapter_shared_secret,
            ),
            ("mlkem_shared_secret", t.mlkem_shared_secret),
            ("splitprf_key_x25519", t.splitprf_key_x25519),
            ("splitprf_key_mlkem", t.splitprf_key_mlkem),
            ("splitprf_hash_x25519", t.splitprf_hash_x25519),
            ("splitprf_hash_mlkem", t.splitprf_hash_mlkem),
        ]);
    }
    fields.push(("shared_secret", t.shared_secret));
    Ok(fields)
}

/// Raw X25519 of the key's X25519 secret (clamped) and the ciphertext's
/// X25519 half, as a `combiner` case's `x25519_shared_secret` records it.
/// Computed with `x25519-dalek`, an implementation independent of the
/// library's own (HACL* via libcrux), so this intermediate is checked by a
/// second opinion.
fn x25519_raw(
    key: &PrivateKey,
    ciphertext: &hazmat::KemCiphertext,
) -> Result<[u8; X25519_LEN], String> {
    let secret: [u8; X25519_LEN] = key
        .to_bytes()
        .get(..X25519_LEN)
        .and_then(|s| s.try_into().ok())
        .ok_or("short private key")?;
    let point: [u8; X25519_LEN] = ciphertext
        .get(..X25519_LEN)
        .and_then(|p| p.try_into().ok())
        .ok_or("short ciphertext")?;
    Ok(x25519_dalek::StaticSecret::from(secret)
        .diffie_hellman(&x25519_dalek::PublicKey::from(point))
        .to_bytes())
}

/// How the terminal hop of a walk hands the packet over.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Terminal {
    /// A forward packet: `deliver`.
    Deliver,
    /// A reply built from a SURB: `surb_reply`.
    Reply,
}

/// What the four hops did with a packet, as `forward` and `surb` cases
/// record it.
pub(crate) struct Walk {
    /// The packet as hop 0..3 received it.
    pub(crate) packets: Vec<Box<[u8; PACKET_LEN]>>,
    /// Each hop's commands, in parse order.
    pub(crate) commands: Vec<Vec<Command>>,
    /// Each hop's `unwrap` entry: `replay_tag`, `commands` (serialised),
    /// `payload` (at the terminal hop, else null).
    pub(crate) unwrap: Vec<Value>,
    /// The terminal payload (10,156 bytes) or encrypted reply (10,188).
    pub(crate) terminal: Vec<u8>,
}

/// Unwrap `first` at each node in turn. Every hop but the last must
/// forward it to the next node, and the last hand it over as `terminal`
/// says.
///
/// # Errors
/// A hop that refuses the packet or does anything else.
pub(crate) fn walk(
    nodes: &[(NodeId, &PrivateKey)],
    first: &[u8; PACKET_LEN],
    terminal: Terminal,
) -> Result<Walk, String> {
    let mut buf = Box::new(*first);
    let mut walk = Walk {
        packets: Vec::new(),
        commands: Vec::new(),
        unwrap: Vec::new(),
        terminal: Vec::new(),
    };
    for (i, (_, key)) in nodes.iter().enumerate() {
        walk.packets.push(buf.clone());
        let tag = replay_tag(&buf);
        let out = unwrap(key, &mut buf).map_err(|e| format!("hop {i}: unwrap failed: {e}"))?;
        if out.replay_tag != tag {
            return Err(format!("hop {i}: unwrap gives another replay tag"));
        }
        let payload = match (out.action, nodes.get(i + 1), terminal) {
            (Action::Forward { next_hop, .. }, Some((next, _)), _) if next_hop == *next => None,
            (Action::Deliver { payload, .. }, None, Terminal::Deliver) => Some(payload.to_vec()),
            (
                Action::SurbReply {
                    encrypted_reply, ..
                },
                None,
                Terminal::Reply,
            ) => Some(encrypted_reply.to_vec()),
            (action, ..) => return Err(format!("hop {i}: unexpected action {action:?}")),
        };
        let commands: Vec<Value> = out.commands.iter().map(|c| hex(encoded(c))).collect();
        walk.unwrap.push(json!({
            "replay_tag": hex(tag.0),
            "commands": commands,
            "payload": payload.as_ref().map_or(Value::Null, hex),
        }));
        walk.commands.push(out.commands.iter().cloned().collect());
        if let Some(payload) = payload {
            walk.terminal = payload;
        }
    }
    Ok(walk)
}
