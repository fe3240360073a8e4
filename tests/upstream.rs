//! Upstream Katzenpost's own vectors (`vectors/upstream/`, README there):
//! the primitive vectors of `core/sphinx/testvectors/primitives/`, and both
//! whole-packet files of `MLKEM768-X25519` with the BLAKE2b XOF from
//! `core/sphinx/testdata/` (one built by upstream's Go code, one by its
//! independent Lean port; ten cases each, one to five hops, with and
//! without a SURB), in upstream's own geometry (five-hop header, 103-byte
//! payload, 7,299-byte packet). The public API is fixed at this crate's
//! geometry, so each packet is unwrapped here hop by hop through `hazmat`
//! (decapsulation on every KEM backend, key derivation, MAC, the routing
//! stream and its shift, command parsing, AEZ), each step the one `unwrap`
//! takes, and every forwarded packet is compared with the file's; a SURB
//! case also builds the reply from the SURB, checks the SURB keys against
//! each hop's derived keys and decrypts the reply. SPEC.md §10 says what
//! each file tests and what cannot run.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kemsphinx::geometry::{
    COMMANDS_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, NODE_ID_LEN, PAYLOAD_TAG_LEN, PER_HOP_ROUTING_LEN,
    PRIVATE_KEY_LEN, SPRP_IV_LEN, SPRP_KEY_BLOCK_LEN, SPRP_KEY_LEN, STREAM_KEY_LEN, VERSION_LEN,
};
use kemsphinx::hazmat::{self, kdf_layout};
use kemsphinx::{Command, NodeId, PrivateKey, PublicKey};
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/upstream");

fn load(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/{name}")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn hex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

fn array<const N: usize>(v: &Value) -> [u8; N] {
    hex(v).try_into().unwrap()
}

/// The `vectors` of a primitive file, after checking it names `primitive`.
fn vectors(file: &str, primitive: &str) -> Vec<Value> {
    let doc = load(&format!("primitives/{file}"));
    assert_eq!(doc["primitive"], primitive);
    doc["vectors"].as_array().unwrap().clone()
}

#[test]
fn hmac_sha256() {
    let cases = vectors("mac_hmac_sha256.json", "hmac_sha256");
    for case in &cases {
        let key: [u8; MAC_LEN] = array(&case["key_hex"]);
        assert_eq!(
            hazmat::mac(&key, &hex(&case["msg_hex"])).to_vec(),
            hex(&case["mac_hex"]),
            "{}",
            case["name"]
        );
    }
    assert_eq!(cases.len(), 3);
}

#[test]
fn sha512_256_replay_tag_hash() {
    // `replay_tag_of` hashes exactly a KEM ciphertext, so only inputs of
    // that length can go through the library; the hash itself is
    // RustCrypto's `sha2`, which the library calls, checked on all four.
    use sha2::{Digest, Sha512_256};
    let cases = vectors("hash_sha512_256.json", "sha512_256");
    for case in &cases {
        let input = hex(&case["input_hex"]);
        assert_eq!(
            Sha512_256::digest(&input).to_vec(),
            hex(&case["output_hex"]),
            "{}",
            case["name"]
        );
    }
    assert_eq!(cases.len(), 4);
}

#[test]
fn aes256_ctr_header_stream() {
    let cases = vectors("stream_aes256ctr.json", "stream_aes256ctr");
    for case in &cases {
        let key: [u8; STREAM_KEY_LEN] = array(&case["key_hex"]);
        let iv: [u8; SPRP_IV_LEN] = array(&case["iv_hex"]);
        let mut out = vec![0xaa; usize::try_from(case["length"].as_u64().unwrap()).unwrap()];
        hazmat::keystream(&key, &iv, &mut out);
        assert_eq!(out, hex(&case["keystream_hex"]), "{}", case["name"]);
    }
    assert_eq!(cases.len(), 4);
}

#[test]
fn kdf_hkdf_sha256_expand() {
    let cases = vectors("kdf_sphinx.json", "kdf_sphinx");
    for case in &cases {
        let okm = hazmat::kdf(&array(&case["ikm_hex"]));
        let field = |name: &str| hex(&case[name]);
        assert_eq!(okm[kdf_layout::MAC_KEY].to_vec(), field("header_mac_hex"));
        assert_eq!(
            okm[kdf_layout::STREAM_KEY].to_vec(),
            field("header_encryption_hex")
        );
        assert_eq!(
            okm[kdf_layout::STREAM_IV].to_vec(),
            field("header_encryption_iv_hex")
        );
        assert_eq!(
            okm[kdf_layout::SPRP_KEY].to_vec(),
            field("payload_encryption_hex")
        );
        // The 32 bytes KEMSphinx derives and does not use are NIKE Sphinx's
        // blinding-factor seed.
        assert_eq!(
            okm[kdf_layout::UNUSED].to_vec(),
            field("blinding_factor_seed_hex")
        );
    }
    assert_eq!(cases.len(), 2);
}

#[test]
fn aez_sprp() {
    let cases = vectors("sprp_aez.json", "sprp_aez");
    for case in &cases {
        let aez = aez5::Aez::new(&array::<SPRP_KEY_LEN>(&case["key_hex"]));
        let nonce: [u8; SPRP_IV_LEN] = array(&case["iv_hex"]);
        let (plain, cipher) = (hex(&case["plaintext_hex"]), hex(&case["ciphertext_hex"]));
        let mut buf = plain.clone();
        aez.encipher(&nonce, &mut buf);
        assert_eq!(buf, cipher, "{}", case["name"]);
        aez.decipher(&nonce, &mut buf);
        assert_eq!(buf, plain, "{}", case["name"]);
    }
    assert_eq!(cases.len(), 12);
}

/// Upstream's KEMSphinx geometry in its test vectors: five hops and a
/// 103-byte payload; every per-hop size is this crate's.
mod upstream_geometry {
    use super::*;
    pub(super) const HOPS: usize = 5;
    pub(super) const ROUTING_INFO_LEN: usize = HOPS * PER_HOP_ROUTING_LEN;
    pub(super) const ROUTING_AT: usize = VERSION_LEN + KEM_CIPHERTEXT_LEN;
    pub(super) const MAC_AT: usize = ROUTING_AT + ROUTING_INFO_LEN;
    pub(super) const HEADER_LEN: usize = MAC_AT + MAC_LEN;
    pub(super) const PAYLOAD_LEN: usize = 103;
    pub(super) const PACKET_LEN: usize = HEADER_LEN + PAYLOAD_TAG_LEN + PAYLOAD_LEN;
    /// A SURB: header ‖ first hop ‖ the reply's own key block.
    pub(super) const SURB_LEN: usize = HEADER_LEN + NODE_ID_LEN + SPRP_KEY_BLOCK_LEN;
}
use upstream_geometry::*;

/// The whole-packet files, each ten cases: one to five hops, without a
/// SURB (cases 0–4) and as the reply to one (cases 5–9).
const PACKET_FILES: [&str; 2] = [
    // Built by upstream's Go code.
    "kemsphinx_mlkem768x25519_blake2bxof_vectors.json",
    // Built by upstream's independent Lean port.
    "lean_kem_hybrid_blake2bxof_vectors.json",
];

/// One hop's keys, as the KDF splits them.
struct HopKeys {
    mac: [u8; MAC_LEN],
    stream: [u8; STREAM_KEY_LEN],
    iv: [u8; SPRP_IV_LEN],
    sprp: [u8; SPRP_KEY_LEN],
}

impl HopKeys {
    fn derive(shared_secret: &[u8; 32]) -> Self {
        let okm = hazmat::kdf(shared_secret);
        Self {
            mac: okm[kdf_layout::MAC_KEY].try_into().unwrap(),
            stream: okm[kdf_layout::STREAM_KEY].try_into().unwrap(),
            iv: okm[kdf_layout::STREAM_IV].try_into().unwrap(),
            sprp: okm[kdf_layout::SPRP_KEY].try_into().unwrap(),
        }
    }

    /// This hop's payload layer: AEZ under the SPRP key, the IV as nonce.
    fn layer(&self) -> aez5::Aez {
        aez5::Aez::new(&self.sprp)
    }
}

/// The commands of an upstream hop, parsed through the library; each
/// encodes back to upstream's bytes.
fn parse_all(mut bytes: &[u8]) -> Vec<Command> {
    let mut out = Vec::new();
    while let Some((command, rest)) = hazmat::parse_command(bytes).unwrap() {
        let used = bytes.len() - rest.len();
        assert_eq!(hazmat::encode_command(&command).as_bytes(), &bytes[..used]);
        out.push(command);
        bytes = rest;
    }
    out
}

/// Decapsulate on every KEM backend this build has; they must agree, and
/// the result is the shared secret.
fn decapsulate_everywhere(private: &[u8; PRIVATE_KEY_LEN], ct: &hazmat::KemCiphertext) -> [u8; 32] {
    let key = PrivateKey::from_bytes(private).unwrap();
    let ss = *hazmat::decapsulate(&key, ct).unwrap().as_bytes();
    for &backend in hazmat::kem_backends::Backend::ALL {
        let other = hazmat::kem_backends::decapsulate(backend, private, ct).unwrap();
        assert_eq!(*other.as_bytes(), ss, "{}", backend.name());
    }
    ss
}

/// What one hop did with its packet: its keys, the commands its routing
/// block held, the packet it forwards (if any) and the payload it holds.
struct Hop {
    keys: HopKeys,
    commands: Vec<Command>,
    next: Option<Vec<u8>>,
    body: Vec<u8>,
}

/// Unwrap one hop's packet step by step, as `unwrap` does at this crate's
/// geometry: decapsulation, KDF, header MAC, the routing stream with the
/// shift (a block of keystream appended at the end), the commands, the
/// payload layer, and the outgoing packet put together.
fn unwrap_hop(private: &[u8; PRIVATE_KEY_LEN], packet: &[u8]) -> Hop {
    assert_eq!(packet.len(), PACKET_LEN);
    assert_eq!(packet[..VERSION_LEN], [0, 0], "version 0");
    let ct: hazmat::KemCiphertext = packet[VERSION_LEN..ROUTING_AT].try_into().unwrap();
    let keys = HopKeys::derive(&decapsulate_everywhere(private, &ct));

    assert_eq!(
        hazmat::mac(&keys.mac, &packet[..MAC_AT]),
        packet[MAC_AT..HEADER_LEN],
        "header MAC"
    );

    // Routing information plus one block of zeros, under the keystream:
    // the first block is this hop's, the rest the next hop's routing.
    let mut routing = vec![0u8; ROUTING_INFO_LEN + PER_HOP_ROUTING_LEN];
    hazmat::keystream(&keys.stream, &keys.iv, &mut routing);
    for (r, p) in routing.iter_mut().zip(&packet[ROUTING_AT..MAC_AT]) {
        *r ^= p;
    }
    let (block, next_routing) = routing.split_at(PER_HOP_ROUTING_LEN);
    let commands: Vec<Command> = hazmat::parse_commands(block[..COMMANDS_LEN].try_into().unwrap())
        .unwrap()
        .iter()
        .copied()
        .collect();

    let mut body = packet[HEADER_LEN..].to_vec();
    keys.layer().decipher(&keys.iv, &mut body);

    let next = commands.iter().find_map(|c| match c {
        Command::NextNodeHop { mac, .. } => {
            let mut out = vec![0u8; VERSION_LEN];
            out.extend_from_slice(&block[COMMANDS_LEN..]);
            out.extend_from_slice(next_routing);
            out.extend_from_slice(mac);
            out.extend_from_slice(&body);
            Some(out)
        }
        _ => None,
    });
    Hop {
        keys,
        commands,
        next,
        body,
    }
}

/// What one file's cases exercised, for the count assertions.
#[derive(Default, Debug, PartialEq)]
struct Counts {
    cases: usize,
    hops: usize,
    surb_cases: usize,
}

/// Run every case of one whole-packet file through every hop.
fn run_packet_file(name: &str) -> Counts {
    let doc = load(name);
    let mut counts = Counts::default();
    for (n, case) in doc.as_array().unwrap().iter().enumerate() {
        let hops = run_packet_case(case);
        counts.cases += 1;
        counts.hops += hops;
        counts.surb_cases += usize::from(!case["Surb"].as_str().unwrap().is_empty());
        eprintln!("{name} case {n}: {hops} hops ok");
    }
    counts
}

/// One case: the keys, then each hop's unwrap against the next packet the
/// file gives, then the terminal hop's delivery (or, for a SURB reply, the
/// client's decryption with the SURB keys).
fn run_packet_case(case: &Value) -> usize {
    let (nodes, path) = (
        case["Nodes"].as_array().unwrap(),
        case["Path"].as_array().unwrap(),
    );
    let packets = case["Packets"].as_array().unwrap();
    let hops = path.len();
    assert!((1..=HOPS).contains(&hops));
    assert_eq!(nodes.len(), hops);
    // The Go file ends the list with the terminal hop's (empty) output.
    assert!(packets.len() == hops || (packets.len() == hops + 1 && packets[hops] == ""));

    let private: Vec<[u8; PRIVATE_KEY_LEN]> =
        nodes.iter().map(|n| array(&n["PrivateKey"])).collect();
    for ((node, hop), private) in nodes.iter().zip(path).zip(&private) {
        assert_eq!(node["ID"], hop["ID"]);
        // The key encodings: the private key loads and gives the path's
        // public key, which loads too.
        let key = PrivateKey::from_bytes(private).unwrap();
        let public = PublicKey::from_bytes(&array(&hop["PublicKey"])).unwrap();
        key.check_public_key(&public).unwrap();
    }

    let surb = hex(&case["Surb"]);
    let payload = hex(&case["Payload"]);
    assert_eq!(payload.len(), PAYLOAD_LEN);
    let mut packet = hex(&packets[0]);
    if !surb.is_empty() {
        check_reply_from_surb(&surb, &payload, &packet, &path[0]);
    }

    let mut layers = Vec::new();
    for (i, (hop, private)) in path.iter().zip(&private).enumerate() {
        let out = unwrap_hop(private, &packet);
        let mut want = parse_all(&hex(&hop["Commands"][0]));
        for extra in hop["Commands"].as_array().unwrap().iter().skip(1) {
            want.extend(parse_all(&hex(extra)));
        }
        let terminal = i + 1 == hops;
        if terminal {
            assert_eq!(out.commands, want, "hop {i}'s commands");
            assert!(out.next.is_none(), "the terminal hop forwards nothing");
        } else {
            // The caller's commands, then the next hop the creator appends.
            let (last, given) = out.commands.split_last().unwrap();
            let next_id = NodeId(array(&path[i + 1]["ID"]));
            assert!(matches!(last, Command::NextNodeHop { id, .. } if *id == next_id));
            assert_eq!(given, &want[..], "hop {i}'s commands");
            let next = out.next.clone().unwrap();
            assert_eq!(next, hex(&packets[i + 1]), "the packet hop {i} forwards");
        }
        layers.push(out.keys);
        if terminal {
            finish(case, &surb, &payload, &layers, &out.body);
        } else {
            packet = out.next.unwrap();
        }
    }
    hops
}

/// The terminal hop's payload: the message behind a zero tag, or for a
/// SURB reply the still-enciphered reply, which the SURB keys open.
fn finish(case: &Value, surb: &[u8], payload: &[u8], layers: &[HopKeys], body: &[u8]) {
    if surb.is_empty() {
        assert_eq!(body[..PAYLOAD_TAG_LEN], [0; PAYLOAD_TAG_LEN], "payload tag");
        assert_eq!(body[PAYLOAD_TAG_LEN..], *payload, "payload");
        assert_eq!(case["SurbKeys"], "");
        return;
    }
    // The SURB keys: one key block (SPRP key ‖ IV) per hop, each the one
    // that hop's KDF gives, the last hop's first (the order the client
    // undoes them in), then the reply's own block (the one the SURB
    // carries). The crate's 320-byte `SurbKeys` is laid out the same way.
    let keys = hex(&case["SurbKeys"]);
    assert_eq!(keys.len(), (layers.len() + 1) * SPRP_KEY_BLOCK_LEN);
    let (hop_blocks, own) = keys.split_at(layers.len() * SPRP_KEY_BLOCK_LEN);
    for (block, layer) in hop_blocks
        .chunks(SPRP_KEY_BLOCK_LEN)
        .zip(layers.iter().rev())
    {
        assert_eq!(block[..SPRP_KEY_LEN], layer.sprp, "a hop's SURB key");
        assert_eq!(block[SPRP_KEY_LEN..], layer.iv, "a hop's SURB IV");
    }
    assert_eq!(
        own,
        &surb[HEADER_LEN + NODE_ID_LEN..],
        "the reply's own key block"
    );

    // The client's decryption: every hop's layer put back on, the last
    // hop's first (each hop took one off), then the reply's own layer off,
    // to a zero tag.
    let mut reply = body.to_vec();
    for layer in layers.iter().rev() {
        layer.layer().encipher(&layer.iv, &mut reply);
    }
    let own_key: [u8; SPRP_KEY_LEN] = own[..SPRP_KEY_LEN].try_into().unwrap();
    let own_iv: [u8; SPRP_IV_LEN] = own[SPRP_KEY_LEN..].try_into().unwrap();
    aez5::Aez::new(&own_key).decipher(&own_iv, &mut reply);
    assert_eq!(reply[..PAYLOAD_TAG_LEN], [0; PAYLOAD_TAG_LEN], "reply tag");
    assert_eq!(reply[PAYLOAD_TAG_LEN..], *payload, "decrypted reply");
}

/// A reply from a SURB: the SURB's header, then `0^32 ‖ payload` under the
/// SURB's key block; it goes to the SURB's first hop.
fn check_reply_from_surb(surb: &[u8], payload: &[u8], packet: &[u8], first: &Value) {
    assert_eq!(surb.len(), SURB_LEN);
    assert_eq!(
        surb[HEADER_LEN..HEADER_LEN + NODE_ID_LEN],
        hex(&first["ID"]),
        "first hop"
    );
    let own = &surb[HEADER_LEN + NODE_ID_LEN..];
    let mut body = vec![0u8; PAYLOAD_TAG_LEN];
    body.extend_from_slice(payload);
    let key: [u8; SPRP_KEY_LEN] = own[..SPRP_KEY_LEN].try_into().unwrap();
    let iv: [u8; SPRP_IV_LEN] = own[SPRP_KEY_LEN..].try_into().unwrap();
    aez5::Aez::new(&key).encipher(&iv, &mut body);
    let mut built = surb[..HEADER_LEN].to_vec();
    built.extend_from_slice(&body);
    assert_eq!(built, packet, "the reply built from the SURB");
}

/// Each file: ten cases (one to five hops, forward and as a SURB's
/// reply), every one of their thirty hops.
const EVERY_CASE: Counts = Counts {
    cases: 10,
    hops: 30,
    surb_cases: 5,
};

#[test]
fn kemsphinx_packets_built_by_upstreams_go_code() {
    assert_eq!(run_packet_file(PACKET_FILES[0]), EVERY_CASE);
}

#[test]
fn kemsphinx_packets_built_by_upstreams_lean_port() {
    assert_eq!(run_packet_file(PACKET_FILES[1]), EVERY_CASE);
}
