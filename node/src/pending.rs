//! Disk mode: an epoch's tags that wait for their group commit.
//!
//! Until its group is durable a tag is in the epoch's Bloom filter but
//! perhaps not yet in its store, so a replay check that the filter
//! answers "maybe" looks here before the store. While the disk stalls
//! (a slow `fsync`, a full disk) hundreds of thousands of tags can wait,
//! and the check runs under the epoch's lock for every packet: so it is
//! a hash-set lookup, O(1) however many wait (0.1 scanned a list: 317–430
//! µs per replay with 2·10⁵ tags waiting, more than four unwraps' work,
//! free for an attacker). The set's hasher is keyed at random (std's
//! SipHash), so tags chosen by an attacker cannot collide on purpose.
//! A queue beside it, in the order the tags came (so in group order),
//! says which to forget once their group is durable.

use std::collections::{HashSet, VecDeque};

use kemsphinx::ReplayTag;

/// Capacity (tags) under which the set is never shrunk: what a few group
/// intervals bring on a busy node.
const SHRINK_ABOVE: usize = 1 << 14;

/// Tags not yet known durable, with their groups.
#[derive(Default)]
pub(crate) struct Pending {
    /// (group, tag), groups never decreasing (tags join under the epoch's
    /// lock, and groups only count up).
    queue: VecDeque<(u64, [u8; 32])>,
    tags: HashSet<[u8; 32]>,
}

impl Pending {
    /// Whether `tag` waits here.
    pub(crate) fn contains(&self, tag: &ReplayTag) -> bool {
        self.tags.contains(&tag.0)
    }

    /// Add `tag`, of group `group`, after forgetting every tag of a group
    /// up to `durable`.
    pub(crate) fn push(&mut self, group: u64, tag: &ReplayTag, durable: u64) {
        while let Some(&(g, t)) = self.queue.front()
            && g <= durable
        {
            self.tags.remove(&t);
            self.queue.pop_front();
        }
        if self.tags.insert(tag.0) {
            self.queue.push_back((group, tag.0));
        }
        // After a stall the set and queue grew with the backlog; once it
        // is durable their memory goes back (halved while a quarter or
        // less is used, so a steady load never reallocates).
        if self.tags.capacity() > SHRINK_ABOVE && self.tags.len() * 4 < self.tags.capacity() {
            self.tags.shrink_to(self.tags.len() * 2);
            self.queue.shrink_to(self.queue.len() * 2);
        }
    }

    /// Tags waiting.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.tags.len()
    }
}

#[cfg(test)]
mod tests {
    use kemsphinx::ReplayTag;

    use super::Pending;

    #[test]
    fn tags_wait_until_their_group_is_durable() {
        let mut p = Pending::default();
        let t = |i: u8| ReplayTag([i; 32]);
        for i in 0..10u8 {
            p.push(u64::from(i / 3) + 1, &t(i), 0);
        }
        assert_eq!(p.len(), 10);
        assert!((0..10).all(|i| p.contains(&t(i))));
        // Groups 1 and 2 (tags 0..6) become durable.
        p.push(5, &t(20), 2);
        assert!((0..6).all(|i| !p.contains(&t(i))));
        assert!((6..10).all(|i| p.contains(&t(i))));
        assert!(p.contains(&t(20)));
        assert_eq!(p.len(), 5);
        p.push(6, &t(21), 6);
        assert_eq!(p.len(), 1);
        assert!(p.contains(&t(21)));
    }

    /// A backlog's memory goes back once it is durable (the set kept the
    /// capacity of the largest backlog for the life of the epoch).
    #[test]
    fn a_durable_backlog_gives_its_memory_back() {
        let mut p = Pending::default();
        let t = |i: u32| {
            let mut b = [0u8; 32];
            b[..4].copy_from_slice(&i.to_le_bytes());
            ReplayTag(b)
        };
        for i in 0..200_000 {
            p.push(1, &t(i), 0);
        }
        let grown = p.tags.capacity();
        assert!(grown >= 200_000);
        // Group 1 durable; groups of 100 tags from then on.
        for i in 0..1_000u32 {
            p.push(
                u64::from(i / 100) + 2,
                &t(1_000_000 + i),
                u64::from(i / 100) + 1,
            );
        }
        assert!(p.len() <= 200);
        assert!(
            p.tags.capacity() <= super::SHRINK_ABOVE * 2,
            "{}",
            p.tags.capacity()
        );
        assert!(
            p.queue.capacity() <= super::SHRINK_ABOVE * 2,
            "{}",
            p.queue.capacity()
        );
        assert!((1_000_900..1_001_000).all(|i| p.contains(&t(i))));
    }
}
