//! A replay filter: a Bloom filter over replay tags, one per node and key
//! epoch ([`crate::epochs`]).
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
pub(crate) struct ReplayFilter {
    words: Vec<u64>,
    bits: u64,
    hashes: u32,
    capacity: usize,
    inserts: usize,
    key: RandomState,
}

impl ReplayFilter {
    /// A filter for `capacity` tags at false-positive rate `fp_rate`.
    /// (Callers check the policy first, [`crate::EpochPolicy::check`]: a
    /// zero capacity or a rate outside (0, 1) still makes a filter, of at
    /// least one word and one hash.)
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub(crate) fn new(capacity: usize, fp_rate: f64) -> Self {
        let ln2 = std::f64::consts::LN_2;
        let n = capacity.max(1) as f64;
        let rate = fp_rate.clamp(f64::MIN_POSITIVE, 0.5);
        // Finite and positive by the clamps above; far below 2^64.
        let bits = (-n * rate.ln() / (ln2 * ln2)).ceil().max(64.0) as u64;
        let hashes = ((bits as f64 / n) * ln2).round().clamp(1.0, 64.0) as u32;
        Self {
            words: vec![0; usize::try_from(bits.div_ceil(64)).unwrap_or(usize::MAX)],
            bits,
            hashes,
            capacity,
            inserts: 0,
            key: RandomState::new(),
        }
    }

    /// Whether `tag` may have been inserted (false: it certainly was not).
    pub(crate) fn contains(&self, tag: &ReplayTag) -> bool {
        self.positions(tag).all(|bit| {
            self.words
                .get(bit / 64)
                .is_some_and(|w| w & (1 << (bit % 64)) != 0)
        })
    }

    /// Remember `tag`. Returns `false` if it was (probably) there already.
    /// Every call counts towards [`len`](Self::len), whether or not it set
    /// a new bit: the false-positive bound holds for inserts, not for bits.
    pub(crate) fn insert(&mut self, tag: &ReplayTag) -> bool {
        let mut fresh = false;
        for bit in self.positions(tag) {
            if let Some(word) = self.words.get_mut(bit / 64) {
                fresh |= *word & (1 << (bit % 64)) == 0;
                *word |= 1 << (bit % 64);
            }
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
            // Below `bits`, which indexes a `Vec`: fits a usize.
            .map(move |i| usize::try_from(h1.wrapping_add(i.wrapping_mul(h2)) % bits).unwrap_or(0))
    }

    /// Bytes of bit array (the filter's whole memory, bar a few words).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Bits in the array (`m`).
    #[cfg(test)]
    pub(crate) fn bits(&self) -> u64 {
        self.bits
    }

    /// Bit positions per tag (`k`).
    #[cfg(test)]
    pub(crate) fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Inserts so far (every call to [`insert`](Self::insert)).
    pub(crate) fn len(&self) -> usize {
        self.inserts
    }

    /// Whether the filter holds its capacity: one more insert would take
    /// its false-positive rate past the target.
    pub(crate) fn is_full(&self) -> bool {
        self.inserts >= self.capacity
    }

    /// The false-positive rate once `n` tags are in:
    /// `(1 - e^(-k n / m))^k`.
    #[cfg(test)]
    pub(crate) fn fp_rate_at(&self, n: usize) -> f64 {
        let k = f64::from(self.hashes);
        (1.0 - (-k * n as f64 / self.bits as f64).exp()).powf(k)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::cast_precision_loss)]
mod tests {
    use chacha20::ChaCha20Rng;
    use kemsphinx::ReplayTag;
    use rand_core::{Rng, SeedableRng};

    use super::ReplayFilter;

    fn random_tags(rng: &mut ChaCha20Rng, n: usize) -> Vec<ReplayTag> {
        (0..n)
            .map(|_| {
                let mut t = [0u8; 32];
                rng.fill_bytes(&mut t);
                ReplayTag(t)
            })
            .collect()
    }

    /// Fill a filter to capacity, then count positives among fresh tags.
    fn measured_fp_rate(capacity: usize, target: f64, queries: usize) -> (f64, ReplayFilter) {
        let mut rng = ChaCha20Rng::seed_from_u64(capacity as u64);
        let mut filter = ReplayFilter::new(capacity, target);
        let inserted = random_tags(&mut rng, capacity);
        for t in &inserted {
            filter.insert(t);
        }
        assert!(
            inserted.iter().all(|t| filter.contains(t)),
            "no false negatives"
        );
        let hits = random_tags(&mut rng, queries)
            .iter()
            .filter(|t| filter.contains(t))
            .count();
        (hits as f64 / queries as f64, filter)
    }

    #[test]
    fn the_false_positive_rate_at_capacity_is_the_target() {
        for (capacity, target, queries) in [(20_000, 1e-2, 200_000), (20_000, 1e-3, 400_000)] {
            let (rate, filter) = measured_fp_rate(capacity, target, queries);
            let theory = filter.fp_rate_at(capacity);
            // The expected count is at least 400; ±30% is over 6 standard
            // deviations.
            assert!(
                rate > 0.7 * theory && rate < 1.3 * theory,
                "{rate} vs {theory}"
            );
            assert!(theory < 1.05 * target, "{theory} vs {target}");
        }
    }

    #[test]
    fn memory_is_fixed_by_capacity_and_rate() {
        let mut f = ReplayFilter::new(100_000, 1e-6);
        // m = -n ln p / (ln 2)^2 = 2,875,518 bits; k = (m / n) ln 2 ≈ 20.
        assert_eq!(f.bits(), 2_875_518);
        assert_eq!(f.hashes(), 20);
        assert_eq!(f.memory_bytes(), 2_875_518usize.div_ceil(64) * 8);
        assert!(f.fp_rate_at(100_000) < 1.01e-6);
        let t = ReplayTag([7; 32]);
        assert!(f.insert(&t));
        assert!(!f.insert(&t), "a second insert reports the tag as present");
    }

    #[test]
    fn every_insert_counts_towards_the_capacity() {
        let mut f = ReplayFilter::new(100, 1e-6);
        let t = ReplayTag([7; 32]);
        for i in 1..=100 {
            assert!(!f.is_full());
            f.insert(&t);
            assert_eq!(f.len(), i);
        }
        assert!(f.is_full());
    }
}
