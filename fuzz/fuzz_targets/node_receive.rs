//! The node crate's one call per datagram, driven by a script the fuzzer
//! writes: valid packets for the keyring's first key (as they are, or with
//! a byte flipped anywhere), raw datagrams of any length, and epoch turns
//! (time moved past an epoch's length or its grace). Whatever the order:
//! no panic; a datagram of any other length than a packet's is
//! `Dropped::Length`; a refused packet leaves the buffer as it was unless
//! the refusal came after the MAC (replay or full epoch); no replay tag is
//! ever accepted twice; and the keyring's counts add up to the calls.

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::HashSet;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{Command, NodeId, PrivateKey, RecipientId, create_packet, path, replay_tag};
use kemsphinx_node::{Dropped, EpochPolicy, Keyring};
use libfuzzer_sys::fuzz_target;
use rand_core::SeedableRng;

const SEED: [u8; 96] = [5; 96];
const PACKETS: usize = 8;

/// Packets for the key of `SEED`, made once.
fn packets() -> &'static [[u8; PACKET_LEN]] {
    static PACKETS_FOR_KEY: OnceLock<Vec<[u8; PACKET_LEN]>> = OnceLock::new();
    PACKETS_FOR_KEY.get_or_init(|| {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let keys: [PrivateKey; HOPS] = std::array::from_fn(|i| match i {
            0 => PrivateKey::from_seed(&SEED),
            _ => PrivateKey::generate(&mut rng),
        });
        let nodes = std::array::from_fn(|i| (NodeId([i as u8; 32]), keys[i].public_key()));
        let delay = [Command::NodeDelay(3)];
        let deliver = [Command::Recipient(RecipientId([9; 32]))];
        let path = path(nodes, [&delay, &delay, &delay, &deliver]);
        (0..PACKETS)
            .map(|_| {
                let mut p = [0u8; PACKET_LEN];
                create_packet(&mut rng, &path, &[1; PAYLOAD_LEN], &mut p).unwrap();
                p
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let policy = EpochPolicy {
        capacity: 6,
        rotate_after: 3,
        fp_rate: 1e-3,
        length: Duration::from_secs(10),
        grace: Duration::from_secs(5),
        publish_ahead: data.first().is_some_and(|b| b & 0x80 != 0),
        schedule: None,
        ..EpochPolicy::default()
    };
    let keyring = Keyring::new(policy, PrivateKey::from_seed(&SEED)).unwrap();
    let mut now = Instant::now();
    let mut accepted = HashSet::new();
    let (mut calls, mut oks) = (0u64, 0u64);
    let mut rest = data;
    while let [op, tail @ ..] = rest {
        rest = tail;
        let mut datagram = match op % 4 {
            0 | 1 => {
                let [k, a, b, x, tail @ ..] = rest else { break };
                rest = tail;
                let mut p = packets()[usize::from(*k) % PACKETS].to_vec();
                if op % 4 == 1 {
                    p[usize::from(u16::from_le_bytes([*a, *b])) % PACKET_LEN] ^= *x | 1;
                }
                p
            }
            2 => {
                let [a, b, tail @ ..] = rest else { break };
                let len = usize::from(u16::from_le_bytes([*a, *b])) % (PACKET_LEN + 64);
                let take = len.min(tail.len());
                let mut d = tail[..take].to_vec();
                d.resize(len, 0);
                rest = &tail[take..];
                d
            }
            _ => {
                let [t, tail @ ..] = rest else { break };
                rest = tail;
                now += Duration::from_secs(u64::from(*t % 12));
                // Until nothing is left to do: a `now` ahead of the real
                // clock turns once, not on every call (a retirement, a
                // replacement, an early retirement and a start at most).
                let mut turns = 0;
                while keyring.turn(now).is_some() {
                    turns += 1;
                    assert!(turns <= 4, "turn keeps turning at one time");
                }
                continue;
            }
        };
        let before = datagram.clone();
        let tag =
            (datagram.len() == PACKET_LEN).then(|| replay_tag(datagram[..].try_into().unwrap()));
        calls += 1;
        match keyring.receive(&mut datagram) {
            Ok(_) => {
                oks += 1;
                assert!(accepted.insert(tag.unwrap()), "a replay tag accepted twice");
            }
            Err(why) => {
                if before.len() != PACKET_LEN {
                    assert_eq!(why, Dropped::Length);
                }
                if !matches!(why, Dropped::Replay | Dropped::EpochFull) {
                    assert_eq!(datagram, before, "{why:?} changed the buffer");
                }
            }
        }
    }
    assert_eq!(keyring.accepted(), oks);
    assert_eq!(keyring.drops().total(), calls - oks);
});
