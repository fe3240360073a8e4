//! What a restart finds in a disk-mode directory, made into live epochs.
//!
//! [`resume`] reads the epochs stored there and decides which of them are
//! live again and in which role (current, previous while its grace
//! lasts, next and further ones made ahead), deletes the rest, makes what
//! is missing, and says all of it in [`Resumed`]; the rules (a toggled
//! `publish_ahead`, fewer epochs ahead asked, a missing key) are
//! [`ResumeChange`]'s. It runs once, before the keyring exists: from
//! then on the live epochs are the [`Rotation`](crate::rotation)'s and
//! the files the [`Disk`]'s.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use crate::dir::{Found, PersistDir};
use crate::disk::Disk;
use crate::epochs::{Epoch, EpochPolicy, ResumeChange, Resumed};
use crate::error::OpenError;
use crate::rotation::{Live, new_key};
use crate::schedule::Schedule;

/// The epochs stored in `disk`'s directory resumed, as
/// [`Keyring::open_at`](crate::Keyring::open_at) describes, at wall-clock
/// time `wall`.
///
/// # Errors
/// As [`Keyring::open`](crate::Keyring::open).
pub(crate) fn resume(
    policy: &EpochPolicy,
    disk: &Disk,
    wall: SystemTime,
) -> Result<(Live, Resumed), OpenError> {
    let dir = disk.dir();
    let (mut numbers, keyless, temporaries) = dir.scan()?;
    let mut resumed = Resumed {
        temporaries,
        ..Resumed::default()
    };
    resumed.changes.extend(
        keyless
            .into_iter()
            .map(|number| ResumeChange::KeyMissing { number }),
    );
    let now = Instant::now();
    let load = |f: Found, resumed: &mut Resumed| -> Result<Epoch, OpenError> {
        let age = wall.duration_since(f.store.started()).unwrap_or_default();
        let started = now.checked_sub(age).unwrap_or(now);
        let mut e = Epoch::new(policy, f.number, f.key, started);
        let n = f
            .store
            .for_each(|tag| e.restore(tag))
            .map_err(OpenError::from)?;
        resumed.epochs.push((f.number, n));
        e.store = Some(Arc::new(f.store));
        Ok(e)
    };
    // "Make a fresh epoch, on disk": the same as a turn does.
    let make = |number: u64, ahead: bool| -> Result<Epoch, OpenError> {
        disk.fresh(policy, number, new_key(), (now, wall), ahead)
    };
    let scheduled = trim_ahead(policy, dir, &mut numbers, wall, &mut resumed)?;
    let further = further(policy, &mut numbers, wall);
    let (newest, found_next) = newest(policy, dir, &mut numbers, &mut resumed)?;
    // When the current epoch became current: with a schedule, as
    // `trim_ahead` found; self-timed, when the next one was made.
    let promoted = scheduled.or(found_next.as_ref().map(|f| f.store.started()));
    let promoted = promoted.map(|made| {
        let age = wall.duration_since(made).unwrap_or_default();
        now.checked_sub(age).unwrap_or(now)
    });
    let (current, previous) = match newest {
        None => {
            let first = policy.schedule.map_or(0, |s| s.epoch(wall));
            resumed.made.push(first);
            (make(first, false)?, None)
        }
        Some(newest) => {
            let older = numbers.pop();
            let mut current = load(newest, &mut resumed)?;
            if let Some(at) = promoted {
                current.started = at;
            }
            let until = current.started.checked_add(policy.grace).unwrap_or(now);
            // With a schedule, the wall clock may end the grace first.
            let in_grace = |n: u64| {
                now < until
                    && !policy
                        .schedule
                        .is_some_and(|s| s.grace_over(n, policy.grace, wall))
            };
            let previous = match older {
                Some(n) if in_grace(n) => Some((load(dir.open(n)?, &mut resumed)?, until)),
                Some(n) => {
                    resumed.retired.push(n);
                    None
                }
                None => None,
            };
            (current, previous)
        }
    };
    let next = match found_next {
        Some(f) => Some(load(f, &mut resumed)?),
        None if policy.publish_ahead => {
            let number = current.number.saturating_add(1);
            resumed.made.push(number);
            Some(make(number, true)?)
        }
        None => None,
    };
    let mut further = further
        .into_iter()
        .map(|n| load(dir.open(n)?, &mut resumed))
        .collect::<Result<Vec<_>, _>>()?;
    // Keys made ahead that are missing (more asked than on disk).
    while next.is_some() && further.len() + 1 < policy.ahead() {
        let top = further.last().or(next.as_ref()).map_or(0, |e| e.number);
        further.push(make(top.saturating_add(1), true)?);
    }
    // Past their grace: deleted unread.
    resumed.retired.extend(numbers);
    resumed.epochs.sort_unstable();
    resumed.retired.sort_unstable();
    for &number in &resumed.retired {
        dir.retire(number, || {})?;
    }
    Ok((
        Live {
            current,
            previous,
            next,
            further,
        },
        resumed,
    ))
}

/// With a schedule: the epochs made ahead beyond the one or more the
/// policy now asks for ([`Schedule::with_ahead`] lowered or
/// `publish_ahead` turned off since the node stopped), deleted and
/// said ([`ResumeChange::AheadDropped`]), highest first. Taken from
/// `numbers`.
///
/// The rule: of the epochs numbered above the one current at the
/// restart, the lowest `k` are kept (one, if none are asked for, for
/// [`newest`] to tell a `publish_ahead` turned off) and the rest
/// dropped; nothing at or below it (current, previous) ever is. The
/// epoch current at the restart is the latest one the node's clock is
/// known to have reached ([`reached`]), or the one `wall` names if that
/// is later (the first turn makes it current anyway, with the key
/// published for it). If every epoch is above it (a store that would
/// tell is gone), none is dropped.
///
/// Returns when the epoch current at the restart became current: the
/// start of the store made at that turn, or `wall` if the clock names
/// a later epoch.
fn trim_ahead(
    policy: &EpochPolicy,
    dir: &PersistDir,
    numbers: &mut Vec<u64>,
    wall: SystemTime,
    resumed: &mut Resumed,
) -> Result<Option<SystemTime>, OpenError> {
    let Some(schedule) = policy.schedule else {
        return Ok(None);
    };
    let Some((latest, since)) = reached(schedule, dir, numbers)? else {
        return Ok(None);
    };
    let (current, since) = match schedule.epoch(wall) {
        named if named > latest => (named, wall),
        _ => (latest, since),
    };
    let keep = policy.ahead().max(1);
    let ahead = numbers.iter().filter(|&&n| n > current).count();
    if ahead >= numbers.len() {
        return Ok(Some(since));
    }
    for _ in keep..ahead {
        let Some(number) = numbers.pop() else { break };
        dir.retire(number, || {})?;
        resumed.changes.push(ResumeChange::AheadDropped { number });
    }
    Ok(Some(since))
}

/// With a schedule: the latest epoch the node's clock is known to have
/// reached, and the earliest store start in it. A turn makes a store
/// when the epoch its start falls in, or a later one, is current (a
/// key made ahead after the clock stepped back starts in an older
/// epoch than the current one), and the current epoch never goes back:
/// the latest epoch any store's start falls in is at most the one that
/// was current when the node stopped, and is that one unless the store
/// made when it became current is gone (skipped before the next turn).
/// (A store made at a restart after the node was down starts in the
/// epoch the clock named then, which the first turn makes current.)
/// The newest store alone is not enough: after a skip and a step back
/// it starts in an epoch older than the current one. Stores are read
/// from the newest down while their number is not below the latest
/// epoch found: a store's start falls in its own epoch or an older one
/// (but at such a restart, when the newest ones start as late); `None`
/// if there are none.
fn reached(
    schedule: Schedule,
    dir: &PersistDir,
    numbers: &[u64],
) -> Result<Option<(u64, SystemTime)>, OpenError> {
    let mut latest: Option<(u64, SystemTime)> = None;
    for &number in numbers.iter().rev() {
        if latest.is_some_and(|(epoch, _)| number < epoch) {
            break;
        }
        let started = dir.open(number)?.store.started();
        let epoch = schedule.epoch(started);
        latest = match latest {
            Some((e, at)) if e > epoch || (e == epoch && at <= started) => Some((e, at)),
            _ => Some((epoch, started)),
        };
    }
    Ok(latest)
}

/// With a schedule and keys made more than one epoch ahead: the
/// epochs on disk after the next one, taken from the top of `numbers`
/// (oldest first) while the one below is still ahead of the clock
/// and two are left (current and next), at most `ahead - 1`.
fn further(policy: &EpochPolicy, numbers: &mut Vec<u64>, wall: SystemTime) -> Vec<u64> {
    let Some(schedule) = policy.schedule else {
        return Vec::new();
    };
    let target = schedule.epoch(wall);
    let mut further = Vec::new();
    while further.len() + 1 < policy.ahead()
        && numbers.len() > 2
        && numbers
            .get(numbers.len().saturating_sub(2))
            .is_some_and(|&n| n > target)
    {
        further.extend(numbers.pop());
    }
    further.reverse();
    further
}

/// The newest epoch on disk, opened, and whether it is the next one:
/// with `publish_ahead`, the newest epoch is the next one if it was
/// made as one (and an older one is there to be current). A store
/// that says how it was made tells a `publish_ahead` turned on or off
/// since the node stopped: the epoch that was current stays current
/// ([`ResumeChange`]). Taken from `numbers`.
fn newest(
    policy: &EpochPolicy,
    dir: &PersistDir,
    numbers: &mut Vec<u64>,
    resumed: &mut Resumed,
) -> Result<(Option<Found>, Option<Found>), OpenError> {
    let Some(number) = numbers.pop() else {
        return Ok((None, None));
    };
    let found = dir.open(number)?;
    let made_ahead = found.store.ahead().unwrap_or(policy.publish_ahead);
    let older = numbers.len();
    match (policy.publish_ahead, made_ahead) {
        (true, true) if older >= 1 => {
            let current = numbers.pop().map(|n| dir.open(n)).transpose()?;
            Ok((current, Some(found)))
        }
        // A single epoch stays current either way: nothing changed.
        (true, false) if older >= 1 => {
            resumed.changes.push(ResumeChange::PublishAheadTurnedOn);
            Ok((Some(found), None))
        }
        (false, true) if older >= 1 => {
            drop(found);
            dir.retire(number, || {})?;
            resumed
                .changes
                .push(ResumeChange::PublishAheadTurnedOff { dropped: number });
            let current = numbers.pop().map(|n| dir.open(n)).transpose()?;
            Ok((current, None))
        }
        // Only one epoch, or as the policy has it.
        _ => Ok((Some(found), None)),
    }
}
