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
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::bytes::{split_mut, sub, sub_mut};
use crate::commands::{Commands, Expect, NodeId, Plan, RecipientId, SurbId};
use crate::error::{Error, Input, array_mut, array_ref};
use crate::geometry::{
    COMMANDS_LEN, ENCRYPTED_PAYLOAD_LEN, ENCRYPTED_REPLY_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN,
    MAC_LEN, PACKET_LEN, PAYLOAD_LEN, PAYLOAD_TAG_LEN, PER_HOP_ROUTING_LEN, REPLAY_TAG_LEN,
    ROUTING_INFO_LEN, VERSION_LEN, offset,
};
use crate::header::{self, Path, PathSecrets};
use crate::hop::{self, HeaderStream, HopKeys};
use crate::kem::{Ciphertext, PrivateKey};

/// The only version this format has.
const VERSION: [u8; VERSION_LEN] = [0, 0];

/// The SHA-512/256 of a packet's KEM ciphertext. Equal tags mean a replayed
/// packet; a mix keeps the tags it has seen and drops repeats.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplayTag(pub [u8; REPLAY_TAG_LEN]);

impl core::fmt::Debug for ReplayTag {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ReplayTag(")?;
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

/// A packet's replay tag, from its bytes alone: one hash, no key, no KEM.
#[must_use]
pub fn replay_tag(packet: &[u8; PACKET_LEN]) -> ReplayTag {
    ReplayTag(hop::replay_tag(kem_ciphertext(packet)))
}

impl ReplayTag {
    /// The replay tag of a KEM ciphertext (what [`replay_tag`] hashes).
    #[must_use]
    pub fn of_ciphertext(kem_ciphertext: &Ciphertext) -> Self {
        Self(hop::replay_tag(kem_ciphertext))
    }
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
    header::check_commands(path, Expect::Deliver)?;
    let secrets = header::encapsulate_path(rng, path)?;
    seal(path, &secrets, payload, out)
}

/// [`create_packet`] from known encapsulations instead of fresh ones.
///
/// For conformance tests only: it recreates a packet from the KEM
/// ciphertexts and shared secrets recovered at each hop. Reusing
/// encapsulations across packets destroys unlinkability.
///
/// # Errors
/// As [`create_packet`].
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub fn create_packet_from_encapsulations(
    path: &Path<'_>,
    encapsulations: &[(Ciphertext, [u8; crate::geometry::SHARED_SECRET_LEN]);
         crate::geometry::HOPS],
    payload: &[u8; PAYLOAD_LEN],
    out: &mut [u8; PACKET_LEN],
) -> Result<(), Error> {
    header::check_commands(path, Expect::Deliver)?;
    let secrets = encapsulations
        .each_ref()
        .map(|(ct, ss)| header::HopSecret::from_parts(ct, ss));
    seal(path, &secrets, payload, out)
}

/// A packet whose commands areas are given raw, for **negative test
/// vectors only**.
///
/// Like [`create_packet_from_encapsulations`], except that every hop with
/// `Some(area)` in `raw_areas` gets those 82 bytes verbatim as its commands
/// area: no command is checked, no `next_node_hop` is added, and that hop's
/// [`Hop::commands`](crate::Hop::commands) are ignored. Hops with `None` are
/// created as usual. The header MAC of every hop is valid, so the packet
/// reaches each raw hop and is refused there by the command parser: this is
/// how vectors for unknown ids, truncated bodies, bytes after null and
/// repeated commands are made. [`create_packet`] can never produce such a
/// packet, and nothing else should.
///
/// # Errors
/// [`Error::Command`] if a hop without a raw area has commands that cannot
/// be created; `out` is then untouched.
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub fn create_packet_with_raw_command_areas(
    path: &Path<'_>,
    encapsulations: &[(Ciphertext, [u8; crate::geometry::SHARED_SECRET_LEN]);
         crate::geometry::HOPS],
    raw_areas: &[Option<[u8; COMMANDS_LEN]>; crate::geometry::HOPS],
    payload: &[u8; PAYLOAD_LEN],
    out: &mut [u8; PACKET_LEN],
) -> Result<(), Error> {
    let secrets = encapsulations
        .each_ref()
        .map(|(ct, ss)| header::HopSecret::from_parts(ct, ss));
    let mut head = [0u8; HEADER_LEN];
    header::build_with_raw_areas(path, &secrets, raw_areas, &mut head)?;
    let (out_head, body) = split_mut::<HEADER_LEN, ENCRYPTED_PAYLOAD_LEN, PACKET_LEN>(out);
    *out_head = head;
    encrypt_payload(&secrets, payload, body);
    Ok(())
}

/// Header and layered payload encryption, once the secrets are known.
fn seal(
    path: &Path<'_>,
    secrets: &PathSecrets,
    payload: &[u8; PAYLOAD_LEN],
    out: &mut [u8; PACKET_LEN],
) -> Result<(), Error> {
    let (head, body) = split_mut::<HEADER_LEN, ENCRYPTED_PAYLOAD_LEN, PACKET_LEN>(out);
    header::build(path, secrets, Expect::Deliver, head)?;
    encrypt_payload(secrets, payload, body);
    Ok(())
}

/// `body = 0^32 ‖ payload`, then every hop's SPRP layer, the last hop's
/// innermost (SPEC.md §5.2).
fn encrypt_payload(
    secrets: &PathSecrets,
    payload: &[u8; PAYLOAD_LEN],
    body: &mut [u8; ENCRYPTED_PAYLOAD_LEN],
) {
    let (tag, text) = split_mut::<PAYLOAD_TAG_LEN, PAYLOAD_LEN, ENCRYPTED_PAYLOAD_LEN>(body);
    tag.fill(0);
    *text = *payload;
    for secret in secrets.iter().rev() {
        secret.keys.sprp().encipher(secret.keys.iv(), body);
    }
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
    let (replay_tag, keys) = authenticate(key, packet)?;
    let (commands, block, mut stream) = read_block(&keys, packet)?;
    let action = match commands.action()? {
        Plan::Forward { id, mac } => {
            let next_ct = sub::<COMMANDS_LEN, KEM_CIPHERTEXT_LEN, PER_HOP_ROUTING_LEN>(&block);
            shift_header(packet, &mut stream, next_ct, &mac);
            decrypt_payload(&keys, packet);
            Action::Forward {
                next_hop: id,
                delay: commands.delay(),
            }
        }
        Plan::Deliver { recipient } => Action::Deliver {
            recipient,
            payload: open_payload(&keys, packet)?,
        },
        Plan::Reply { recipient, surb_id } => Action::SurbReply {
            recipient,
            surb_id,
            encrypted_reply: decrypt_payload(&keys, packet),
        },
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
    key: &PrivateKey,
    packet: &[u8; PACKET_LEN],
) -> Result<(ReplayTag, HopKeys), Error> {
    if *sub::<0, VERSION_LEN, PACKET_LEN>(packet) != VERSION {
        return Err(Error::Version);
    }
    let replay_tag = replay_tag(packet);
    let ss = key.decapsulate(kem_ciphertext(packet))?;
    let keys = HopKeys::derive(ss.as_bytes());
    let authenticated = sub::<0, { offset::MAC }, PACKET_LEN>(packet);
    let mac = sub::<{ offset::MAC }, MAC_LEN, PACKET_LEN>(packet);
    if !keys.verify_mac(authenticated, mac) {
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
    let mut block =
        Zeroizing::new(*sub::<{ offset::ROUTING }, PER_HOP_ROUTING_LEN, PACKET_LEN>(packet));
    let mut stream = keys.stream_at(0);
    stream.apply_keystream(&mut block[..]);
    let commands = Commands::parse(sub::<0, COMMANDS_LEN, PER_HOP_ROUTING_LEN>(&block))?;
    Ok((commands, block, stream))
}

/// The KEM ciphertext of a packet.
fn kem_ciphertext(packet: &[u8; PACKET_LEN]) -> &Ciphertext {
    sub::<{ offset::KEM_CT }, KEM_CIPHERTEXT_LEN, PACKET_LEN>(packet)
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
    let routing = sub_mut::<{ offset::ROUTING }, ROUTING_INFO_LEN, PACKET_LEN>(packet);
    routing.copy_within(PER_HOP_ROUTING_LEN.., 0);
    let tail = ROUTING_INFO_LEN - PER_HOP_ROUTING_LEN;
    routing.get_mut(tail..).unwrap_or_default().fill(0);
    stream.apply_keystream(routing);
    *sub_mut::<{ offset::KEM_CT }, KEM_CIPHERTEXT_LEN, PACKET_LEN>(packet) = *next_ct;
    *sub_mut::<{ offset::MAC }, MAC_LEN, PACKET_LEN>(packet) = *next_mac;
}

/// Remove this hop's layer of the payload, in place.
fn decrypt_payload<'a>(
    keys: &HopKeys,
    packet: &'a mut [u8; PACKET_LEN],
) -> &'a [u8; ENCRYPTED_PAYLOAD_LEN] {
    let body = sub_mut::<{ offset::PAYLOAD }, ENCRYPTED_PAYLOAD_LEN, PACKET_LEN>(packet);
    keys.sprp().decipher(keys.iv(), body);
    body
}

/// Remove the last layer and check the zero tag; on a bad tag, put the
/// layer back so the buffer is unchanged.
fn open_payload<'a>(
    keys: &HopKeys,
    packet: &'a mut [u8; PACKET_LEN],
) -> Result<&'a [u8; PAYLOAD_LEN], Error> {
    let body = sub_mut::<{ offset::PAYLOAD }, ENCRYPTED_PAYLOAD_LEN, PACKET_LEN>(packet);
    let sprp = keys.sprp();
    sprp.decipher(keys.iv(), body);
    let tag = sub::<0, PAYLOAD_TAG_LEN, ENCRYPTED_PAYLOAD_LEN>(body);
    if !bool::from(tag.ct_eq(&[0u8; PAYLOAD_TAG_LEN])) {
        sprp.encipher(keys.iv(), body);
        return Err(Error::PayloadTag);
    }
    Ok(sub::<PAYLOAD_TAG_LEN, PAYLOAD_LEN, ENCRYPTED_PAYLOAD_LEN>(
        body,
    ))
}
