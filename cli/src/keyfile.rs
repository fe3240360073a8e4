//! Reading keys and packets from files: binary, or hex text.
//!
//! Private keys are read in one place, [`decode_private_key`], so that
//! other encodings plug in there: today the raw 1,280-byte encoding
//! (binary or hex); PEM (another workstream) is recognised and refused
//! with a clear message until it is added as one more arm.

use std::path::Path;

use kemsphinx::PrivateKey;
use kemsphinx::geometry::PRIVATE_KEY_LEN;

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
/// that happens to be entirely hex digits is vanishingly unlikely.
#[must_use]
pub fn hex_or_binary(contents: &[u8]) -> (Vec<u8>, Encoding) {
    let text: Vec<u8> = contents
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    match hex::decode(&text) {
        Ok(bytes) if !text.is_empty() => (bytes, Encoding::Hex),
        _ => (contents.to_vec(), Encoding::Binary),
    }
}

/// Read a file, or standard input for `-`.
///
/// # Errors
/// The I/O error, with the path.
pub fn read_input(path: &str) -> Result<Vec<u8>, String> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .map_err(|e| format!("standard input: {e}"))?;
        return Ok(buf);
    }
    std::fs::read(Path::new(path)).map_err(|e| format!("{path}: {e}"))
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
    if contents.trim_ascii_start().starts_with(b"-----BEGIN") {
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
pub fn read_private_key(path: &str) -> Result<PrivateKey, String> {
    decode_private_key(&read_input(path)?).map_err(|e| format!("{path}: {e}"))
}
