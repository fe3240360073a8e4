//! What an operator reads: drop counts by name, and what a restart
//! resumed, made or deleted.

use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use rand_core::SeedableRng;

use super::disk::{policy, scratch, tag};
use crate::dropped::DropCounters;
use crate::{Discarded, DropCounts, Dropped, EpochPolicy, ForwardCounts, Keyring, Turn};

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
