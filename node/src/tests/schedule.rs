//! Epochs on a PKI's clock ([`Schedule`]), driven with an injected wall
//! clock: numbers and boundaries agreed between keyrings and across
//! restarts, steps of the clock, keys ahead, a full epoch under a
//! schedule.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use chacha20::ChaCha20Rng;
use kemsphinx::PrivateKey;
use rand_core::SeedableRng;

use super::disk::{scratch, tag};
use crate::{Dropped, EpochPolicy, EpochTime, Keyring, PolicyError, Schedule, Turn};

const PERIOD: Duration = Duration::from_secs(1200);
const GRACE: Duration = Duration::from_secs(120);
const NS: Duration = Duration::from_nanos(1);

/// Katzenpost's clock: the numbers of the epochs agreed between nodes.
fn schedule() -> Schedule {
    Schedule::katzenpost()
}

fn policy(publish_ahead: bool) -> EpochPolicy {
    EpochPolicy {
        capacity: 64,
        // Memory mode counts a false positive as a replay: none here.
        fp_rate: 1e-12,
        rotate_after: 32,
        grace: GRACE,
        publish_ahead,
        schedule: Some(schedule()),
        ..EpochPolicy::default()
    }
}

fn key(seed: u64) -> PrivateKey {
    PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(seed))
}

/// Every change `turn_at` makes at `wall`, in order.
fn turns(k: &Keyring, wall: SystemTime) -> Vec<Turn> {
    std::iter::from_fn(|| k.turn_at(Instant::now(), wall)).collect()
}

fn begins(n: u64) -> SystemTime {
    schedule().begins(n).unwrap()
}

/// An epoch well after Katzenpost's start (its number in late 2026).
const BASE: u64 = 270_000;

#[test]
fn the_schedule_counts_as_katzenpost_epochtime() {
    let s = schedule();
    assert_eq!(s.period(), Duration::from_secs(20 * 60));
    assert_eq!(
        s.start().duration_since(SystemTime::UNIX_EPOCH).unwrap(),
        Duration::from_secs(1_496_275_200)
    );
    // 2017-06-01 00:00 UTC plus 3 days, 1 hour, 7 seconds: epoch 219.
    let t = s.start() + Duration::from_secs(3 * 86_400 + 3600 + 7);
    assert_eq!(
        s.at(t),
        EpochTime {
            epoch: 3 * 72 + 3,
            elapsed: Duration::from_secs(7),
            till: PERIOD - Duration::from_secs(7),
        }
    );
    assert_eq!(s.epoch(s.start() - Duration::from_secs(1)), 0);
    for n in [0, 1, BASE, u64::from(u32::MAX) + 3] {
        let b = s.begins(n).unwrap();
        assert_eq!(s.epoch(b), n);
        assert_eq!(s.epoch(b - NS), n.saturating_sub(1).min(n));
        assert_eq!(s.at(b).elapsed, Duration::ZERO);
    }
    assert_eq!(s.begins(u64::MAX), None, "past SystemTime: None, no panic");
    let zero = EpochPolicy {
        schedule: Some(Schedule::new(SystemTime::UNIX_EPOCH, Duration::ZERO)),
        ..EpochPolicy::default()
    };
    assert_eq!(zero.check(), Err(PolicyError::ZeroPeriod));
}

/// The "Done when" line: two keyrings given the same schedule, started
/// at different moments, agree on the current epoch's number at every
/// step of 300 epochs, and turn exactly at each boundary (not a
/// nanosecond before), so nothing drifts. One is restarted (memory mode:
/// a new keyring) every 37 steps, and still agrees.
#[test]
fn two_memory_keyrings_agree_on_every_epoch_and_boundary() {
    let a_start = begins(BASE) + Duration::from_secs(5);
    let mut a = Keyring::new_at(policy(true), key(1), a_start).unwrap();
    assert_eq!(a.current().number, BASE);
    assert_eq!(a.next().unwrap().number, BASE + 1);
    let b_start = begins(BASE + 3) + Duration::from_secs(700);
    let b = Keyring::new_at(policy(true), key(2), b_start).unwrap();
    assert_eq!(b.current().number, BASE + 3);
    for n in BASE + 4..BASE + 300 {
        // Just before the boundary: nothing; the old number.
        for k in [&a, &b] {
            let _ = turns(k, begins(n) - PERIOD / 2);
            assert!(turns(k, begins(n) - NS).is_empty(), "early turn at {n}");
            assert_eq!(k.current().number, n - 1);
        }
        for k in [&a, &b] {
            let t = turns(k, begins(n));
            assert!(
                t.contains(&Turn::Started {
                    number: n,
                    took: 0,
                    by_count: false
                }),
                "{t:?} at {n}"
            );
            assert_eq!(k.current().number, n);
            assert_eq!(k.next().unwrap().number, n + 1);
            assert_eq!(
                k.previous().unwrap().number,
                n - 1,
                "grace after the boundary"
            );
        }
        // The previous key retires at the end of its grace, on the wall
        // clock.
        for k in [&a, &b] {
            assert!(turns(k, begins(n) + GRACE - NS).is_empty());
            assert_eq!(
                turns(k, begins(n) + GRACE),
                [Turn::Retired {
                    number: n - 1,
                    early: false
                }]
            );
        }
        if n % 37 == 0 {
            let mid = begins(n) + PERIOD / 3;
            a = Keyring::new_at(policy(true), key(n), mid).unwrap();
            assert_eq!(a.current().number, n);
        }
    }
}

fn open(dir: &Path, wall: SystemTime) -> Keyring {
    let (k, _resumed) = Keyring::open_at(policy(true), dir, wall).unwrap();
    k
}

/// Key and store files named for each live epoch, and no others.
fn on_disk(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("epoch-"))
        .collect();
    names.sort();
    names
}

fn files(numbers: &[u64]) -> Vec<String> {
    let mut v: Vec<String> = numbers
        .iter()
        .flat_map(|n| [format!("epoch-{n:08}.key"), format!("epoch-{n:08}.redb")])
        .collect();
    v.sort();
    v
}

/// The same in disk mode: two directories, 60 epochs, each keyring
/// re-opened in turn (at a boundary, inside the grace, mid-epoch, and
/// after being down across two boundaries); the files on disk carry the
/// schedule's numbers, and what a restart resumes is what was live.
#[test]
fn two_disk_keyrings_agree_across_restarts() {
    let (da, db) = (scratch("sched-a"), scratch("sched-b"));
    let mut a = open(&da, begins(BASE) + Duration::from_secs(1));
    let mut b = open(&db, begins(BASE + 1) + Duration::from_secs(900));
    assert_eq!(on_disk(&da), files(&[BASE, BASE + 1]));
    assert_eq!(on_disk(&db), files(&[BASE + 1, BASE + 2]));
    let _ = turns(&a, begins(BASE + 1) + GRACE);
    for n in BASE + 2..BASE + 60 {
        let at = begins(n);
        let _ = turns(&a, at);
        let _ = turns(&b, at);
        for k in [&a, &b] {
            assert_eq!(k.current().number, n);
            assert_eq!(k.next().unwrap().number, n + 1);
        }
        match n % 4 {
            // Restarted at the boundary: current, previous in its grace,
            // next, all resumed with their keys.
            0 => {
                let keys = (a.current().public_key, a.previous().unwrap().public_key);
                drop(a);
                a = open(&da, at);
                assert_eq!(a.current().public_key, keys.0);
                assert_eq!(a.previous().unwrap().public_key, keys.1);
                assert_eq!(on_disk(&da), files(&[n - 1, n, n + 1]));
            }
            // Restarted past the grace: the previous epoch's files go.
            1 => {
                drop(b);
                b = open(&db, at + GRACE + NS);
                assert_eq!(b.previous(), None);
                assert_eq!(on_disk(&db), files(&[n, n + 1]));
            }
            _ => {
                let _ = turns(&a, at + GRACE);
                let _ = turns(&b, at + GRACE);
            }
        }
        for k in [&a, &b] {
            assert_eq!(k.current().number, n);
        }
    }
    // Down across two boundaries: re-opened, the first turns catch up
    // with the clock, skipping the epoch made ahead for a time now over.
    let n = BASE + 60;
    drop(b);
    let wall = begins(n + 2) + Duration::from_secs(30);
    b = open(&db, wall);
    assert_eq!(b.current().number, n - 1);
    let t = turns(&b, wall);
    assert_eq!(t.first(), Some(&Turn::Skipped { number: n }), "{t:?}");
    assert_eq!(b.current().number, n + 2);
    assert_eq!(b.next().unwrap().number, n + 3);
    let _ = turns(&a, wall);
    assert_eq!(a.current().number, n + 2);
    assert_eq!(on_disk(&db), files(&[n + 2, n + 3]));
    drop((a, b));
    let _ = std::fs::remove_dir_all(&da);
    let _ = std::fs::remove_dir_all(&db);
}

/// An NTP step forward past boundaries: the epoch the clock names
/// becomes current; the ones stepped over never do (the one made ahead
/// is retired), and the key that was current keeps no grace the clock
/// says is over.
#[test]
fn a_step_forward_skips_to_the_epoch_the_clock_names() {
    let k = Keyring::new_at(policy(true), key(3), begins(BASE) + Duration::from_secs(60)).unwrap();
    let ahead = k.next().unwrap().public_key;
    let wall = begins(BASE + 4) + Duration::from_secs(1);
    assert_eq!(
        turns(&k, wall),
        [
            Turn::Skipped { number: BASE + 1 },
            Turn::Started {
                number: BASE + 4,
                took: 0,
                by_count: false
            },
            Turn::Retired {
                number: BASE,
                early: false
            },
            Turn::Ahead { number: BASE + 5 },
        ]
    );
    assert_eq!(k.current().number, BASE + 4);
    assert_ne!(
        k.current().public_key,
        ahead,
        "the skipped key is not reused"
    );
    assert_eq!(k.next().unwrap().number, BASE + 5);
    assert_eq!(k.previous(), None);
    // A step forward of exactly one boundary is an ordinary turn.
    let t = turns(&k, begins(BASE + 5));
    assert_eq!(
        t.first(),
        Some(&Turn::Started {
            number: BASE + 5,
            took: 0,
            by_count: false
        })
    );
    assert_eq!(k.previous().unwrap().number, BASE + 4);
}

/// An NTP step back: no older epoch becomes current again; the current
/// one stays until the clock reaches its end again; the previous key's
/// grace still ends on the monotonic clock. A restart with the clock
/// behind keeps the epoch on disk current.
#[test]
fn a_step_back_never_makes_an_older_epoch_current() {
    let dir = scratch("sched-back");
    let k = open(&dir, begins(BASE + 10) + Duration::from_secs(5));
    let _ = turns(&k, begins(BASE + 11));
    assert_eq!(k.current().number, BASE + 11);
    assert_eq!(k.previous().unwrap().number, BASE + 10);
    let back = begins(BASE + 7) + Duration::from_secs(3);
    assert!(turns(&k, back).is_empty());
    assert_eq!(k.current().number, BASE + 11);
    assert_eq!(k.previous().unwrap().number, BASE + 10);
    // The wall clock would keep epoch BASE+10's key for ever; the
    // monotonic clock ends its grace.
    let later = Instant::now() + GRACE;
    assert_eq!(
        k.turn_at(later, back),
        Some(Turn::Retired {
            number: BASE + 10,
            early: false
        })
    );
    assert_eq!(k.turn_at(later, back), None);
    drop(k);
    // Restarted with the clock still behind: epoch BASE+11 stays current.
    let k = open(&dir, back);
    assert_eq!(k.current().number, BASE + 11);
    assert_eq!(k.next().unwrap().number, BASE + 12);
    assert!(turns(&k, begins(BASE + 12) - NS).is_empty());
    assert_eq!(k.current().number, BASE + 11);
    let t = turns(&k, begins(BASE + 12));
    assert_eq!(
        t.first(),
        Some(&Turn::Started {
            number: BASE + 12,
            took: 0,
            by_count: false
        })
    );
    drop(k);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Keys ahead: the next epoch's key, published, is the key that becomes
/// current at the boundary, in memory and disk mode alike.
#[test]
fn the_key_published_ahead_becomes_current_at_the_boundary() {
    let dir = scratch("sched-ahead");
    let disk = open(&dir, begins(BASE) + Duration::from_secs(9));
    let memory = Keyring::new_at(policy(true), key(4), begins(BASE)).unwrap();
    for k in [&disk, &memory] {
        for n in BASE + 1..BASE + 6 {
            let published = k.next().unwrap();
            assert_eq!(published.number, n);
            let _ = turns(k, begins(n));
            assert_eq!(k.current().public_key, published.public_key);
            assert_eq!(k.current().number, n);
        }
    }
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// With a schedule a full epoch refuses, and nothing turns early: not
/// the current epoch (`rotate_after` is not used), not a next epoch
/// filled ahead (its key is published for its epoch).
#[test]
fn a_full_scheduled_epoch_refuses_until_the_boundary() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let p = policy(true);
    let k = Keyring::new_at(p.clone(), key(5), begins(BASE)).unwrap();
    for _ in 0..p.capacity {
        assert!(k.remember_tag(&tag(&mut rng), false).is_ok());
    }
    assert_eq!(
        k.remember_tag(&tag(&mut rng), false),
        Err(Dropped::EpochFull)
    );
    for _ in 0..p.capacity {
        assert!(k.remember_next(&tag(&mut rng)).is_ok());
    }
    assert_eq!(k.remember_next(&tag(&mut rng)), Err(Dropped::EpochFull));
    assert!(!k.wait_for_turn(Duration::ZERO), "no wake by fill");
    assert!(turns(&k, begins(BASE + 1) - NS).is_empty());
    assert_eq!(k.current().number, BASE);
    assert_eq!(k.current().taken, p.capacity);
    let _ = turns(&k, begins(BASE + 1));
    assert_eq!(k.current().number, BASE + 1);
    assert_eq!(k.current().taken, p.capacity, "the next epoch's tags kept");
    assert_eq!(k.next().unwrap().taken, 0);
}

/// `wait_for_turn` wakes at the boundary the wall clock reaches, not at
/// its timeout (real time: a schedule of 300 ms periods, one boundary).
#[test]
fn wait_for_turn_wakes_at_the_wall_clock_boundary() {
    let period = Duration::from_millis(300);
    let start = SystemTime::now() - Duration::from_millis(100);
    let p = EpochPolicy {
        schedule: Some(Schedule::new(start, period)),
        grace: Duration::from_millis(50),
        ..EpochPolicy::default()
    };
    let k = Keyring::new(p, key(6)).unwrap();
    assert_eq!(k.current().number, 0);
    let t0 = Instant::now();
    while k.turn(Instant::now()).is_none() {
        let _ = k.wait_for_turn(Duration::from_secs(30));
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "slept to the timeout"
        );
    }
    assert!(SystemTime::now() >= start + period);
    assert_eq!(k.current().number, 1);
}

fn policy_ahead(k: u32) -> EpochPolicy {
    EpochPolicy {
        schedule: Some(schedule().with_ahead(k)),
        ..policy(true)
    }
}

/// A restart's policy asking for `k` keys ahead; 0 is `publish_ahead`
/// turned off.
fn policy_asking(k: u32) -> EpochPolicy {
    match k {
        0 => EpochPolicy {
            publish_ahead: false,
            ..policy_ahead(1)
        },
        k => policy_ahead(k),
    }
}

fn numbers(k: &Keyring) -> Vec<u64> {
    k.ahead().iter().map(|e| e.number).collect()
}

/// Keys made `k` epochs ahead: epochs N+1..=N+k while N is current, each
/// keeping its key until it becomes current at its boundary; after a step
/// forward the ones whose time is over are skipped and the rest move up.
#[test]
fn keys_are_made_as_many_epochs_ahead_as_the_schedule_asks() {
    let k = Keyring::new_at(policy_ahead(3), key(7), begins(BASE)).unwrap();
    assert_eq!(numbers(&k), [BASE + 1, BASE + 2, BASE + 3]);
    assert_eq!(k.next().unwrap().number, BASE + 1);
    let published = k.ahead();
    let t = turns(&k, begins(BASE + 1));
    assert_eq!(
        t.first(),
        Some(&Turn::Started {
            number: BASE + 1,
            took: 0,
            by_count: false
        })
    );
    assert_eq!(k.current().public_key, published[0].public_key);
    assert_eq!(numbers(&k), [BASE + 2, BASE + 3, BASE + 4]);
    assert_eq!(k.ahead()[..2], published[1..], "keys published stay");
    // Step forward to BASE+3: BASE+2 is skipped, BASE+3 (published two
    // epochs ago) becomes current, BASE+4 stays, two new ones are made
    // (BASE+5 as BASE+3 starts, BASE+6 after).
    let published = k.ahead();
    let t = turns(&k, begins(BASE + 3) + Duration::from_secs(1));
    assert_eq!(
        t,
        [
            Turn::Retired {
                number: BASE,
                early: false
            },
            Turn::Skipped { number: BASE + 2 },
            Turn::Started {
                number: BASE + 3,
                took: 0,
                by_count: false
            },
            Turn::Retired {
                number: BASE + 1,
                early: false
            },
            Turn::Ahead { number: BASE + 6 },
        ]
    );
    assert_eq!(k.current().number, BASE + 3);
    assert_eq!(k.current().public_key, published[1].public_key);
    assert_eq!(numbers(&k), [BASE + 4, BASE + 5, BASE + 6]);
    assert_eq!(k.ahead()[0], published[2]);
    // Without publish_ahead there are none.
    let off = EpochPolicy {
        publish_ahead: false,
        ..policy_ahead(3)
    };
    assert!(
        Keyring::new_at(off, key(8), begins(BASE))
            .unwrap()
            .ahead()
            .is_empty()
    );
    for bad in [0, crate::MAX_AHEAD + 1] {
        assert_eq!(policy_ahead(bad).check(), Err(PolicyError::Ahead));
    }
}

/// The same in disk mode, across restarts: the keys made ahead are
/// resumed with their numbers (none re-made, none made current early),
/// also with the clock stepped back at the restart; a restart asking for
/// more keys ahead makes them.
#[test]
fn keys_made_ahead_survive_restarts_in_disk_mode() {
    let dir = scratch("sched-ahead-k");
    let open_k = |k: u32, wall| {
        let (ring, _resumed) = Keyring::open_at(policy_ahead(k), &dir, wall).unwrap();
        ring
    };
    let mut ring = open_k(3, begins(BASE) + Duration::from_secs(2));
    assert_eq!(numbers(&ring), [BASE + 1, BASE + 2, BASE + 3]);
    assert_eq!(on_disk(&dir), files(&[BASE, BASE + 1, BASE + 2, BASE + 3]));
    for n in BASE + 1..BASE + 8 {
        let _ = turns(&ring, begins(n));
        let (current, ahead) = (ring.current(), ring.ahead());
        assert_eq!(numbers(&ring), [n + 1, n + 2, n + 3]);
        drop(ring);
        // At the boundary (previous in its grace), or with the clock
        // stepped back three epochs.
        let wall = if n % 2 == 0 { begins(n) } else { begins(n - 3) };
        ring = open_k(3, wall);
        assert_eq!(ring.current().public_key, current.public_key);
        assert_eq!(ring.ahead(), ahead);
        let _ = turns(&ring, begins(n) + GRACE);
        assert_eq!(on_disk(&dir), files(&[n, n + 1, n + 2, n + 3]));
    }
    // Asked for two more ahead at a restart: made at once.
    let n = BASE + 7;
    drop(ring);
    let ring = open_k(MAX, begins(n) + GRACE);
    assert_eq!(ring.current().number, n);
    let want: Vec<u64> = (n + 1..=n + u64::from(MAX)).collect();
    assert_eq!(numbers(&ring), want);
    drop(ring);
    let _ = std::fs::remove_dir_all(&dir);
}

const MAX: u32 = crate::MAX_AHEAD;

/// Fewer keys ahead asked at a restart (k = 3, then 1): the epochs made
/// ahead beyond the one now asked for are deleted, files and all, and
/// said in `Resumed`; the current key stays current and the next one
/// next (before: the two newest were taken for next and current, so a
/// key made for two epochs later became current at once). Also with the
/// clock stepped back at that restart, and with `publish_ahead` turned
/// off instead.
#[test]
fn fewer_keys_ahead_at_a_restart_drops_the_extra_ones_in_order() {
    use crate::ResumeChange;
    for (case, ahead, wall) in [
        ("k 3 to 1", 1, begins(BASE + 1) + Duration::from_secs(1)),
        ("k 3 to 1, clock back", 1, begins(BASE - 2)),
        ("k 3 to 2", 2, begins(BASE + 1) + Duration::from_secs(1)),
        (
            "publish_ahead off",
            0,
            begins(BASE + 1) + Duration::from_secs(1),
        ),
    ] {
        let dir = scratch("sched-ahead-lower");
        let (ring, _) =
            Keyring::open_at(policy_ahead(3), &dir, begins(BASE) + Duration::from_secs(2)).unwrap();
        let _ = turns(&ring, begins(BASE + 1));
        assert_eq!(ring.current().number, BASE + 1);
        let (current, made) = (ring.current(), ring.ahead());
        assert_eq!(numbers(&ring), [BASE + 2, BASE + 3, BASE + 4]);
        drop(ring);
        let policy = policy_asking(ahead);
        let (ring, resumed) = Keyring::open_at(policy, &dir, wall).unwrap();
        println!("{case}: {resumed}");
        assert_eq!(ring.current().public_key, current.public_key, "{case}");
        assert_eq!(ring.ahead(), made[..ahead as usize], "{case}");
        let kept = BASE + 1 + u64::from(ahead);
        let mut said: Vec<ResumeChange> = (kept + 1..=BASE + 4)
            .rev()
            .map(|number| ResumeChange::AheadDropped { number })
            .collect();
        if ahead == 0 {
            said.pop();
            said.push(ResumeChange::PublishAheadTurnedOff { dropped: BASE + 2 });
        }
        assert_eq!(resumed.changes, said, "{case}");
        // The previous key is in its grace still (it became previous a
        // second before the restart).
        assert_eq!(ring.previous().map(|e| e.number), Some(BASE), "{case}");
        let live: Vec<u64> = (BASE..=kept).collect();
        assert_eq!(on_disk(&dir), files(&live), "{case}");
        // At the next boundary the next key (published) becomes current.
        let _ = turns(&ring, begins(BASE + 2) + GRACE);
        assert_eq!(ring.current().number, BASE + 2, "{case}");
        if ahead > 0 {
            assert_eq!(ring.current().public_key, made[0].public_key, "{case}");
        }
        drop(ring);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Fewer keys ahead asked at a restart after the clock stepped back
/// while the node ran, between a skip and the key it then made ahead:
/// the newest store was made in an epoch older than the current one.
/// The epochs dropped are still the highest beyond the `k` now asked
/// for above the epoch current at the restart (the one that was current
/// when the node stopped, or the one the clock names, if later), never
/// the one to become current (before: the current epoch was read from
/// the newest store's start alone, so an older epoch became current
/// again, or the one the clock names was dropped and made again with a
/// new key, its published one lost).
#[test]
fn fewer_keys_ahead_after_a_step_back_and_a_skip_keep_the_current_epoch() {
    use crate::ResumeChange;
    let b = BASE;
    let later = |n: u64| begins(n) + Duration::from_secs(1);
    for (case, ahead, wall, current, dropped) in [
        (
            "k 3 to 1, clock still back",
            1,
            later(b),
            b + 2,
            vec![b + 5, b + 4],
        ),
        (
            "k 3 to 1, clock in b+3",
            1,
            later(b + 3),
            b + 3,
            vec![b + 5],
        ),
        (
            "k 3 to 2, clock still back",
            2,
            later(b),
            b + 2,
            vec![b + 5],
        ),
        (
            "publish_ahead off, clock back",
            0,
            later(b),
            b + 2,
            vec![b + 5, b + 4],
        ),
    ] {
        let dir = scratch("sched-ahead-back");
        let (ring, _) = Keyring::open_at(policy_ahead(3), &dir, later(b)).unwrap();
        assert_eq!(numbers(&ring), [b + 1, b + 2, b + 3], "{case}");
        // A step forward into b+2: b+1 skipped, b+2 started (b+4 made
        // ahead then, in b+2) ...
        let skip = ring.turn_at(Instant::now(), later(b + 2));
        assert_eq!(skip, Some(Turn::Skipped { number: b + 1 }), "{case}");
        let start = ring.turn_at(Instant::now(), later(b + 2));
        assert!(
            matches!(start, Some(Turn::Started { number, .. }) if number == b + 2),
            "{case}"
        );
        // ... then back into b: the key still missing ahead, b+5, is
        // made there.
        assert_eq!(
            turns(&ring, later(b)),
            [Turn::Ahead { number: b + 5 }],
            "{case}"
        );
        assert_eq!(ring.current().number, b + 2, "{case}");
        let (was_current, was_ahead) = (ring.current(), ring.ahead());
        assert_eq!(numbers(&ring), [b + 3, b + 4, b + 5], "{case}");
        drop(ring);
        let policy = policy_asking(ahead);
        let (ring, resumed) = Keyring::open_at(policy, &dir, wall).unwrap();
        println!("{case}: {resumed}");
        assert_eq!(ring.current().number, current, "{case}");
        // The key published for it is the one resumed.
        let published = std::iter::once(&was_current)
            .chain(&was_ahead)
            .find(|e| e.number == current)
            .unwrap();
        assert_eq!(ring.current().public_key, published.public_key, "{case}");
        let mut said: Vec<ResumeChange> = dropped
            .iter()
            .map(|&number| ResumeChange::AheadDropped { number })
            .collect();
        let top_kept = dropped.last().unwrap() - 1;
        if ahead == 0 {
            said.push(ResumeChange::PublishAheadTurnedOff { dropped: top_kept });
        }
        assert_eq!(resumed.changes, said, "{case}");
        // The keys kept ahead are the ones published for those epochs.
        let want: Vec<_> = was_ahead
            .iter()
            .filter(|e| e.number > current && e.number < top_kept + u64::from(ahead > 0))
            .cloned()
            .collect();
        assert_eq!(ring.ahead(), want, "{case}");
        // At the next boundary the next key (published) becomes current.
        let _ = turns(&ring, begins(current + 1) + GRACE);
        assert_eq!(ring.current().number, current + 1, "{case}");
        if let Some(next) = want.first() {
            assert_eq!(ring.current().public_key, next.public_key, "{case}");
        }
        drop(ring);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
