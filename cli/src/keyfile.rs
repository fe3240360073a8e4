//! Reading keys and packets from files: PEM (keys), binary, or hex text.
//!
//! Private keys are read in one place, [`decode_private_key`]: PEM with the
//! reference's label, or the raw 1,280-byte encoding as binary or hex.
//! Whatever is read passes only through buffers that are wiped when
//! dropped ([`Zeroizing`]), since it may be a key, and at most
//! [`MAX_INPUT`] bytes are read.

use std::io::Read;
use std::path::Path;

use kemsphinx::PrivateKey;
use kemsphinx::geometry::PRIVATE_KEY_LEN;
use zeroize::Zeroizing;

use crate::files;

/// The most bytes read from one input: far more than a packet in hex with
/// whitespace (about 33 KB).
pub const MAX_INPUT: usize = 1 << 20;

/// How an input file was encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Raw bytes.
    Binary,
    /// Hex text (whitespace ignored).
    Hex,
}

/// Decode file contents: hex if the whole file (whitespace removed) is
/// hex of even length, otherwise the bytes as they are. A binary packet
/// that happens to be entirely hex digits is vanishingly unlikely. Every
/// buffer involved is wiped when dropped.
#[must_use]
pub fn hex_or_binary(contents: &[u8]) -> (Zeroizing<Vec<u8>>, Encoding) {
    let mut text = Zeroizing::new(Vec::with_capacity(contents.len()));
    text.extend(
        contents
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace()),
    );
    if !text.is_empty() && text.len() % 2 == 0 {
        let mut bytes = Zeroizing::new(vec![0u8; text.len() / 2]);
        if hex::decode_to_slice(&text[..], &mut bytes[..]).is_ok() {
            return (bytes, Encoding::Hex);
        }
    }
    (Zeroizing::new(contents.to_vec()), Encoding::Binary)
}

/// Read a file, or standard input for `-`: at most [`MAX_INPUT`] bytes,
/// into one buffer allocated up front (so no copy is left behind by a
/// growing buffer) and wiped when dropped.
///
/// # Errors
/// The I/O error, with the path; or the input is longer than
/// [`MAX_INPUT`].
/// A file must be a regular file (a FIFO or device is refused without
/// blocking: pipe it to `-` instead).
pub fn read_input(path: &Path) -> Result<Zeroizing<Vec<u8>>, String> {
    if path == Path::new("-") {
        return read_bounded(std::io::stdin().lock(), "standard input");
    }
    let name = path.display();
    let (file, meta) = files::open(path).map_err(|e| format!("{name}: {e}"))?;
    files::regular_within(&meta, MAX_INPUT as u64).map_err(|e| format!("{name}: {e}"))?;
    read_bounded(file, &name.to_string())
}

/// Read all of `source`, refusing more than [`MAX_INPUT`] bytes.
fn read_bounded(source: impl Read, what: &str) -> Result<Zeroizing<Vec<u8>>, String> {
    // Room for one byte past the bound, so the buffer never grows (a grown
    // buffer would leave a copy behind that nothing wipes).
    let mut buf = Zeroizing::new(Vec::with_capacity(MAX_INPUT + 1));
    files::read_at_most(source, MAX_INPUT as u64, &mut buf).map_err(|e| format!("{what}: {e}"))?;
    Ok(buf)
}

/// Load a private key from file contents.
///
/// Accepted: PEM with the reference's label (`MLKEM768-X25519 PRIVATE KEY`,
/// as `kemsphinx keygen` and the reference write it), or the reference's
/// 1,280-byte encoding (X25519 secret ‖ ML-KEM encapsulation key ‖ d‖z) as
/// binary or hex. The key is validated as
/// [`PrivateKey::from_bytes`] does (stored encapsulation key must match
/// its seed).
///
/// # Errors
/// Why the contents are not a usable key.
pub fn decode_private_key(contents: &[u8]) -> Result<PrivateKey, String> {
    // PEM if a `-----BEGIN` appears anywhere: the library then decides
    // whether the text is acceptable (and says why not).
    if contents.windows(10).any(|w| w == b"-----BEGIN") {
        return PrivateKey::from_pem(contents).map_err(|e| format!("PEM private key refused: {e}"));
    }
    let (bytes, encoding) = hex_or_binary(contents);
    if bytes.len() != PRIVATE_KEY_LEN {
        return Err(format!(
            "not a private key: {} bytes ({encoding:?}), expected {PRIVATE_KEY_LEN} \
             (X25519 secret 32 ‖ ML-KEM encapsulation key 1,184 ‖ seed d‖z 64)",
            bytes.len()
        ));
    }
    PrivateKey::try_from(&bytes[..]).map_err(|e| format!("private key refused: {e}"))
}

/// [`decode_private_key`] of a file's contents.
///
/// # Errors
/// As [`read_input`] and [`decode_private_key`].
pub fn read_private_key(path: &Path) -> Result<PrivateKey, String> {
    decode_private_key(&read_input(path)?).map_err(|e| format!("{}: {e}", path.display()))
}
