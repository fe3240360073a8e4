//! AEZ v5 (Hoang, Krovetz, Rogaway), the arbitrary-input-length tweakable
//! blockcipher and the authenticated encryption built on it.
//!
//! AEZ enciphers a string of any length under a vector-valued tweak. The
//! tweak vector `T = ([τ]₁₂₈, N, A₁, …)` is first compressed by AEZ-hash into
//! one 128-bit value `Δ`; everything after that sees only `Δ`.
//!
//! * **AEZ-core** (inputs of 32 bytes or more) is an EME/OTR-like two-pass
//!   wide-block mode: pairs of blocks go through a two-round Feistel network
//!   built from AES4, their outputs are summed into a checksum that, together
//!   with the last 32 bytes, yields a value `S` depending on every input bit;
//!   a second pass injects `S` into each pair and runs two more Feistel
//!   rounds. Cost: five AES4 per 32 bytes plus a few AES10 calls.
//! * **AEZ-tiny** (1–31 bytes) is a balanced Feistel network (FFX-like) with
//!   8–24 AES4-based rounds, plus a one-bit correction for inputs under 16
//!   bytes so that the permutation is not restricted to even permutations.
//!
//! With ciphertext expansion τ = 0 and no associated data, AEZ encryption is
//! just `Encipher(K, ([0]₁₂₈, N), M)`: a length-preserving strong PRP
//! (SPRP) on strings, tweaked by the nonce. That is the way the KEMSphinx
//! packet format uses it for payload layers ([`Aez::encipher`] /
//! [`Aez::decipher`]). With τ > 0, appending τ zero bytes before enciphering
//! and checking them after deciphering gives robust authenticated encryption
//! ([`encrypt_full`] / [`decrypt_full`]).
//!
//! All AES work goes through `aes::hazmat::cipher_round{,_par}` (one AESENC
//! round), so AES-NI is used when the CPU has it and a constant-time
//! bitsliced implementation otherwise.

mod block;
mod core;
mod hash;
mod tbc;
mod tiny;

use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use block::{Blk, Lanes, ZERO, dbl, mul, xor};

/// The error returned by [`encrypt_full`] and [`decrypt_full`]: either the
/// buffer lengths do not fit together, or the ciphertext is not authentic.
/// Deliberately carries no detail.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AezError;

#[cfg(feature = "hazmat")]
impl ::core::fmt::Display for AezError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str("AEZ: bad length or inauthentic ciphertext")
    }
}

/// AEZ key material expanded from a 48-byte key `I ‖ J ‖ L`, together with
/// everything that can be derived from it once instead of per call.
/// Wiped on drop.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct Aez {
    /// The three 128-bit subkeys.
    i: Blk,
    j: Blk,
    l: Blk,
    /// `2·I`: the `I`-multiple of the first group of eight block indices.
    i2: Blk,
    /// `2·J`: the `j = 2` part of the `E(2,i)` offsets.
    j2: Blk,
    /// `k·L` for `k = 0..8`: `(i mod 8)·L` terms and the `E(-1,k)` offsets.
    lmul: [Blk; 8],
    /// `((p + 1) mod 8)·L` for lane `p`: with groups of eight block indices
    /// starting at `i = 8g + 1`, lane `p` always has `i mod 8 = (p + 1) mod 8`.
    lane_l: [Blk; 8],
    /// Offsets of `E(0,k)` for `k = 0..8`: `I` for `k = 0`, else `2·I ⊕ k·L`.
    e0: [Blk; 8],
    /// `E(3,1)([0]₁₂₈)`, the AEZ-hash term of `τ = 0`, which every call
    /// without expansion would otherwise recompute.
    tau0: Blk,
    /// `I`, `J`, `L` broadcast to eight lanes, as round keys for
    /// `cipher_round_par`.
    i8: Lanes,
    j8: Lanes,
    l8: Lanes,
}

impl ::core::fmt::Debug for Aez {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.debug_struct("Aez").finish_non_exhaustive()
    }
}

impl Aez {
    /// Use a 48-byte key directly as the extracted key `I ‖ J ‖ L` (no
    /// BLAKE2b extraction), which is how the KEMSphinx packet format keys AEZ.
    /// For keys of other lengths, use [`extract`] first.
    pub fn new(key: &[u8; 48]) -> Self {
        // Built in place so that the subkeys do not linger in stray locals.
        let mut aez = Self {
            i: ZERO,
            j: ZERO,
            l: ZERO,
            i2: ZERO,
            j2: ZERO,
            lmul: [ZERO; 8],
            lane_l: [ZERO; 8],
            e0: [ZERO; 8],
            tau0: ZERO,
            i8: Lanes::default(),
            j8: Lanes::default(),
            l8: Lanes::default(),
        };
        let subkeys = aez
            .i
            .iter_mut()
            .chain(aez.j.iter_mut())
            .chain(aez.l.iter_mut());
        for (d, s) in subkeys.zip(key.iter()) {
            *d = *s;
        }
        aez.i2 = dbl(&aez.i);
        aez.j2 = dbl(&aez.j);
        for (k, m) in aez.lmul.iter_mut().enumerate() {
            *m = mul(k, &aez.l);
        }
        for (p, m) in aez.lane_l.iter_mut().enumerate() {
            *m = mul((p + 1) % 8, &aez.l);
        }
        // E(0,0): 0·J ⊕ 2⁰·I ⊕ 0·L = I;  E(0,k), 1 ≤ k ≤ 7: 2¹·I ⊕ k·L.
        for (k, (e, m)) in aez.e0.iter_mut().zip(aez.lmul.iter()).enumerate() {
            *e = if k == 0 { aez.i } else { xor(&aez.i2, m) };
        }
        aez.i8.fill(&aez.i);
        aez.j8.fill(&aez.j);
        aez.l8.fill(&aez.l);
        // E(3,1)([0]₁₂₈): τ = 0 is a single full block hashed under j = 3.
        aez.tau0 = aez.hash_component(3, &ZERO);
        aez
    }

    /// AEZ v5 encryption with τ = 0 and no associated data: the tweak is the
    /// nonce alone (`Δ = AEZ-hash(K, ([0]₁₂₈, N))`), so this is a
    /// length-preserving SPRP on `buf`. Works in
    /// place on any length: 0 bytes is a no-op, 1–31 bytes use AEZ-tiny,
    /// 32 bytes or more use AEZ-core. Never allocates, never panics.
    pub fn encipher(&self, nonce: &[u8; 16], buf: &mut [u8]) {
        if buf.is_empty() {
            return;
        }
        let delta = Zeroizing::new(self.hash_bits(0, nonce, &[]));
        self.encipher_with_delta(&delta, buf);
    }

    /// The inverse of [`Aez::encipher`].
    pub fn decipher(&self, nonce: &[u8; 16], buf: &mut [u8]) {
        if buf.is_empty() {
            return;
        }
        let delta = Zeroizing::new(self.hash_bits(0, nonce, &[]));
        self.decipher_with_delta(&delta, buf);
    }

    /// `Encipher(K, T, X)` for a precomputed `Δ = AEZ-hash(K, T)`.
    pub(crate) fn encipher_with_delta(&self, delta: &[u8; 16], buf: &mut [u8]) {
        match buf.len() {
            0 => {}
            1..32 => self.tiny(delta, buf, Dir::Encipher),
            _ => self.core(delta, buf, Dir::Encipher),
        }
    }

    /// `Decipher(K, T, Y)` for a precomputed `Δ = AEZ-hash(K, T)`.
    pub(crate) fn decipher_with_delta(&self, delta: &[u8; 16], buf: &mut [u8]) {
        match buf.len() {
            0 => {}
            1..32 => self.tiny(delta, buf, Dir::Decipher),
            _ => self.core(delta, buf, Dir::Decipher),
        }
    }

    /// AEZ-hash over the tweak vector `([tau_bits]₁₂₈, nonce, ad[0], …)`.
    /// The first component is τ counted in *bits* (as the spec and
    /// `hash.json` have it); [`encrypt_full`] passes `8 · abytes`.
    #[cfg(feature = "hazmat")]
    #[doc(hidden)]
    pub fn hash(&self, tau_bits: u32, nonce: &[u8], ad: &[&[u8]]) -> [u8; 16] {
        self.hash_bits(u128::from(tau_bits), nonce, ad)
    }

    /// AEZ-prf: fills `out` with `E(-1,3)(Δ) ‖ E(-1,3)(Δ ⊕ [1]₁₂₈) ‖ …`.
    #[cfg(feature = "hazmat")]
    #[doc(hidden)]
    pub fn prf(&self, delta: &[u8; 16], out: &mut [u8]) {
        self.prf_fill(delta, out);
    }
}

/// Which way AEZ-core / AEZ-tiny run. The two directions differ only in the
/// order of the xy-tweaks (core) or of the round counter (tiny).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Encipher,
    Decipher,
}

/// AEZ-extract: a 48-byte key is used as is; any other length is hashed with
/// unkeyed BLAKE2b-384.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub fn extract(key: &[u8]) -> [u8; 48] {
    let mut out = [0u8; 48];
    if key.len() == 48 {
        for (d, s) in out.iter_mut().zip(key.iter()) {
            *d = *s;
        }
    } else {
        let h = blake2b_simd::Params::new().hash_length(48).hash(key);
        for (d, s) in out.iter_mut().zip(h.as_bytes().iter()) {
            *d = *s;
        }
    }
    out
}

/// τ in bits as AEZ-hash encodes it; `None` only on absurd sizes.
#[cfg(feature = "hazmat")]
fn tau_bits(tau: usize) -> Option<u128> {
    u128::try_from(tau).ok()?.checked_mul(8)
}

/// Full AEZ v5 encryption, `Encrypt(K, N, A, τ, M)` with τ = `tau` bytes:
/// `out` (which must be `m.len() + tau` bytes) receives the ciphertext.
/// With empty `m` the ciphertext is `AEZ-prf(K, T, τ)`.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub fn encrypt_full(
    key: &[u8],
    nonce: &[u8],
    ad: &[&[u8]],
    tau: usize,
    m: &[u8],
    out: &mut [u8],
) -> Result<(), AezError> {
    let bits = tau_bits(tau).ok_or(AezError)?;
    if m.len().checked_add(tau) != Some(out.len()) {
        return Err(AezError);
    }
    let aez = Aez::new(&Zeroizing::new(extract(key)));
    let delta = Zeroizing::new(aez.hash_bits(bits, nonce, ad));
    if m.is_empty() {
        aez.prf_fill(&delta, out);
        return Ok(());
    }
    let (head, tail) = out.split_at_mut(m.len());
    head.copy_from_slice(m);
    tail.fill(0);
    aez.encipher_with_delta(&delta, out);
    Ok(())
}

/// Full AEZ v5 decryption, `Decrypt(K, N, A, τ, C)`. `out` must be exactly
/// `c.len()` bytes long because deciphering needs room for the τ-byte
/// authenticator; on success the plaintext is `out[..c.len() - tau]` and the
/// rest is zero. On failure `out` is wiped, so no unverified plaintext leaks.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub fn decrypt_full(
    key: &[u8],
    nonce: &[u8],
    ad: &[&[u8]],
    tau: usize,
    c: &[u8],
    out: &mut [u8],
) -> Result<(), AezError> {
    let bits = tau_bits(tau).ok_or(AezError)?;
    let m_len = c.len().checked_sub(tau).ok_or(AezError)?;
    if out.len() != c.len() {
        return Err(AezError);
    }
    let aez = Aez::new(&Zeroizing::new(extract(key)));
    let delta = Zeroizing::new(aez.hash_bits(bits, nonce, ad));
    let mut diff = 0u8;
    if m_len == 0 {
        // Empty message: the ciphertext is the PRF output; recompute it and
        // compare without an early exit.
        aez.prf_fill(&delta, out);
        for (a, b) in out.iter().zip(c.iter()) {
            diff |= a ^ b;
        }
        out.fill(0);
    } else {
        out.copy_from_slice(c);
        aez.decipher_with_delta(&delta, out);
        let (_, z) = out.split_at(m_len);
        for b in z {
            diff |= *b;
        }
    }
    if ::core::hint::black_box(diff) == 0 {
        Ok(())
    } else {
        out.zeroize();
        Err(AezError)
    }
}
