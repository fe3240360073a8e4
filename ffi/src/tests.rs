//! The C ABI's creation path builds exactly what the Rust API builds from
//! the same randomness: the FFI adds checks and copies, nothing else.

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{HOPS, PAYLOAD_LEN};
use kemsphinx::{Command, Hop as RustHop, NodeId, PrivateKey, RecipientId, SurbId};
use rand_core::SeedableRng;

use crate::create::{Hop, Path};
use crate::keys::PublicKeyHandle;

fn keys() -> Vec<PublicKeyHandle> {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    (0..HOPS)
        .map(|_| PublicKeyHandle(PrivateKey::generate(&mut rng).public_key().clone()))
        .collect()
}

fn c_path(keys: &[PublicKeyHandle]) -> Vec<Hop> {
    keys.iter()
        .zip(0u8..)
        .map(|(k, i)| Hop {
            node_id: [i; 32],
            public_key: k,
            delay_ms: u32::from(i) * 7,
            has_delay: u32::from(i % 2),
        })
        .collect()
}

fn rust_commands(terminal: &[Command]) -> Vec<Vec<Command>> {
    (0..HOPS)
        .map(|i| {
            let mut c = Vec::new();
            if i % 2 == 1 {
                c.push(Command::NodeDelay(u32::try_from(i).unwrap() * 7));
            }
            if i + 1 == HOPS {
                c.extend_from_slice(terminal);
            }
            c
        })
        .collect()
}

fn rust_path<'a>(keys: &'a [PublicKeyHandle], commands: &'a [Vec<Command>]) -> [RustHop<'a>; HOPS] {
    kemsphinx::path(
        core::array::from_fn(|i| (NodeId([u8::try_from(i).unwrap(); 32]), &keys[i].0)),
        core::array::from_fn(|i| commands[i].as_slice()),
    )
}

#[test]
fn packets_match_the_rust_api_for_the_same_randomness() {
    let keys = keys();
    let hops = c_path(&keys);
    let terminal = [Command::Recipient(RecipientId([9; 32]))];
    // SAFETY: `hops` holds HOPS hops whose keys live until the end.
    let path = unsafe { Path::read(hops.as_ptr(), HOPS, &terminal) }.unwrap();
    let payload = [0x5au8; PAYLOAD_LEN];
    let ours = path
        .packet(&mut ChaCha20Rng::seed_from_u64(11), &payload)
        .unwrap();

    let commands = rust_commands(&terminal);
    let mut theirs = Box::new([0u8; kemsphinx::geometry::PACKET_LEN]);
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    kemsphinx::create_packet(
        &mut rng,
        &rust_path(&keys, &commands),
        &payload,
        &mut theirs,
    )
    .unwrap();
    assert_eq!(ours[..], theirs[..]);
}

#[test]
fn surbs_match_the_rust_api_for_the_same_randomness() {
    let keys = keys();
    let hops = c_path(&keys);
    let terminal = [
        Command::Recipient(RecipientId([4; 32])),
        Command::SurbReply(SurbId([5; 16])),
    ];
    // SAFETY: as above.
    let path = unsafe { Path::read(hops.as_ptr(), HOPS, &terminal) }.unwrap();
    let (surb, surb_keys) = path.surb(&mut ChaCha20Rng::seed_from_u64(12)).unwrap();

    let commands = rust_commands(&terminal);
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let (s, k) = kemsphinx::create_surb(&mut rng, &rust_path(&keys, &commands)).unwrap();
    assert_eq!(surb.as_bytes()[..], s.as_bytes()[..]);
    assert_eq!(surb_keys.to_bytes()[..], k.to_bytes()[..]);
}
