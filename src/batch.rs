//! Unwrapping many packets with one node's keys (SPEC.md §6.1).
//!
//! A node drains a queue: every packet for the same private keys, each
//! with its own ephemeral X25519 key. The X25519 halves of a batch's
//! decapsulations are computed together ([`BATCH`] at a time), key by key,
//! where a batched ladder can run them side by side in vector lanes;
//! everything else, and every result, is [`unwrap_any`](crate::unwrap_any)'s,
//! packet by packet.

use core::fmt;

use crate::bytes::field;
use crate::error::Error;
use crate::geometry::layout::packet as at;
use crate::geometry::{PACKET_LEN, X25519_LEN};
use crate::hop::HopKeys;
use crate::kem::PrivateKey;
use crate::packet::{ReplayTag, Unwrapped, try_key, unwrap_authenticated};

/// How many packets [`unwrap_batch`] decapsulates together: the lanes of
/// the widest batched X25519 ladder (AVX-512 IFMA, eight 64-bit lanes).
pub const BATCH: usize = 8;

/// [`unwrap_any`](crate::unwrap_any) over many packets, with the X25519
/// halves of the decapsulations computed [`BATCH`] at a time under each
/// key.
///
/// `keys` are tried in order for each packet, as by `unwrap_any`, but a
/// key at a time over a batch: the first (the key most packets are built
/// for, the current epoch's) on the whole batch, its Diffie–Hellman
/// outputs together; then the next on the packets whose MAC did not verify
/// (a node's other live epochs, and forgeries, which every key is tried
/// on), their outputs together again; and so on. Pass one key for the
/// plain batch form of [`unwrap`](crate::unwrap).
///
/// The iterator yields one result per packet, in order, each exactly what
/// `unwrap_any(keys, packet)` returns: on success the buffer holds the
/// outgoing packet or the decrypted payload, on any error it is unchanged.
/// It allocates nothing: a batch is [`BATCH`] buffer references with their
/// hop keys on the stack (wiped when consumed or dropped), and each key's
/// Diffie–Hellman outputs, wiped once its MACs are checked.
/// Packets are taken from `packets` a batch ahead of the results, and
/// every key is tried on a batch's packets before its first result (the
/// buffers are transformed only as the results are taken), so a caller
/// that checks replay tags first does so in the iterator it passes (a
/// `filter` on `packets`), before any key is used.
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
    /// The current batch: each packet with its key trial's outcome.
    batch: [Option<Pending<'a>>; BATCH],
    /// The next slot of `batch` to yield; `BATCH` when it is used up.
    next: usize,
}

/// A packet of the current batch, its buffer as it arrived, and how far
/// its key trial has gone.
struct Pending<'a> {
    packet: &'a mut [u8; PACKET_LEN],
    trial: Trial,
}

/// Where a packet's key trial ([`try_key`], key after key) stands.
enum Trial {
    /// No key's MAC has verified yet; if none does, [`Error::Mac`], as
    /// from `unwrap_any`.
    Open,
    /// The MAC of the key at this position verified: the packet's replay
    /// tag and hop keys, for [`unwrap_authenticated`] when it is yielded.
    Opened(usize, ReplayTag, HopKeys),
    /// An error that does not depend on the key ended the trial.
    Refused(Error),
}

impl<'a, 'k, K, P> UnwrapBatch<'a, 'k, K, P>
where
    K: Iterator<Item = &'k PrivateKey> + Clone,
    P: Iterator<Item = &'a mut [u8; PACKET_LEN]>,
{
    /// Take the next batch of packets and run their key trials, a key at
    /// a time; `false` when no packet is left.
    fn refill(&mut self) -> bool {
        let mut taken = 0;
        for slot in &mut self.batch {
            // Up to the first `None`: `packets` need not be fused.
            let Some(packet) = self.packets.next() else {
                break;
            };
            *slot = Some(Pending {
                packet,
                trial: Trial::Open,
            });
            taken += 1;
        }
        if taken == 0 {
            return false;
        }
        for (i, key) in self.keys.clone().enumerate() {
            if !try_key_on_batch(&mut self.batch, i, key) {
                break;
            }
        }
        self.next = 0;
        true
    }
}

/// Try `key`, the `i`th, on every packet of `batch` whose trial is still
/// open, their X25519 Diffie–Hellman outputs computed together (wiped
/// here); `false` when none was open.
fn try_key_on_batch(batch: &mut [Option<Pending<'_>>; BATCH], i: usize, key: &PrivateKey) -> bool {
    let open = |p: &&mut Pending<'_>| matches!(p.trial, Trial::Open);
    let mut ephemerals = [[0u8; X25519_LEN]; BATCH];
    let mut count = 0;
    for (pending, ephemeral) in batch.iter_mut().flatten().filter(open).zip(&mut ephemerals) {
        *ephemeral = *field!(&*pending.packet, at::KEM_X25519);
        count += 1;
    }
    if count == 0 {
        return false;
    }
    let shared = key.diffie_hellman_batch(&ephemerals, count);
    for (pending, dh) in batch.iter_mut().flatten().filter(open).zip(&shared) {
        let derive = |ct: &_| {
            key.decapsulate_with(ct, dh.as_deref())
                .map(|ss| HopKeys::derive(ss.as_bytes()))
        };
        pending.trial = match try_key(pending.packet, derive) {
            Ok(Some((replay_tag, hop_keys))) => Trial::Opened(i, replay_tag, hop_keys),
            Ok(None) => Trial::Open,
            Err(e) => Trial::Refused(e),
        };
    }
    true
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
        let Pending { packet, trial } = self.batch.get_mut(self.next)?.take()?;
        self.next += 1;
        Some(match trial {
            Trial::Opened(i, replay_tag, hop_keys) => {
                unwrap_authenticated(packet, replay_tag, &hop_keys).map(|u| (i, u))
            }
            Trial::Open => Err(Error::Mac),
            Trial::Refused(e) => Err(e),
        })
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
