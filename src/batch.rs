//! Unwrapping many packets with one node's keys (SPEC.md §6.1).
//!
//! A node drains a queue: every packet for the same private key, each with
//! its own ephemeral X25519 key. The X25519 halves of a batch's
//! decapsulations are computed together ([`BATCH`] at a time), where a
//! batched ladder can run them side by side in vector lanes; everything
//! else, and every result, is [`unwrap_any`](crate::unwrap_any)'s, packet
//! by packet.

use core::fmt;

use zeroize::Zeroizing;

use crate::bytes::field;
use crate::error::Error;
use crate::geometry::layout::packet as at;
use crate::geometry::{PACKET_LEN, X25519_LEN};
use crate::hop::HopKeys;
use crate::kem::{Ciphertext, PrivateKey};
use crate::packet::{Unwrapped, unwrap_first};

/// How many packets [`unwrap_batch`] decapsulates together: the lanes of
/// the widest batched X25519 ladder (AVX-512 IFMA, eight 64-bit lanes).
pub const BATCH: usize = 8;

/// [`unwrap_any`](crate::unwrap_any) over many packets, with the X25519
/// halves of the first key's decapsulations computed [`BATCH`] at a time.
///
/// `keys` are tried in order for each packet, as by `unwrap_any`: the
/// first (the key most packets are built for, the current epoch's) with
/// the batch's Diffie–Hellman outputs, any others one packet at a time when
/// its MAC does not verify. Pass one key for the plain batch form of
/// [`unwrap`](crate::unwrap).
///
/// The iterator yields one result per packet, in order, each exactly what
/// `unwrap_any(keys, packet)` returns: on success the buffer holds the
/// outgoing packet or the decrypted payload, on any error it is unchanged.
/// It allocates nothing: a batch is [`BATCH`] buffer references and
/// Diffie–Hellman outputs on the stack (wiped when consumed or dropped).
/// Packets are taken from `packets` a batch ahead of the results, so a
/// caller that checks replay tags first does so in the iterator it passes
/// (a `filter` on `packets`), before any key is used.
///
/// ```
/// use kemsphinx::geometry::PACKET_LEN;
/// use kemsphinx::{PrivateKey, unwrap_batch};
///
/// let key = PrivateKey::from_seed(&[7; 96]);
/// // Datagrams as received (here: noise, which no key opens).
/// let mut queue = vec![[0x5a; PACKET_LEN]; 3];
/// for result in unwrap_batch([&key], queue.iter_mut()) {
///     match result {
///         Ok((_, unwrapped)) => println!("{:?}", unwrapped.action),
///         Err(e) => println!("dropped: {e}"),
///     }
/// }
/// // A packet no key opened is unchanged.
/// assert!(queue.iter().all(|p| p == &[0x5a; PACKET_LEN]));
/// ```
pub fn unwrap_batch<'a, 'k, K, P>(
    keys: K,
    packets: P,
) -> UnwrapBatch<'a, 'k, K::IntoIter, P::IntoIter>
where
    K: IntoIterator<Item = &'k PrivateKey>,
    K::IntoIter: Clone,
    P: IntoIterator<Item = &'a mut [u8; PACKET_LEN]>,
{
    UnwrapBatch {
        keys: keys.into_iter(),
        packets: packets.into_iter(),
        batch: [const { None }; BATCH],
        next: BATCH,
    }
}

/// The iterator of [`unwrap_batch`]'s results.
pub struct UnwrapBatch<'a, 'k, K, P>
where
    K: Iterator<Item = &'k PrivateKey> + Clone,
    P: Iterator<Item = &'a mut [u8; PACKET_LEN]>,
{
    keys: K,
    packets: P,
    /// The current batch: each packet with its ephemeral key's
    /// Diffie–Hellman output under the first key (`None` inside for an
    /// all-zero one).
    batch: [Option<Pending<'a>>; BATCH],
    /// The next slot of `batch` to yield; `BATCH` when it is used up.
    next: usize,
}

/// A packet of the current batch and its X25519 Diffie–Hellman output.
type Pending<'a> = (
    &'a mut [u8; PACKET_LEN],
    Option<Zeroizing<[u8; X25519_LEN]>>,
);

impl<'a, 'k, K, P> UnwrapBatch<'a, 'k, K, P>
where
    K: Iterator<Item = &'k PrivateKey> + Clone,
    P: Iterator<Item = &'a mut [u8; PACKET_LEN]>,
{
    /// Take the next batch of packets and compute their Diffie–Hellman
    /// outputs under the first key; `false` when no packet is left.
    fn refill(&mut self) -> bool {
        let mut taken: [Option<&'a mut [u8; PACKET_LEN]>; BATCH] = [const { None }; BATCH];
        let mut ephemerals = [[0u8; X25519_LEN]; BATCH];
        for (slot, ephemeral) in taken.iter_mut().zip(&mut ephemerals) {
            let Some(packet) = self.packets.next() else {
                break;
            };
            *ephemeral = *field!(&*packet, at::KEM_X25519);
            *slot = Some(packet);
        }
        let count = taken.iter().filter(|t| t.is_some()).count();
        if count == 0 {
            return false;
        }
        let mut shared = match self.keys.clone().next() {
            Some(first) => first.diffie_hellman_batch(&ephemerals, count),
            None => [const { None }; BATCH],
        };
        for ((slot, packet), dh) in self.batch.iter_mut().zip(taken).zip(&mut shared) {
            *slot = packet.map(|p| (p, dh.take()));
        }
        self.next = 0;
        true
    }
}

impl<'a, 'k, K, P> Iterator for UnwrapBatch<'a, 'k, K, P>
where
    K: Iterator<Item = &'k PrivateKey> + Clone,
    P: Iterator<Item = &'a mut [u8; PACKET_LEN]>,
{
    type Item = Result<(usize, Unwrapped<'a>), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let used_up = self.batch.get(self.next).is_none_or(Option::is_none);
        if used_up && !self.refill() {
            return None;
        }
        let (packet, dh) = self.batch.get_mut(self.next)?.take()?;
        self.next += 1;
        let dh = dh.as_deref();
        let trial = self.keys.clone().enumerate().map(|(i, key)| {
            let derive = move |ct: &Ciphertext| {
                let ss = if i == 0 {
                    key.decapsulate_with(ct, dh)
                } else {
                    key.decapsulate(ct)
                };
                ss.map(|ss| HopKeys::derive(ss.as_bytes()))
            };
            (i, derive)
        });
        Some(unwrap_first(trial, packet))
    }
}

impl<'a, 'k, K, P> fmt::Debug for UnwrapBatch<'a, 'k, K, P>
where
    K: Iterator<Item = &'k PrivateKey> + Clone,
    P: Iterator<Item = &'a mut [u8; PACKET_LEN]>,
{
    /// The position in the batch only: never a Diffie–Hellman output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnwrapBatch")
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}
