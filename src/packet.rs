//! Forward packets: creating one, and unwrapping one at a hop (SPEC.md §5,
//! §6).
//!
//! Unwrapping works in place on the caller's 16,150-byte buffer. Every check
//! that can fail (version, KEM, MAC, commands) runs before the buffer is
//! touched; the one check that needs the decrypted payload (the terminal
//! hop's zero tag) undoes its decryption when it fails. So on every error
//! the buffer is exactly what the network delivered.

use ctr::cipher::StreamCipher;
use rand_core::CryptoRng;
use zeroize::Zeroizing;

use crate::bytes::{field, field_mut, split_mut, sub_mut};
use crate::commands::{Commands, NodeId, RecipientId, Route, SurbId, Terminal};
use crate::error::{Error, Input, array_mut, array_ref};
use crate::geometry::layout::{block, internal, packet as at};
use crate::geometry::{
    ENCRYPTED_REPLY_LEN, HEADER_LEN, MAC_LEN, PACKET_LEN, PAYLOAD_LEN, PER_HOP_ROUTING_LEN,
    REPLAY_TAG_LEN, ROUTING_INFO_LEN,
};
use crate::header::{self, Areas, Path, PathSecrets};
use crate::hop::{self, HeaderStream, HopKeys};
use crate::kem::{Ciphertext, PrivateKey};
use crate::payload::{self, Body};

crate::commands::identifier!(
    /// The SHA-512/256 of a packet's KEM ciphertext. Equal tags mean a
    /// replayed packet; a mix keeps the tags it has seen and drops repeats.
    /// The same conversions as [`NodeId`](crate::NodeId): from and as its
    /// 32 bytes, and from a slice of exactly 32 bytes.
    ReplayTag,
    REPLAY_TAG_LEN,
    Input::ReplayTag
);

/// A packet's replay tag, from its bytes alone: one hash, no key, no KEM.
#[must_use]
pub fn replay_tag(packet: &[u8; PACKET_LEN]) -> ReplayTag {
    ReplayTag(hop::replay_tag(kem_ciphertext(packet)))
}

/// View a received buffer as a packet, refusing any other length.
///
/// # Errors
/// [`Error::Length`] naming [`Input::Packet`].
pub fn packet_mut(bytes: &mut [u8]) -> Result<&mut [u8; PACKET_LEN], Error> {
    array_mut(Input::Packet, bytes)
}

/// View a slice as a payload, refusing any other length.
///
/// # Errors
/// [`Error::Length`] naming [`Input::Payload`].
pub fn payload_ref(bytes: &[u8]) -> Result<&[u8; PAYLOAD_LEN], Error> {
    array_ref(Input::Payload, bytes)
}

/// Create a forward packet over `path` carrying `payload`, into `out`.
///
/// `rng` supplies every random byte (the KEM encapsulations). `out` is
/// written only when creation succeeds.
///
/// # Errors
/// [`Error::Command`] if a hop's commands cannot be created (see
/// [`Hop::commands`](crate::Hop::commands)); `out` is then untouched.
pub fn create_packet<R: CryptoRng + ?Sized>(
    rng: &mut R,
    path: &Path<'_>,
    payload: &[u8; PAYLOAD_LEN],
    out: &mut [u8; PACKET_LEN],
) -> Result<(), Error> {
    let areas = Areas::new(path, Terminal::Deliver)?;
    let secrets = header::encapsulate_path(rng, path)?;
    seal(&areas, &secrets, payload, out);
    Ok(())
}

/// Header and layered payload, once the areas and secrets are known.
pub(crate) fn seal(
    areas: &Areas,
    secrets: &PathSecrets,
    payload: &[u8; PAYLOAD_LEN],
    out: &mut [u8; PACKET_LEN],
) {
    let (head, body) = split_mut::<HEADER_LEN, { at::PAYLOAD.end - at::PAYLOAD.start }, _>(out);
    header::build(areas, secrets, head);
    // The terminal hop's layer is the innermost.
    payload::seal(payload, secrets.iter().rev().map(|s| s.keys.layer()), body);
}

/// What a hop must do with a packet it unwrapped.
///
/// Deliberately exhaustive: the format is fixed, and a mix should be made
/// by the compiler to handle every action. Its `Debug` shows ids and
/// lengths, never payload bytes, so it is safe to log.
pub enum Action<'a> {
    /// Send the buffer, now the outgoing packet, to `next_hop` after
    /// `delay` milliseconds (if the hop was given a delay).
    Forward {
        /// Where to send the packet.
        next_hop: NodeId,
        /// The `node_delay` command, if present.
        delay: Option<u32>,
    },
    /// Deliver `payload` to `recipient`: the packet ends here.
    Deliver {
        /// The recipient named by the sender.
        recipient: RecipientId,
        /// The sender's payload (the tag verified).
        payload: &'a [u8; PAYLOAD_LEN],
    },
    /// Deliver a reply sent on a SURB to `recipient`. Only the SURB's
    /// creator can decrypt and check it.
    SurbReply {
        /// The recipient (the SURB's creator) named in the SURB.
        recipient: RecipientId,
        /// Which SURB this answers.
        surb_id: SurbId,
        /// The still-encrypted reply for [`SurbKeys::decrypt_reply`](crate::SurbKeys::decrypt_reply).
        encrypted_reply: &'a [u8; ENCRYPTED_REPLY_LEN],
    },
}

impl core::fmt::Debug for Action<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Forward { next_hop, delay } => f
                .debug_struct("Forward")
                .field("next_hop", next_hop)
                .field("delay", delay)
                .finish(),
            Self::Deliver { recipient, payload } => f
                .debug_struct("Deliver")
                .field("recipient", recipient)
                .field("payload_len", &payload.len())
                .finish_non_exhaustive(),
            Self::SurbReply {
                recipient,
                surb_id,
                encrypted_reply,
            } => f
                .debug_struct("SurbReply")
                .field("recipient", recipient)
                .field("surb_id", surb_id)
                .field("encrypted_reply_len", &encrypted_reply.len())
                .finish_non_exhaustive(),
        }
    }
}

/// The result of unwrapping one hop (its `Debug` never shows payload bytes).
#[derive(Debug)]
pub struct Unwrapped<'a> {
    /// The packet's replay tag (as [`replay_tag`] computes it).
    pub replay_tag: ReplayTag,
    /// Every command this hop was given, in wire order.
    pub commands: Commands,
    /// What to do next.
    pub action: Action<'a>,
}

/// Unwrap one layer of `packet` with this hop's key, in place.
///
/// On success the buffer holds the outgoing packet ([`Action::Forward`]) or
/// the decrypted payload that the result borrows. On any error it is
/// unchanged.
///
/// # Errors
/// [`Error::Version`], [`Error::Kem`], [`Error::Mac`], [`Error::Command`]
/// or, at a delivering hop, [`Error::PayloadTag`].
pub fn unwrap<'a>(
    key: &PrivateKey,
    packet: &'a mut [u8; PACKET_LEN],
) -> Result<Unwrapped<'a>, Error> {
    unwrap_with(packet, |ct| {
        key.decapsulate(ct).map(|ss| HopKeys::derive(ss.as_bytes()))
    })
}

/// [`unwrap`] with the hop's keys from `keys_for` (the decapsulation of the
/// KEM ciphertext, or, for fuzzing the layers after the KEM, a given
/// shared secret).
pub(crate) fn unwrap_with<'a>(
    packet: &'a mut [u8; PACKET_LEN],
    keys_for: impl FnOnce(&Ciphertext) -> Result<HopKeys, Error>,
) -> Result<Unwrapped<'a>, Error> {
    let (replay_tag, keys) = authenticate(packet, keys_for)?;
    unwrap_authenticated(packet, replay_tag, &keys)
}

/// [`unwrap`] under whichever of `keys` the packet was built for, tried in
/// order; returns that key's position with the result. A node with more
/// than one live key (the current epoch's and, during its grace, the
/// previous one's) calls this: a key the packet was not built for fails on
/// the header MAC before the buffer is touched, so the next key sees the
/// packet as it arrived. Errors that do not depend on the key (the version,
/// a refused KEM ciphertext) end the trial at once.
///
/// # Errors
/// As [`unwrap`]; [`Error::Mac`] when no key's MAC verified (or `keys` is
/// empty).
pub fn unwrap_any<'a, 'k>(
    keys: impl IntoIterator<Item = &'k PrivateKey>,
    packet: &'a mut [u8; PACKET_LEN],
) -> Result<(usize, Unwrapped<'a>), Error> {
    for (i, key) in keys.into_iter().enumerate() {
        let derive = |ct: &Ciphertext| key.decapsulate(ct).map(|ss| HopKeys::derive(ss.as_bytes()));
        if let Some((replay_tag, hop_keys)) = try_key(packet, derive)? {
            return unwrap_authenticated(packet, replay_tag, &hop_keys).map(|u| (i, u));
        }
    }
    Err(Error::Mac)
}

/// One key of [`unwrap_any`]'s trial, steps 1–4, without touching the
/// buffer: the replay tag and hop keys when its MAC verifies, `None` when
/// it does not (the next key sees the packet as it arrived), an error that
/// does not depend on the key (the version, a refused KEM ciphertext) to
/// end the trial. When no key verifies, the trial's error is
/// [`Error::Mac`]. [`unwrap_batch`](crate::unwrap_batch) runs the same
/// trial a key at a time over a batch.
pub(crate) fn try_key(
    packet: &[u8; PACKET_LEN],
    derive: impl FnOnce(&Ciphertext) -> Result<HopKeys, Error>,
) -> Result<Option<(ReplayTag, HopKeys)>, Error> {
    match authenticate(packet, derive) {
        Ok(authenticated) => Ok(Some(authenticated)),
        Err(Error::Mac) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Steps 5 on, once the MAC verified: the commands, then the buffer
/// transformed for the action they name.
pub(crate) fn unwrap_authenticated<'a>(
    packet: &'a mut [u8; PACKET_LEN],
    replay_tag: ReplayTag,
    keys: &HopKeys,
) -> Result<Unwrapped<'a>, Error> {
    let (commands, hop_block, mut stream) = read_block(keys, packet)?;
    let action = match commands.route() {
        Route::Forward { next_hop, mac } => {
            let next_ct = field!(&*hop_block, block::NEXT_KEM_CIPHERTEXT);
            shift_header(packet, &mut stream, next_ct, &mac);
            keys.layer().remove(body_mut(packet));
            Action::Forward {
                next_hop,
                delay: commands.delay(),
            }
        }
        Route::Deliver { recipient } => {
            keys.layer().open(body_mut(packet))?;
            Action::Deliver {
                recipient,
                payload: payload::contents(body_mut(packet)),
            }
        }
        Route::Reply { recipient, surb_id } => {
            keys.layer().remove(body_mut(packet));
            Action::SurbReply {
                recipient,
                surb_id,
                encrypted_reply: body_mut(packet),
            }
        }
    };
    Ok(Unwrapped {
        replay_tag,
        commands,
        action,
    })
}

/// Steps 1–4 of unwrapping, none of which touch the buffer: version,
/// replay tag, decapsulation, key derivation and the header MAC.
fn authenticate(
    packet: &[u8; PACKET_LEN],
    keys_for: impl FnOnce(&Ciphertext) -> Result<HopKeys, Error>,
) -> Result<(ReplayTag, HopKeys), Error> {
    if *field!(packet, at::VERSION) != internal::VERSION {
        return Err(Error::Version);
    }
    let replay_tag = replay_tag(packet);
    let keys = keys_for(kem_ciphertext(packet))?;
    if !keys.verify_mac(field!(packet, at::AUTHENTICATED), field!(packet, at::MAC)) {
        return Err(Error::Mac);
    }
    Ok((replay_tag, keys))
}

/// Step 5: decrypt this hop's 1,202-byte block into a scratch copy and
/// parse its commands, still without touching the buffer. Returns the
/// stream positioned after the block, ready to decrypt the rest.
fn read_block(
    keys: &HopKeys,
    packet: &[u8; PACKET_LEN],
) -> Result<(Commands, Zeroizing<[u8; PER_HOP_ROUTING_LEN]>, HeaderStream), Error> {
    let mut hop_block = Zeroizing::new(*field!(packet, at::routing_block(0)));
    let mut stream = keys.stream_at(0);
    stream.apply_keystream(&mut hop_block[..]);
    // Public to this hop: the MAC verified, and `unwrap` returns these
    // commands (or the error their parsing gives) to the caller.
    crate::ct::declassify(field_mut!(&mut *hop_block, block::COMMANDS));
    let commands = Commands::parse(field!(&*hop_block, block::COMMANDS))?;
    Ok((commands, hop_block, stream))
}

/// The KEM ciphertext of a packet.
fn kem_ciphertext(packet: &[u8; PACKET_LEN]) -> &Ciphertext {
    field!(packet, at::KEM_CIPHERTEXT)
}

/// The enciphered payload of a packet.
fn body_mut(packet: &mut [u8; PACKET_LEN]) -> &mut Body {
    field_mut!(packet, at::PAYLOAD)
}

/// Turn the header into the next hop's: its KEM ciphertext, the routing
/// info shifted by one block and decrypted (the stream continues at 1,202),
/// and the MAC the sender put in this hop's commands.
fn shift_header(
    packet: &mut [u8; PACKET_LEN],
    stream: &mut HeaderStream,
    next_ct: &Ciphertext,
    next_mac: &[u8; MAC_LEN],
) {
    const KEPT: usize = ROUTING_INFO_LEN - PER_HOP_ROUTING_LEN;
    let routing = field_mut!(packet, at::ROUTING_INFO);
    routing.copy_within(PER_HOP_ROUTING_LEN.., 0);
    sub_mut::<KEPT, PER_HOP_ROUTING_LEN, ROUTING_INFO_LEN>(routing).fill(0);
    stream.apply_keystream(routing);
    *field_mut!(packet, at::KEM_CIPHERTEXT) = *next_ct;
    *field_mut!(packet, at::MAC) = *next_mac;
}
