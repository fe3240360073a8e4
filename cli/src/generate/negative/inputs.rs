//! Negative cases for inputs that enter through a slice or a key loader:
//! every wrong length, and keys whose contents are wrong.

use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, PACKET_LEN, PAYLOAD_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN, SURB_KEYS_LEN,
    SURB_LEN, X25519_LEN,
};
use serde_json::{Value, json};

use super::{Base, by_source, choice, flipped, length, neg, recorded, resized};
use crate::generate::hex;

/// Why every input has exactly one length here.
const EXACT: &str = "every input has exactly one length and any other is refused with \
                     err_length before any work (SPEC.md section 8); the reference processes \
                     some other lengths";

/// Wrong lengths of every input that enters through a slice.
pub(super) fn lengths(base: &Base) -> Vec<Value> {
    let pkt = &base.packet(0)[..];
    let mut cases = Vec::new();
    let truncated = "KEMSphinx: invalid packet, truncated";
    let processes = "the reference checks only len >= 5,962 and processes a longer or shorter \
                     packet (AEZ is length-preserving): ok_forward";
    let packet_refs = [
        (0, recorded("neg-unwrap-length-0", truncated)),
        (
            1,
            by_source(&format!("shorter than the 5,962-byte header: {truncated}")),
        ),
        (
            PACKET_LEN - 1,
            recorded("neg-unwrap-length-16149", "ok_forward"),
        ),
        (
            PACKET_LEN + 1,
            recorded("neg-unwrap-length-16151", "ok_forward"),
        ),
        (2 * PACKET_LEN, by_source(processes)),
    ];
    for (len, reference) in packet_refs {
        let case = neg(
            &format!("unwrap-length-{len}"),
            "unwrap",
            "err_length",
            Some(&length("Packet", PACKET_LEN, len)),
            "the valid hop-0 packet cut or zero-extended; a packet is exactly 16,150 bytes",
            reference,
            json!({ "private_key": base.key(0), "packet": hex(resized(pkt, len)) }),
        );
        cases.push(if len > 1 { choice(case, EXACT) } else { case });
    }
    let surb = base.surb.as_bytes();
    for len in [SURB_LEN - 1, SURB_LEN + 1] {
        cases.push(neg(
            &format!("reply-from-surb-surb-{len}"),
            "reply_from_surb",
            "err_length",
            Some(&length("Surb", SURB_LEN, len)),
            "a valid SURB cut or zero-extended; a SURB is exactly 6,058 bytes",
            by_source("NewPacketFromSURB requires exactly the SURB length: error (truncated SURB)"),
            json!({ "surb": hex(resized(surb, len)), "payload": hex(&base.reply_payload[..]) }),
        ));
    }
    let payload_refs = [
        (
            PAYLOAD_LEN - 1,
            recorded(
                "neg-reply-from-surb-payload-10155",
                "ok (a packet of 16,149 bytes)",
            ),
        ),
        (
            PAYLOAD_LEN + 1,
            by_source("no payload length check: ok (a packet of 16,151 bytes)"),
        ),
    ];
    for (len, reference) in payload_refs {
        let case = neg(
            &format!("reply-from-surb-payload-{len}"),
            "reply_from_surb",
            "err_length",
            Some(&length("Payload", PAYLOAD_LEN, len)),
            "a reply payload is exactly 10,156 bytes",
            reference,
            json!({ "surb": hex(surb), "payload": hex(resized(&base.reply_payload[..], len)) }),
        );
        cases.push(choice(case, EXACT));
    }
    for len in [ENCRYPTED_REPLY_LEN - 1, ENCRYPTED_REPLY_LEN + 1] {
        let case = neg(
            &format!("decrypt-reply-reply-{len}"),
            "decrypt_reply",
            "err_length",
            Some(&length("EncryptedReply", ENCRYPTED_REPLY_LEN, len)),
            "the real encrypted reply cut or zero-extended; it is exactly 10,188 bytes",
            by_source(
                "DecryptSURBPayload takes any reply of at least 32 bytes; AEZ over another \
                 length gives unrelated bytes, so the tag check fails: err_payload_tag",
            ),
            json!({
                "surb_keys": hex(base.surb_keys.to_bytes()),
                "encrypted_reply": hex(resized(base.encrypted_reply(), len)),
            }),
        );
        cases.push(choice(case, EXACT));
    }
    let keys_refs = [
        (
            SURB_KEYS_LEN - 1,
            recorded(
                "neg-decrypt-reply-keys-319",
                "sphinx: invalid SURB decryption keys",
            ),
        ),
        (
            SURB_KEYS_LEN + 1,
            by_source("not a multiple of 64 bytes: sphinx: invalid SURB decryption keys"),
        ),
    ];
    for (len, reference) in keys_refs {
        cases.push(neg(
            &format!("decrypt-reply-keys-{len}"),
            "decrypt_reply",
            "err_length",
            Some(&length("SurbKeys", SURB_KEYS_LEN, len)),
            "SURB keys are exactly 320 bytes (five 64-byte blocks)",
            reference,
            json!({
                "surb_keys": hex(resized(&base.surb_keys.to_bytes()[..], len)),
                "encrypted_reply": hex(base.encrypted_reply()),
            }),
        ));
    }
    let private = base
        .nodes
        .first()
        .map(|n| n.key.to_bytes().to_vec())
        .unwrap_or_default();
    let public = base
        .nodes
        .first()
        .map(|n| n.key.public_key().to_bytes().to_vec())
        .unwrap_or_default();
    let key_refs = [
        (
            "load_private_key",
            "private_key",
            "PrivateKey",
            &private,
            PRIVATE_KEY_LEN,
            "neg-load-private-key-len-1279",
            "wrong size for private key",
        ),
        (
            "load_public_key",
            "public_key",
            "PublicKey",
            &public,
            PUBLIC_KEY_LEN,
            "neg-load-public-key-len-1215",
            "wrong size for public key",
        ),
    ];
    for (op, field, input, bytes, n, recorded_id, result) in key_refs {
        for (len, reference) in [
            (n - 1, recorded(recorded_id, result)),
            (n + 1, by_source(result)),
        ] {
            cases.push(neg(
                &format!("{}-len-{len}", op.replace('_', "-")),
                op,
                "err_length",
                Some(&length(input, n, len)),
                "a valid key cut or zero-extended",
                reference,
                json!({ field: hex(resized(bytes, len)) }),
            ));
        }
    }
    cases
}

/// Why a private key's halves must agree.
const CONSISTENT: &str = "a private key is validated once, at load: its stored encapsulation \
                          key must be the one d derives (SPEC.md section 2.5)";

/// Keys whose bytes are wrong in content.
pub(super) fn keys(base: &Base) -> Vec<Value> {
    let mut cases = Vec::new();
    let private = base
        .nodes
        .first()
        .map(|n| n.key.to_bytes().to_vec())
        .unwrap_or_default();
    let ek_at = X25519_LEN;
    let d_at = X25519_LEN + kemsphinx::geometry::MLKEM_EK_LEN;
    let accepted = recorded(
        "neg-load-private-key-ek-mismatch",
        "ok (accepted; the stored encapsulation key is not checked)",
    );
    cases.push(choice(
        neg(
            "load-private-key-ek-bitflip",
            "load_private_key",
            "err_key",
            Some("Key(Inconsistent)"),
            "one bit flipped in the stored ML-KEM encapsulation key: it no longer matches the one \
         d||z derives",
            accepted.clone(),
            json!({ "private_key": hex(flipped(&private, ek_at + 100, 3)) }),
        ),
        CONSISTENT,
    ));
    cases.push(choice(
        neg(
            "load-private-key-d-bitflip",
            "load_private_key",
            "err_key",
            Some("Key(Inconsistent)"),
            "one bit flipped in the ML-KEM seed d: the encapsulation key it derives no longer \
         matches the stored one",
            accepted,
            json!({ "private_key": hex(flipped(&private, d_at, 0)) }),
        ),
        CONSISTENT,
    ));
    cases.push(neg(
        "load-private-key-z-bitflip",
        "load_private_key",
        "ok",
        None,
        "one bit flipped in the implicit-rejection seed z: the encapsulation key depends only on \
         d, so the key is consistent and loads (no check can see z); it decapsulates valid \
         ciphertexts as before and gives other pseudo-random secrets for invalid ones",
        by_source("ok (accepted)"),
        json!({ "private_key": hex(flipped(&private, d_at + 32, 0)) }),
    ));
    let public = base
        .nodes
        .first()
        .map(|n| n.key.public_key().to_bytes().to_vec())
        .unwrap_or_default();
    for (value, expect, detail) in [
        (3_329u16, "err_key", Some("Key(MlKemEncapsulationKey)")),
        (4_095, "err_key", Some("Key(MlKemEncapsulationKey)")),
        (3_328, "ok", None),
    ] {
        let mut pk = public.clone();
        // The first 12-bit coefficient: byte 0 and the low nibble of byte 1.
        let [lo, hi] = value.to_le_bytes();
        if let Some(b) = pk.get_mut(ek_at) {
            *b = lo;
        }
        if let Some(b) = pk.get_mut(ek_at + 1) {
            *b = (*b & 0xf0) | hi;
        }
        let case = neg(
            &format!("load-public-key-mlkem-coefficient-{value}"),
            "load_public_key",
            expect,
            detail,
            &format!(
                "the first coefficient of the ML-KEM encapsulation key set to {value} (q = 3,329; \
                 FIPS 203 requires every coefficient < q)"
            ),
            by_source(
                "hpqc's ML-KEM wrapper (as in the public index; not verified for the pinned \
                 version) checks only the length when loading; the FIPS 203 modulus check runs \
                 inside Encapsulate, whose error createKEMHeader turns into a panic",
            ),
            json!({ "public_key": hex(&pk) }),
        );
        cases.push(if detail.is_some() {
            choice(
                case,
                "the FIPS 203 modulus check runs when a public key is loaded, not \
                          at its first encapsulation (SPEC.md section 2.5)",
            )
        } else {
            case
        });
    }
    for kemsphinx_support::SmallOrderPoint {
        name,
        what,
        u: point,
    } in kemsphinx_support::small_order_encodings()
    {
        let mut pk = public.clone();
        if let Some(x) = pk.get_mut(..X25519_LEN) {
            x.copy_from_slice(&point);
        }
        cases.push(choice(
            neg(
                &format!("load-public-key-x25519-{name}"),
                "load_public_key",
                "err_key",
                Some("Key(X25519LowOrder)"),
                &format!("X25519 half {what}: every Diffie-Hellman with it is all zero"),
                by_source("accepted (X25519 public keys are any 32 bytes; SPEC.md section 9)"),
                json!({ "public_key": hex(&pk) }),
            ),
            "a public key whose X25519 half has small order is refused at load: every \
            encapsulation to it would have a public X25519 secret (SPEC.md section 2.5)",
        ));
    }
    cases
}
