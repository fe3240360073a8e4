//! Every forward and SURB vector (the Go reference's and our own corpus),
//! unwrapped through `unwrap_batch` at every hop: a batch of copies of the
//! hop's packet (so the batched X25519 path runs wherever the CPU has it,
//! three copies and more) among packets for another key, each copy giving
//! the vector's replay tag and the next hop's packet, or at the terminal
//! hop its payload, byte for byte. Repository only (the vectors are not
//! in the package).

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kemsphinx::geometry::{PACKET_LEN, PRIVATE_KEY_LEN};
use kemsphinx::{Action, PrivateKey, unwrap_batch};
use serde_json::Value;

fn hex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

/// The cases of `vectors/{dir}/{kind}.json`.
fn cases(dir: &str, kind: &str) -> Vec<Value> {
    let path = format!("{}/vectors/{dir}/{kind}.json", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(doc["kind"], kind);
    doc["cases"].as_array().unwrap().clone()
}

/// One case: at each hop, 9 copies of its packet interleaved with 2
/// packets for no key of this node (the next hop's packet), in one batch
/// iterator. Returns the number of hops walked.
fn walk(case: &Value) -> usize {
    let nodes = case["nodes"].as_array().unwrap();
    let packets = case["packets"].as_array().unwrap();
    let mut hops = 0;
    for (i, node) in nodes.iter().enumerate() {
        let key_bytes: [u8; PRIVATE_KEY_LEN] = hex(&node["private_key"]).try_into().unwrap();
        let key = PrivateKey::from_bytes(&key_bytes).unwrap();
        let packet: [u8; PACKET_LEN] = hex(&packets[i]).try_into().unwrap();
        let other = packets
            .get(i + 1)
            .map_or([0x5a; PACKET_LEN], |p| hex(p).try_into().unwrap());
        let mut batch: Vec<[u8; PACKET_LEN]> = vec![packet; 9];
        batch.insert(3, other);
        batch.push(other);
        let want = &case["unwrap"][i];
        for (j, r) in unwrap_batch([&key], batch.iter_mut()).enumerate() {
            if j == 3 || j == 10 {
                assert!(r.is_err(), "hop {i}: another hop's packet");
                continue;
            }
            let (_, hop) = r.unwrap();
            assert_eq!(
                hop.replay_tag.0.to_vec(),
                hex(&want["replay_tag"]),
                "hop {i}"
            );
            match hop.action {
                Action::Forward { .. } => {}
                Action::Deliver { payload, .. } => {
                    assert_eq!(payload.to_vec(), hex(&want["payload"]), "hop {i}");
                }
                Action::SurbReply {
                    encrypted_reply, ..
                } => {
                    assert_eq!(encrypted_reply.to_vec(), hex(&want["payload"]), "hop {i}");
                }
            }
        }
        if let Some(next) = packets.get(i + 1) {
            for (j, p) in batch.iter().enumerate() {
                if j != 3 && j != 10 {
                    assert_eq!(p.to_vec(), hex(next), "hop {i}, copy {j}: the next packet");
                }
            }
        }
        hops += 1;
    }
    hops
}

#[test]
fn every_packet_vector_unwraps_through_unwrap_batch() {
    let mut walked = 0;
    for dir in ["reference", "own"] {
        for kind in ["forward", "surb"] {
            for case in cases(dir, kind) {
                walked += walk(&case);
            }
        }
    }
    println!(
        "{walked} hops, batch path {}",
        kemsphinx::hazmat::kem_backends::x25519_batch_path()
    );
    assert!(walked >= 40, "{walked}");
}
