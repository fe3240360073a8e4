//! What a mix does with each packet: the replay tag, then the unwrap.

use core::ffi::c_int;

use kemsphinx::geometry::{NODE_ID_LEN, PACKET_LEN, RECIPIENT_ID_LEN, REPLAY_TAG_LEN, SURB_ID_LEN};
use kemsphinx::{Action as RustAction, replay_tag, unwrap, unwrap_batch};

use crate::keys::PrivateKeyHandle;
use crate::raw::{Out, OutValue, borrow, handle};
use crate::{Status, guard};

/// What the hop must do, as `kemsphinx_action` in the header.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send the packet buffer to `next_hop` after the delay.
    Forward = 1,
    /// The payload is for `recipient`; the packet ends here.
    Deliver = 2,
    /// An encrypted reply for `recipient`, answering SURB `surb_id`.
    SurbReply = 3,
}

/// The result of an unwrap (`kemsphinx_unwrapped` in C). Fields that the
/// action does not use are zero.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Unwrapped {
    /// An [`Action`] value.
    pub action: u32,
    /// 1 if the hop was given a `node_delay`, else 0.
    pub has_delay: u32,
    /// The `node_delay` in milliseconds (0 without one).
    pub delay_ms: u32,
    /// The packet's replay tag.
    pub replay_tag: [u8; REPLAY_TAG_LEN],
    /// Forward: the next hop.
    pub next_hop: [u8; NODE_ID_LEN],
    /// Deliver and SURB reply: the recipient.
    pub recipient: [u8; RECIPIENT_ID_LEN],
    /// SURB reply: the SURB id.
    pub surb_id: [u8; SURB_ID_LEN],
    /// Deliver: offset of the payload in the packet buffer. SURB reply:
    /// offset of the encrypted reply. Forward: 0.
    pub payload_offset: usize,
    /// Deliver: `KEMSPHINX_PAYLOAD_LEN`. SURB reply:
    /// `KEMSPHINX_ENCRYPTED_REPLY_LEN`. Forward: 0.
    pub payload_len: usize,
}

// The header's layout: three u32s, 112 bytes of ids, then (after padding to
// the alignment of size_t) two size_t. The C test asserts the same.
const _: () = {
    let ids = REPLAY_TAG_LEN + NODE_ID_LEN + RECIPIENT_ID_LEN + SURB_ID_LEN;
    let word = size_of::<usize>();
    let head = (12 + ids).div_ceil(word) * word;
    assert!(size_of::<Unwrapped>() == head + 2 * word);
    assert!(core::mem::offset_of!(Unwrapped, payload_offset) == head);
};

/// Write the replay tag of a `KEMSPHINX_PACKET_LEN`-byte packet: one hash
/// of its KEM ciphertext, computed where the packet lies (no copy, no
/// allocation), no key needed. Look it up before unwrapping.
///
/// # Safety
/// `packet` is NULL or valid for `packet_len` reads and not written by
/// anyone during the call; `tag_out` is NULL or valid for `tag_len`
/// writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_replay_tag(
    packet: *const u8,
    packet_len: usize,
    tag_out: *mut u8,
    tag_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let out = unsafe { Out::<REPLAY_TAG_LEN>::new(tag_out, tag_len) }?;
        // SAFETY: forwarded contract.
        let packet = unsafe { borrow::<PACKET_LEN>(packet, packet_len) }?;
        // The borrow of the packet ends here, before the tag is written
        // (which C may have placed inside the packet).
        let tag = replay_tag(packet);
        out.write(&tag.0);
        Ok(())
    })
}

/// Unwrap one layer of a packet in place with this hop's key.
///
/// On success the buffer holds the outgoing packet (forward) or the
/// decrypted payload at `out->payload_offset`. On any error the buffer is
/// unchanged and `out` is not written.
///
/// # Safety
/// `key` is NULL or a live handle; `packet` is NULL or valid for reads and
/// writes of `packet_len` bytes, not accessed by anyone else during the
/// call; `out` is NULL or valid and aligned for a `kemsphinx_unwrapped`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_unwrap(
    key: *const PrivateKeyHandle,
    packet: *mut u8,
    packet_len: usize,
    out: *mut Unwrapped,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let key = unsafe { handle(key) }?;
        // SAFETY: forwarded contract.
        let out = unsafe { OutValue::new(out) }?;
        if packet.is_null() {
            return Err(Status::Null);
        }
        if packet_len != PACKET_LEN {
            return Err(Status::Length);
        }
        // SAFETY: non-NULL, exactly PACKET_LEN bytes, and by the caller's
        // contract valid for reads and writes and not accessed by anyone
        // else until we return; `[u8; N]` has alignment 1. The borrow ends
        // inside `unwrap_in_place`, before `out` is written, so an `out`
        // that C placed inside the buffer is not aliased either.
        let buffer = unsafe { &mut *packet.cast::<[u8; PACKET_LEN]>() };
        out.write(unwrap_in_place(&key.0, buffer)?);
        Ok(())
    })
}

/// Unwrap `count` packets with one key, in place, a batch at a time
/// (`kemsphinx::unwrap_batch`: the X25519 halves of their decapsulations
/// computed together). The packets lie one after another at `packets`,
/// `packets_len` = `count` × `KEMSPHINX_PACKET_LEN` bytes. Each gets its
/// own status in `statuses[i]` and, where that is 0, its result in
/// `outs[i]` (`payload_offset` counted from packet `i`'s first byte);
/// a packet whose status is not 0 is unchanged and its `outs[i]` not
/// written.
///
/// Returns 0 once every packet has its status; [`Status::Null`] or
/// [`Status::Length`] for the call's own arguments (a NULL pointer, a
/// length that is not `count` packets), and then nothing is written and
/// every packet is unchanged.
///
/// # Safety
/// `key` is NULL or a live handle; `packets` is NULL or valid for reads and
/// writes of `packets_len` bytes; `outs` and `statuses` are NULL or valid
/// and aligned for `count` elements each. None of the three overlaps
/// another, and no one else accesses them during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_unwrap_batch(
    key: *const PrivateKeyHandle,
    packets: *mut u8,
    packets_len: usize,
    count: usize,
    outs: *mut Unwrapped,
    statuses: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let key = unsafe { handle(key) }?;
        if packets.is_null() || outs.is_null() || statuses.is_null() {
            return Err(Status::Null);
        }
        if count.checked_mul(PACKET_LEN) != Some(packets_len) {
            return Err(Status::Length);
        }
        let base = packets.addr();
        // SAFETY: non-NULL, exactly `count` packets of PACKET_LEN bytes,
        // valid for reads and writes and accessed by no one else by the
        // caller's contract; `[u8; N]` has alignment 1.
        let buffers =
            unsafe { core::slice::from_raw_parts_mut(packets.cast::<[u8; PACKET_LEN]>(), count) };
        for (i, result) in unwrap_batch([&key.0], buffers.iter_mut()).enumerate() {
            let status = match result {
                Ok((_, hop)) => {
                    let out = describe(base + i * PACKET_LEN, hop);
                    // SAFETY: i < count; `outs` is valid and aligned for
                    // `count` elements and overlaps no packet, so this
                    // write aliases nothing the iterator borrows.
                    unsafe { outs.wrapping_add(i).write(out) };
                    Status::Ok
                }
                Err(e) => Status::from(e),
            };
            // SAFETY: as for `outs`.
            unsafe { statuses.wrapping_add(i).write(status as c_int) };
        }
        Ok(())
    })
}

/// Unwrap and describe the result with plain values and offsets.
fn unwrap_in_place(
    key: &kemsphinx::PrivateKey,
    packet: &mut [u8; PACKET_LEN],
) -> Result<Unwrapped, Status> {
    let start = packet.as_ptr().addr();
    Ok(describe(start, unwrap(key, packet)?))
}

/// An unwrap's result as plain values, offsets counted from `start`, the
/// address of the packet's first byte.
fn describe(start: usize, hop: kemsphinx::Unwrapped<'_>) -> Unwrapped {
    let mut r = Unwrapped {
        action: 0,
        has_delay: 0,
        delay_ms: 0,
        replay_tag: hop.replay_tag.0,
        next_hop: [0; NODE_ID_LEN],
        recipient: [0; RECIPIENT_ID_LEN],
        surb_id: [0; SURB_ID_LEN],
        payload_offset: 0,
        payload_len: 0,
    };
    if let Some(ms) = hop.commands.delay() {
        (r.has_delay, r.delay_ms) = (1, ms);
    }
    match hop.action {
        RustAction::Forward { next_hop, .. } => {
            r.action = Action::Forward as u32;
            r.next_hop = next_hop.0;
        }
        RustAction::Deliver { recipient, payload } => {
            r.action = Action::Deliver as u32;
            r.recipient = recipient.0;
            (r.payload_offset, r.payload_len) = (payload.as_ptr().addr() - start, payload.len());
        }
        RustAction::SurbReply {
            recipient,
            surb_id,
            encrypted_reply,
        } => {
            r.action = Action::SurbReply as u32;
            r.recipient = recipient.0;
            r.surb_id = surb_id.0;
            let offset = encrypted_reply.as_ptr().addr() - start;
            (r.payload_offset, r.payload_len) = (offset, encrypted_reply.len());
        }
    }
    r
}
