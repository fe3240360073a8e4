#![doc = include_str!("../README.md")]
#![no_std]
// docs.rs (and CI's copy of its build) labels every feature-gated item.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![deny(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]

// Layers of AEZ v5, each labelled with its place in the paper (Hoang,
// Krovetz, Rogaway, "AEZ v5: Authenticated Encryption by Enciphering",
// 2017): Fig. 3 (AEZ-core, AEZ-tiny), Fig. 4 (E, AEZ-hash, AEZ-prf).
mod block;
/// The fast paths (AES-NI, 256- and 512-bit VAES): the only module with
/// `unsafe`. Built on x86-64 unless `--cfg aes_backend="soft"` or
/// `--cfg aez_backend="portable"` asks for the portable code; otherwise an
/// empty stand-in.
#[cfg(all(
    target_arch = "x86_64",
    not(aes_backend = "soft"),
    not(aez_backend = "portable")
))]
#[allow(unsafe_code)]
#[path = "x86/mod.rs"]
mod fast;
#[cfg(not(all(
    target_arch = "x86_64",
    not(aes_backend = "soft"),
    not(aez_backend = "portable")
)))]
#[path = "nofast.rs"]
mod fast;
#[cfg(feature = "full")]
mod full;
mod keys;
mod portable;

use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use block::Blk;
#[cfg(feature = "full")]
pub use full::{Error, extract};
use keys::Keys;

/// AEZ v5 under one key: the 48-byte extracted key `I ‖ J ‖ L` and what is
/// derived from it, plus the implementation chosen for this CPU.
///
/// Wiped on drop; its `Debug` shows only the implementation in use.
#[derive(Zeroize)]
pub struct Aez {
    keys: Keys,
    #[zeroize(skip)]
    path: Path,
}

impl Drop for Aez {
    fn drop(&mut self) {
        self.zeroize();
    }
}

/// Written out rather than derived: the derive's impl is hidden from the
/// documentation, and users check for this trait there.
impl ZeroizeOnDrop for Aez {}

/// The implementation of AEZ-core an [`Aez`] uses; see [`Aez::backend`].
/// All of them compute the same function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// AES rounds through `aes::hazmat` one at a time: AES-NI if present,
    /// otherwise the `aes` crate's constant-time bitsliced code.
    Portable,
    /// AES-NI with the whole state in registers, eight blocks in flight
    /// (x86-64 with AES-NI).
    AesNi,
    /// VAES on 256-bit registers, two blocks per instruction (x86-64 with
    /// VAES and AVX2, e.g. AMD Zen 3 and later, Intel Ice Lake and later).
    Vaes,
    /// VAES on 512-bit registers, four blocks per instruction (x86-64 with
    /// VAES and AVX-512F, e.g. Intel Xeon since Ice Lake, AMD Zen 4).
    Vaes512,
}

/// Which code runs AEZ-core for one [`Aez`]; fixed when it is created.
#[derive(Clone, Copy)]
enum Path {
    Portable,
    Fast(fast::Fast),
}

/// Which way AEZ-core / AEZ-tiny run. The two directions differ only in the
/// order of the xy-tweaks (core) or of the round counter (tiny).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Encipher,
    Decipher,
}

/// What the tweak of one call is: a 16-byte nonce alone (`τ = 0`, no AD),
/// whose hash the fast paths compute themselves, or an already hashed `Δ`.
#[derive(Clone, Copy)]
enum Tweak<'a> {
    Nonce(&'a [u8; 16]),
    #[cfg_attr(not(feature = "full"), allow(dead_code))]
    Delta(&'a Blk),
}

impl Tweak<'_> {
    /// `Δ = AEZ-hash(K, T)` on the portable path.
    fn delta(self, keys: &Keys) -> Zeroizing<Blk> {
        Zeroizing::new(match self {
            Tweak::Nonce(n) => keys.hash_bits(0, n, &[]),
            Tweak::Delta(d) => *d,
        })
    }
}

impl Aez {
    /// Use a 48-byte key directly as the extracted key `I ‖ J ‖ L` (no
    /// BLAKE2b extraction), and pick the fastest implementation this CPU
    /// supports. For keys of other lengths, see `Aez::from_key` (feature
    /// `full`).
    pub fn new(key: &[u8; 48]) -> Self {
        Self {
            keys: Keys::new(key),
            path: Path::detect(),
        }
    }

    /// Like [`Aez::new`], but with the given implementation, or `None` if
    /// this CPU or build does not have it. For tests and benchmarks that
    /// compare the implementations in one process.
    #[doc(hidden)]
    pub fn with_backend(key: &[u8; 48], backend: Backend) -> Option<Self> {
        Some(Self {
            keys: Keys::new(key),
            path: Path::select(backend)?,
        })
    }

    /// The implementation of AEZ-core this instance uses (AEZ-tiny, for
    /// inputs under 32 bytes, always runs on the portable code).
    pub fn backend(&self) -> Backend {
        match self.path {
            Path::Portable => Backend::Portable,
            Path::Fast(f) => f.backend(),
        }
    }

    /// AEZ v5 encryption with `τ = 0` and no associated data: the tweak is
    /// the nonce alone (`Δ = AEZ-hash(K, ([0]₁₂₈, N))`), so this is a
    /// length-preserving strong pseudorandom permutation of `buf`. Works in
    /// place on any length: 0 bytes is a no-op, 1–31 bytes use AEZ-tiny,
    /// 32 bytes or more use AEZ-core. Never allocates, never panics.
    pub fn encipher(&self, nonce: &[u8; 16], buf: &mut [u8]) {
        self.crypt(Tweak::Nonce(nonce), buf, Dir::Encipher);
    }

    /// The inverse of [`Aez::encipher`].
    pub fn decipher(&self, nonce: &[u8; 16], buf: &mut [u8]) {
        self.crypt(Tweak::Nonce(nonce), buf, Dir::Decipher);
    }

    /// `Encipher(K, T, X)` or `Decipher(K, T, Y)` in place. The length is
    /// decided here, once, and handed on as a type: AEZ-core gets the
    /// [`Parts`](block::Parts) of an input of 32 bytes or more (its last two
    /// blocks split off as arrays), AEZ-tiny a [`Tiny`](block::Tiny) of 1 to
    /// 31 bytes, so that no routine has a length it could refuse; only the
    /// empty input is left as it is (the SPRP on the empty string).
    fn crypt(&self, tweak: Tweak<'_>, buf: &mut [u8], dir: Dir) {
        if let Some((rest, y)) = buf.split_last_chunk_mut::<16>()
            && let Some((body, x)) = rest.split_last_chunk_mut::<16>()
        {
            let parts = block::Parts::new(body, x, y);
            match self.path {
                Path::Portable => self.keys.core(&tweak.delta(&self.keys), parts, dir),
                Path::Fast(f) => f.crypt(&self.keys, tweak, parts, dir),
            }
        } else if let Some(tiny) = block::Tiny::new(buf) {
            self.keys.tiny(&tweak.delta(&self.keys), tiny, dir);
        }
    }
}

impl Path {
    /// The fastest path this CPU and build support.
    fn detect() -> Self {
        fast::Fast::detect().map_or(Path::Portable, Path::Fast)
    }

    /// The path for `backend`, if this CPU and build support it.
    fn select(backend: Backend) -> Option<Self> {
        match backend {
            Backend::Portable => Some(Path::Portable),
            _ => fast::Fast::select(backend).map(Path::Fast),
        }
    }
}

impl ::core::fmt::Debug for Aez {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.debug_struct("Aez")
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}
