//! What an operator reads: drop counts by name, and what a restart
//! resumed, made or deleted.

use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use rand_core::SeedableRng;

use super::disk::{policy, scratch, tag};
use crate::dropped::DropCounters;
use crate::fault::{self, Point};
use crate::{
    CommitLatency, Discarded, DropCounts, Dropped, EpochPolicy, ForwardCounts, Keyring, Role, Turn,
};

/// `DropCounts` names each reason (0.1 printed `DropCounts([0, 2, …])`).
#[test]
fn drop_counts_name_each_reason() {
    let counters = DropCounters::default();
    counters.add(Dropped::Replay);
    counters.add(Dropped::Replay);
    counters.add(Dropped::EpochFull);
    let counts: DropCounts = counters.snapshot();
    let debug = format!("{counts:?}");
    let display = counts.to_string();
    println!("{debug}\n{display}");
    assert!(
        debug.starts_with("DropCounts { length: 0, replay: 2, disk_failing: 0"),
        "{debug}"
    );
    assert!(debug.contains("epoch_full: 1"), "{debug}");
    assert!(
        display.starts_with("length 0, replay 2, disk_failing 0"),
        "{display}"
    );
    assert!(display.contains("epoch_full 1, other 0"), "{display}");
    let pairs: Vec<(Dropped, u64)> = counts.iter().filter(|(_, n)| *n > 0).collect();
    assert_eq!(pairs, [(Dropped::Replay, 2), (Dropped::EpochFull, 1)]);
}

#[test]
fn forward_counts_name_each_reason() {
    let counts = ForwardCounts {
        held: 5,
        released: 3,
        queue_full: 1,
        ..ForwardCounts::default()
    };
    let display = counts.to_string();
    assert_eq!(
        display,
        "held 5, released 3, queue_full 1, delay_too_long 0, not_durable 0, stopped 0"
    );
    let pairs: Vec<(Discarded, u64)> = counts.iter().collect();
    assert_eq!(pairs.first(), Some(&(Discarded::QueueFull, 1)));
    assert_eq!(pairs.len(), Discarded::ALL.len());
}

/// On a schedule, an empty directory starts the epoch the clock names,
/// not epoch 0: `Resumed` says that one is the empty directory's, and
/// the one after it the next epoch made ahead.
#[test]
fn resumed_on_a_schedule_says_which_epoch_an_empty_directory_made() {
    let start = std::time::SystemTime::UNIX_EPOCH;
    let scheduled = EpochPolicy {
        schedule: Some(crate::Schedule::new(start, Duration::from_secs(60))),
        publish_ahead: true,
        ..policy()
    };
    let wall = start + Duration::from_secs(5 * 60 + 1);
    let dir = scratch("resumed-scheduled");
    let (_keyring, resumed) = Keyring::open_at(scheduled, &dir, wall).unwrap();
    assert_eq!(resumed.made, [5, 6]);
    assert_eq!(
        resumed.to_string(),
        "made epoch 5 (an empty directory); made epoch 6 (a next epoch, its key to publish)"
    );
}

/// `Resumed`'s `Display` says what was resumed (with tag counts), made,
/// deleted past its grace, and changed.
#[test]
fn resumed_says_what_it_resumed_made_and_deleted() {
    let ahead = EpochPolicy {
        publish_ahead: true,
        grace: Duration::from_millis(1),
        ..policy()
    };
    let dir = scratch("resumed-says");
    let (keyring, resumed) = Keyring::open(ahead.clone(), &dir).unwrap();
    assert_eq!(resumed.made, [0, 1]);
    assert_eq!(
        resumed.to_string(),
        "made epoch 0 (an empty directory); made epoch 1 (a next epoch, its key to publish)"
    );
    // Epoch 1 becomes current, 2 next; 0 is previous until its grace ends.
    let t = Instant::now() + Duration::from_secs(7200);
    assert!(matches!(
        keyring.turn(t),
        Some(Turn::Started { number: 1, .. })
    ));
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let _ = keyring.remember_tag(&tag(&mut rng), false).unwrap();
    drop(keyring);
    std::thread::sleep(Duration::from_millis(20));
    // Restarted past epoch 0's grace, with publish_ahead turned off.
    let off = EpochPolicy {
        publish_ahead: false,
        ..ahead
    };
    let (keyring, resumed) = Keyring::open(off, &dir).unwrap();
    let said = resumed.to_string();
    println!("{said}");
    assert_eq!(resumed.epochs, [(1, 1)]);
    assert_eq!(resumed.retired, [0]);
    assert_eq!(
        said,
        "resumed epoch 1 (1 tags); deleted epochs 0 (past their grace); publish_ahead turned \
         off: next epoch 2 deleted, files and all"
    );
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Memory mode: the live epochs with their fill and age; nothing pending,
/// no commits, the disk never failing.
#[test]
fn health_in_memory_mode() {
    let p = EpochPolicy {
        publish_ahead: true,
        ..policy()
    };
    let keyring = Keyring::new(p, kemsphinx::PrivateKey::from_seed(&[7; 96])).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    for _ in 0..250 {
        let _ = keyring.remember_tag(&tag(&mut rng), false).unwrap();
    }
    let _ = keyring.remember_next(&tag(&mut rng)).unwrap();
    let h = keyring.health();
    println!("{h}");
    let roles: Vec<(Role, u64, usize)> = h
        .epochs
        .iter()
        .map(|e| (e.role, e.number, e.taken))
        .collect();
    assert_eq!(roles, [(Role::Current, 0, 250), (Role::Next, 1, 1)]);
    assert_eq!(h.epochs[0].capacity, 10_000);
    assert!((h.epochs[0].fill() - 0.025).abs() < 1e-12);
    assert!(h.epochs[0].age < Duration::from_secs(60));
    assert_eq!((h.pending, h.oldest_pending), (0, None));
    assert_eq!(h.commits, CommitLatency::default());
    assert_eq!(
        (h.disk_failing_since, h.last_disk_error.clone()),
        (None, None)
    );
    let said = h.to_string();
    assert!(
        said.starts_with("epochs: current 0 (250/10000, 2.50 %, age "),
        "{said}"
    );
    assert!(said.ends_with("; pending 0 tags; disk ok"), "{said}");
}

/// Disk mode: commits' latency recorded, nothing pending once durable;
/// with the store's commits failing (an injected fault), the tags wait,
/// counted with the oldest one's age, the disk is failing since a time
/// and its error kept; once the fault is gone, all is committed and the
/// failure ends (the error text stays).
#[test]
fn health_in_disk_mode_and_under_a_failing_disk() {
    let dir = scratch("health");
    let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let mut last = None;
    for _ in 0..40 {
        last = Some(keyring.remember_tag(&tag(&mut rng), false).unwrap());
    }
    assert!(keyring.is_durable_within(last.unwrap(), Duration::from_secs(30)));
    let h = keyring.health();
    println!("{h}");
    assert_eq!(h.epochs.len(), 1);
    assert_eq!((h.epochs[0].role, h.epochs[0].taken), (Role::Current, 40));
    assert_eq!((h.pending, h.oldest_pending), (0, None));
    let (lastc, max) = (h.commits.last.unwrap(), h.commits.max.unwrap());
    assert!(lastc <= max && !h.commits.recent.is_empty());
    assert!(h.commits.recent.len() <= crate::RECENT);
    assert_eq!(h.commits.recent.last(), Some(&lastc));
    assert_eq!(h.disk_failing_since, None);

    fault::arm(&dir, Point::StoreCommit, 0, u32::MAX);
    let before = std::time::SystemTime::now();
    let mut waiting = Vec::new();
    for _ in 0..5 {
        waiting.push(keyring.remember_tag(&tag(&mut rng), false).unwrap());
    }
    let start = Instant::now();
    while !keyring.disk_failing() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    let h = keyring.health();
    println!("{h}");
    assert_eq!(h.pending, 5);
    assert!(h.oldest_pending.unwrap() >= Duration::from_millis(50));
    assert!(h.disk_failing_since.unwrap() >= before);
    let error = h.last_disk_error.clone().unwrap();
    assert!(error.contains("injected fault at StoreCommit"), "{error}");
    assert!(h.to_string().contains("disk failing for "), "{h}");
    // The failure stays the first one's time while retries fail.
    std::thread::sleep(crate::RETRY * 2);
    assert_eq!(keyring.health().disk_failing_since, h.disk_failing_since);

    fault::disarm(&dir);
    for t in waiting {
        assert!(keyring.is_durable_within(t, Duration::from_secs(30)));
    }
    let h = keyring.health();
    println!("{h}");
    assert_eq!(
        (h.pending, h.oldest_pending, h.disk_failing_since),
        (0, None, None)
    );
    assert_eq!(h.last_disk_error.as_deref(), Some(error.as_str()));
    assert!(keyring.take_disk_error().is_some());
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}
