//! Upstream Katzenpost's own vectors (`vectors/upstream/`, README there):
//! the primitive vectors of `core/sphinx/testvectors/primitives/`, and one
//! whole KEMSphinx packet of `MLKEM768-X25519` with the BLAKE2b XOF from
//! `core/sphinx/testdata/`, in upstream's own geometry (one hop of five,
//! 103-byte payload, 7,299-byte packet). The public API is fixed at this
//! crate's geometry, so the packet is unwrapped here step by step through
//! `hazmat` (decapsulation, key derivation, MAC, stream, command parsing,
//! AEZ), each step the one `unwrap` takes; SPEC.md §10 says what each file
//! tests and what cannot run.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kemsphinx::geometry::{
    KEM_CIPHERTEXT_LEN, MAC_LEN, PAYLOAD_TAG_LEN, PER_HOP_ROUTING_LEN, SPRP_IV_LEN, SPRP_KEY_LEN,
    STREAM_KEY_LEN, VERSION_LEN,
};
use kemsphinx::hazmat::{self, kdf_layout};
use kemsphinx::{Command, PrivateKey, PublicKey, RecipientId};
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
    pub(super) const MAC_AT: usize = VERSION_LEN + KEM_CIPHERTEXT_LEN + ROUTING_INFO_LEN;
    pub(super) const HEADER_LEN: usize = MAC_AT + MAC_LEN;
    pub(super) const PAYLOAD_LEN: usize = 103;
    pub(super) const PACKET_LEN: usize = HEADER_LEN + PAYLOAD_TAG_LEN + PAYLOAD_LEN;
}

#[test]
fn kemsphinx_mlkem768_x25519_blake2b_packet_unwraps_step_by_step() {
    use upstream_geometry::*;
    let doc = load("kemsphinx_mlkem768x25519_blake2bxof_case0.json");
    let case = &doc["case"];
    let (node, hop) = (&case["Nodes"][0], &case["Path"][0]);
    assert_eq!(case["Nodes"].as_array().unwrap().len(), 1, "a one-hop path");

    // The key encodings: the private key loads and gives the path's
    // public key, which loads too.
    let key = PrivateKey::from_bytes(&array(&node["PrivateKey"])).unwrap();
    let public = PublicKey::from_bytes(&array(&hop["PublicKey"])).unwrap();
    assert_eq!(key.public_key(), &public);
    key.check_public_key(&public).unwrap();

    let packet = hex(&case["Packets"][0]);
    assert_eq!(packet.len(), PACKET_LEN);
    assert_eq!(packet[..VERSION_LEN], [0, 0], "version 0");

    // Decapsulation, then the per-hop keys.
    let ct: hazmat::KemCiphertext = packet[VERSION_LEN..VERSION_LEN + KEM_CIPHERTEXT_LEN]
        .try_into()
        .unwrap();
    let shared = hazmat::decapsulate(&key, &ct).unwrap();
    let keys = hazmat::kdf(shared.as_bytes());

    // The header MAC, over version, KEM ciphertext and routing information.
    let mac_key: [u8; MAC_LEN] = keys[kdf_layout::MAC_KEY].try_into().unwrap();
    assert_eq!(
        hazmat::mac(&mac_key, &packet[..MAC_AT]),
        packet[MAC_AT..HEADER_LEN],
        "header MAC"
    );

    // This hop's block of the routing information: its commands.
    let stream_key: [u8; STREAM_KEY_LEN] = keys[kdf_layout::STREAM_KEY].try_into().unwrap();
    let iv: [u8; SPRP_IV_LEN] = keys[kdf_layout::STREAM_IV].try_into().unwrap();
    let mut block = [0u8; PER_HOP_ROUTING_LEN];
    hazmat::keystream(&stream_key, &iv, &mut block);
    let routing = &packet[VERSION_LEN + KEM_CIPHERTEXT_LEN..MAC_AT];
    for (b, r) in block.iter_mut().zip(routing) {
        *b ^= r;
    }
    let commands = hazmat::parse_commands(
        block[..kemsphinx::geometry::COMMANDS_LEN]
            .try_into()
            .unwrap(),
    )
    .unwrap();
    let want = hex(&hop["Commands"][0]);
    assert_eq!(want[0], 0x02, "upstream's recipient command");
    let recipient = RecipientId(want[1..].try_into().unwrap());
    assert_eq!(
        commands.iter().copied().collect::<Vec<_>>(),
        [Command::Recipient(recipient)]
    );
    assert_eq!(
        hazmat::encode_command(&Command::Recipient(recipient)).as_bytes(),
        want,
        "the command's encoding"
    );

    // The payload: AEZ under the payload key with the stream IV as nonce,
    // a zero tag, then the message.
    let aez = aez5::Aez::new(keys[kdf_layout::SPRP_KEY].try_into().unwrap());
    let mut body = packet[HEADER_LEN..].to_vec();
    aez.decipher(&iv, &mut body);
    assert_eq!(body[..PAYLOAD_TAG_LEN], [0; PAYLOAD_TAG_LEN], "payload tag");
    assert_eq!(body[PAYLOAD_TAG_LEN..], hex(&case["Payload"]), "payload");

    // The delivering hop forwards nothing.
    assert_eq!(case["Packets"][1], "");
}
