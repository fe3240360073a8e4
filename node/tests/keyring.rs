//! The keyring with real packets, through the public API: the order of
//! checks, copies racing on two threads, the previous key during its grace,
//! an epoch full in memory mode, and forced rotations in disk mode.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::Path;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use common::{Client, NEXT, Packet, datagram, scratch};
use kemsphinx_node::kemsphinx::geometry::{KEM_CIPHERTEXT_LEN, PACKET_LEN, VERSION_LEN};
use kemsphinx_node::kemsphinx::{Action, PrivateKey};
use kemsphinx_node::{Dropped, EpochPolicy, Keyring, Resumed, Turn};
use rand_core::SeedableRng;

const HOUR: Duration = Duration::from_secs(3600);

/// On a fresh directory: nothing resumed, retired, deleted or changed;
/// the epochs made.
fn fresh(resumed: &Resumed) -> Option<Vec<u64>> {
    let nothing = resumed.epochs.is_empty()
        && resumed.retired.is_empty()
        && resumed.temporaries.is_empty()
        && resumed.changes.is_empty();
    nothing.then(|| resumed.made.clone())
}

/// A policy whose filters all but never give a false positive at the
/// handful of packets these tests send (memory mode would drop an honest
/// packet as a replay at up to `fp_rate`).
fn policy(capacity: usize, rotate_after: usize) -> EpochPolicy {
    EpochPolicy {
        capacity,
        fp_rate: 1e-9,
        rotate_after,
        length: HOUR,
        grace: HOUR,
        publish_ahead: false,
        schedule: None,
        ..EpochPolicy::default()
    }
}

fn key(seed: u64) -> PrivateKey {
    PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(seed))
}

/// Receive `packet` as a node does (into a buffer a byte longer); what
/// came of it: the epoch and whether by the previous key, or the drop.
fn receive(keyring: &Keyring, packet: &Packet) -> Result<(u64, bool), Dropped> {
    let mut buf = datagram(packet);
    keyring
        .receive(&mut buf[..PACKET_LEN])
        .map(|a| (a.epoch, a.previous_key))
}

/// The order of checks, each drop counted: a wrong length is refused
/// before anything (the buffer untouched), a replay before any key work,
/// a packet for a key the node does not hold on its MAC (the buffer
/// unchanged, and its tag not remembered), and only then is the tag taken.
#[test]
fn the_checks_come_in_order_and_every_drop_is_counted() {
    let keyring = Keyring::new(policy(100, 100), key(1)).unwrap();
    let node = keyring.current().public_key;
    let mut client = Client::new(2);
    let packet = client.packet(&node);

    // Wrong length: one byte over, one short, and a datagram of one byte.
    let mut buf = datagram(&packet);
    let before = buf.clone();
    assert_eq!(
        keyring.receive(&mut buf[..PACKET_LEN + 1]).err(),
        Some(Dropped::Length)
    );
    assert_eq!(
        keyring.receive(&mut buf[..PACKET_LEN - 1]).err(),
        Some(Dropped::Length)
    );
    assert_eq!(keyring.receive(&mut buf[..1]).err(), Some(Dropped::Length));
    assert_eq!(buf, before, "a datagram of the wrong length is untouched");

    // A forged copy keeping the packet's KEM ciphertext (so its replay
    // tag) with its header altered fails on its MAC and is not
    // remembered: the real packet, arriving after it, still goes on.
    let mut forged = datagram(&packet);
    forged[VERSION_LEN + KEM_CIPHERTEXT_LEN] ^= 1;
    let forged_before = forged.clone();
    assert_eq!(
        keyring.receive(&mut forged[..PACKET_LEN]).err(),
        Some(Dropped::Mac)
    );
    assert_eq!(forged, forged_before, "a failed MAC leaves the buffer");

    // The packet itself: unwrapped in place, forwarded.
    let mut buf = datagram(&packet);
    let accepted = keyring.receive(&mut buf[..PACKET_LEN]).unwrap();
    assert_eq!((accepted.epoch, accepted.previous_key), (0, false));
    assert!(keyring.is_durable(accepted.ticket), "memory mode: at once");
    match accepted.action {
        Action::Forward { next_hop, delay } => {
            assert_eq!(next_hop, NEXT);
            assert_eq!(delay, Some(0));
        }
        _ => panic!("a forward packet"),
    }
    assert_ne!(buf[..PACKET_LEN], packet[..], "unwrapped in place");

    // Its replay, twice.
    let mut replay = datagram(&packet);
    assert_eq!(
        keyring.receive(&mut replay[..PACKET_LEN]).err(),
        Some(Dropped::Replay)
    );
    assert_eq!(replay, datagram(&packet), "a replay is not unwrapped");
    assert_eq!(receive(&keyring, &packet), Err(Dropped::Replay));

    // A packet for a key the node does not hold, twice: its MAC fails
    // under every live key, the buffer is unchanged, and the second copy
    // is no replay (a tag is remembered only once a MAC verified).
    let stranger = key(3);
    let other = client.packet(stranger.public_key());
    let mut buf = datagram(&other);
    assert_eq!(
        keyring.receive(&mut buf[..PACKET_LEN]).err(),
        Some(Dropped::Mac)
    );
    assert_eq!(buf, datagram(&other), "a failed MAC leaves the buffer");
    assert_eq!(receive(&keyring, &other), Err(Dropped::Mac));

    let drops = keyring.drops();
    assert_eq!(drops.get(Dropped::Length), 3);
    assert_eq!(drops.get(Dropped::Mac), 3);
    assert_eq!(drops.get(Dropped::Replay), 2);
    assert_eq!(drops.get(Dropped::EpochFull), 0);
    assert_eq!(drops.total(), 8);
    assert_eq!(keyring.accepted(), 1);
    assert_eq!(keyring.current().taken, 1);
}

/// Two copies of each packet, received at once on two threads sharing one
/// keyring: exactly one of each goes on, the other is a replay.
#[test]
fn of_two_copies_racing_on_two_threads_exactly_one_goes_on() {
    const PACKETS: usize = 200;
    let keyring = Keyring::new(policy(1_000, 1_000), key(4)).unwrap();
    let packets = Client::new(5).packets(&keyring.current().public_key, PACKETS);
    let barrier = Barrier::new(2);
    let results: Vec<Vec<Result<(u64, bool), Dropped>>> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    packets
                        .iter()
                        .map(|p| {
                            let mut buf = datagram(p);
                            barrier.wait();
                            keyring
                                .receive(&mut buf[..PACKET_LEN])
                                .map(|a| (a.epoch, a.previous_key))
                        })
                        .collect()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(results.iter().all(|r| r.len() == PACKETS));
    let mut won = [0; 2];
    for (i, pair) in results[0].iter().zip(&results[1]).enumerate() {
        match pair {
            (Ok((0, false)), Err(Dropped::Replay)) => won[0] += 1,
            (Err(Dropped::Replay), Ok((0, false))) => won[1] += 1,
            other => panic!("packet {i}: {other:?}"),
        }
    }
    println!("copies that went on, per thread: {won:?}");
    assert_eq!(keyring.accepted(), PACKETS as u64);
    assert_eq!(keyring.drops().get(Dropped::Replay), PACKETS as u64);
    assert_eq!(keyring.drops().total(), PACKETS as u64);
    assert_eq!(keyring.current().taken, PACKETS);
}

/// A packet built for the key of the epoch before unwraps while that
/// epoch's grace lasts, and not after: then its MAC fails, as for any key
/// the node does not hold.
#[test]
fn the_previous_key_unwraps_during_its_grace_and_not_after() {
    let p = EpochPolicy {
        length: Duration::from_secs(10),
        publish_ahead: false,
        grace: Duration::from_secs(5),
        ..policy(100, 100)
    };
    let keyring = Keyring::new(p, key(6)).unwrap();
    // After the keyring's start: ten seconds from here are its length.
    let t0 = Instant::now();
    let mut client = Client::new(7);
    let old = client.packets(&keyring.current().public_key, 3);
    assert_eq!(receive(&keyring, &old[0]), Ok((0, false)));
    // Nothing changes before the epoch's time is up.
    assert_eq!(keyring.turn(t0 + Duration::from_secs(9)), None);
    // Told a time ahead (the end of the epoch's length), the rotation
    // happens at that time on the keyring's clock: the grace runs from
    // `t1`.
    let t1 = t0 + Duration::from_secs(10);
    assert_eq!(
        keyring.turn(t1),
        Some(Turn::Started {
            number: 1,
            took: 1,
            by_count: false
        })
    );
    assert_eq!(keyring.current().number, 1);
    assert_eq!(keyring.previous().map(|e| e.number), Some(0));
    let new = client.packets(&keyring.current().public_key, 2);
    // The old key unwraps (and remembers) in its grace; the new key's
    // packet goes on too, whichever key was tried first.
    assert_eq!(receive(&keyring, &old[1]), Ok((0, true)));
    assert_eq!(receive(&keyring, &new[0]), Ok((1, false)));
    assert_eq!(receive(&keyring, &old[0]), Err(Dropped::Replay));
    assert_eq!(receive(&keyring, &old[1]), Err(Dropped::Replay));
    assert_eq!(keyring.turn(t1 + Duration::from_millis(4_999)), None);
    let t2 = t1 + Duration::from_secs(5);
    assert_eq!(
        keyring.turn(t2),
        Some(Turn::Retired {
            number: 0,
            early: false
        })
    );
    assert!(keyring.previous().is_none());
    let mut buf = datagram(&old[2]);
    assert_eq!(
        keyring.receive(&mut buf[..PACKET_LEN]).err(),
        Some(Dropped::Mac)
    );
    assert_eq!(buf, datagram(&old[2]), "a failed MAC leaves the buffer");
    // The retired key's filter went with it: its packets fail on the MAC.
    assert_eq!(receive(&keyring, &old[1]), Err(Dropped::Mac));
    assert_eq!(receive(&keyring, &new[1]), Ok((1, false)));
    assert_eq!(receive(&keyring, &new[0]), Err(Dropped::Replay));
}

/// Memory mode fails closed: an epoch that has taken its filter's
/// capacity refuses its key's packets (never a filter past the rate it
/// was sized for), until a new epoch takes over.
#[test]
fn a_full_epoch_refuses_packets_until_a_new_one_starts() {
    const CAPACITY: usize = 3;
    let keyring = Keyring::new(policy(CAPACITY, CAPACITY), key(8)).unwrap();
    let mut client = Client::new(9);
    let old = client.packets(&keyring.current().public_key, CAPACITY + 3);
    for p in &old[..CAPACITY] {
        assert_eq!(receive(&keyring, p), Ok((0, false)));
    }
    assert_eq!(keyring.current().taken, CAPACITY);
    assert_eq!(receive(&keyring, &old[CAPACITY]), Err(Dropped::EpochFull));
    assert_eq!(
        receive(&keyring, &old[CAPACITY + 1]),
        Err(Dropped::EpochFull)
    );
    assert_eq!(receive(&keyring, &old[0]), Err(Dropped::Replay));
    assert_eq!(keyring.current().taken, CAPACITY, "nothing past capacity");
    assert_eq!(keyring.drops().get(Dropped::EpochFull), 2);
    assert_eq!(
        keyring.turn(Instant::now()),
        Some(Turn::Started {
            number: 1,
            took: CAPACITY,
            by_count: true
        })
    );
    assert_eq!(keyring.turn(Instant::now()), None);
    let new = client.packet(&keyring.current().public_key);
    assert_eq!(receive(&keyring, &new), Ok((1, false)));
    // The full epoch, now the previous one, still refuses its key's.
    assert_eq!(
        receive(&keyring, &old[CAPACITY + 2]),
        Err(Dropped::EpochFull)
    );
    assert_eq!(keyring.previous().map(|e| e.taken), Some(CAPACITY));
    assert_eq!(keyring.drops().get(Dropped::EpochFull), 3);
    assert_eq!(keyring.accepted(), CAPACITY as u64 + 1);
}

/// (key files, stores) in `dir`.
fn files(dir: &Path) -> (usize, usize) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let count = |suffix: &str| names.iter().filter(|n| n.ends_with(suffix)).count();
    (count(".key"), count(".redb"))
}

/// Packets anyone can make for the published key force a new epoch each
/// time the current one has taken `rotate_after`: each change within the
/// previous epoch's grace retires it early, files and all, so never more
/// than two key files are on disk; the packets that left were durable
/// first, and a restart resumes both live epochs with their tags.
#[test]
fn a_forced_rotation_flood_never_leaves_more_than_two_keys_on_disk() {
    const STARTED: u64 = 12;
    let dir = scratch("flood");
    let p = EpochPolicy {
        capacity: 4,
        fp_rate: 1e-6,
        rotate_after: 2,
        publish_ahead: false,
        length: HOUR,
        grace: HOUR,
        schedule: None,
        ..EpochPolicy::default()
    };
    let (keyring, resumed) = Keyring::open(p.clone(), &dir).unwrap();
    assert_eq!(fresh(&resumed), Some(vec![0]), "{resumed:?}");
    let mut client = Client::new(10);
    let (mut started, mut early, mut most) = (0, 0, (0, 0));
    let mut retired_packet: Option<Packet> = None;
    let mut last_sent: Vec<Packet> = Vec::new();
    while started < STARTED {
        let key = keyring.current().public_key;
        let batch = client.packets(&key, 3);
        for packet in &batch[..2] {
            let mut buf = datagram(packet);
            let accepted = keyring.receive(&mut buf[..PACKET_LEN]).unwrap();
            assert!(!accepted.previous_key);
            assert!(
                keyring
                    .wait_durable(accepted.ticket, Duration::from_secs(30))
                    .is_ok()
            );
            assert!(keyring.is_durable(accepted.ticket));
        }
        while let Some(turn) = keyring.turn(Instant::now()) {
            match turn {
                Turn::Started { by_count: true, .. } => started += 1,
                Turn::Retired { early: true, .. } => early += 1,
                other => panic!("{other:?}"),
            }
            let now = files(&dir);
            assert!(now.0 <= 2 && now.1 <= 2, "{now:?} after {turn:?}");
            most = (most.0.max(now.0), most.1.max(now.1));
        }
        if started == 2 {
            // Made for epoch 1's key, which the next change retires early.
            retired_packet.get_or_insert_with(|| batch[2].clone());
        }
        last_sent = batch;
    }
    println!("{started} forced epochs, {early} retired early: at most {most:?} key files, stores");
    assert_eq!(most, (2, 2));
    assert_eq!(early, STARTED - 1);
    assert_eq!(files(&dir), (2, 2));
    assert_eq!(keyring.current().number, STARTED);
    assert_eq!(keyring.previous().map(|e| e.number), Some(STARTED - 1));
    assert_eq!(
        receive(&keyring, retired_packet.as_ref().unwrap()),
        Err(Dropped::Mac),
        "an early-retired key unwraps nothing"
    );
    assert_eq!(keyring.drops().get(Dropped::Mac), 1);
    assert!(keyring.take_disk_error().is_none());
    assert!(!keyring.disk_failing());
    assert!(keyring.commits() > 0);
    drop(keyring);

    // A restart resumes both live epochs and their tags: the previous
    // epoch's packets are replays, its unsent one still unwraps.
    let (keyring, resumed) = Keyring::open(p, &dir).unwrap();
    println!("after the restart: {resumed:?}");
    // Oldest first, as documented.
    assert_eq!(
        resumed.epochs,
        [(STARTED - 1, 2), (STARTED, 0)],
        "{resumed:?}"
    );
    assert!(resumed.retired.is_empty());
    assert_eq!(receive(&keyring, &last_sent[0]), Err(Dropped::Replay));
    assert_eq!(receive(&keyring, &last_sent[1]), Err(Dropped::Replay));
    assert_eq!(receive(&keyring, &last_sent[2]), Ok((STARTED - 1, true)));
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With `publish_ahead`, the next epoch's key is there from the start:
/// its packets are accepted already, their tags stay with the epoch when
/// it becomes current, and a new next epoch is made at each change. In
/// disk mode a restart finds the same three roles (the newest epoch on
/// disk is the next one), and never more than three epochs' keys are on
/// disk, however often changes are forced.
#[test]
fn the_next_key_is_published_ahead_and_unwraps_before_its_epoch() {
    let p = EpochPolicy {
        publish_ahead: true,
        ..policy(8, 2)
    };
    // Memory mode.
    let keyring = Keyring::new(p.clone(), key(31)).unwrap();
    let mut client = Client::new(32);
    let next = keyring.next().unwrap();
    assert_eq!((keyring.current().number, next.number), (0, 1));
    let early = client.packet(&next.public_key);
    assert_eq!(receive(&keyring, &early), Ok((1, false)));
    assert_eq!(receive(&keyring, &early), Err(Dropped::Replay));
    let now = keyring.current().public_key;
    for p in client.packets(&now, 2) {
        assert_eq!(receive(&keyring, &p), Ok((0, false)));
    }
    assert!(matches!(
        keyring.turn(Instant::now()),
        Some(Turn::Started { number: 1, .. })
    ));
    assert_eq!(keyring.current().public_key, next.public_key);
    assert_eq!(keyring.current().taken, 1, "the tag taken ahead stays");
    assert_eq!(keyring.next().unwrap().number, 2);
    assert_eq!(receive(&keyring, &early), Err(Dropped::Replay));
    let late = client.packet(&now);
    assert_eq!(receive(&keyring, &late), Ok((0, true)));

    // Disk mode.
    let dir = scratch("ahead");
    let count = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".key")
            })
            .count()
    };
    let (keyring, resumed) = Keyring::open(p.clone(), &dir).unwrap();
    assert_eq!(fresh(&resumed), Some(vec![0, 1]), "{resumed:?}");
    assert_eq!(count(&dir), 2);
    let next = keyring.next().unwrap();
    let current = keyring.current();
    let ahead = client.packet(&next.public_key);
    let now = client.packet(&current.public_key);
    assert_eq!(receive(&keyring, &ahead), Ok((1, false)));
    assert_eq!(receive(&keyring, &now), Ok((0, false)));
    let mut buf = datagram(&client.packet(&current.public_key));
    let ticket = keyring.receive(&mut buf[..PACKET_LEN]).unwrap().ticket;
    assert!(
        keyring
            .wait_durable(ticket, Duration::from_secs(30))
            .is_ok()
    );
    drop(keyring);
    let (keyring, resumed) = Keyring::open(p.clone(), &dir).unwrap();
    assert_eq!(resumed.epochs, [(0, 2), (1, 1)], "{resumed:?}");
    assert_eq!(keyring.current().public_key, current.public_key);
    assert_eq!(keyring.next().unwrap().public_key, next.public_key);
    assert_eq!(receive(&keyring, &ahead), Err(Dropped::Replay));
    assert_eq!(receive(&keyring, &now), Err(Dropped::Replay));
    // Forced changes: at most three epochs' keys on disk at any time.
    let mut most = count(&dir);
    for _ in 0..6 {
        for p in client.packets(&keyring.current().public_key, 2) {
            let mut buf = datagram(&p);
            let ticket = keyring.receive(&mut buf[..PACKET_LEN]).unwrap().ticket;
            assert!(
                keyring
                    .wait_durable(ticket, Duration::from_secs(30))
                    .is_ok()
            );
        }
        while keyring.turn(Instant::now()).is_some() {
            most = most.max(count(&dir));
        }
    }
    assert_eq!(most, 3);
    assert!(keyring.take_disk_error().is_none());
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}
