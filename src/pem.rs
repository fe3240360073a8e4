//! Keys as PEM text, in the files the reference's PKI and tools share
//! (feature `pem`, on by default; `no_std`, no allocation).
//!
//! HPQC stores a KEM key as one PEM block whose label is the scheme name in
//! upper case followed by `PUBLIC KEY` or `PRIVATE KEY`, and whose body is
//! the key's raw encoding (1,216 or 1,280 bytes) in base64 wrapped at 64
//! characters, lines ending in `\n`, no headers. This module writes exactly
//! that, byte for byte, and reads it back strictly. The base64 is RustCrypto's
//! constant-time `base64ct`; the two boundary lines are parsed here, because
//! `pem-rfc7468` does not yet accept a `-` inside a label.
//!
//! | refused                                  | error                                  |
//! | ---------------------------------------- | -------------------------------------- |
//! | no `BEGIN`/`END` pair with equal labels  | [`PemError::Malformed`]                |
//! | body not base64 in 64-character lines (headers included) | [`PemError::Base64`]   |
//! | another label (wrong key kind or scheme) | [`PemError::Label`]                    |
//! | body of the wrong length                 | [`Error::Length`] naming the key       |
//! | key that fails validation                | [`Error::Key`] (e.g. [`KeyError::Inconsistent`](crate::KeyError::Inconsistent)) |
//!
//! Text before the `BEGIN` line is ignored, as RFC 7468 and the reference
//! allow; after the `END` line only whitespace may follow (one block per
//! file). The reference upper-cases a label before comparing it; here labels
//! are compared exactly, since the reference only ever writes them upper
//! case. Lines may end in `\n` or `\r\n`.
//!
//! ```
//! # let mut rng = rand_core::UnwrapErr(getrandom::SysRng);
//! use kemsphinx::PrivateKey;
//! let key = PrivateKey::generate(&mut rng);
//! let text = key.to_pem()?; // secret: zeroized on drop
//! assert!(text.starts_with(b"-----BEGIN MLKEM768-X25519 PRIVATE KEY-----\n"));
//! let loaded = PrivateKey::from_pem(&text[..])?;
//! assert_eq!(loaded.public_key(), key.public_key());
//! # Ok::<(), kemsphinx::Error>(())
//! ```

use base64ct::{Base64, LineEnding};
use zeroize::Zeroizing;

use crate::error::{Error, Input, PemError};
use crate::geometry::{PRIVATE_KEY_LEN, PUBLIC_KEY_LEN};
use crate::kem::{PrivateKey, PublicKey};

/// The reference's KEM scheme name, upper-cased as its PEM labels are.
const SCHEME: &str = "MLKEM768-X25519";

/// Label of a public key block: `MLKEM768-X25519 PUBLIC KEY`.
pub const PUBLIC_KEY_LABEL: &str = "MLKEM768-X25519 PUBLIC KEY";
/// Label of a private key block: `MLKEM768-X25519 PRIVATE KEY`.
pub const PRIVATE_KEY_LABEL: &str = "MLKEM768-X25519 PRIVATE KEY";

/// Length of a public key's PEM text, final newline included (1,734).
pub const PUBLIC_KEY_PEM_LEN: usize = pem_len(PUBLIC_KEY_LABEL, PUBLIC_KEY_LEN);
/// Length of a private key's PEM text, final newline included (1,821).
pub const PRIVATE_KEY_PEM_LEN: usize = pem_len(PRIVATE_KEY_LABEL, PRIVATE_KEY_LEN);

/// Base64 characters per line, as the reference (Go's `encoding/pem`)
/// and RFC 7468 wrap them.
const LINE: usize = 64;

const BEGIN: &[u8] = b"-----BEGIN ";
const END: &[u8] = b"-----END ";
const DASHES: &[u8] = b"-----";

/// Length of a PEM block with `label` around `n` bytes: both boundary
/// lines, the base64 text and one `\n` after every line.
const fn pem_len(label: &str, n: usize) -> usize {
    let base64 = n.div_ceil(3) * 4;
    let body = base64 + base64.div_ceil(LINE);
    let begin = BEGIN.len() + label.len() + DASHES.len() + 1;
    let end = END.len() + label.len() + DASHES.len() + 1;
    begin + body + end
}

// The labels are the scheme name and the key kind, as the reference builds
// them; the lengths are what its encoder writes for these key sizes.
const _: () = {
    assert!(PUBLIC_KEY_LABEL.len() == SCHEME.len() + " PUBLIC KEY".len());
    assert!(PRIVATE_KEY_LABEL.len() == SCHEME.len() + " PRIVATE KEY".len());
    assert!(PUBLIC_KEY_PEM_LEN == 1_734);
    assert!(PRIVATE_KEY_PEM_LEN == 1_821);
};

impl PublicKey {
    /// Load a public key from PEM text, refusing anything but one
    /// `MLKEM768-X25519 PUBLIC KEY` block (see the [module docs](crate::pem)).
    ///
    /// # Errors
    /// [`Error::Pem`], [`Error::Length`] or [`Error::Key`].
    pub fn from_pem(text: &[u8]) -> Result<Self, Error> {
        let mut raw = [0u8; PUBLIC_KEY_LEN];
        decode(text, PUBLIC_KEY_LABEL, Input::PublicKey, &mut raw)?;
        Self::from_bytes(&raw)
    }

    /// The PEM text the reference writes for this key.
    ///
    /// # Errors
    /// None in practice: the buffer is sized for the text (a test checks
    /// every byte). [`Error::Pem`] if the encoder ever disagreed.
    pub fn to_pem(&self) -> Result<[u8; PUBLIC_KEY_PEM_LEN], Error> {
        let mut out = [0u8; PUBLIC_KEY_PEM_LEN];
        encode(PUBLIC_KEY_LABEL, self.as_bytes(), &mut out)?;
        Ok(out)
    }
}

impl PrivateKey {
    /// Load a private key from PEM text, refusing anything but one
    /// `MLKEM768-X25519 PRIVATE KEY` block, and a key whose stored
    /// encapsulation key does not match its seed.
    ///
    /// # Errors
    /// [`Error::Pem`], [`Error::Length`] or [`Error::Key`].
    pub fn from_pem(text: &[u8]) -> Result<Self, Error> {
        let mut raw = Zeroizing::new([0u8; PRIVATE_KEY_LEN]);
        decode(text, PRIVATE_KEY_LABEL, Input::PrivateKey, &mut raw)?;
        Self::from_bytes(&raw)
    }

    /// The PEM text the reference writes for this key (secret: zeroized
    /// on drop).
    ///
    /// # Errors
    /// As [`PublicKey::to_pem`].
    pub fn to_pem(&self) -> Result<Zeroizing<[u8; PRIVATE_KEY_PEM_LEN]>, Error> {
        let mut out = Zeroizing::new([0u8; PRIVATE_KEY_PEM_LEN]);
        encode(PRIVATE_KEY_LABEL, &self.to_bytes()[..], &mut out[..])?;
        Ok(out)
    }
}

/// Decode the one block of `text`, which must carry `label`, into exactly
/// `N` bytes. The label and length are checked before the body is decoded.
fn decode<const N: usize>(
    text: &[u8],
    label: &'static str,
    input: Input,
    out: &mut [u8; N],
) -> Result<(), Error> {
    let (found, body) = split_block(text)?;
    if found != label.as_bytes() {
        return Err(PemError::Label { expected: label }.into());
    }
    if body.is_empty() {
        return Err(Error::Length {
            input,
            expected: N,
            got: 0,
        });
    }
    let mut decoder = base64ct::Decoder::<Base64>::new_wrapped(body, LINE).map_err(base64)?;
    let got = decoder.remaining_len();
    if got != N {
        return Err(Error::Length {
            input,
            expected: N,
            got,
        });
    }
    decoder.decode(out).map_err(base64)?;
    if !decoder.is_finished() {
        return Err(PemError::Base64.into());
    }
    Ok(())
}

/// Split one PEM block into its label and the text between its boundary
/// lines (without the line break before `-----END`).
fn split_block(text: &[u8]) -> Result<(&[u8], &[u8]), Error> {
    let malformed = Error::Pem(PemError::Malformed);
    let start = text
        .windows(BEGIN.len())
        .position(|w| w == BEGIN)
        .ok_or(malformed)?;
    let (_preamble, block) = text.split_at(start);
    let block = block.strip_prefix(BEGIN).ok_or(malformed)?;
    let dashes = block
        .windows(DASHES.len())
        .position(|w| w == DASHES)
        .ok_or(malformed)?;
    let (label, rest) = block.split_at(dashes);
    let rest = rest.strip_prefix(DASHES).ok_or(malformed)?;
    let rest = strip_leading_eol(rest).ok_or(malformed)?;
    let rest = rest.trim_ascii_end();
    let rest = rest.strip_suffix(DASHES).ok_or(malformed)?;
    let rest = rest.strip_suffix(label).ok_or(malformed)?;
    let rest = rest.strip_suffix(END).ok_or(malformed)?;
    let body = match rest {
        [] => rest,
        [body @ .., b'\r', b'\n'] | [body @ .., b'\n'] => body,
        _ => return Err(malformed),
    };
    Ok((label, body))
}

/// `bytes` after a leading `\n` or `\r\n`, if it has one.
fn strip_leading_eol(bytes: &[u8]) -> Option<&[u8]> {
    bytes
        .strip_prefix(b"\r\n")
        .or_else(|| bytes.strip_prefix(b"\n"))
}

/// Write one block with `label` around `bytes`, filling `out` exactly.
fn encode(label: &str, bytes: &[u8], out: &mut [u8]) -> Result<(), Error> {
    let malformed = Error::Pem(PemError::Malformed);
    let base64_len = pem_len(label, bytes.len())
        .checked_sub(pem_len(label, 0))
        .and_then(|n| n.checked_sub(1))
        .ok_or(malformed)?;
    let rest = put(out, &[BEGIN, label.as_bytes(), DASHES, b"\n"])?;
    let (text, rest) = rest.split_at_mut_checked(base64_len).ok_or(malformed)?;
    let mut encoder =
        base64ct::Encoder::<Base64>::new_wrapped(text, LINE, LineEnding::LF).map_err(base64)?;
    encoder.encode(bytes).map_err(base64)?;
    if encoder.finish().map_err(base64)?.len() != base64_len {
        return Err(malformed);
    }
    let rest = put(rest, &[b"\n", END, label.as_bytes(), DASHES, b"\n"])?;
    if !rest.is_empty() {
        return Err(malformed);
    }
    Ok(())
}

/// Copy `parts` to the front of `out`; return what is left of it.
fn put<'o>(out: &'o mut [u8], parts: &[&[u8]]) -> Result<&'o mut [u8], Error> {
    let mut out = out;
    for part in parts {
        let (dst, rest) = out
            .split_at_mut_checked(part.len())
            .ok_or(Error::Pem(PemError::Malformed))?;
        dst.copy_from_slice(part);
        out = rest;
    }
    Ok(out)
}

/// Any base64 failure, whatever `base64ct` calls it.
fn base64(_: base64ct::Error) -> Error {
    PemError::Base64.into()
}
