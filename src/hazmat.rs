//! Entry points for conformance tools and fuzzers, and nothing else
//! (feature `hazmat`, never on by default).
//!
//! Everything here either takes randomness or intermediate secrets from the
//! caller, or skips a check the packet API makes: reusing an encapsulation
//! links packets, reusing KEM randomness breaks the KEM, and a raw commands
//! area makes packets no honest hop accepts. A mix node or a client has no
//! use for any of it; the C library is built without it, and CI checks its
//! symbols.

use rand_core::CryptoRng;
use zeroize::Zeroizing;

use crate::commands;
use crate::commands::Terminal;
use crate::error::{CommandError, Error};
use crate::geometry::layout::internal::kdf;
use crate::geometry::{
    COMMANDS_LEN, HOPS, MAC_LEN, MLKEM_CT_LEN, PACKET_LEN, PAYLOAD_LEN, SHARED_SECRET_LEN,
    SPRP_IV_LEN, SPRP_KEY_BLOCK_LEN, STREAM_KEY_LEN, X25519_LEN,
};
use crate::header::{Areas, HopSecret, Path, PathSecrets};
use crate::kem::{PrivateKey, PublicKey};
use crate::{Command, Commands, ReplayTag, Surb, SurbKeys, Unwrapped, hop, packet, surb};

pub use crate::geometry::layout::internal::kdf as kdf_layout;
pub use crate::kem::differential as kem_backends;
pub use crate::kem::{Ciphertext as KemCiphertext, DebugIntermediates, SharedSecret};

/// One hop's known encapsulation: its KEM ciphertext and shared secret.
pub type Encapsulation = (KemCiphertext, [u8; SHARED_SECRET_LEN]);

/// Encapsulate a fresh secret to `key`.
///
/// # Errors
/// [`Error::Kem`] only if the X25519 exchange is non-contributory, which a
/// validated key cannot cause.
pub fn encapsulate<R: CryptoRng + ?Sized>(
    key: &PublicKey,
    rng: &mut R,
) -> Result<(KemCiphertext, SharedSecret), Error> {
    key.encapsulate(rng)
}

/// Encapsulate with explicit randomness: the X25519 ephemeral secret and
/// the ML-KEM message `m`. Reusing either breaks the KEM.
///
/// # Errors
/// As [`encapsulate`].
pub fn encapsulate_deterministic(
    key: &PublicKey,
    x25519_ephemeral: &[u8; 32],
    mlkem_m: &[u8; 32],
) -> Result<(KemCiphertext, SharedSecret), Error> {
    key.encapsulate_deterministic(x25519_ephemeral, mlkem_m)
}

/// Decapsulate a KEM ciphertext.
///
/// # Errors
/// [`Error::Kem`] if its X25519 half is a point of small order.
pub fn decapsulate(key: &PrivateKey, ciphertext: &KemCiphertext) -> Result<SharedSecret, Error> {
    key.decapsulate(ciphertext)
}

/// Decapsulate and return every intermediate secret.
///
/// # Errors
/// As [`decapsulate`].
pub fn debug_decapsulate(
    key: &PrivateKey,
    ciphertext: &KemCiphertext,
) -> Result<DebugIntermediates, Error> {
    crate::kem::debug_decapsulate(key, ciphertext)
}

/// The 160 bytes of per-hop key material for a shared secret; split them
/// with [`kdf_layout`].
#[must_use]
pub fn kdf(shared_secret: &[u8; SHARED_SECRET_LEN]) -> Zeroizing<[u8; kdf::OUTPUT_LEN]> {
    hop::hkdf_expand(shared_secret)
}

/// The header keystream for `key` and `iv`, written over `out`.
pub fn keystream(key: &[u8; STREAM_KEY_LEN], iv: &[u8; SPRP_IV_LEN], out: &mut [u8]) {
    use ctr::cipher::{KeyIvInit, StreamCipher};
    out.fill(0);
    hop::HeaderStream::new(key.into(), iv.into()).apply_keystream(out);
}

/// The XOF length [`blake2xb`] takes for "unknown in advance" (BLAKE2X's
/// all-ones; Go's `blake2b.NewXOF` writes its size 0 as this).
pub const BLAKE2XB_LENGTH_UNKNOWN: u32 = crate::kem::blake2::XOF_LENGTH_UNKNOWN;

/// BLAKE2Xb(`key`, `msg`) declared with `xof_len` output bytes, written
/// over `out`: the XOF the X25519 adapter and key derivation use (SPEC.md
/// §2.1), every output node, where the KEM itself reads only the first.
/// `false`, with `out` unchanged, if `key` is longer than 64 bytes or `out`
/// longer than `xof_len` allows.
#[must_use]
pub fn blake2xb(key: &[u8], msg: &[u8], xof_len: u32, out: &mut [u8]) -> bool {
    crate::kem::blake2::blake2xb(key, msg, xof_len, out)
}

/// Keyed BLAKE2b-256 (`key` empty for unkeyed): the split-PRF combiner's
/// hash (SPEC.md §2.3). `None` if `key` is longer than 64 bytes.
#[must_use]
pub fn blake2b_256(key: &[u8], msg: &[u8]) -> Option<[u8; 32]> {
    (key.len() <= 64).then(|| *crate::kem::blake2::keyed_blake2b_256(key, &[msg]))
}

/// HPQC's "splitprf-v1" combiner alone (SPEC.md §2.3): the hybrid shared
/// secret of both components' shared secrets and ciphertexts, whatever
/// produced them (so HPQC's vectors built on another X25519 adapter check
/// it too).
#[must_use]
pub fn split_prf(
    ss_x25519: &[u8; SHARED_SECRET_LEN],
    ct_x25519: &[u8; X25519_LEN],
    ss_mlkem: &[u8; SHARED_SECRET_LEN],
    ct_mlkem: &[u8; MLKEM_CT_LEN],
) -> Zeroizing<[u8; SHARED_SECRET_LEN]> {
    crate::kem::combiner::combine(ss_x25519, ct_x25519, ss_mlkem, ct_mlkem).0
}

/// HMAC-SHA256 of `msg` under a header MAC key.
#[must_use]
pub fn mac(key: &[u8; MAC_LEN], msg: &[u8]) -> [u8; MAC_LEN] {
    hop::mac(key, msg)
}

/// The replay tag of a KEM ciphertext (what [`replay_tag`](crate::replay_tag)
/// hashes in a packet).
#[must_use]
pub fn replay_tag_of(ciphertext: &KemCiphertext) -> ReplayTag {
    ReplayTag(hop::replay_tag(ciphertext))
}

/// [`unwrap`](crate::unwrap) with the hop's KEM shared secret given instead
/// of decapsulated: every layer after the KEM (version, replay tag, KDF,
/// MAC, stream, commands, shift, payload), at the speed of symmetric
/// crypto, for fuzzing them. Same results, same unchanged buffer on error.
///
/// # Errors
/// As [`unwrap`](crate::unwrap), except [`Error::Kem`].
pub fn unwrap_with_shared_secret<'a>(
    shared_secret: &[u8; SHARED_SECRET_LEN],
    packet: &'a mut [u8; PACKET_LEN],
) -> Result<Unwrapped<'a>, Error> {
    packet::unwrap_with(packet, |_| Ok(hop::HopKeys::derive(shared_secret)))
}

/// A command's wire encoding, exactly as long as the command.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct EncodedCommand(commands::Encoded);

impl EncodedCommand {
    /// The id byte and body.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// Encode one command.
#[must_use]
pub fn encode_command(command: &Command) -> EncodedCommand {
    EncodedCommand(command.encode())
}

/// Read one command from the front of `bytes`: the command and the rest,
/// or `None` at an empty input or a null byte followed only by zeros.
///
/// # Errors
/// [`CommandError::UnknownId`], [`CommandError::Truncated`] or
/// [`CommandError::TrailingData`].
pub fn parse_command(bytes: &[u8]) -> Result<Option<(Command, &[u8])>, CommandError> {
    Command::read(bytes)
}

/// Parse an 82-byte commands area as a hop does.
///
/// # Errors
/// Any [`CommandError`] of parsing.
pub fn parse_commands(area: &[u8; COMMANDS_LEN]) -> Result<Commands, CommandError> {
    Commands::parse(area)
}

/// The secrets of a path from known encapsulations.
fn secrets(encapsulations: &[Encapsulation; HOPS]) -> PathSecrets {
    encapsulations
        .each_ref()
        .map(|(ct, ss)| HopSecret::from_parts(ct, ss))
}

/// [`create_packet`](crate::create_packet) from known encapsulations, to
/// recreate a packet from the ones its hops recover.
///
/// # Errors
/// As [`create_packet`](crate::create_packet).
pub fn create_packet_from_encapsulations(
    path: &Path<'_>,
    encapsulations: &[Encapsulation; HOPS],
    payload: &[u8; PAYLOAD_LEN],
    out: &mut [u8; PACKET_LEN],
) -> Result<(), Error> {
    let areas = Areas::new(path, Terminal::Deliver)?;
    packet::seal(&areas, &secrets(encapsulations), payload, out);
    Ok(())
}

/// [`create_surb`](crate::create_surb) from known encapsulations and reply
/// key block.
///
/// # Errors
/// As [`create_surb`](crate::create_surb).
pub fn create_surb_from_encapsulations(
    path: &Path<'_>,
    encapsulations: &[Encapsulation; HOPS],
    reply_key: &[u8; SPRP_KEY_BLOCK_LEN],
) -> Result<(Surb, SurbKeys), Error> {
    let areas = Areas::new(path, Terminal::Reply)?;
    Ok(surb::assemble(
        path,
        &areas,
        &secrets(encapsulations),
        reply_key,
    ))
}

/// A forward packet whose hops with `Some(area)` get those 82 bytes
/// verbatim as their commands area: no command checked, no `next_node_hop`
/// added, that hop's [`Hop::commands`](crate::Hop::commands) ignored. Every
/// hop's MAC is valid, so the packet reaches each raw hop and is refused
/// there by the parser: this is how vectors for unknown ids, truncated
/// bodies, bytes after null and repeated commands are made.
///
/// # Errors
/// As [`create_packet`](crate::create_packet), for the hops without a raw
/// area; `out` is then untouched.
pub fn create_packet_with_raw_command_areas(
    path: &Path<'_>,
    encapsulations: &[Encapsulation; HOPS],
    raw_areas: &[Option<[u8; COMMANDS_LEN]>; HOPS],
    payload: &[u8; PAYLOAD_LEN],
    out: &mut [u8; PACKET_LEN],
) -> Result<(), Error> {
    let areas = Areas::with_raw(path, raw_areas)?;
    packet::seal(&areas, &secrets(encapsulations), payload, out);
    Ok(())
}
