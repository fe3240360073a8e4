//! What the types and the directory allowed and should not: policies that
//! cannot work, durations that overflow, a turn told a time ahead, tickets
//! of another keyring, the directory's lock, its files' owner and mode.

use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use kemsphinx::PrivateKey;
use rand_core::SeedableRng;

use super::disk::{policy, scratch, tag};
use crate::dir::PersistDir;
use crate::{EpochPolicy, Keyring, OpenError, ResumeChange, Turn};

const DAY: Duration = Duration::from_secs(86_400);
const HOUR: Duration = Duration::from_secs(3600);

fn key() -> PrivateKey {
    PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(51))
}

/// A zero length (the README's `while let Some(turn)` loop never ended:
/// in disk mode hundreds of key files a second) and durations that
/// overflow `Instant` (a grace of `Duration::MAX` panicked in `turn` and
/// at restart) are refused by the policy check.
#[test]
fn the_policy_check_refuses_what_cannot_work() {
    for (what, p) in [
        (
            "length 0",
            EpochPolicy {
                length: Duration::ZERO,
                ..policy()
            },
        ),
        (
            "length MAX",
            EpochPolicy {
                length: Duration::MAX,
                ..policy()
            },
        ),
        (
            "grace MAX",
            EpochPolicy {
                grace: Duration::MAX,
                ..policy()
            },
        ),
    ] {
        let refused = Keyring::new(p.clone(), key()).err().map(|e| e.to_string());
        println!("{what}: {refused:?}");
        assert!(refused.is_some(), "{what} accepted");
        assert!(p.check().is_err(), "{what}");
    }
}

/// `wait_durable` with `Duration::MAX` (in disk mode it panicked on
/// `Instant + timeout`) waits until the ticket is durable; so does
/// `wait_for_turn` until the epoch is due.
#[test]
fn waiting_for_ever_does_not_panic() {
    let dir = scratch("wait-max");
    let mut rng = ChaCha20Rng::seed_from_u64(52);
    let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
    let ticket = keyring.remember_tag(&tag(&mut rng), false).unwrap();
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        keyring.wait_durable(ticket, Duration::MAX)
    }));
    assert!(waited.is_ok(), "wait_durable(_, Duration::MAX) panicked");
    assert!(keyring.is_durable(ticket));
    // And the housekeeping thread's wait, woken when the epoch is due.
    let p = EpochPolicy {
        rotate_after: 3,
        ..policy()
    };
    let memory = Keyring::new(p, key()).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            for _ in 0..3 {
                let _ = memory.remember_tag(&tag(&mut rng), false).unwrap();
            }
        });
        assert!(memory.wait_for_turn(Duration::MAX));
    });
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A turn told a time a day ahead starts the new epoch, and the previous
/// key's grace runs on the keyring's one clock from that rotation: it
/// retires a grace after it on the caller's time (before: the grace ran
/// from the real clock, so the caller's own `t + DAY + grace - 1 ms`
/// retired it already), and a grace after it in real time, not a day and
/// a grace later.
#[test]
fn a_turn_told_a_time_ahead_does_not_keep_the_previous_key_for_a_day() {
    let keyring = Keyring::new(policy(), key()).unwrap();
    let ahead = Instant::now() + DAY;
    assert!(matches!(
        keyring.turn(ahead),
        Some(Turn::Started { number: 1, .. })
    ));
    let grace = policy().grace;
    assert_eq!(
        keyring.turn(ahead + grace - Duration::from_millis(1)),
        None,
        "the previous key retired before its grace ended"
    );
    assert_eq!(
        keyring.turn(ahead + grace),
        Some(Turn::Retired {
            number: 0,
            early: false
        }),
        "the previous key outlived its grace"
    );
    // In real time: a grace after a turn told a day ahead, the previous
    // key is gone (the clock keeps the day's lead, it does not wait for
    // the real clock to catch up).
    let short = EpochPolicy {
        grace: Duration::from_millis(200),
        ..policy()
    };
    let keyring = Keyring::new(short, key()).unwrap();
    assert!(matches!(
        keyring.turn(Instant::now() + DAY),
        Some(Turn::Started { number: 1, .. })
    ));
    assert_eq!(keyring.turn(Instant::now()), None);
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!(
        keyring.turn(Instant::now()),
        Some(Turn::Retired {
            number: 0,
            early: false
        }),
        "the previous key outlived its grace in real time"
    );
    // The new epoch's age is on the same clock: about the time slept.
    let current = keyring.health().epochs[0].clone();
    assert_eq!(current.number, 1);
    assert!(current.age >= Duration::from_millis(250) && current.age < HOUR);
}

/// Self-timed, a turn told a time ahead of the real clock (the current
/// epoch's end) rotates once: the same call again turns nothing (before:
/// the new epoch's start was the real clock's and its age the caller's
/// time minus that, so every call found it past its length and turned).
#[test]
fn a_repeated_turn_told_a_time_ahead_rotates_once() {
    for publish_ahead in [false, true] {
        let p = EpochPolicy {
            publish_ahead,
            ..policy()
        };
        let keyring = Keyring::new(p.clone(), key()).unwrap();
        let end = Instant::now() + p.length;
        assert!(matches!(
            keyring.turn(end),
            Some(Turn::Started { number: 1, .. })
        ));
        for _ in 0..5 {
            assert_eq!(
                keyring.turn(end),
                None,
                "turned again (ahead {publish_ahead})"
            );
        }
        assert_eq!(keyring.current().number, 1);
        assert_eq!(keyring.previous().map(|e| e.number), Some(0));
        // One length later on the caller's clock: the previous key's
        // grace is over, and the next rotation is due.
        let later = end + p.length;
        assert_eq!(
            keyring.turn(later),
            Some(Turn::Retired {
                number: 0,
                early: false
            })
        );
        assert!(matches!(
            keyring.turn(later),
            Some(Turn::Started { number: 2, .. })
        ));
        assert_eq!(keyring.turn(later), None);
    }
}

/// Any `Instant` a caller can make, however far ahead, turns without a
/// panic, and so do the calls after it (the clock's sums saturate).
#[test]
fn a_turn_told_the_last_instant_does_not_panic() {
    let mut last = Instant::now();
    let mut step = Duration::from_secs(1 << 62);
    while !step.is_zero() {
        if let Some(t) = last.checked_add(step) {
            last = t;
        }
        step /= 2;
    }
    let keyring = Keyring::new(policy(), key()).unwrap();
    let turned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut turns = 0;
        while keyring.turn(last).is_some() && turns < 10 {
            turns += 1;
        }
        let _ = keyring.turn(Instant::now());
        let _ = keyring.health();
        turns
    }));
    assert!(turned.is_ok(), "a turn told the last Instant panicked");
    assert_eq!(keyring.current().number, 1);
}

/// A ticket is its keyring's: another keyring, whose groups count alike,
/// does not call it durable (before: the group number alone was
/// compared).
#[test]
fn a_ticket_of_another_keyring_is_not_durable() {
    let mut rng = ChaCha20Rng::seed_from_u64(53);
    let (a_dir, b_dir) = (scratch("ticket-a"), scratch("ticket-b"));
    let (a, _) = Keyring::open(policy(), &a_dir).unwrap();
    let (b, _) = Keyring::open(policy(), &b_dir).unwrap();
    let from_a = a.remember_tag(&tag(&mut rng), false).unwrap();
    let from_b = b.remember_tag(&tag(&mut rng), false).unwrap();
    assert!(a.is_durable_within(from_a, Duration::from_secs(30)));
    assert!(b.is_durable_within(from_b, Duration::from_secs(30)));
    assert!(!b.is_durable(from_a), "another keyring's ticket is durable");
    assert!(!a.is_durable(from_b), "another keyring's ticket is durable");
    drop((a, b));
    std::fs::remove_dir_all(&a_dir).unwrap();
    std::fs::remove_dir_all(&b_dir).unwrap();
}

/// The directory's lock survives the deletion of any file in it (0.1
/// locked `DIR/lock`: deleted, a second process locked a new one and
/// deleted the first one's new store as an orphan).
#[test]
fn deleting_a_file_does_not_defeat_the_lock() {
    let dir = scratch("lock-deleted");
    let first = PersistDir::new(&dir, EpochPolicy::default().store_cache).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let second = Keyring::open(policy(), &dir);
    assert!(
        matches!(second, Err(OpenError::Locked { .. })),
        "a second user took the directory: {second:?}"
    );
    drop(first);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
mod unix {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::super::disk::{policy, scratch};
    use crate::Keyring;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A directory, key or store that others may write or read, and a
    /// key or store that is a symbolic link, are refused before a key
    /// is loaded (0.1 took a 0777 directory, a 0666 key file and
    /// symlinked files silently).
    #[test]
    fn loose_modes_and_symbolic_links_are_refused() {
        let dir = scratch("modes");
        drop(Keyring::open(policy(), &dir).unwrap());
        let key = dir.join("epoch-00000000.key");
        let store = dir.join("epoch-00000000.redb");
        let mut accepted = Vec::new();
        let check = |what: &str, accepted: &mut Vec<String>| match Keyring::open(policy(), &dir) {
            Ok(_) => accepted.push(what.to_owned()),
            Err(e @ crate::OpenError::Permissions { .. }) => println!("{what}: {e}"),
            Err(e) => panic!("{what}: not a Permissions error: {e:?}"),
        };
        chmod(&dir, 0o777);
        check("a 0777 directory", &mut accepted);
        chmod(&dir, 0o770);
        check("a 0770 directory", &mut accepted);
        chmod(&dir, 0o700);
        chmod(&key, 0o666);
        check("a 0666 key file", &mut accepted);
        chmod(&key, 0o640);
        check("a 0640 key file", &mut accepted);
        chmod(&key, 0o600);
        chmod(&store, 0o644);
        check("a 0644 store", &mut accepted);
        chmod(&store, 0o600);
        // Symbolic links to the real files, kept beside the directory.
        let aside = dir.with_extension("aside");
        std::fs::create_dir_all(&aside).unwrap();
        for (file, name) in [(&key, "key"), (&store, "store")] {
            let real = aside.join(name);
            std::fs::rename(file, &real).unwrap();
            std::os::unix::fs::symlink(&real, file).unwrap();
            check(&format!("a symlinked {name}"), &mut accepted);
            std::fs::remove_file(file).unwrap();
            std::fs::rename(&real, file).unwrap();
        }
        assert!(accepted.is_empty(), "accepted: {accepted:?}");
        drop(Keyring::open(policy(), &dir).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&aside).unwrap();
    }
}

/// A key and store the node did not make, numbered above its current
/// epoch (anyone who could write the directory, or a copy from another
/// node), are refused: 0.1 made the planted key current, and the node
/// published a key someone else knows.
#[test]
fn a_planted_key_and_store_are_refused() {
    let dir = scratch("planted");
    drop(Keyring::open(policy(), &dir).unwrap());
    let planted = PrivateKey::from_seed(&[9; 96]);
    let store = crate::store::Store::create(
        &dir.join("epoch-00000001.redb"),
        1,
        planted.public_key(),
        std::time::SystemTime::now(),
        // Whoever planted it does not hold the directory's secret.
        &[0; 32],
        false,
        EpochPolicy::default().store_cache,
    )
    .unwrap();
    drop(store);
    let key = dir.join("epoch-00000001.key");
    std::fs::write(&key, &planted.to_pem()[..]).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    match Keyring::open(policy(), &dir) {
        Ok((keyring, resumed)) => panic!(
            "the planted key was taken: current {} ({:?})",
            keyring.current().number,
            resumed
        ),
        Err(e) => {
            assert!(
                matches!(&e, OpenError::Store { path, .. } if *path == dir.join("epoch-00000001.redb")),
                "{e:?}"
            );
            println!("refused: {e}");
        }
    }
    // A directory whose secret is gone (or one 0.1 made) is refused too.
    std::fs::remove_file(dir.join("epoch-00000001.key")).unwrap();
    drop(Keyring::open(policy(), &dir).unwrap());
    std::fs::remove_file(dir.join("node.secret")).unwrap();
    let e = Keyring::open(policy(), &dir).expect_err("epochs without the secret");
    assert!(
        matches!(&e, OpenError::Key { path, .. } if *path == dir.join("node.secret")),
        "{e:?}"
    );
    println!("refused: {e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A restart that would change which key is current says so, and keeps
/// the key that was current where it can: `publish_ahead` turned on (0.1
/// made the previous key current again for a whole epoch) or off (0.1
/// promoted the next epoch early), and a current key file deleted (0.1
/// promoted the next epoch silently).
#[test]
fn a_restart_that_would_change_the_current_key_says_so() {
    let ahead = |on: bool| EpochPolicy {
        publish_ahead: on,
        ..policy()
    };
    // publish_ahead turned on: epochs 0 (previous) and 1 (current).
    let dir = scratch("toggle-on");
    {
        let (keyring, _) = Keyring::open(ahead(false), &dir).unwrap();
        assert!(keyring.turn(Instant::now() + DAY).is_some());
        assert_eq!(keyring.current().number, 1);
    }
    let (keyring, resumed) = Keyring::open(ahead(true), &dir).unwrap();
    println!(
        "turned on: current {}, {resumed:?}",
        keyring.current().number
    );
    assert_eq!(keyring.current().number, 1, "{resumed:?}");
    assert_eq!(resumed.changes, [ResumeChange::PublishAheadTurnedOn]);
    assert_eq!(keyring.previous().map(|e| e.number), Some(0));
    assert_eq!(keyring.next().map(|e| e.number), Some(2));
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();

    // publish_ahead turned off: epochs 0 (current) and 1 (next).
    let dir = scratch("toggle-off");
    drop(Keyring::open(ahead(true), &dir).unwrap());
    let (keyring, resumed) = Keyring::open(ahead(false), &dir).unwrap();
    println!(
        "turned off: current {}, {resumed:?}",
        keyring.current().number
    );
    assert_eq!(keyring.current().number, 0, "{resumed:?}");
    assert_eq!(
        resumed.changes,
        [ResumeChange::PublishAheadTurnedOff { dropped: 1 }]
    );
    assert!(!dir.join("epoch-00000001.key").exists());
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();

    // The current key file deleted: epoch 0's store has no key.
    let dir = scratch("key-missing");
    drop(Keyring::open(ahead(true), &dir).unwrap());
    std::fs::remove_file(dir.join("epoch-00000000.key")).unwrap();
    let (keyring, resumed) = Keyring::open(ahead(true), &dir).unwrap();
    println!(
        "key deleted: current {}, {resumed:?}",
        keyring.current().number
    );
    assert_eq!(resumed.changes, [ResumeChange::KeyMissing { number: 0 }]);
    assert_eq!(keyring.current().number, 1);
    assert_eq!(keyring.next().map(|e| e.number), Some(2));
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A restart with `publish_ahead` on that finds a single epoch on disk
/// keeps it current and makes the next one, and says no change: whether
/// the next epoch's files never got made (its making failed, or was
/// killed) or `publish_ahead` was off before, the current key is the
/// same (before: an epoch made as the first current one, its store
/// marked so, was reported as `PublishAheadTurnedOn` though nothing was
/// turned on).
#[test]
fn a_single_epoch_on_disk_is_no_publish_ahead_change() {
    let ahead = |on: bool| EpochPolicy {
        publish_ahead: on,
        ..policy()
    };
    for (case, before) in [("next's files gone", true), ("was off", false)] {
        let dir = scratch("single-epoch");
        let first = {
            let (keyring, _) = Keyring::open(ahead(before), &dir).unwrap();
            keyring.current().public_key
        };
        for file in ["epoch-00000001.key", "epoch-00000001.redb"] {
            let _ = std::fs::remove_file(dir.join(file));
        }
        let (keyring, resumed) = Keyring::open(ahead(true), &dir).unwrap();
        println!("{case}: {resumed}");
        assert_eq!(resumed.changes, [], "{case}");
        assert_eq!(resumed.made, [1], "{case}");
        assert_eq!(keyring.current().number, 0, "{case}");
        assert_eq!(keyring.current().public_key, first, "{case}");
        assert_eq!(keyring.next().map(|e| e.number), Some(1), "{case}");
        drop(keyring);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
