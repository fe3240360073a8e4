//! The generator's randomness: one ChaCha20 stream per file.

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::PAYLOAD_LEN;
use rand_core::{Rng, SeedableRng};

/// A generation step that can fail (it never should: every failure is a
/// bug in the library or the generator, reported instead of written).
pub(crate) type Gen<T> = Result<T, String>;

/// The DRBG of one file.
pub(crate) struct Drbg(pub(crate) ChaCha20Rng);

impl Drbg {
    /// Stream `stream` of ChaCha20 keyed with `seed`.
    pub(crate) fn new(seed: &[u8; 32], stream: u64) -> Self {
        let mut rng = ChaCha20Rng::from_seed(*seed);
        rng.set_stream(stream);
        Self(rng)
    }

    /// The next `N` bytes.
    pub(crate) fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        self.0.fill_bytes(&mut out);
        out
    }

    /// The next `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n];
        self.0.fill_bytes(&mut out);
        out
    }

    /// A payload of the next 10,156 bytes.
    pub(crate) fn payload(&mut self) -> Box<[u8; PAYLOAD_LEN]> {
        let mut out = Box::new([0u8; PAYLOAD_LEN]);
        self.0.fill_bytes(&mut out[..]);
        out
    }

    /// A copy of the generator in its current state, to feed the normal
    /// creation API the same bytes that are about to be drawn explicitly.
    pub(crate) fn fork(&self) -> ChaCha20Rng {
        let mut copy = ChaCha20Rng::from_seed(self.0.get_seed());
        copy.set_stream(self.0.get_stream());
        copy.set_word_pos(self.0.get_word_pos());
        copy
    }
}
