//! What a client does: forward packets, SURBs, replies, reply decryption.

use core::ffi::c_int;

use getrandom::SysRng;
use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, HOPS, NODE_ID_LEN, PACKET_LEN, PAYLOAD_LEN, RECIPIENT_ID_LEN, SURB_ID_LEN,
    SURB_KEYS_LEN, SURB_LEN,
};
use kemsphinx::{
    Command, Hop as RustHop, NodeId, RecipientId, Surb, SurbId, SurbKeys, create_packet,
    create_surb,
};
use rand_core::{CryptoRng, UnwrapErr};
use zeroize::Zeroizing;

use crate::keys::PublicKeyHandle;
use crate::raw::{Out, handle, read_boxed, read_into};
use crate::{Status, guard};

/// One hop of a path (`kemsphinx_hop` in C).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    /// The node's id.
    pub node_id: [u8; NODE_ID_LEN],
    /// The node's public key handle.
    pub public_key: *const PublicKeyHandle,
    /// `node_delay` in milliseconds, used when `has_delay` is 1.
    pub delay_ms: u32,
    /// 1: give this hop a `node_delay`; 0: none.
    pub has_delay: u32,
}

const _: () = assert!(size_of::<Hop>() == NODE_ID_LEN + size_of::<usize>() + 8);

/// The path as Rust values: ids, key references and each hop's commands.
pub(crate) struct Path<'a> {
    hops: [(NodeId, &'a kemsphinx::PublicKey, Vec<Command>); HOPS],
}

impl<'a> Path<'a> {
    /// Read `KEMSPHINX_HOPS` hops from C and add `terminal` to the last.
    ///
    /// # Safety
    /// `path` is NULL or valid for `hops` reads of `Hop`, and each hop's
    /// key is NULL or a live handle for `'a`.
    pub(crate) unsafe fn read(
        path: *const Hop,
        hops: usize,
        terminal: &[Command],
    ) -> Result<Self, Status> {
        if path.is_null() {
            return Err(Status::Null);
        }
        if hops != HOPS {
            return Err(Status::Length);
        }
        // SAFETY: non-NULL, and valid for HOPS reads of `Hop` (a plain
        // `repr(C)` struct) by the caller's contract; copied out at once.
        let raw: [Hop; HOPS] = unsafe { path.cast::<[Hop; HOPS]>().read_unaligned() };
        let mut out = Vec::with_capacity(HOPS);
        for (i, hop) in raw.iter().enumerate() {
            // SAFETY: forwarded contract.
            let key = unsafe { handle(hop.public_key) }?;
            let mut commands = match hop.has_delay {
                0 => Vec::new(),
                1 => vec![Command::NodeDelay(hop.delay_ms)],
                _ => return Err(Status::Argument),
            };
            if i + 1 == HOPS {
                commands.extend_from_slice(terminal);
            }
            out.push((NodeId(hop.node_id), &key.0, commands));
        }
        let hops = out.try_into().map_err(|_| Status::Internal)?;
        Ok(Self { hops })
    }

    /// The path in the core library's terms.
    fn hops(&self) -> [RustHop<'_>; HOPS] {
        kemsphinx::path(
            self.hops.each_ref().map(|&(id, key, _)| (id, key)),
            self.hops
                .each_ref()
                .map(|(_, _, commands)| commands.as_slice()),
        )
    }

    /// A forward packet over this path, with every random byte from `rng`.
    pub(crate) fn packet<R: CryptoRng>(
        &self,
        rng: &mut R,
        payload: &[u8; PAYLOAD_LEN],
    ) -> Result<Box<[u8; PACKET_LEN]>, Status> {
        let mut packet = Box::new([0u8; PACKET_LEN]);
        create_packet(rng, &self.hops(), payload, &mut packet)?;
        Ok(packet)
    }

    /// A SURB over this path and its keys, with every random byte from `rng`.
    pub(crate) fn surb<R: CryptoRng>(&self, rng: &mut R) -> Result<(Surb, SurbKeys), Status> {
        Ok(create_surb(rng, &self.hops())?)
    }
}

/// Create a forward packet over a `hops`-hop path (`KEMSPHINX_HOPS`) whose
/// terminal hop delivers `payload` to `recipient`, with fresh randomness
/// from the operating system.
///
/// # Safety
/// Every pointer is NULL or valid for its length (`path` for `hops` hops,
/// each with NULL or a live key handle); `packet_out` for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_create_packet(
    path: *const Hop,
    hops: usize,
    recipient: *const u8,
    recipient_len: usize,
    payload: *const u8,
    payload_len: usize,
    packet_out: *mut u8,
    packet_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract (for each of the four calls below).
        let out = unsafe { Out::<PACKET_LEN>::new(packet_out, packet_len) }?;
        let mut to = [0u8; RECIPIENT_ID_LEN];
        // SAFETY: as above.
        unsafe { read_into(recipient, recipient_len, &mut to) }?;
        // SAFETY: as above.
        let payload = unsafe { read_boxed::<PAYLOAD_LEN>(payload, payload_len) }?;
        let terminal = [Command::Recipient(RecipientId(to))];
        // SAFETY: as above.
        let path = unsafe { Path::read(path, hops, &terminal) }?;
        let packet = path.packet(&mut UnwrapErr(SysRng), &payload)?;
        out.write(&packet);
        Ok(())
    })
}

/// Create a SURB over a `hops`-hop path back to `recipient`, tagged
/// `surb_id`, and the `KEMSPHINX_SURB_KEYS_LEN` secret bytes that decrypt
/// the reply (keep them; zero them when done). Fresh OS randomness.
///
/// # Safety
/// As [`kemsphinx_create_packet`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_create_surb(
    path: *const Hop,
    hops: usize,
    recipient: *const u8,
    recipient_len: usize,
    surb_id: *const u8,
    surb_id_len: usize,
    surb_out: *mut u8,
    surb_len: usize,
    surb_keys_out: *mut u8,
    surb_keys_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract (for each of the five calls below).
        let surb_out = unsafe { Out::<SURB_LEN>::new(surb_out, surb_len) }?;
        // SAFETY: as above.
        let keys_out = unsafe { Out::<SURB_KEYS_LEN>::new(surb_keys_out, surb_keys_len) }?;
        let (mut to, mut id) = ([0u8; RECIPIENT_ID_LEN], [0u8; SURB_ID_LEN]);
        // SAFETY: as above.
        unsafe { read_into(recipient, recipient_len, &mut to) }?;
        // SAFETY: as above.
        unsafe { read_into(surb_id, surb_id_len, &mut id) }?;
        let terminal = [
            Command::Recipient(RecipientId(to)),
            Command::SurbReply(SurbId(id)),
        ];
        // SAFETY: as above.
        let path = unsafe { Path::read(path, hops, &terminal) }?;
        let (surb, keys) = path.surb(&mut UnwrapErr(SysRng))?;
        surb_out.write(surb.as_bytes());
        keys_out.write(&keys.to_bytes());
        Ok(())
    })
}

/// Build the reply packet for a SURB carrying `payload`, and write the
/// node id of the hop to send it to. Deterministic.
///
/// # Safety
/// Every pointer is NULL or valid for its length, outputs for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_surb_reply(
    surb: *const u8,
    surb_len: usize,
    payload: *const u8,
    payload_len: usize,
    packet_out: *mut u8,
    packet_len: usize,
    first_hop_out: *mut u8,
    first_hop_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract (for each of the four calls below).
        let packet_out = unsafe { Out::<PACKET_LEN>::new(packet_out, packet_len) }?;
        // SAFETY: as above.
        let hop_out = unsafe { Out::<NODE_ID_LEN>::new(first_hop_out, first_hop_len) }?;
        // SAFETY: as above.
        let surb = unsafe { read_boxed::<SURB_LEN>(surb, surb_len) }?;
        let surb = Surb::from_bytes(&surb)?;
        // SAFETY: as above.
        let payload = unsafe { read_boxed::<PAYLOAD_LEN>(payload, payload_len) }?;
        let mut packet = Box::new([0u8; PACKET_LEN]);
        let first_hop = surb.reply(&payload, &mut packet);
        packet_out.write(&packet);
        hop_out.write(&first_hop.0);
        Ok(())
    })
}

/// Decrypt a reply (the `KEMSPHINX_ENCRYPTED_REPLY_LEN` bytes the SURB's
/// terminal hop delivered) with the SURB's keys, checking its tag, and
/// write the `KEMSPHINX_PAYLOAD_LEN`-byte payload. `reply` is not modified.
///
/// # Safety
/// Every pointer is NULL or valid for its length, `payload_out` for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_decrypt_reply(
    surb_keys: *const u8,
    surb_keys_len: usize,
    reply: *const u8,
    reply_len: usize,
    payload_out: *mut u8,
    payload_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract (for each of the three calls below).
        let out = unsafe { Out::<PAYLOAD_LEN>::new(payload_out, payload_len) }?;
        let mut keys = Zeroizing::new([0u8; SURB_KEYS_LEN]);
        // SAFETY: as above.
        unsafe { read_into(surb_keys, surb_keys_len, &mut keys) }?;
        // SAFETY: as above.
        let mut reply = unsafe { read_boxed::<ENCRYPTED_REPLY_LEN>(reply, reply_len) }?;
        let keys = SurbKeys::from_bytes(&keys);
        out.write(keys.decrypt_reply(&mut reply)?);
        Ok(())
    })
}
