//! Disk mode under injected I/O errors ([`crate::fault`]): what a full or
//! failing disk does to group commits, retirements and new epochs, and
//! that the node goes on by itself once the disk is back.

use std::path::Path;
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use rand_core::SeedableRng;

use super::disk::{names, policy, scratch, tag};
use crate::fault::{self, Point};
use crate::{EpochPolicy, Keyring, OpenError, Turn};

const HOUR: Duration = Duration::from_secs(3600);
/// How long after a failure [`Keyring::turn`] tries a new epoch again.
const CREATE_RETRY: Duration = Duration::from_secs(1);

/// Poll `done` every 10 ms for up to `limit`; how long it took, if it
/// came true.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// A commit to the previous epoch's store fails (its disk is full), and
/// that epoch then retires: its queued tags go with it (its key is gone,
/// so their packets can never be unwrapped again), and once the disk has
/// room, fresh packets are taken and made durable again without a
/// restart. (Before: the tags were retried against the deleted store for
/// ever, every fresh packet `DiskFailing`.)
#[test]
fn a_retired_epochs_queued_tags_are_dropped_and_the_node_goes_on() {
    let dir = scratch("retired-queue");
    let mut rng = ChaCha20Rng::seed_from_u64(41);
    let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
    let t1 = Instant::now() + HOUR;
    assert!(matches!(
        keyring.turn(t1),
        Some(Turn::Started { number: 1, .. })
    ));
    let old_store = dir.join("epoch-00000000.redb");
    fault::arm(&old_store, Point::StoreCommit, 0, u32::MAX);
    let stuck = keyring.remember_tag(&tag(&mut rng), true).unwrap();
    assert!(
        keyring
            .wait_durable(stuck, Duration::from_millis(600))
            .is_err()
    );
    assert!(keyring.disk_failing());
    assert_eq!(
        keyring.turn(t1 + policy().grace),
        Some(Turn::Retired {
            number: 0,
            early: false
        })
    );
    assert_eq!(names(&dir), ["epoch-00000001.key", "epoch-00000001.redb"]);
    // The disk has room again.
    fault::disarm(&old_store);
    let back = within(Duration::from_secs(5), || !keyring.disk_failing());
    println!(
        "writable again after {back:?}; last error: {:?}",
        keyring.take_disk_error()
    );
    assert!(back.is_some(), "still failing after 5 s");
    let fresh = keyring.remember_tag(&tag(&mut rng), false).unwrap();
    assert!(keyring.wait_durable(fresh, Duration::from_secs(5)).is_ok());
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every call that makes a new epoch's files, each failed once in turn
/// (the `skip + 1`-th call at that point): no half-made epoch is left,
/// rotation works one retry later, and a restart finds every key with its
/// store. Then a disk that stays full for several tries: the rotation is
/// late, not stopped. Both with and without `publish_ahead` (where the
/// epoch made is the next one). (Before: a store left by a failed try
/// refused every later one, "exists; not replacing a replay store", for
/// good.)
#[test]
fn a_failed_epoch_creation_leaves_nothing_and_is_retried() {
    let mut failures = Vec::new();
    let mut cases = 0;
    for publish_ahead in [false, true] {
        for (point, skip) in creation_calls(publish_ahead) {
            let case = format!("{point:?}#{skip} publish_ahead={publish_ahead}");
            let dir = scratch(&format!("create-{point:?}-{skip}-{publish_ahead}"));
            cases += 1;
            if let Err(e) = one_failed_creation(&dir, point, skip, publish_ahead, 1) {
                failures.push(format!("{case}: {e}"));
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
        // A full disk: every try for a while fails.
        for point in [Point::StoreFile, Point::StoreInit, Point::KeyFile] {
            let dir = scratch(&format!("create-full-{point:?}-{publish_ahead}"));
            cases += 1;
            if let Err(e) = one_failed_creation(&dir, point, 0, publish_ahead, 3) {
                failures.push(format!(
                    "{point:?} full, publish_ahead={publish_ahead}: {e}"
                ));
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    for f in &failures {
        println!("{f}");
    }
    println!("{} of {cases} cases failed", failures.len());
    assert!(failures.is_empty());
}

/// Every fallible call a rotation makes, as (point, calls before it at
/// that point), counted on a clean rotation.
fn creation_calls(publish_ahead: bool) -> Vec<(Point, u32)> {
    let dir = scratch(&format!("create-count-{publish_ahead}"));
    let p = EpochPolicy {
        publish_ahead,
        ..policy()
    };
    let (keyring, _) = Keyring::open(p, &dir).unwrap();
    for point in Point::ALL {
        fault::arm(&dir, point, u32::MAX, 0);
    }
    assert!(keyring.turn(Instant::now() + HOUR).is_some());
    let calls: Vec<(Point, u32)> = Point::ALL
        .into_iter()
        .flat_map(|point| (0..fault::passed(&dir, point)).map(move |k| (point, k)))
        .collect();
    fault::disarm(&dir);
    drop(keyring);
    std::fs::remove_dir_all(&dir).unwrap();
    println!("publish_ahead={publish_ahead}: a rotation's calls {calls:?}");
    calls
}

/// Open a keyring in `dir`, fail `tries` attempts at a new epoch at
/// `point`, then check the aftermath.
fn one_failed_creation(
    dir: &Path,
    point: Point,
    skip: u32,
    publish_ahead: bool,
    tries: u32,
) -> Result<(), String> {
    let p = EpochPolicy {
        publish_ahead,
        ..policy()
    };
    let (keyring, _) = Keyring::open(p.clone(), dir).map_err(|e| e.to_string())?;
    let before = names(dir);
    let made = if publish_ahead { 2 } else { 1 };
    let mut t = Instant::now() + HOUR;
    fault::arm(dir, point, skip, tries);
    let mut turned = None;
    for _ in 0..tries {
        turned = keyring.turn(t);
        if turned.is_some() {
            break;
        }
        // Nothing half-made is left behind.
        if names(dir) != before {
            fault::disarm(dir);
            return Err(format!(
                "left {:?} ({:?})",
                names(dir),
                keyring.take_disk_error()
            ));
        }
        t += CREATE_RETRY;
    }
    fault::disarm(dir);
    let turned = match turned {
        Some(turn) => Some(turn),
        None => keyring.turn(t),
    };
    if !matches!(turned, Some(Turn::Started { number: 1, .. })) {
        return Err(format!(
            "no rotation one retry later: {turned:?} ({:?})",
            keyring.take_disk_error()
        ));
    }
    drop(keyring);
    let (keyring, _) = Keyring::open(p, dir).map_err(|e| format!("restart: {e}"))?;
    if keyring.current().number != 1 || names(dir).len() != 2 * (made + 1) {
        return Err(format!(
            "restart: current {} with {:?}",
            keyring.current().number,
            names(dir)
        ));
    }
    Ok(())
}
/// With `publish_ahead`, the next epoch filled by packets for its key
/// (anyone with the published key can make them) is handled at once: the
/// housekeeping thread is woken, and its turn replaces the next epoch
/// with a fresh one whose key takes packets. (Before: nothing woke or
/// turned, and the next key's packets were `EpochFull` until the current
/// epoch's time was up.)
#[test]
fn a_filled_next_epoch_is_replaced_at_once() {
    for disk in [false, true] {
        let p = EpochPolicy {
            capacity: 10,
            rotate_after: 5,
            publish_ahead: true,
            ..policy()
        };
        let dir = scratch("next-filled");
        let mut rng = ChaCha20Rng::seed_from_u64(43);
        let keyring = if disk {
            Keyring::open(p, &dir).unwrap().0
        } else {
            Keyring::new(p, kemsphinx::PrivateKey::generate(&mut rng)).unwrap()
        };
        let filled = keyring.next().unwrap();
        for _ in 0..10 {
            let _ = keyring.remember_next(&tag(&mut rng)).unwrap();
        }
        assert_eq!(
            keyring.remember_next(&tag(&mut rng)),
            Err(crate::Dropped::EpochFull)
        );
        assert!(
            keyring.wait_for_turn(Duration::ZERO),
            "disk={disk}: the housekeeping thread was not woken"
        );
        let mut turns = Vec::new();
        while let Some(turn) = keyring.turn(Instant::now()) {
            turns.push(turn);
        }
        println!("disk={disk}: {turns:?}");
        assert_eq!(
            turns,
            [Turn::Replaced {
                filled: 1,
                number: 2
            }]
        );
        let next = keyring.next().unwrap();
        assert_ne!(next.public_key, filled.public_key, "disk={disk}");
        assert_eq!(next.taken, 0, "disk={disk}");
        assert_eq!(keyring.current().number, 0, "the current epoch stays");
        let _ = keyring.remember_next(&tag(&mut rng)).unwrap();
        drop(keyring);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Every fallible call of a retirement failed once in turn: the
/// retirement is finished at the next turn, and rotation goes on.
#[test]
fn a_failed_retirement_is_finished_later_and_rotation_goes_on() {
    for (point, skip) in [
        (Point::Unlink, 0),
        (Point::Unlink, 1),
        (Point::DirSync, 0),
        (Point::DirSync, 1),
    ] {
        let dir = scratch(&format!("retire-{point:?}-{skip}"));
        let (keyring, _) = Keyring::open(policy(), &dir).unwrap();
        let t = Instant::now() + HOUR;
        assert!(matches!(
            keyring.turn(t),
            Some(Turn::Started { number: 1, .. })
        ));
        fault::arm(&dir, point, skip, 1);
        let retired = keyring.turn(t + policy().grace);
        fault::disarm(&dir);
        assert_eq!(
            retired,
            Some(Turn::Retired {
                number: 0,
                early: false
            }),
            "{point:?}#{skip}"
        );
        assert!(keyring.take_disk_error().is_some(), "{point:?}#{skip}");
        let later = t + HOUR + policy().grace;
        assert!(
            matches!(keyring.turn(later), Some(Turn::Started { number: 2, .. })),
            "{point:?}#{skip}: {:?}",
            names(&dir)
        );
        assert_eq!(
            names(&dir),
            [
                "epoch-00000001.key",
                "epoch-00000001.redb",
                "epoch-00000002.key",
                "epoch-00000002.redb"
            ],
            "{point:?}#{skip}"
        );
        drop(keyring);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// An I/O error while a fresh directory is set up (its `node.secret`'s
/// directory `fsync`, then its first store's file) is [`OpenError::Io`]
/// naming the directory or file, with the I/O error as its source: the
/// disk, not a file in the directory, is what an operator looks at.
#[test]
fn an_io_error_on_start_is_open_error_io_naming_its_path() {
    use std::error::Error as _;
    for (point, name) in [
        (Point::DirSync, "io-dirsync"),
        (Point::StoreFile, "io-storefile"),
    ] {
        let dir = scratch(name);
        std::fs::create_dir_all(&dir).unwrap();
        fault::arm(&dir, point, 0, u32::MAX);
        let e = Keyring::open(policy(), &dir).expect_err("an injected I/O error");
        fault::disarm(&dir);
        println!("{point:?}: {e}");
        let OpenError::Io { path, .. } = &e else {
            panic!("{point:?}: not Io: {e:?}");
        };
        assert!(path.starts_with(&dir), "{point:?}: {}", path.display());
        let source = e.source().map(ToString::to_string).unwrap_or_default();
        assert!(source.contains("injected fault"), "{point:?}: {source}");
        assert_eq!(e.path(), Some(path.as_path()));
        // Nothing was found wrong: once the disk is back, it starts.
        drop(Keyring::open(policy(), &dir).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
