//! Full AEZ v5 (feature `full`): AEZ-extract, AEZ-hash over a nonce and
//! associated data, AEZ-prf, and authenticated encryption with an
//! authenticator of τ bytes (paper, Fig. 1 and Fig. 4).

use zeroize::{Zeroize, Zeroizing};

use crate::block::Blk;
use crate::{Aez, Dir, Tweak};

/// What can go wrong in [`Aez::encrypt`] and [`Aez::decrypt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// `encrypt`: the buffer is shorter than the τ bytes it must hold for
    /// the authenticator.
    TooShort,
    /// `decrypt`: the ciphertext is not authentic (or shorter than τ). The
    /// buffer has been wiped.
    Inauthentic,
}

impl ::core::fmt::Display for Error {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(match self {
            Error::TooShort => "AEZ: buffer shorter than the authenticator",
            Error::Inauthentic => "AEZ: ciphertext is not authentic",
        })
    }
}

impl ::core::error::Error for Error {}

/// AEZ-extract: a 48-byte key is used as it is; a key of any other length
/// is hashed with unkeyed BLAKE2b-384. The result is wiped on drop.
pub fn extract(key: &[u8]) -> Zeroizing<[u8; 48]> {
    let mut out = Zeroizing::new([0u8; 48]);
    if let Ok(k) = <&[u8; 48]>::try_from(key) {
        *out = *k;
    } else {
        let h = blake2b_simd::Params::new().hash_length(48).hash(key);
        for (d, s) in out.iter_mut().zip(h.as_bytes().iter()) {
            *d = *s;
        }
    }
    out
}

impl Aez {
    /// AEZ with a key of any length: [`extract`] (BLAKE2b-384 unless the key
    /// is 48 bytes), then [`Aez::new`].
    pub fn from_key(key: &[u8]) -> Self {
        Self::new(&extract(key))
    }

    /// AEZ-hash of the tweak vector `([τ]₁₂₈, nonce, ad[0], ad[1], …)`:
    /// `Δ`, the 128-bit value every other part of AEZ sees instead of the
    /// tweak. `tau_bits` is τ in *bits*, as the paper encodes it (8 × the
    /// τ of [`Aez::encrypt`]).
    pub fn hash(&self, tau_bits: u128, nonce: &[u8], ad: &[&[u8]]) -> [u8; 16] {
        self.keys.hash_bits(tau_bits, nonce, ad)
    }

    /// AEZ-prf: fills `out` with `E(-1,3)(Δ) ‖ E(-1,3)(Δ ⊕ [1]₁₂₈) ‖ ⋯`
    /// for `Δ = delta` (from [`Aez::hash`]). This is the ciphertext of the
    /// empty message.
    pub fn prf(&self, delta: &[u8; 16], out: &mut [u8]) {
        out.fill(0);
        self.keys.prf_xor(delta, out);
    }

    /// AEZ encryption `Encrypt(K, N, A, τ, M)` in place: `buf` holds the
    /// message followed by τ more bytes (their contents are ignored) and
    /// receives the ciphertext, `|M| + τ` bytes. With τ = 0 this is
    /// enciphering alone (no authenticity); with τ ≥ 16 the ciphertext is
    /// robustly authenticated. The nonce may have any length.
    ///
    /// # Errors
    ///
    /// [`Error::TooShort`] if `buf` is shorter than `tau`; `buf` is then
    /// left unchanged.
    pub fn encrypt(
        &self,
        nonce: &[u8],
        ad: &[&[u8]],
        tau: usize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        let m_len = buf.len().checked_sub(tau).ok_or(Error::TooShort)?;
        let delta = self.delta(nonce, ad, tau);
        if let Some((_, auth)) = buf.split_at_mut_checked(m_len) {
            auth.fill(0);
        }
        if m_len == 0 {
            // The empty message: the ciphertext is AEZ-prf(K, T, τ).
            self.keys.prf_xor(&delta, buf);
        } else {
            self.crypt(Tweak::Delta(&delta), buf, Dir::Encipher);
        }
        Ok(())
    }

    /// AEZ decryption `Decrypt(K, N, A, τ, C)` in place: on success returns
    /// the plaintext, the first `|C| − τ` bytes of `buf` (the τ bytes after
    /// it are zero). The authenticator is checked without an early exit.
    ///
    /// # Errors
    ///
    /// [`Error::Inauthentic`] if `buf` is shorter than `tau` or the τ
    /// bytes did not decipher to zeros; `buf` is then wiped, so no
    /// unverified plaintext is released.
    pub fn decrypt<'b>(
        &self,
        nonce: &[u8],
        ad: &[&[u8]],
        tau: usize,
        buf: &'b mut [u8],
    ) -> Result<&'b mut [u8], Error> {
        let Some(m_len) = buf.len().checked_sub(tau) else {
            buf.zeroize();
            return Err(Error::Inauthentic);
        };
        let delta = self.delta(nonce, ad, tau);
        if m_len == 0 {
            // Recompute AEZ-prf over the ciphertext: all zero iff equal.
            self.keys.prf_xor(&delta, buf);
        } else {
            self.crypt(Tweak::Delta(&delta), buf, Dir::Decipher);
        }
        let (m, auth) = buf.split_at_mut(m_len);
        let diff = auth.iter().fold(0u8, |d, b| d | b);
        if ::core::hint::black_box(diff) == 0 {
            Ok(m)
        } else {
            m.zeroize();
            auth.zeroize();
            Err(Error::Inauthentic)
        }
    }

    /// `Δ` for `([8τ]₁₂₈, N, A…)`. `usize` to `u128` never truncates, and
    /// `8τ` fits easily.
    fn delta(&self, nonce: &[u8], ad: &[&[u8]], tau: usize) -> Zeroizing<Blk> {
        let bits = (tau as u128).wrapping_mul(8);
        Zeroizing::new(self.keys.hash_bits(bits, nonce, ad))
    }
}
