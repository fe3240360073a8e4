//! The length boundary and the "unchanged on error" promise: every slice
//! entry point refuses every wrong length with a typed error, creation
//! refuses commands it cannot create without writing anything, and unwrap
//! leaves the buffer exactly as it was on every error.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{commands, deliver_to, nodes, path, payload, reply_to, rng};
use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, NODE_ID_LEN, PACKET_LEN, PAYLOAD_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN,
    RECIPIENT_ID_LEN, SURB_ID_LEN, SURB_KEYS_LEN, SURB_LEN,
};
use kemsphinx::{
    Command, CommandError, Error, Input, NodeId, PrivateKey, PublicKey, RecipientId, Surb, SurbId,
    SurbKeys, create_packet, create_surb, encrypted_reply_mut, packet_mut, payload_ref, unwrap,
};

/// Lengths around `n` worth trying: empty, one byte, n±1, double.
fn wrong_lengths(n: usize) -> [usize; 5] {
    [0, 1, n - 1, n + 1, 2 * n]
}

/// Assert `result` is a length error for `input` with these lengths.
fn assert_length<T>(result: Result<T, Error>, input: Input, expected: usize, got: usize) {
    match result {
        Err(e) => assert_eq!(
            e,
            Error::Length {
                input,
                expected,
                got
            }
        ),
        Ok(_) => panic!("{input} of {got} bytes accepted"),
    }
}

#[test]
fn every_slice_entry_point_refuses_every_wrong_length() {
    for got in wrong_lengths(PACKET_LEN) {
        assert_length(
            packet_mut(&mut vec![0; got]),
            Input::Packet,
            PACKET_LEN,
            got,
        );
    }
    for got in wrong_lengths(PAYLOAD_LEN) {
        assert_length(payload_ref(&vec![0; got]), Input::Payload, PAYLOAD_LEN, got);
    }
    for got in wrong_lengths(ENCRYPTED_REPLY_LEN) {
        let mut buf = vec![0; got];
        assert_length(
            encrypted_reply_mut(&mut buf),
            Input::EncryptedReply,
            ENCRYPTED_REPLY_LEN,
            got,
        );
    }
    for got in wrong_lengths(SURB_LEN) {
        assert_length(
            Surb::try_from(&vec![0; got][..]),
            Input::Surb,
            SURB_LEN,
            got,
        );
    }
    for got in wrong_lengths(SURB_KEYS_LEN) {
        assert_length(
            SurbKeys::try_from(&vec![0; got][..]),
            Input::SurbKeys,
            SURB_KEYS_LEN,
            got,
        );
    }
    for got in wrong_lengths(PUBLIC_KEY_LEN) {
        assert_length(
            PublicKey::try_from(&vec![0; got][..]),
            Input::PublicKey,
            PUBLIC_KEY_LEN,
            got,
        );
    }
    for got in wrong_lengths(PRIVATE_KEY_LEN) {
        assert_length(
            PrivateKey::try_from(&vec![0; got][..]),
            Input::PrivateKey,
            PRIVATE_KEY_LEN,
            got,
        );
    }
    for got in wrong_lengths(NODE_ID_LEN) {
        assert_length(
            NodeId::try_from(&vec![0; got][..]),
            Input::NodeId,
            NODE_ID_LEN,
            got,
        );
    }
    for got in wrong_lengths(RECIPIENT_ID_LEN) {
        let r = RecipientId::try_from(&vec![0; got][..]);
        assert_length(r, Input::RecipientId, RECIPIENT_ID_LEN, got);
    }
    for got in wrong_lengths(SURB_ID_LEN) {
        assert_length(
            SurbId::try_from(&vec![0; got][..]),
            Input::SurbId,
            SURB_ID_LEN,
            got,
        );
    }
}

#[test]
fn length_errors_say_what_was_expected_and_got() {
    let e = packet_mut(&mut [0; 16_149]).unwrap_err();
    assert_eq!(e.to_string(), "packet: expected 16150 bytes, got 16149");
}

#[test]
fn exact_lengths_pass_the_boundary() {
    assert!(packet_mut(&mut vec![0; PACKET_LEN]).is_ok());
    assert!(payload_ref(&vec![0; PAYLOAD_LEN]).is_ok());
    assert!(encrypted_reply_mut(&mut vec![0; ENCRYPTED_REPLY_LEN]).is_ok());
    assert!(SurbKeys::try_from(&[0u8; SURB_KEYS_LEN][..]).is_ok());
    assert!(Surb::try_from(&[0u8; SURB_LEN][..]).is_ok());
}

#[test]
fn a_surb_with_a_bad_version_is_refused() {
    let mut bytes = [0u8; SURB_LEN];
    bytes[1] = 1;
    assert_eq!(Surb::from_bytes(&bytes).err(), Some(Error::Version));
}

/// Try to create a forward packet and a SURB with `terminal` and `hop0`
/// commands; the output must stay untouched when it fails.
fn create_error(hop0: Vec<Command>, terminal: Vec<Command>, surb: bool) -> Error {
    let mut rng = rng(1);
    let nodes = nodes(&mut rng);
    let mut cmds = commands([0, 0, 0], terminal);
    cmds[0] = hop0;
    let p = path(&nodes, &cmds);
    if surb {
        return create_surb(&mut rng, &p).unwrap_err();
    }
    let mut out = Box::new([0xa5u8; PACKET_LEN]);
    let msg = payload(&mut rng);
    let err = create_packet(&mut rng, &p, &msg, &mut out).unwrap_err();
    assert!(out.iter().all(|&b| b == 0xa5), "output written on error");
    err
}

#[test]
fn creation_refuses_commands_it_cannot_create() {
    let recipient = Command::Recipient(RecipientId([1; 32]));
    let surb_reply = Command::SurbReply(SurbId([2; 16]));
    let delay = Command::NodeDelay(1);
    let next = Command::NextNodeHop {
        id: NodeId([3; 32]),
        mac: [0; 32],
    };
    let cases = [
        // next_node_hop (65) leaves 17 bytes at hops 0..2.
        (
            vec![delay, recipient],
            deliver_to([1; 32]),
            false,
            CommandError::TooLong,
        ),
        (
            vec![next],
            deliver_to([1; 32]),
            false,
            CommandError::ReservedCommand,
        ),
        (
            vec![delay, delay],
            deliver_to([1; 32]),
            false,
            CommandError::Duplicate,
        ),
        (
            vec![surb_reply],
            deliver_to([1; 32]),
            false,
            CommandError::NoAction,
        ),
        (vec![delay], vec![], false, CommandError::NoAction),
        (vec![delay], vec![surb_reply], false, CommandError::NoAction),
        (
            vec![delay],
            reply_to([1; 32], [2; 16]),
            false,
            CommandError::WrongTerminalAction,
        ),
        (
            vec![delay],
            deliver_to([1; 32]),
            true,
            CommandError::WrongTerminalAction,
        ),
        (
            vec![delay],
            vec![recipient, recipient],
            false,
            CommandError::Duplicate,
        ),
        (
            vec![delay],
            vec![
                recipient, delay, delay, delay, delay, delay, delay, delay, delay, delay, delay,
            ],
            false,
            CommandError::TooLong,
        ),
    ];
    for (i, (hop0, terminal, surb, want)) in cases.into_iter().enumerate() {
        assert_eq!(
            create_error(hop0, terminal, surb),
            Error::Command(want),
            "case {i}"
        );
    }
}

/// Unwrap a copy of `packet` with `key` and require `want` and an
/// unchanged buffer.
fn assert_refused(key: &PrivateKey, packet: &[u8; PACKET_LEN], want: Error) {
    let mut buf = Box::new(*packet);
    let got = unwrap(key, &mut buf).map(|_| ()).unwrap_err();
    assert_eq!(got, want);
    assert!(buf[..] == packet[..], "buffer changed on {want}");
}

#[test]
fn unwrap_errors_leave_the_buffer_unchanged() {
    let mut rng = rng(2);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], deliver_to([7; 32]));
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let msg = payload(&mut rng);
    create_packet(&mut rng, &path(&nodes, &cmds), &msg, &mut packet).unwrap();
    let key = &nodes[0].key;

    let mut bad = packet.clone();
    bad[0] = 1;
    assert_refused(key, &bad, Error::Version);
    assert_refused(&nodes[1].key, &packet, Error::Mac);
    for at in [2, 40, 1_121, 1_122, 3_000, 5_929, 5_930, 5_961] {
        let mut bad = packet.clone();
        bad[at] ^= 0x10;
        assert_refused(key, &bad, Error::Mac);
    }
    // All-zero: valid version, X25519 half u = 0 (small order).
    assert_refused(key, &[0u8; PACKET_LEN], Error::Kem);
}

#[test]
fn a_bad_terminal_tag_is_refused_and_undone() {
    let mut rng = rng(4);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], deliver_to([7; 32]));
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let msg = payload(&mut rng);
    create_packet(&mut rng, &path(&nodes, &cmds), &msg, &mut packet).unwrap();
    for node in &nodes[..3] {
        unwrap(&node.key, &mut packet).unwrap();
    }
    packet[PACKET_LEN - 1] ^= 1;
    assert_refused(&nodes[3].key, &packet, Error::PayloadTag);
}

#[test]
fn a_wrong_key_block_is_refused_and_undone() {
    let mut rng = rng(5);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], reply_to([7; 32], [8; 16]));
    let (surb, keys) = create_surb(&mut rng, &path(&nodes, &cmds)).unwrap();
    let mut packet = Box::new([0u8; PACKET_LEN]);
    surb.reply(&payload(&mut rng), &mut packet);
    let mut reply = [0u8; ENCRYPTED_REPLY_LEN];
    for node in &nodes {
        if let kemsphinx::Action::SurbReply {
            encrypted_reply, ..
        } = unwrap(&node.key, &mut packet).unwrap().action
        {
            reply = *encrypted_reply;
        }
    }
    for block in 0..5 {
        let mut wrong = *keys.to_bytes();
        wrong[block * 64 + 3] ^= 1;
        let mut buf = reply;
        let got = SurbKeys::from_bytes(&wrong)
            .decrypt_reply(&mut buf)
            .map(|_| ());
        assert_eq!(got, Err(Error::PayloadTag), "key block {block}");
        assert_eq!(buf, reply, "buffer changed with key block {block} wrong");
    }
    assert!(keys.decrypt_reply(&mut reply).is_ok());
}
