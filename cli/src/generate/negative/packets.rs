//! Negative `unwrap` cases: packets of the right length that a hop must
//! refuse (or, where noted, accept), each with the key of the hop it is
//! given to.

use kemsphinx::aez::Aez;
use kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_TAG_LEN, X25519_LEN};
use kemsphinx::hazmat;
use serde_json::{Value, json};

use super::{Base, by_source, choice, flipped, neg, recorded};
use crate::generate::scenario::{packet_buffer, parts, path};
use crate::generate::{Gen, hex};
use kemsphinx::geometry::layout;

/// An `unwrap` case: `packet` given to node `hop`.
pub(super) fn case(
    base: &Base,
    id: &str,
    hop: usize,
    packet: &[u8],
    (expect, detail): (&str, Option<&str>),
    note: &str,
    reference: String,
) -> Value {
    neg(
        id,
        "unwrap",
        expect,
        detail,
        note,
        reference,
        json!({ "private_key": base.key(hop), "packet": hex(packet) }),
    )
}

const MAC: (&str, Option<&str>) = ("err_mac", Some("Mac"));
const KEM: (&str, Option<&str>) = ("err_kem", Some("Kem"));
const MISMATCH: &str = "KEMSphinx: invalid packet, MAC mismatch";

/// Every `unwrap` case.
pub(crate) fn unwrap_cases(base: &Base) -> Gen<Vec<Value>> {
    let mut cases = versions(base);
    cases.extend(small_order(base));
    cases.extend(non_canonical(base)?);
    cases.extend(regions(base));
    cases.extend(payloads(base)?);
    Ok(cases)
}

/// Version bytes other than `00 00`.
fn versions(base: &Base) -> Vec<Value> {
    let unknown = "KEMSphinx: invalid packet, unknown version";
    [
        (
            [1u8, 0u8],
            recorded("neg-unwrap-version-byte0-flip", unknown),
        ),
        ([0, 1], recorded("neg-unwrap-version-byte1-flip", unknown)),
        ([0xff, 0xff], by_source(unknown)),
    ]
    .into_iter()
    .map(|(v, reference)| {
        let mut pkt = base.packet(0).to_vec();
        if let Some(head) = pkt.get_mut(..2) {
            head.copy_from_slice(&v);
        }
        case(
            base,
            &format!("unwrap-version-{}", hex::encode(v)),
            0,
            &pkt,
            ("err_version", Some("Version")),
            "the only version is 00 00; checked before any KEM work",
            reference,
        )
    })
    .collect()
}

/// Why a small-order point is an error rather than a crash.
const LOW_ORDER: &str = "a small-order X25519 point (any encoding) is refused with err_kem before \
                         the MAC, where the reference panics (SPEC.md section 2.1)";

/// Every small-order encoding in the X25519 half, and the all-zero packet.
fn small_order(base: &Base) -> Vec<Value> {
    let panics = "panic: crypto/ecdh: bad X25519 remote ECDH input: low order point";
    let mut cases: Vec<Value> = kemsphinx_support::small_order_encodings()
        .into_iter()
        .map(
            |kemsphinx_support::SmallOrderPoint {
                 name,
                 what,
                 u: point,
             }| {
                let mut pkt = base.packet(0).to_vec();
                if let Some(x) = pkt.get_mut(layout::packet::KEM_X25519) {
                    x.copy_from_slice(&point);
                }
                let reference = if name == "u0" {
                    recorded("neg-unwrap-x25519-small-order-u0", panics)
                } else {
                    by_source(&format!(
                        "Go's X25519 ignores bit 255, reduces u mod p and refuses the all-zero \
                     output, which hpqc's X25519 turns into a panic, as recorded for u = 0 \
                     (neg-unwrap-x25519-small-order-u0): {panics}"
                    ))
                };
                let case = case(
                    base,
                    &format!("unwrap-x25519-{name}"),
                    0,
                    &pkt,
                    KEM,
                    &format!(
                        "X25519 half of the KEM ciphertext replaced by {what}: the Diffie-Hellman \
                     output is all zero, refused before the MAC"
                    ),
                    reference,
                );
                choice(case, LOW_ORDER)
            },
        )
        .collect();
    let zero = case(
        base,
        "unwrap-all-zero-packet",
        0,
        &[0u8; PACKET_LEN],
        KEM,
        "16,150 zero bytes: version 00 00 is valid and the X25519 half is u = 0",
        recorded("neg-unwrap-all-zero-packet", panics),
    );
    cases.push(choice(zero, LOW_ORDER));
    cases
}

/// Non-canonical X25519 halves of large order: reduced, never refused.
/// Tampering with a real packet fails the MAC (the bytes are hashed as
/// sent); a packet whose header was built for those bytes is forwarded.
fn non_canonical(base: &Base) -> Gen<Vec<Value>> {
    let node = base.nodes.first().ok_or("no nodes")?;
    let real: hazmat::KemCiphertext = base
        .packet(0)
        .get(layout::packet::KEM_CIPHERTEXT)
        .and_then(|c| c.try_into().ok())
        .ok_or("short packet")?;
    let mut high = real;
    if let Some(b) = high.get_mut(X25519_LEN - 1) {
        *b |= 0x80;
    }
    let mut p2 = real;
    if let Some(x) = p2.get_mut(..X25519_LEN) {
        x.copy_from_slice(&kemsphinx_support::P_PLUS_2);
    }
    let variants = [
        (
            "bit255",
            "the real ephemeral key with the unused bit 255 set",
            high,
        ),
        (
            "p-plus-2",
            "u = p + 2 (a non-canonical encoding of u = 2, large order)",
            p2,
        ),
    ];
    let go = "Go's X25519 also ignores bit 255 and accepts non-canonical u (RFC 7748), and \
              the adapter hashes the ciphertext bytes as received";
    let mut cases = Vec::new();
    for (name, what, ct) in variants {
        let mut tampered = base.packet(0).to_vec();
        if let Some(dst) = tampered.get_mut(layout::packet::KEM_CIPHERTEXT) {
            dst.copy_from_slice(&ct);
        }
        cases.push(case(
            base,
            &format!("unwrap-x25519-noncanonical-{name}-tampered"),
            0,
            &tampered,
            MAC,
            &format!(
                "X25519 half of a valid packet replaced by {what}: accepted and reduced as \
                 X25519 does, but the adapter and combiner hash the bytes as sent, so the \
                 shared secret, and with it the MAC key, differ"
            ),
            by_source(&format!("{go}: {MISMATCH}")),
        ));
        let ss = node
            .key
            .decapsulate(&ct)
            .map_err(|e| format!("{name}: {e}"))?;
        let mut encaps = parts(&base.encaps)?;
        if let Some(first) = encaps.first_mut() {
            *first = (ct, *ss.as_bytes());
        }
        let mut built = packet_buffer();
        hazmat::create_packet_from_encapsulations(
            &path(&base.nodes, &base.commands)?,
            &encaps,
            &base.payload,
            &mut built,
        )
        .map_err(|e| e.to_string())?;
        let valid = case(
            base,
            &format!("unwrap-x25519-noncanonical-{name}-valid"),
            0,
            &built[..],
            ("ok_forward", None),
            &format!(
                "hop 0's KEM ciphertext has as X25519 half {what}, and the header was built \
                 with the secret the hop derives from those bytes: it unwraps, showing that a \
                 non-canonical u of large order is reduced, not refused (SPEC.md section 2.1)"
            ),
            by_source(&format!("{go}; expected ok_forward (not verified)")),
        );
        cases.push(choice(
            valid,
            "a non-canonical u of large order is reduced as X25519 does, not refused \
             (SPEC.md section 2.1); only small-order points are refused",
        ));
    }
    Ok(cases)
}

/// One flipped bit in each header region, the payload at a forward hop,
/// and the packet of another hop.
fn regions(base: &Base) -> Vec<Value> {
    let pkt = &base.packet(0)[..];
    let mut specs: Vec<(String, usize, String, String)> = vec![
        ("x25519-half".into(), layout::packet::KEM_X25519.start + 7, "the X25519 half of the KEM ciphertext (a different, valid point)".into(),
         recorded("neg-unwrap-x25519-ct-bitflip", MISMATCH)),
        ("mlkem-half".into(), layout::packet::KEM_MLKEM.start + 600, "the ML-KEM half of the KEM ciphertext: implicit rejection gives a pseudo-random secret".into(),
         recorded("neg-unwrap-mlkem-ct-bitflip", MISMATCH)),
    ];
    for block in 0..HOPS {
        let reference = if block == 0 {
            recorded("neg-unwrap-routing-info-first-byte-flip", MISMATCH)
        } else {
            by_source(&format!(
                "the MAC covers header bytes [0, 5930): {MISMATCH}"
            ))
        };
        specs.push((
            format!("routing-block-{block}"),
            layout::packet::routing_block(block).start + 41 + 300 * block,
            format!(
                "the routing information, in the 1,202-byte block that hop {block} will decrypt"
            ),
            reference,
        ));
    }
    specs.push((
        "mac".into(),
        layout::packet::MAC.start + 31,
        "the header MAC".into(),
        recorded("neg-unwrap-mac-first-byte-flip", MISMATCH),
    ));
    let mut cases: Vec<Value> = specs
        .into_iter()
        .map(|(name, at, what, reference)| {
            case(
                base,
                &format!("unwrap-bitflip-{name}"),
                0,
                &flipped(pkt, at, 2),
                MAC,
                &format!("one bit flipped at byte {at}, in {what}"),
                reference,
            )
        })
        .collect();
    cases.push(case(
        base, "unwrap-bitflip-payload-forward-hop", 0, &flipped(pkt, layout::packet::PAYLOAD.start + 9_000, 6),
        ("ok_forward", None),
        "one payload bit flipped before a forward hop: the payload is not authenticated there; the terminal hop's tag check catches it",
        recorded("neg-unwrap-payload-bitflip-forward-hop0", "ok_forward"),
    ));
    cases.push(case(
        base,
        "unwrap-wrong-hop-key",
        1,
        pkt,
        MAC,
        "the packet for hop 0 given to hop 1",
        recorded("neg-unwrap-wrong-hop-key", MISMATCH),
    ));
    cases
}

/// Payload tags: a terminal payload whose tag is not zero, and a SURB
/// reply modified before its terminal hop (which cannot check it).
fn payloads(base: &Base) -> Gen<Vec<Value>> {
    let node = base.nodes.get(HOPS - 1).ok_or("no terminal node")?;
    let mut pkt = base.packet(HOPS - 1).to_vec();
    let ct: hazmat::KemCiphertext = pkt
        .get(layout::packet::KEM_CIPHERTEXT)
        .and_then(|c| c.try_into().ok())
        .ok_or("short packet")?;
    let ss = node.key.decapsulate(&ct).map_err(|e| e.to_string())?;
    let okm = hazmat::kdf(ss.as_bytes());
    let key: [u8; 48] = okm
        .get(80..128)
        .and_then(|k| k.try_into().ok())
        .ok_or("okm")?;
    let iv: [u8; 16] = okm
        .get(64..80)
        .and_then(|k| k.try_into().ok())
        .ok_or("okm")?;
    let body = pkt
        .get_mut(layout::packet::PAYLOAD.start..)
        .ok_or("short packet")?;
    let aez = Aez::new(&key);
    aez.decipher(&iv, body);
    if let Some(b) = body.get_mut(PAYLOAD_TAG_LEN - 1) {
        *b ^= 1;
    }
    aez.encipher(&iv, body);
    let reply_pkt = base
        .reply_walk
        .packets
        .get(HOPS - 1)
        .ok_or("no reply packet")?;
    Ok(vec![
        case(
            base,
            "unwrap-terminal-nonzero-tag",
            HOPS - 1,
            &pkt,
            ("err_payload_tag", Some("PayloadTag")),
            "terminal hop's packet re-enciphered with the 32-byte tag set to 00...01 (header untouched)",
            recorded(
                "neg-unwrap-payload-bitflip-terminal-hop3",
                "sphinx: payload auth failed",
            ),
        ),
        case(
            base,
            "unwrap-surb-reply-terminal-bitflip",
            HOPS - 1,
            &flipped(&reply_pkt[..], layout::packet::PAYLOAD.start + 77, 0),
            ("ok_reply", None),
            "a SURB reply with one payload bit flipped before its terminal hop: handed over unchecked; decrypt_reply refuses it",
            recorded("neg-unwrap-surb-reply-terminal-payload-bitflip", "ok_reply"),
        ),
    ])
}
