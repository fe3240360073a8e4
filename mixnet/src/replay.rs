//! A replay filter: a Bloom filter over replay tags, one per node and key
//! epoch ([`crate::epoch`]).
//!
//! Memory is fixed when the filter is made: `m` bits for a capacity of `n`
//! tags at a target false-positive rate `p`, with `m = -n ln p / (ln 2)^2`
//! and `k = (m / n) ln 2` bit positions per tag. A Bloom filter never
//! forgets a tag it holds (no false negatives, so no replay gets through);
//! a false positive drops an honest packet, at rate at most `p` while the
//! filter holds at most `n` tags. Past `n` the rate climbs towards 1, so
//! the filter counts every insert and its epoch stops taking packets at
//! `n` ([`ReplayFilter::is_full`]).
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
    inserts: usize,
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
            inserts: 0,
            key: RandomState::new(),
        }
    }

    /// Whether `tag` may have been inserted (false: it certainly was not).
    pub fn contains(&self, tag: &ReplayTag) -> bool {
        self.positions(tag)
            .all(|bit| self.words[bit / 64] & (1 << (bit % 64)) != 0)
    }

    /// Remember `tag`. Returns `false` if it was (probably) there already.
    /// Every call counts towards [`len`](Self::len), whether or not it set
    /// a new bit: the false-positive bound holds for inserts, not for bits.
    pub fn insert(&mut self, tag: &ReplayTag) -> bool {
        let mut fresh = false;
        for bit in self.positions(tag) {
            let word = &mut self.words[bit / 64];
            fresh |= *word & (1 << (bit % 64)) == 0;
            *word |= 1 << (bit % 64);
        }
        self.inserts += 1;
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

    /// Inserts so far (every call to [`insert`](Self::insert)).
    pub fn len(&self) -> usize {
        self.inserts
    }

    /// Whether nothing was inserted yet.
    pub fn is_empty(&self) -> bool {
        self.inserts == 0
    }

    /// Whether the filter holds its capacity: one more insert would take
    /// its false-positive rate past the target.
    pub fn is_full(&self) -> bool {
        self.inserts >= self.capacity
    }

    /// The false-positive rate once `n` tags are in:
    /// `(1 - e^(-k n / m))^k`.
    pub fn fp_rate_at(&self, n: usize) -> f64 {
        let k = f64::from(self.hashes);
        (1.0 - (-k * n as f64 / self.bits as f64).exp()).powf(k)
    }
}
