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
#[cfg(doc)]
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
    let top_made = trim_ahead(policy, dir, &mut numbers, &mut resumed)?;
    let further = further(policy, &mut numbers, wall);
    let (newest, found_next) = newest(policy, dir, &mut numbers, &mut resumed)?;
    // When the newest epoch was made (with a schedule, or self-timed
    // the next one), the current one became current.
    let promoted = top_made.or(found_next.as_ref().map(|f| f.store.started()));
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
/// said ([`ResumeChange::AheadDropped`]), highest first, so that what
/// is left is previous, current and the epochs still asked for (one,
/// if none are, for [`newest`] to tell a
/// `publish_ahead` turned off). Which epochs were ahead is read from
/// the newest store's start: it was made when the epoch its start
/// falls in became current (the clock at the restart, which may have
/// stepped, is not used); that start is returned, as when the current
/// epoch became current. Taken from `numbers`.
fn trim_ahead(
    policy: &EpochPolicy,
    dir: &PersistDir,
    numbers: &mut Vec<u64>,
    resumed: &mut Resumed,
) -> Result<Option<SystemTime>, OpenError> {
    let (Some(schedule), Some(&top)) = (policy.schedule, numbers.last()) else {
        return Ok(None);
    };
    let made = dir.open(top)?.store.started();
    let current = schedule.epoch(made);
    let keep = policy.ahead().max(1);
    let ahead = numbers.iter().filter(|&&n| n > current).count();
    // Never all of them: an epoch at or below the one that was
    // current stays, to be current.
    if ahead >= numbers.len() {
        return Ok(Some(made));
    }
    for _ in keep..ahead {
        let Some(number) = numbers.pop() else { break };
        dir.retire(number, || {})?;
        resumed.changes.push(ResumeChange::AheadDropped { number });
    }
    Ok(Some(made))
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
