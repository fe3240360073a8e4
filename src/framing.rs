//! Katzenpost's framing inside the Sphinx payload: header, SURB, message.
//!
//! What a forward payload's 10,156 bytes mean to the node a packet is
//! delivered to, and how a reply's are laid out.
//!
//! The packet format treats a payload as opaque bytes. Katzenpost does not: the
//! provider (gateway) and service nodes read a forward payload as a small
//! plaintext header, an optional SURB for the answer, and the user message.
//! The SURB slot is always there, whether or not the flags say it holds a
//! SURB, so the message always starts at the same offset and is always
//! 4,096 bytes (the geometry's `UserForwardPayloadLength`):
//!
//! ```text
//! forward payload, 10,156 bytes
//!
//! offset 0       1          2                      6,060               10,156
//!        +-------+----------+----------------------+-------------------+
//!        | flags | reserved | SURB slot            | message slot      |
//!        | 0 / 1 | 0x00     | 6,058 bytes          | 4,096 bytes       |
//!        +-------+----------+----------------------+-------------------+
//!        flags 1: the slot holds the SURB to reply on
//!        flags 0: no SURB; the slot is not read (written as zeros here)
//!        the message is zero-padded to the end of its slot
//! ```
//!
//! A reply sent on a SURB has no header at all: its payload is the answer
//! itself, zero-padded to the full 10,156 bytes, and a SURB-ACK is an
//! all-zero payload:
//!
//! ```text
//! reply payload, 10,156 bytes
//!
//! offset 0                                                       10,156
//!        +-------------------------------------------------------+
//!        | reply message, then zeros                             |
//!        +-------------------------------------------------------+
//! ```
//!
//! Neither layout carries the message's length: the receiver is handed
//! the whole slot, padding included (4,096 bytes of a forward payload,
//! 10,156 of a reply), exactly as Katzenpost hands it to its spool, its
//! services and its client applications. Whatever runs above must delimit
//! its own messages.
//!
//! [`encode`] and [`decode`] are the two ends of a forward payload;
//! [`encode_reply`] builds a reply's. Decoding a reply needs nothing here:
//! [`SurbKeys::decrypt_reply`](crate::SurbKeys::decrypt_reply) already
//! returns the padded message. The reply reaches its client from the last
//! node as the 16-byte SURB id followed by the 10,188-byte encrypted reply
//! (10,204 bytes, Katzenpost's order; `kemsphinx-node`'s `Forwarder` hands
//! them out so): the id says which SURB's keys open the rest.
//!
//! This module is the client's half of the framing as much as a node's: it
//! lives in the packet library (`no_std`, no allocation) so that a client
//! frames a message without compiling a node's replay store;
//! `kemsphinx-node` re-exports it.

use crate::Surb;
use crate::geometry::{PAYLOAD_LEN, SURB_LEN};

/// Length of the plaintext header in front of the SURB slot: one flags
/// byte and one reserved byte.
///
/// Matches Katzenpost's `sphinxPlaintextHeaderLength` (`1 + 1`, package
/// `core/sphinx/geo`), which every geometry carries as
/// `Geometry.SphinxPlaintextHeaderLength`.
pub const PLAINTEXT_HEADER_LEN: usize = 2;

/// Flags value: the SURB slot holds no SURB, so no reply is possible.
///
/// Matches `flagsPadding` (0) in Katzenpost's server-side
/// `ParseForwardPacket`.
pub const FLAG_NO_SURB: u8 = 0;

/// Flags value: the SURB slot holds a SURB for the reply.
///
/// Matches `flagsSURB` (1) in Katzenpost's `ParseForwardPacket`, and the
/// `1` its clients and decoy loops write as the first byte when they
/// attach a SURB.
pub const FLAG_SURB: u8 = 1;

/// The only value the reserved byte may hold.
///
/// Matches `reserved` (0) in Katzenpost's `ParseForwardPacket`, which
/// refuses a payload whose second byte is anything else.
pub const RESERVED: u8 = 0;

/// Offset of the SURB slot: right after the plaintext header.
///
/// As Katzenpost slices it: from `SphinxPlaintextHeaderLength` to
/// `SphinxPlaintextHeaderLength + SURBLength`.
pub const SURB_OFFSET: usize = PLAINTEXT_HEADER_LEN;

/// Offset of the message slot: after the header and the SURB slot (6,060),
/// whether or not a SURB is present.
///
/// Matches Katzenpost's `hdrLength` (`SphinxPlaintextHeaderLength +
/// SURBLength`), from which `ParseForwardPacket` takes the message for
/// both flags values.
pub const MESSAGE_OFFSET: usize = SURB_OFFSET + SURB_LEN;

/// Length of the message slot (4,096): the longest message [`encode`]
/// accepts, with a SURB or without one, and exactly the length [`decode`]
/// hands up.
///
/// Matches Katzenpost's `Geometry.UserForwardPayloadLength` for this
/// geometry, which its `deriveForwardPayloadLength` turns into the
/// 10,156-byte `ForwardPayloadLength` by adding the header and one SURB.
/// There is no longer limit without a SURB: the reference keeps the slot
/// (its parser requires the message to be exactly this long), so the
/// bytes a missing SURB leaves are not the message's to use.
pub const MESSAGE_LEN: usize = PAYLOAD_LEN - MESSAGE_OFFSET;

/// The longest reply message [`encode_reply`] accepts: the whole payload
/// (10,156 bytes), since a reply has no header.
///
/// Matches the bound of Katzenpost's server-side `NewPacketFromSURB`
/// (`ForwardPayloadLength`; an empty reply, the SURB-ACK, is all zeros).
/// Its CBOR service-plugin path is stricter and drops plugin answers
/// longer than `UserForwardPayloadLength` ([`MESSAGE_LEN`]); a node
/// hosting such services may want that bound instead.
pub const MAX_REPLY_LEN: usize = PAYLOAD_LEN;

// The layout tiles the payload exactly, and this is the geometry Katzenpost
// calls a 4 KiB user payload with one SURB. `encode` relies on the first
// (nothing is left unwritten, nothing runs past the end).
const _: () = {
    assert!(PLAINTEXT_HEADER_LEN == 2);
    assert!(MESSAGE_OFFSET == 6_060);
    assert!(MESSAGE_LEN == 4_096);
    assert!(PLAINTEXT_HEADER_LEN + SURB_LEN + MESSAGE_LEN == PAYLOAD_LEN);
};

/// Why a payload could not be framed or unframed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    /// The bytes given to [`decode`] are not one payload long. Never
    /// returned for a `[u8; PAYLOAD_LEN]`; Katzenpost's parser checks the
    /// same ("invalid payload length").
    #[error("payload of {len} bytes, expected {expected}", expected = PAYLOAD_LEN)]
    PayloadLength {
        /// The length given.
        len: usize,
    },
    /// The reserved byte is not zero. Katzenpost refuses the payload
    /// ("invalid message reserved") and checks this before the flags.
    #[error("reserved byte {0:#04x}, expected 0x00")]
    Reserved(u8),
    /// The flags byte is neither [`FLAG_NO_SURB`] nor [`FLAG_SURB`].
    /// Katzenpost refuses the payload ("invalid message flags").
    #[error("unknown flags {0:#04x}")]
    Flags(u8),
    /// The flags announce a SURB but the slot's header version is not
    /// `00 00`, so no reply on it could ever be accepted. Stricter than
    /// Katzenpost, which delivers the message anyway and only loses the
    /// reply, at the reply's first hop.
    #[error("SURB with an unsupported header version")]
    SurbVersion,
    /// A message longer than its slot: [`MESSAGE_LEN`] for [`encode`],
    /// [`MAX_REPLY_LEN`] for [`encode_reply`]. Never truncated.
    #[error("message of {len} bytes, at most {max} fit")]
    MessageTooLong {
        /// The message's length.
        len: usize,
        /// The most that fit.
        max: usize,
    },
}

/// A decoded forward payload: the SURB to answer on, if the sender
/// attached one, and the message slot.
#[non_exhaustive]
#[derive(Debug)]
pub struct Framed<'a> {
    /// The SURB, when the flags are [`FLAG_SURB`]; `None` for
    /// [`FLAG_NO_SURB`]. Owned (and wiped on drop, like every [`Surb`]),
    /// so it can outlive the payload buffer it came from.
    pub surb: Option<Surb>,
    /// The whole 4,096-byte message slot, trailing zero padding included:
    /// the framing does not record where the message ends, and Katzenpost
    /// hands its spool and its services these same 4,096 bytes.
    pub message: &'a [u8; MESSAGE_LEN],
}

/// Frame `message` as a forward payload into `out`, with `surb` in the
/// SURB slot if given.
///
/// Every byte of `out` is written: flags ([`FLAG_SURB`] or
/// [`FLAG_NO_SURB`]), the reserved zero, the SURB or 6,058 zeros, the
/// message, then zeros to the end: what Katzenpost's client and decoy
/// loops send with a SURB (they start from a zeroed buffer). Without a
/// SURB the layout is the one Katzenpost's server parses; its own client
/// then writes the padded message at offset 0 with no header, which that
/// parser reads as flags and reserved bytes. The server does not read the
/// SURB slot under [`FLAG_NO_SURB`], so the zeros there are this side's
/// choice: nothing in the payload then depends on anything but the
/// message.
///
/// # Errors
/// [`FramingError::MessageTooLong`] if `message` is longer than
/// [`MESSAGE_LEN`]; `out` is then left as it was.
pub fn encode(
    surb: Option<&Surb>,
    message: &[u8],
    out: &mut [u8; PAYLOAD_LEN],
) -> Result<(), FramingError> {
    if message.len() > MESSAGE_LEN {
        return Err(FramingError::MessageTooLong {
            len: message.len(),
            max: MESSAGE_LEN,
        });
    }
    // Irrefutable: the array pattern's length is checked by the compiler.
    let [flags, reserved, body @ ..] = out;
    *reserved = RESERVED;
    body.fill(0);
    if let Some(surb) = surb {
        copy_front(body.iter_mut(), surb.as_bytes());
    }
    *flags = if surb.is_some() {
        FLAG_SURB
    } else {
        FLAG_NO_SURB
    };
    // `body` is the SURB slot followed by the message slot (the assertion
    // above), and `message` fits the latter: every byte is copied.
    copy_front(body.iter_mut().skip(SURB_LEN), message);
    Ok(())
}

/// Read a delivered forward payload: check the header, take the SURB if
/// the flags announce one, and return it with the message slot.
///
/// Takes a slice so that bytes from a store or a socket can be given as
/// they are; the `&[u8; PAYLOAD_LEN]` of a delivered packet
/// ([`Action::Deliver`](crate::Action::Deliver)) coerces to it and
/// never fails the length check. The checks run in Katzenpost's order
/// (length, reserved byte, flags) and refuse exactly what its server
/// refuses, except for a SURB whose version is unusable
/// ([`FramingError::SurbVersion`]). With [`FLAG_NO_SURB`] the SURB slot is
/// not looked at, as Katzenpost does not look at it either.
///
/// # Errors
/// [`FramingError::PayloadLength`] if `payload` is not [`PAYLOAD_LEN`]
/// bytes, [`FramingError::Reserved`] if the reserved byte is not zero,
/// [`FramingError::Flags`] for any flags but 0 and 1,
/// [`FramingError::SurbVersion`] if the announced SURB has a header
/// version other than `00 00`.
pub fn decode(payload: &[u8]) -> Result<Framed<'_>, FramingError> {
    let Some((flags, reserved, surb_slot, message)) = fields(payload) else {
        return Err(FramingError::PayloadLength { len: payload.len() });
    };
    if reserved != RESERVED {
        return Err(FramingError::Reserved(reserved));
    }
    let surb = match flags {
        FLAG_NO_SURB => None,
        // `Surb::from_bytes` can only refuse the version (its length is
        // the type's).
        FLAG_SURB => Some(Surb::from_bytes(surb_slot).map_err(|_| FramingError::SurbVersion)?),
        other => return Err(FramingError::Flags(other)),
    };
    Ok(Framed { surb, message })
}

/// Lay out a reply payload in `out`: `message`, then zeros to the end.
///
/// This is the payload for [`Surb::reply`]. There is no header: Katzenpost
/// copies the answer to the start of a zeroed payload and its client hands
/// the application all 10,156 decrypted bytes. An empty `message` gives
/// the all-zero payload Katzenpost sends as a SURB-ACK.
///
/// # Errors
/// [`FramingError::MessageTooLong`] if `message` is longer than
/// [`MAX_REPLY_LEN`]; `out` is then left as it was.
pub fn encode_reply(message: &[u8], out: &mut [u8; PAYLOAD_LEN]) -> Result<(), FramingError> {
    if message.len() > MAX_REPLY_LEN {
        return Err(FramingError::MessageTooLong {
            len: message.len(),
            max: MAX_REPLY_LEN,
        });
    }
    out.fill(0);
    copy_front(out.iter_mut(), message);
    Ok(())
}

/// The header bytes and the two slots of a payload, or `None` if it is
/// not [`PAYLOAD_LEN`] bytes long.
fn fields(payload: &[u8]) -> Option<(u8, u8, &[u8; SURB_LEN], &[u8; MESSAGE_LEN])> {
    let (&[flags, reserved], body) = payload.split_first_chunk::<PLAINTEXT_HEADER_LEN>()?;
    let (surb_slot, message) = body.split_first_chunk::<SURB_LEN>()?;
    Some((flags, reserved, surb_slot, message.try_into().ok()?))
}

/// Copy `src` into the first `src.len()` places of `dst`. The callers
/// check beforehand that `dst` is long enough, so nothing is cut off;
/// zipping (rather than slicing and `copy_from_slice`) keeps the copy free
/// of any panicking path.
fn copy_front<'a>(dst: impl Iterator<Item = &'a mut u8>, src: &[u8]) {
    for (d, s) in dst.zip(src) {
        *d = *s;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// A SURB-shaped byte string: header version `00 00`, then a pattern
    /// that tells every byte apart from zero padding.
    fn surb_bytes() -> [u8; SURB_LEN] {
        let mut bytes = [0u8; SURB_LEN];
        for (i, b) in bytes.iter_mut().enumerate().skip(2) {
            *b = u8::try_from(i % 251).unwrap() + 1;
        }
        bytes
    }

    fn surb() -> Surb {
        Surb::from_bytes(&surb_bytes()).unwrap()
    }

    fn message(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| u8::try_from(i % 253).unwrap() + 1)
            .collect()
    }

    /// The message slot as `decode` must return it: the message, then
    /// zeros.
    fn padded(message: &[u8]) -> [u8; MESSAGE_LEN] {
        let mut slot = [0u8; MESSAGE_LEN];
        slot[..message.len()].copy_from_slice(message);
        slot
    }

    #[test]
    fn round_trip_with_surb() {
        for len in [0, 1, 100, MESSAGE_LEN - 1, MESSAGE_LEN] {
            let msg = message(len);
            let mut out = [0xAAu8; PAYLOAD_LEN];
            encode(Some(&surb()), &msg, &mut out).unwrap();
            let framed = decode(&out).unwrap();
            assert_eq!(
                framed.surb.as_ref().unwrap().as_bytes(),
                &surb_bytes(),
                "len {len}"
            );
            assert_eq!(framed.message, &padded(&msg), "len {len}");
        }
    }

    #[test]
    fn round_trip_without_surb() {
        for len in [0, 1, 100, MESSAGE_LEN - 1, MESSAGE_LEN] {
            let msg = message(len);
            let mut out = [0xAAu8; PAYLOAD_LEN];
            encode(None, &msg, &mut out).unwrap();
            let framed = decode(&out).unwrap();
            assert!(framed.surb.is_none(), "len {len}");
            assert_eq!(framed.message, &padded(&msg), "len {len}");
            // The unused SURB slot is zeros, not what the buffer held.
            assert!(out[SURB_OFFSET..MESSAGE_OFFSET].iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn one_byte_over_is_refused_and_out_untouched() {
        let msg = message(MESSAGE_LEN + 1);
        for surb in [Some(surb()), None] {
            let mut out = [0xAAu8; PAYLOAD_LEN];
            assert_eq!(
                encode(surb.as_ref(), &msg, &mut out),
                Err(FramingError::MessageTooLong {
                    len: MESSAGE_LEN + 1,
                    max: MESSAGE_LEN
                })
            );
            assert!(out.iter().all(|&b| b == 0xAA));
        }
    }

    /// The byte layout, pinned to Katzenpost's values rather than to this
    /// module's constants: header `1 + 1` bytes, flags 0 / 1, reserved 0,
    /// the message after a 6,058-byte SURB slot, 4,096 bytes of it.
    #[test]
    fn layout_matches_the_reference() {
        assert_eq!(PLAINTEXT_HEADER_LEN, 1 + 1);
        assert_eq!((FLAG_NO_SURB, FLAG_SURB, RESERVED), (0, 1, 0));
        assert_eq!(SURB_LEN, 6_058);
        assert_eq!(
            (SURB_OFFSET, MESSAGE_OFFSET, MESSAGE_LEN),
            (2, 6_060, 4_096)
        );
        // ForwardPayloadLength = UserForwardPayloadLength + header + SURB.
        assert_eq!(PAYLOAD_LEN, 4_096 + 2 + 6_058);
        assert_eq!(MAX_REPLY_LEN, 10_156);

        let msg = message(MESSAGE_LEN);
        let mut out = [0u8; PAYLOAD_LEN];
        encode(Some(&surb()), &msg, &mut out).unwrap();
        assert_eq!(out[0], 1);
        assert_eq!(out[1], 0);
        assert_eq!(&out[2..6_060], &surb_bytes()[..]);
        assert_eq!(&out[6_060..], &msg[..]);

        let short = message(5);
        encode(None, &short, &mut out).unwrap();
        assert_eq!(&out[..2], &[0, 0]);
        assert!(out[2..6_060].iter().all(|&b| b == 0));
        assert_eq!(&out[6_060..6_065], &short[..]);
        assert!(out[6_065..].iter().all(|&b| b == 0));
    }

    /// `decode` on a payload built by hand as Katzenpost's client builds
    /// one (flags, reserved, SURB, message, zero padding), not by `encode`.
    #[test]
    fn decodes_a_reference_shaped_payload() {
        let msg = message(300);
        let mut payload = vec![1u8, 0];
        payload.extend_from_slice(&surb_bytes());
        payload.extend_from_slice(&msg);
        payload.resize(PAYLOAD_LEN, 0);
        let framed = decode(&payload).unwrap();
        assert_eq!(framed.surb.unwrap().as_bytes(), &surb_bytes());
        assert_eq!(framed.message, &padded(&msg));
    }

    #[test]
    fn surb_slot_is_ignored_without_the_flag() {
        // Katzenpost neither checks nor uses the slot under flags 0.
        let mut out = [0u8; PAYLOAD_LEN];
        encode(Some(&surb()), &message(10), &mut out).unwrap();
        out[0] = FLAG_NO_SURB;
        out[SURB_OFFSET] = 0xFF; // not even a valid SURB version
        let framed = decode(&out).unwrap();
        assert!(framed.surb.is_none());
        assert_eq!(framed.message, &padded(&message(10)));
    }

    #[test]
    fn unknown_flags_are_refused() {
        let mut out = [0u8; PAYLOAD_LEN];
        encode(Some(&surb()), &message(10), &mut out).unwrap();
        for flags in 2..=u8::MAX {
            out[0] = flags;
            assert_eq!(decode(&out).unwrap_err(), FramingError::Flags(flags));
        }
    }

    #[test]
    fn nonzero_reserved_is_refused_before_the_flags() {
        let mut out = [0u8; PAYLOAD_LEN];
        encode(None, &message(10), &mut out).unwrap();
        for reserved in 1..=u8::MAX {
            out[1] = reserved;
            for flags in [FLAG_NO_SURB, FLAG_SURB, 0x80] {
                out[0] = flags;
                assert_eq!(decode(&out).unwrap_err(), FramingError::Reserved(reserved));
            }
        }
    }

    #[test]
    fn surb_with_a_bad_version_is_refused() {
        let mut out = [0u8; PAYLOAD_LEN];
        encode(Some(&surb()), &message(10), &mut out).unwrap();
        out[SURB_OFFSET + 1] = 0x01;
        assert_eq!(decode(&out).unwrap_err(), FramingError::SurbVersion);
    }

    #[test]
    fn wrong_lengths_are_refused() {
        let payload = vec![0u8; PAYLOAD_LEN + 1];
        for len in [0, 1, 2, MESSAGE_OFFSET, PAYLOAD_LEN - 1, PAYLOAD_LEN + 1] {
            assert_eq!(
                decode(&payload[..len]).unwrap_err(),
                FramingError::PayloadLength { len }
            );
        }
        assert!(decode(&payload[..PAYLOAD_LEN]).is_ok());
    }

    #[test]
    fn reply_is_the_message_then_zeros() {
        for len in [0, 1, MESSAGE_LEN, MAX_REPLY_LEN - 1, MAX_REPLY_LEN] {
            let msg = message(len);
            let mut out = [0xAAu8; PAYLOAD_LEN];
            encode_reply(&msg, &mut out).unwrap();
            assert_eq!(&out[..len], &msg[..], "len {len}");
            assert!(out[len..].iter().all(|&b| b == 0), "len {len}");
        }
        // The SURB-ACK: an empty reply is all zeros.
        let mut out = [0xAAu8; PAYLOAD_LEN];
        encode_reply(&[], &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 0));
    }

    #[test]
    fn reply_one_byte_over_is_refused_and_out_untouched() {
        let mut out = [0xAAu8; PAYLOAD_LEN];
        assert_eq!(
            encode_reply(&message(MAX_REPLY_LEN + 1), &mut out),
            Err(FramingError::MessageTooLong {
                len: MAX_REPLY_LEN + 1,
                max: MAX_REPLY_LEN
            })
        );
        assert!(out.iter().all(|&b| b == 0xAA));
    }

    #[test]
    fn errors_display() {
        assert_eq!(
            FramingError::PayloadLength { len: 3 }.to_string(),
            "payload of 3 bytes, expected 10156"
        );
        assert_eq!(FramingError::Flags(2).to_string(), "unknown flags 0x02");
        assert_eq!(
            FramingError::Reserved(0xff).to_string(),
            "reserved byte 0xff, expected 0x00"
        );
    }
}
