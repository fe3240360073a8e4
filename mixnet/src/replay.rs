//! A replay filter: a Bloom filter over replay tags, one per node and key
//! epoch.
//!
//! Memory is fixed when the filter is made: `m` bits for a capacity of `n`
//! tags at a target false-positive rate `p`, with `m = -n ln p / (ln 2)^2`
//! and `k = (m / n) ln 2` bit positions per tag. A Bloom filter never
//! forgets a tag it holds (no false negatives, so no replay gets through);
//! a false positive drops an honest packet, at rate at most `p` while the
//! filter holds at most `n` tags. A node starts a fresh filter when it
//! rotates its mix key (tags from an old key's packets cannot be replayed:
//! they no longer decrypt), so `n` is the most packets one key will see.
//!
//! Bit positions come from SipHash under a random per-filter key, so nobody
//! can craft packets whose tags land on the bits of a packet they want
//! dropped.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use kemsphinx::ReplayTag;

/// A fixed-size set of replay tags with one-sided error.
pub struct ReplayFilter {
    words: Vec<u64>,
    bits: u64,
    hashes: u32,
    capacity: usize,
    len: usize,
    key: RandomState,
}

impl ReplayFilter {
    /// A filter for `capacity` tags at false-positive rate `fp_rate`.
    pub fn new(capacity: usize, fp_rate: f64) -> Self {
        assert!(capacity > 0 && fp_rate > 0.0 && fp_rate < 1.0);
        let ln2 = std::f64::consts::LN_2;
        let bits = (-(capacity as f64) * fp_rate.ln() / (ln2 * ln2)).ceil() as u64;
        let hashes = ((bits as f64 / capacity as f64) * ln2).round().max(1.0) as u32;
        Self {
            words: vec![0; bits.div_ceil(64) as usize],
            bits,
            hashes,
            capacity,
            len: 0,
            key: RandomState::new(),
        }
    }

    /// Whether `tag` may have been inserted (false: it certainly was not).
    pub fn contains(&self, tag: &ReplayTag) -> bool {
        self.positions(tag)
            .all(|bit| self.words[bit / 64] & (1 << (bit % 64)) != 0)
    }

    /// Remember `tag`. Returns `false` if it was (probably) there already.
    pub fn insert(&mut self, tag: &ReplayTag) -> bool {
        let mut fresh = false;
        for bit in self.positions(tag) {
            let word = &mut self.words[bit / 64];
            fresh |= *word & (1 << (bit % 64)) == 0;
            *word |= 1 << (bit % 64);
        }
        self.len += usize::from(fresh);
        fresh
    }

    /// The `k` bit positions of `tag`: double hashing (Kirsch–Mitzenmacher)
    /// from two keyed SipHash values.
    fn positions(&self, tag: &ReplayTag) -> impl Iterator<Item = usize> + use<> {
        let h1 = self.key.hash_one((&tag.0, 0u8));
        let h2 = self.key.hash_one((&tag.0, 1u8)) | 1;
        let bits = self.bits;
        (0..u64::from(self.hashes))
            .map(move |i| (h1.wrapping_add(i.wrapping_mul(h2)) % bits) as usize)
    }

    /// Bytes of bit array (the filter's whole memory, bar a few words).
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Bits in the array (`m`).
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Bit positions per tag (`k`).
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Tags the filter was sized for (`n`).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Tags inserted so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was inserted yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The false-positive rate once `n` tags are in:
    /// `(1 - e^(-k n / m))^k`.
    pub fn fp_rate_at(&self, n: usize) -> f64 {
        let k = f64::from(self.hashes);
        (1.0 - (-k * n as f64 / self.bits as f64).exp()).powf(k)
    }
}
