//! The hidden creator for negative vectors,
//! `hazmat::create_packet_with_raw_command_areas`: given the areas the
//! normal creator would write it must produce the very same packet (so its
//! MACs are the real ones), a malformed area must reach its hop and be
//! refused there, and a refused normal hop must leave the output untouched.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{commands, deliver_to, nodes, path, payload, rng};
use kemsphinx::geometry::{COMMANDS_LEN, HOPS, PACKET_LEN};
use kemsphinx::{Command, CommandError, Error, hazmat, unwrap};

type Encapsulations = [(hazmat::KemCiphertext, [u8; 32]); HOPS];

/// Fresh encapsulations to every node of `path`.
fn encapsulate(path: &kemsphinx::Path<'_>, rng: &mut chacha20::ChaCha20Rng) -> Encapsulations {
    std::array::from_fn(|i| {
        let (ct, ss) = hazmat::encapsulate(path[i].public_key, rng).unwrap();
        (ct, *ss.as_bytes())
    })
}

/// The 82-byte area a hop saw: its commands, encoded in order, then zeros.
fn area_of(cmds: &kemsphinx::Commands) -> [u8; COMMANDS_LEN] {
    let mut area = [0u8; COMMANDS_LEN];
    let mut at = 0;
    for cmd in cmds.iter() {
        let enc = hazmat::encode_command(cmd);
        area[at..at + enc.as_bytes().len()].copy_from_slice(enc.as_bytes());
        at += enc.as_bytes().len();
    }
    area
}

#[test]
fn raw_areas_equal_to_the_checked_ones_give_the_same_packet() {
    let mut rng = rng(71);
    let nodes = nodes(&mut rng);
    let cmds = commands([5, 6, 7], deliver_to([3; 32]));
    let path = path(&nodes, &cmds);
    let payload = payload(&mut rng);
    let encaps = encapsulate(&path, &mut rng);
    let mut normal = Box::new([0u8; PACKET_LEN]);
    hazmat::create_packet_from_encapsulations(&path, &encaps, &payload, &mut normal).unwrap();

    let mut areas = [None; HOPS];
    let mut buf = normal.clone();
    for (i, node) in nodes.iter().enumerate() {
        areas[i] = Some(area_of(&unwrap(&node.key, &mut buf).unwrap().commands));
    }
    for raw in [[None; HOPS], areas] {
        let mut out = Box::new([0u8; PACKET_LEN]);
        hazmat::create_packet_with_raw_command_areas(&path, &encaps, &raw, &payload, &mut out)
            .unwrap();
        assert_eq!(out, normal);
    }
}

#[test]
fn a_malformed_area_reaches_its_hop_and_is_refused_there() {
    let mut rng = rng(72);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], deliver_to([4; 32]));
    let path = path(&nodes, &cmds);
    let payload = payload(&mut rng);
    let encaps = encapsulate(&path, &mut rng);
    let mut raw = [None; HOPS];
    raw[2] = Some([0x7f; COMMANDS_LEN]);
    let mut buf = Box::new([0u8; PACKET_LEN]);
    hazmat::create_packet_with_raw_command_areas(&path, &encaps, &raw, &payload, &mut buf).unwrap();
    for node in &nodes[..2] {
        unwrap(&node.key, &mut buf).unwrap();
    }
    let before = buf.clone();
    assert_eq!(
        unwrap(&nodes[2].key, &mut buf).unwrap_err(),
        Error::Command(CommandError::UnknownId(0x7f))
    );
    assert_eq!(buf, before);
}

#[test]
fn a_refused_checked_hop_writes_nothing() {
    let mut rng = rng(73);
    let nodes = nodes(&mut rng);
    let mut cmds = commands([1, 2, 3], deliver_to([5; 32]));
    cmds[1] = vec![Command::NodeDelay(1), Command::NodeDelay(2)];
    let path = path(&nodes, &cmds);
    let payload = payload(&mut rng);
    let encaps = encapsulate(&path, &mut rng);
    let mut raw = [None; HOPS];
    raw[0] = Some([0; COMMANDS_LEN]);
    let mut out = Box::new([0x5a; PACKET_LEN]);
    let err =
        hazmat::create_packet_with_raw_command_areas(&path, &encaps, &raw, &payload, &mut out)
            .unwrap_err();
    assert_eq!(err, Error::Command(CommandError::Duplicate));
    assert!(out.iter().all(|&b| b == 0x5a));
}
