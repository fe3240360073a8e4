//! The one error type of the crate (SPEC.md §7).
//!
//! Every failure is a variant of [`Error`]. Errors carry only static context
//! (never secret bytes), are `Copy`, and are cheap to match on in a mix's hot
//! path. Whatever the error, the caller's buffers are left byte-for-byte as
//! they were.

/// Which input a [`Error::Length`] is about.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    /// A 16,150-byte packet.
    Packet,
    /// A 6,058-byte SURB.
    Surb,
    /// The 320-byte SURB decryption keys.
    SurbKeys,
    /// A 10,156-byte payload.
    Payload,
    /// A 10,188-byte encrypted reply.
    EncryptedReply,
    /// A 1,216-byte public key.
    PublicKey,
    /// A 1,280-byte private key.
    PrivateKey,
    /// A 32-byte node id.
    NodeId,
    /// A 32-byte recipient id.
    RecipientId,
    /// A 16-byte SURB id.
    SurbId,
    /// A 32-byte replay tag.
    ReplayTag,
}

impl core::fmt::Display for Input {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Packet => "packet",
            Self::Surb => "SURB",
            Self::SurbKeys => "SURB keys",
            Self::Payload => "payload",
            Self::EncryptedReply => "encrypted reply",
            Self::PublicKey => "public key",
            Self::PrivateKey => "private key",
            Self::NodeId => "node id",
            Self::RecipientId => "recipient id",
            Self::SurbId => "SURB id",
            Self::ReplayTag => "replay tag",
        })
    }
}

/// Why a commands area was refused (SPEC.md §4).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum CommandError {
    /// A command id that the format does not define.
    #[error("unknown command id {0:#04x}")]
    UnknownId(u8),
    /// A command whose body runs past the end of the 82-byte area.
    #[error("command body truncated by the end of the area")]
    Truncated,
    /// A non-zero byte after the null terminator.
    #[error("non-zero byte after the null command")]
    TrailingData,
    /// The same command twice in one hop.
    #[error("command repeated in one hop")]
    Duplicate,
    /// Commands that do not name one action: forward (next hop), deliver
    /// (recipient) or SURB reply (recipient and SURB id).
    #[error("commands do not describe one action")]
    NoAction,
    /// At creation: the commands do not fit the 82-byte area.
    #[error("commands longer than the 82-byte area")]
    TooLong,
    /// At creation: `next_node_hop` is the creator's to add, not the caller's.
    #[error("next_node_hop is added by the creator")]
    ReservedCommand,
    /// At creation: a forward packet must end in a delivery, a SURB in a reply.
    #[error("terminal hop has the wrong action for this kind of packet")]
    WrongTerminalAction,
}

/// Why a key was refused.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum KeyError {
    /// The ML-KEM-768 encapsulation key fails the FIPS 203 modulus check.
    #[error("ML-KEM encapsulation key is not canonical")]
    MlKemEncapsulationKey,
    /// The encapsulation key stored in a private key is not the one its seed
    /// derives.
    #[error("private key's stored encapsulation key does not match its seed")]
    Inconsistent,
    /// The X25519 public key is a point of small order.
    #[error("X25519 public key has small order")]
    X25519LowOrder,
    /// A loaded private key is not the one behind the public key the node
    /// published ([`PrivateKey::check_public_key`](crate::PrivateKey::check_public_key)):
    /// usually a damaged key file whose X25519 half still loads.
    #[error("private key does not match the published public key")]
    NotPublished,
}

/// Why PEM text was refused (by the `pem` module, with the `pem` feature).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum PemError {
    /// Not one PEM block: no `-----BEGIN …-----` line, or the text does not
    /// end with the matching `-----END …-----` line.
    #[error("not a single PEM block")]
    Malformed,
    /// The text between the boundaries is not base64 wrapped at 64
    /// characters, as the reference writes it (headers land here too).
    #[error("PEM body is not base64 in 64-character lines")]
    Base64,
    /// A well-formed block with another label: usually a public key where a
    /// private key was expected (or the reverse), or another scheme's key.
    #[error("PEM label is not \"{expected}\"")]
    Label {
        /// The label this key type is stored under.
        expected: &'static str,
    },
}

/// Everything that can go wrong, in one `#[non_exhaustive]` enum.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Error {
    /// An input had the wrong length.
    #[error("{input}: expected {expected} bytes, got {got}")]
    Length {
        /// What the input was meant to be.
        input: Input,
        /// The one length it must have.
        expected: usize,
        /// The length it had.
        got: usize,
    },
    /// The header's version bytes are not `00 00`.
    #[error("unsupported header version")]
    Version,
    /// Decapsulation refused the KEM ciphertext (a small-order X25519 point).
    #[error("KEM decapsulation failed")]
    Kem,
    /// The header MAC did not verify: not for this hop, or corrupted.
    #[error("header MAC mismatch")]
    Mac,
    /// The routing commands are malformed or cannot be created.
    #[error("routing commands: {0}")]
    Command(CommandError),
    /// The payload's 32-byte tag is not all zero after decryption.
    #[error("payload tag mismatch")]
    PayloadTag,
    /// A key failed validation.
    #[error("invalid key: {0}")]
    Key(KeyError),
    /// PEM text was refused before its bytes were looked at as a key (a
    /// wrong length is [`Error::Length`], a bad key [`Error::Key`]).
    #[error("PEM: {0}")]
    Pem(PemError),
}

impl From<CommandError> for Error {
    fn from(e: CommandError) -> Self {
        Self::Command(e)
    }
}

impl From<PemError> for Error {
    fn from(e: PemError) -> Self {
        Self::Pem(e)
    }
}

impl From<KeyError> for Error {
    fn from(e: KeyError) -> Self {
        Self::Key(e)
    }
}

/// Borrow a slice as an array of exactly `N` bytes, or say what was wrong.
pub(crate) fn array_ref<const N: usize>(input: Input, bytes: &[u8]) -> Result<&[u8; N], Error> {
    bytes.try_into().map_err(|_| Error::Length {
        input,
        expected: N,
        got: bytes.len(),
    })
}

/// Mutable counterpart of [`array_ref`].
pub(crate) fn array_mut<const N: usize>(
    input: Input,
    bytes: &mut [u8],
) -> Result<&mut [u8; N], Error> {
    let got = bytes.len();
    bytes.try_into().map_err(|_| Error::Length {
        input,
        expected: N,
        got,
    })
}
