//! [`Keyring::receive_batch`]: the order of checks of
//! [`Keyring::receive`] over a batch of datagrams, with the X25519 halves
//! of the batch's decapsulations computed together
//! ([`kemsphinx::unwrap_batch`]).

use std::sync::atomic::Ordering;

use kemsphinx::geometry::PACKET_LEN;
use kemsphinx::{BATCH, ReplayTag, packet_mut, replay_tag, unwrap_any, unwrap_batch};

use crate::Dropped;
use crate::keyring::{Accepted, Keyring, Received, key_order, unseen};

impl Keyring {
    /// [`receive`](Self::receive) for many datagrams: each gets exactly
    /// the result `receive` would give it had they been received one
    /// after the other in this order, and `each` is called once per
    /// datagram, in order, with its position and that result. Drops and
    /// acceptances are counted as by `receive`.
    ///
    /// What is done together: the datagrams are taken
    /// [`BATCH`](kemsphinx::BATCH) at a time, and the X25519
    /// Diffie–Hellman operations of a batch's packets under each key
    /// tried are computed side by side ([`kemsphinx::unwrap_batch`]: on
    /// a CPU with AVX-512 IFMA, about 0.63× the cost per packet of
    /// one at a time). The order of checks is `receive`'s, per datagram:
    ///
    /// 1. the length, then the replay tag (in no live epoch's filter) and
    ///    in disk mode a writable store, for every datagram of the batch
    ///    before any key work;
    /// 2. the survivors unwrapped in place under the live keys, the one
    ///    that unwrapped the last packet first (a packet whose MAC fails
    ///    is left unchanged for the next key, which
    ///    [`kemsphinx::unwrap_batch`] tries on the batch's failures
    ///    together);
    /// 3. each tag remembered, atomically, in the datagrams' order (so a
    ///    Bloom false positive that an earlier packet of the same batch
    ///    causes, which `receive` would find before the unwrap, is found
    ///    here at the test-and-set: a replay all the same, but unwrapped).
    ///
    /// A datagram whose replay tag equals an earlier one's in the same
    /// batch waits for it, then goes through the checks alone: a replay
    /// (not unwrapped, its buffer unchanged) if the earlier copy went on,
    /// unwrapped as if it came alone if the earlier one failed (a forged
    /// copy keeping a real packet's KEM ciphertext, arriving first,
    /// still cannot get the real one dropped).
    ///
    /// Why a callback, not a returned collection: it allocates nothing
    /// (a batch's state is a few arrays on the stack), no result can be
    /// lost or left unread, and no slice of results can be the wrong
    /// length. `each` is called after the batch's locks are released, so
    /// it may call anything (on this keyring too: [`wait_durable`],
    /// [`receive`](Self::receive)); an accepted packet borrows its
    /// datagram as from `receive`. A forward packet's bytes are its
    /// datagram's, which [`Action::Forward`](kemsphinx::Action::Forward)
    /// does not borrow: read them once the call has returned (as
    /// [`Forwarder::receive_batch`](crate::Forwarder::receive_batch) does).
    ///
    /// Give it whole datagrams, each as received into a buffer larger
    /// than a packet (as to `receive`). The keyring's read lock is held
    /// for one batch of [`BATCH`](kemsphinx::BATCH), so a
    /// [`turn`](Self::turn) waits at most for that.
    ///
    /// ```
    /// use kemsphinx_node::kemsphinx::PrivateKey;
    /// use kemsphinx_node::kemsphinx::geometry::PACKET_LEN;
    /// use kemsphinx_node::{Dropped, EpochPolicy, Keyring};
    ///
    /// let key = PrivateKey::from_seed(&[7; 96]);
    /// let keyring = Keyring::new(EpochPolicy::default(), key).unwrap();
    /// // Three datagrams as received: noise (not even the format's version
    /// // byte), twice, and one too short.
    /// let mut bufs = vec![vec![0x5a; PACKET_LEN], vec![0x5a; PACKET_LEN], vec![0; 9]];
    /// let mut dropped = Vec::new();
    /// keyring.receive_batch(bufs.iter_mut().map(Vec::as_mut_slice), |i, result| {
    ///     if let Err(why) = result {
    ///         dropped.push((i, why));
    ///     }
    /// });
    /// assert_eq!(dropped, [(0, Dropped::Version), (1, Dropped::Version), (2, Dropped::Length)]);
    /// assert_eq!(bufs[0], vec![0x5a; PACKET_LEN], "a dropped datagram is left as it was");
    /// assert_eq!(keyring.drops().total(), 3);
    /// ```
    ///
    /// [`wait_durable`]: Self::wait_durable
    pub fn receive_batch<'a, D, F>(&self, datagrams: D, mut each: F)
    where
        D: IntoIterator<Item = &'a mut [u8]>,
        F: FnMut(usize, Result<Accepted<'a>, Dropped>),
    {
        let mut datagrams = datagrams.into_iter();
        let mut position = 0usize;
        loop {
            let mut chunk: [Option<&'a mut [u8]>; BATCH] = [const { None }; BATCH];
            let mut taken = 0;
            for slot in &mut chunk {
                let Some(datagram) = datagrams.next() else {
                    break;
                };
                *slot = Some(datagram);
                taken += 1;
            }
            if taken == 0 {
                return;
            }
            for result in self.receive_chunk(chunk).into_iter().take(taken) {
                // Every datagram taken has a result; `Other` is never
                // given here, but no datagram may go without a call.
                let result = result.unwrap_or(Err(Dropped::Other));
                self.count(&result);
                each(position, result);
                position += 1;
            }
            if taken < BATCH {
                return;
            }
        }
    }

    /// One batch, under the read lock: a result for each datagram given
    /// (`None` after the last).
    fn receive_chunk<'a>(
        &self,
        chunk: [Option<&'a mut [u8]>; BATCH],
    ) -> [Option<Received<'a>>; BATCH] {
        let mut out: [Option<Received<'a>>; BATCH] = [const { None }; BATCH];
        // Packets that passed the first checks: to unwrap together, or
        // (a tag seen earlier in the batch) alone, after that one.
        let mut together: [Option<&'a mut [u8; PACKET_LEN]>; BATCH] = [const { None }; BATCH];
        let mut alone: [Option<&'a mut [u8; PACKET_LEN]>; BATCH] = [const { None }; BATCH];
        let mut tags: [Option<ReplayTag>; BATCH] = [None; BATCH];
        let live = self.live();
        let journal = self.journal();
        for (i, datagram) in chunk.into_iter().enumerate() {
            let Some(datagram) = datagram else {
                break;
            };
            let screened = packet_mut(datagram)
                .map_err(Dropped::from)
                .and_then(|packet| {
                    let tag = replay_tag(packet);
                    unseen(&live, journal, &tag).map(|()| (packet, tag))
                });
            match screened {
                Err(why) => put(&mut out, i, Err(why)),
                Ok((packet, tag)) => {
                    let again = tags.iter().take(i).flatten().any(|t| *t == tag);
                    put(if again { &mut alone } else { &mut together }, i, packet);
                    put(&mut tags, i, tag);
                }
            }
        }
        let order = key_order(&live, self.last_epoch.load(Ordering::Relaxed));
        let keys = order.iter().flatten().map(|e| &*e.key);
        let is_together = together.each_ref().map(Option::is_some);
        let mut unwrapped =
            unwrap_batch(keys.clone(), together.iter_mut().filter_map(Option::take));
        let rest = out
            .iter_mut()
            .zip(alone.iter_mut())
            .zip(tags.iter().zip(is_together));
        for ((out, alone), (tag, is_together)) in rest {
            let Some(tag) = tag else {
                continue;
            };
            let result = if is_together {
                unwrapped
                    .next()
                    .map(|r| self.settle(&live, &order, journal, tag, r))
            } else {
                // After the earlier copy: the checks again, as `receive`
                // would make them now.
                alone.take().map(|packet| {
                    unseen(&live, journal, tag).and_then(|()| {
                        let r = unwrap_any(keys.clone(), packet);
                        self.settle(&live, &order, journal, tag, r)
                    })
                })
            };
            *out = result;
        }
        out
    }
}

/// `slots[i] = Some(value)`, for `i` within the batch.
fn put<T>(slots: &mut [Option<T>; BATCH], i: usize, value: T) {
    if let Some(slot) = slots.get_mut(i) {
        *slot = Some(value);
    }
}
