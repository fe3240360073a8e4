//! Keys as PEM text, in the files the reference's PKI and tools share
//! (feature `pem`, on by default; `no_std`, no allocation).
//!
//! HPQC stores a KEM key as one PEM block whose label is the scheme name in
//! upper case followed by `PUBLIC KEY` or `PRIVATE KEY`, and whose body is
//! the key's raw encoding (1,216 or 1,280 bytes) in base64 wrapped at 64
//! characters, lines ending in `\n`, no headers. This module writes exactly
//! that, byte for byte ([`PublicKey::to_pem`] cannot fail), and reads it
//! back strictly. The base64 is RustCrypto's constant-time `base64ct`; the
//! lines around it are parsed here, because `pem-rfc7468` does not yet
//! accept a `-` inside a label.
//!
//! # What is read
//!
//! The reference reads keys with Go's `encoding/pem` (`pem.Decode`), which
//! is more lenient than its writer. Everything the reference writes loads
//! here; beyond that, this module accepts the variations that editing or
//! copying a file commonly introduces (text before the block, `\r\n` line
//! ends, blank lines or a missing line end at the end) and refuses the
//! rest, each row below with its test in `tests/pem.rs`:
//!
//! | text | here | `pem.Decode` |
//! | ---- | ---- | ------------ |
//! | `-----BEGIN ` at the start of the text or just after a `\n` | accepted | accepted |
//! | `-----BEGIN ` anywhere else (`hello world-----BEGIN …`) | [`Malformed`](PemError::Malformed) | not a block |
//! | a UTF-8 byte order mark (or anything) before `-----BEGIN ` on its line | [`Malformed`](PemError::Malformed) | not a block |
//! | text on lines before the `BEGIN` line | ignored | ignored |
//! | lines ending in `\n` or `\r\n`, mixed freely | accepted | accepted |
//! | a `\r` not followed by `\n`, anywhere from `BEGIN` on | [`Malformed`](PemError::Malformed) | accepted in the body |
//! | spaces or tabs at the end of the `BEGIN` or `END` line | [`Malformed`](PemError::Malformed) | accepted |
//! | `END` label other than the `BEGIN` label, or no `END` line | [`Malformed`](PemError::Malformed) | not a block |
//! | another label (wrong key kind, another scheme, lower case) | [`Label`](PemError::Label) | label upper-cased, then compared |
//! | headers (`Proc-Type: …`) | [`Base64`](PemError::Base64) | accepted (and ignored by the reference) |
//! | a blank line in the body or before `END` | [`Base64`](PemError::Base64) | accepted |
//! | spaces or tabs in the body, lines not 64 characters (the last 1 to 64), bad base64 | [`Base64`](PemError::Base64) | spaces, tabs and line lengths accepted |
//! | after the `END` line: nothing, or only spaces, tabs, `\n`, `\r\n` | accepted | accepted |
//! | after the `END` line: anything else (a second block, text, form feed) | [`Malformed`](PemError::Malformed) | ignored |
//! | a body of the wrong length | [`Error::Length`] naming the key | key refused |
//! | a key that fails validation | [`Error::Key`] (e.g. [`KeyError::Inconsistent`](crate::KeyError::Inconsistent)) | key refused |
//!
//! Checks run in that order: framing, label, length, base64, key.
//!
//! ```
//! # let mut rng = rand_core::UnwrapErr(getrandom::SysRng);
//! use kemsphinx::PrivateKey;
//! let key = PrivateKey::generate(&mut rng);
//! let text = key.to_pem(); // secret: zeroized on drop
//! assert!(text.starts_with(b"-----BEGIN MLKEM768-X25519 PRIVATE KEY-----\n"));
//! let loaded = PrivateKey::from_pem(&text[..])?;
//! assert_eq!(loaded.public_key(), key.public_key());
//! # Ok::<(), kemsphinx::Error>(())
//! ```

use base64ct::{Base64, Encoding as _};
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
    #[must_use]
    pub fn to_pem(&self) -> [u8; PUBLIC_KEY_PEM_LEN] {
        let mut out = [0u8; PUBLIC_KEY_PEM_LEN];
        encode(PUBLIC_KEY_LABEL, self.as_bytes(), &mut out);
        out
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
    #[must_use]
    pub fn to_pem(&self) -> Zeroizing<[u8; PRIVATE_KEY_PEM_LEN]> {
        let mut out = Zeroizing::new([0u8; PRIVATE_KEY_PEM_LEN]);
        encode(PRIVATE_KEY_LABEL, &self.to_bytes()[..], &mut out[..]);
        out
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
    // `base64ct` takes a blank line for the end of the text; refuse one
    // here, so that what follows it is not silently skipped.
    // (The body's last line end was cut off with the END line, so one
    // still there ends a blank line.)
    if body.ends_with(b"\n") || lines(body).any(|(line, _)| line.is_empty()) {
        return Err(PemError::Base64.into());
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

/// Split one PEM block into its label and its body: the lines between the
/// boundary lines, without the line end before `-----END` (see the table
/// in the module docs for what is accepted).
fn split_block(text: &[u8]) -> Result<(&[u8], &[u8]), Error> {
    let malformed = Error::Pem(PemError::Malformed);
    // `-----BEGIN ` starts the text or follows a `\n`.
    let block = match text.strip_prefix(BEGIN) {
        Some(block) => block,
        None => text
            .windows(BEGIN.len() + 1)
            .position(|w| w.split_first() == Some((&b'\n', BEGIN)))
            .and_then(|at| text.get(at + 1 + BEGIN.len()..))
            .ok_or(malformed)?,
    };
    // A `\r` only ever as part of a `\r\n`.
    let next = block.iter().skip(1).chain([&0]);
    if block
        .iter()
        .zip(next)
        .any(|(b, n)| *b == b'\r' && *n != b'\n')
    {
        return Err(malformed);
    }
    let mut lines = lines(block);
    let (begin, _) = lines.next().filter(|(_, end)| *end).ok_or(malformed)?;
    let label = begin.strip_suffix(DASHES).ok_or(malformed)?;
    // The body runs from after the BEGIN line to the END line.
    let body_start = block.len() - lines.rest.len();
    let mut body_len = 0;
    while let Some((line, ended)) = lines.next() {
        if let Some(end) = line.strip_prefix(END) {
            let trailer = end.strip_prefix(label).and_then(|t| t.strip_prefix(DASHES));
            if trailer.is_none_or(|t| !t.is_empty()) {
                return Err(malformed);
            }
            // After the END line only blank space and line ends.
            if !lines
                .rest
                .iter()
                .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            {
                return Err(malformed);
            }
            let body = block
                .get(body_start..body_start + body_len)
                .ok_or(malformed)?;
            let body = body
                .strip_suffix(b"\r\n")
                .or_else(|| body.strip_suffix(b"\n"))
                .unwrap_or(body);
            return Ok((label, body));
        }
        if !ended {
            break;
        }
        body_len = block.len() - lines.rest.len() - body_start;
    }
    Err(malformed)
}

/// The lines of `text`, each without its `\n` or `\r\n`, with whether it
/// had one (only the last line may not).
fn lines(text: &[u8]) -> Lines<'_> {
    Lines {
        rest: text,
        done: false,
    }
}

/// See [`lines`]; `rest` is what follows the last line returned.
struct Lines<'a> {
    rest: &'a [u8],
    done: bool,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (&'a [u8], bool);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.rest.iter().position(|b| *b == b'\n') {
            Some(at) => {
                let (line, rest) = self.rest.split_at_checked(at)?;
                self.rest = rest.get(1..)?;
                Some((line.strip_suffix(b"\r").unwrap_or(line), true))
            }
            None => {
                self.done = true;
                let line = core::mem::take(&mut self.rest);
                (!line.is_empty()).then_some((line, false))
            }
        }
    }
}

/// Write one block with `label` around `bytes` into `out`, which must be
/// `pem_len(label, bytes.len())` bytes long: then this cannot fail (every
/// caller's length is a constant asserted at compile time, and the tests
/// compare every byte with an independent encoder). Were `out` the wrong
/// length, the text would be cut short or followed by zeros; it never
/// panics.
fn encode(label: &str, bytes: &[u8], out: &mut [u8]) {
    let mut w = Writer(out);
    w.put(&[BEGIN, label.as_bytes(), DASHES, b"\n"]);
    for chunk in bytes.chunks(LINE / 4 * 3) {
        // Exactly the encoded length of the chunk: `encode` cannot fail.
        let _ = Base64::encode(chunk, w.take(Base64::encoded_len(chunk)));
        w.put(&[b"\n"]);
    }
    w.put(&[END, label.as_bytes(), DASHES, b"\n"]);
}

/// The unwritten rest of an output buffer.
struct Writer<'o>(&'o mut [u8]);

impl<'o> Writer<'o> {
    /// The next `n` bytes (fewer if the buffer ends first).
    fn take(&mut self, n: usize) -> &'o mut [u8] {
        let buf = core::mem::take(&mut self.0);
        let (head, tail) = buf.split_at_mut(n.min(buf.len()));
        self.0 = tail;
        head
    }

    /// Copy `parts`, in order.
    fn put(&mut self, parts: &[&[u8]]) {
        for part in parts {
            let dst = self.take(part.len());
            for (d, s) in dst.iter_mut().zip(*part) {
                *d = *s;
            }
        }
    }
}

/// Any base64 failure, whatever `base64ct` calls it.
fn base64(_: base64ct::Error) -> Error {
    PemError::Base64.into()
}
