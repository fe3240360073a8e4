//! Real packets under a schedule: every key published ahead unwraps its
//! packets before its epoch, in its own epoch's filter; a replay across
//! the boundary is caught; a skipped epoch's key unwraps nothing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::time::{Duration, Instant, SystemTime};

use chacha20::ChaCha20Rng;
use common::{Client, Packet, datagram, scratch};
use kemsphinx_node::kemsphinx::PrivateKey;
use kemsphinx_node::kemsphinx::geometry::PACKET_LEN;
use kemsphinx_node::{Dropped, EpochPolicy, Keyring, MAX_AHEAD, Schedule};
use rand_core::SeedableRng;

fn receive(keyring: &Keyring, packet: &Packet) -> Result<(u64, bool), Dropped> {
    let mut buf = datagram(packet);
    keyring
        .receive(&mut buf[..PACKET_LEN])
        .map(|a| (a.epoch, a.previous_key))
}

fn turns(k: &Keyring, wall: SystemTime) {
    while k.turn_at(Instant::now(), wall).is_some() {}
}

#[test]
fn packets_for_every_key_published_ahead_are_taken_by_their_epoch() {
    one_keyring(false);
    one_keyring(true);
}

/// In memory mode or disk mode.
fn one_keyring(disk: bool) {
    let schedule = Schedule::katzenpost().with_ahead(MAX_AHEAD);
    let policy = EpochPolicy {
        schedule: Some(schedule),
        publish_ahead: true,
        capacity: 1_000,
        rotate_after: 1_000,
        ..EpochPolicy::default()
    };
    let base = 270_000;
    let wall = schedule.begins(base).unwrap() + Duration::from_secs(10);
    let key = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(1));
    let dir = scratch("schedule-ahead");
    let keyring = if disk {
        let (k, _resumed) = Keyring::open_at(policy, &dir, wall).unwrap();
        k
    } else {
        Keyring::new_at(policy, key, wall).unwrap()
    };
    let ahead = keyring.ahead();
    assert_eq!(ahead.len(), MAX_AHEAD as usize);
    let mut client = Client::new(2);
    // One packet for the current key and each key ahead: each is taken
    // by its own epoch, none as a previous key.
    let mut keys = vec![keyring.current()];
    keys.extend(ahead.iter().cloned());
    let packets: Vec<Packet> = keys.iter().map(|e| client.packet(&e.public_key)).collect();
    for (e, p) in keys.iter().zip(&packets) {
        assert_eq!(receive(&keyring, p), Ok((e.number, false)));
        assert_eq!(keyring.current().number, base);
    }
    for (e, p) in keys.iter().zip(&packets) {
        assert_eq!(
            receive(&keyring, p),
            Err(Dropped::Replay),
            "epoch {}",
            e.number
        );
    }
    // Two epochs on: base+2 is current; the packet made for it before is
    // still a replay (its epoch's filter came with it), and base+1's key,
    // whose time is over, unwraps nothing.
    turns(&keyring, schedule.begins(base + 2).unwrap());
    assert_eq!(keyring.current().number, base + 2);
    assert_eq!(receive(&keyring, &packets[2]), Err(Dropped::Replay));
    let late = client.packet(&keys[1].public_key);
    assert_eq!(receive(&keyring, &late), Err(Dropped::Mac));
    for p in client.packets(&keys[3].public_key, 3) {
        assert_eq!(receive(&keyring, &p), Ok((base + 3, false)));
    }
    drop(keyring);
    let _ = std::fs::remove_dir_all(&dir);
}
