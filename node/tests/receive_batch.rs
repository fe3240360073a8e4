//! `Keyring::receive_batch` is `receive`, datagram by datagram: on two
//! keyrings holding the same keys, random mixes of packets for every live
//! key, for no key, replays (earlier and within a batch), forged copies,
//! wrong lengths and noise, in every batch length from 0 to 2·BATCH + 1,
//! give the same result, the same buffer afterwards and the same counts,
//! in memory mode and in disk mode; copies within one batch, in either
//! order; and `Forwarder::receive_batch` holds what `Forwarder::receive`
//! holds.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
// `common`'s datagram buffers are not used here (datagrams of every length are).
#![allow(dead_code)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chacha20::ChaCha20Rng;
use common::{Client, Packet, scratch};
use kemsphinx_node::kemsphinx::geometry::layout::packet as at;
use kemsphinx_node::kemsphinx::geometry::{KEM_CIPHERTEXT_LEN, PACKET_LEN, VERSION_LEN};
use kemsphinx_node::kemsphinx::{BATCH, PrivateKey, PublicKey};
use kemsphinx_node::{
    Accepted, Dropped, EpochPolicy, ForwardPolicy, Forwarder, Keyring, Outgoing, Turn,
};
use rand_core::{Rng, SeedableRng};

const HOUR: Duration = Duration::from_secs(3600);

fn policy(capacity: usize, publish_ahead: bool) -> EpochPolicy {
    EpochPolicy {
        capacity,
        fp_rate: 1e-9,
        rotate_after: capacity,
        length: HOUR,
        grace: HOUR,
        publish_ahead,
        ..EpochPolicy::default()
    }
}

/// What became of a datagram, comparable: the epoch, whether by the
/// previous key and the action, or the drop.
type Outcome = Result<(u64, bool, String), Dropped>;

fn describe(r: Result<Accepted<'_>, Dropped>) -> Outcome {
    r.map(|a| (a.epoch, a.previous_key, format!("{:?}", a.action)))
}

/// Packets to draw datagrams from: for each live key, and for a key the
/// node does not hold.
struct Pools {
    current: Vec<Packet>,
    others: Vec<Packet>,
}

impl Pools {
    fn new(client: &mut Client, current: &PublicKey, others: &[PublicKey], n: usize) -> Self {
        Self {
            current: client.packets(current, n),
            others: others
                .iter()
                .flat_map(|k| client.packets(k, n.div_ceil(3)))
                .collect(),
        }
    }

    /// One datagram of a random kind (a packet drawn again is a replay, or
    /// within a batch a copy).
    fn datagram(&self, rng: &mut ChaCha20Rng) -> Vec<u8> {
        let pick = |rng: &mut ChaCha20Rng, pool: &[Packet]| {
            pool[usize::try_from(rng.next_u32()).unwrap() % pool.len()].to_vec()
        };
        match rng.next_u32() % 12 {
            0..=4 => pick(rng, &self.current),
            5..=7 => pick(rng, &self.others),
            8 => {
                // A forged copy: the packet's tag, its header altered.
                let mut d = pick(rng, &self.current);
                d[VERSION_LEN + KEM_CIPHERTEXT_LEN] ^= 1;
                d
            }
            9 => {
                let mut d = pick(rng, &self.current);
                match rng.next_u32() % 3 {
                    0 => d.push(0),
                    1 => d.truncate(PACKET_LEN - 1),
                    _ => d.clear(),
                }
                d
            }
            10 => {
                let mut d = vec![0u8; PACKET_LEN];
                rng.fill_bytes(&mut d);
                d
            }
            _ => {
                // A low-order X25519 share: refused by the KEM.
                let mut d = pick(rng, &self.current);
                d[at::KEM_X25519].fill(0);
                d
            }
        }
    }
}

/// Feed `batch` to `batched` in one call and to `single` one by one, and
/// check that every datagram comes out the same, with its buffer.
fn compare(batched: &Keyring, single: &Keyring, batch: &[Vec<u8>]) -> Vec<Outcome> {
    let mut a = batch.to_vec();
    let mut b = batch.to_vec();
    let mut got = Vec::new();
    batched.receive_batch(a.iter_mut().map(Vec::as_mut_slice), |i, r| {
        assert_eq!(i, got.len(), "results come in order, one per datagram");
        got.push(describe(r));
    });
    let want: Vec<Outcome> = b.iter_mut().map(|d| describe(single.receive(d))).collect();
    assert_eq!(got, want);
    assert_eq!(a, b, "the same buffers afterwards");
    for ((r, after), before) in got.iter().zip(&a).zip(batch) {
        if matches!(r, Err(w) if *w != Dropped::EpochFull) {
            assert_eq!(after, before, "a dropped datagram is left as it was");
        }
    }
    got
}

/// Every batch length from 0 to 2·BATCH + 1, each batch drawn at random;
/// the counts of every kind of result.
fn differential(batched: &Keyring, single: &Keyring, pools: &Pools, seed: u64) -> Vec<Outcome> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut all = Vec::new();
    for len in 0..=2 * BATCH + 1 {
        let batch: Vec<Vec<u8>> = (0..len).map(|_| pools.datagram(&mut rng)).collect();
        all.extend(compare(batched, single, &batch));
    }
    assert_eq!(batched.drops(), single.drops());
    assert_eq!(batched.accepted(), single.accepted());
    assert_eq!(batched.current(), single.current());
    assert_eq!(batched.previous(), single.previous());
    assert_eq!(batched.next(), single.next());
    all
}

fn count(all: &[Outcome], f: impl Fn(&Outcome) -> bool) -> usize {
    all.iter().filter(|o| f(o)).count()
}

#[test]
fn memory_mode_batches_give_what_receive_gives() {
    let key = |s| PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(s));
    // A capacity the run exceeds: some packets meet a full epoch.
    let batched = Keyring::new(policy(12, false), key(1)).unwrap();
    let single = Keyring::new(policy(12, false), key(1)).unwrap();
    let stranger = key(2).public_key().clone();
    let pools = Pools::new(
        &mut Client::new(3),
        &batched.current().public_key,
        &[stranger],
        24,
    );
    let all = differential(&batched, &single, &pools, 4);
    let (ok, replay, full) = (
        count(&all, Result::is_ok),
        count(&all, |o| *o == Err(Dropped::Replay)),
        count(&all, |o| *o == Err(Dropped::EpochFull)),
    );
    println!(
        "memory mode: {} datagrams: {:?}",
        all.len(),
        batched.drops()
    );
    assert_eq!(ok, 12, "the epoch filled");
    assert!(replay > 0 && full > 0);
    for why in [Dropped::Length, Dropped::Mac, Dropped::Kem] {
        assert!(count(&all, |o| *o == Err(why)) > 0, "{why:?} met");
    }
}

/// Copy the (closed) disk-mode directory `from` to `to`: the same keys,
/// the same secret, the same stores.
fn copy_dir(from: &Path, to: &Path) {
    let mut builder = std::fs::DirBuilder::new();
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn disk_mode_batches_give_what_receive_gives_under_every_live_key() {
    let (a, b) = (scratch("batch-a"), scratch("batch-b"));
    let p = policy(1_000, true);
    {
        let (k, _) = Keyring::open(p.clone(), &a).unwrap();
        // Epoch 1 starts: 0 is the previous one, 2 the next.
        assert!(matches!(
            k.turn(Instant::now() + 2 * HOUR),
            Some(Turn::Started { number: 1, .. })
        ));
    }
    copy_dir(&a, &b);
    let (batched, _) = Keyring::open(p.clone(), &a).unwrap();
    let (single, _) = Keyring::open(p, &b).unwrap();
    let previous = batched.previous().unwrap().public_key;
    let next = batched.next().unwrap().public_key;
    assert_eq!(single.previous().unwrap().public_key, previous);
    assert_eq!(single.next().unwrap().public_key, next);
    let stranger = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(5))
        .public_key()
        .clone();
    let pools = Pools::new(
        &mut Client::new(6),
        &batched.current().public_key,
        &[previous, next, stranger],
        12,
    );
    let all = differential(&batched, &single, &pools, 7);
    println!("disk mode: {} datagrams: {:?}", all.len(), batched.drops());
    for epoch in 0..=2 {
        assert!(
            all.iter()
                .any(|o| matches!(o, Ok((e, _, _)) if *e == epoch)),
            "a packet for epoch {epoch}"
        );
    }
    assert!(all.iter().any(|o| matches!(o, Ok((0, true, _)))));
    assert!(count(&all, |o| *o == Err(Dropped::Replay)) > 0);
    assert!(count(&all, |o| *o == Err(Dropped::Mac)) > 0);
    drop((batched, single));
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&b).unwrap();
}

/// Copies in one batch: of two copies one goes on and the other is a
/// replay, unwrapped by no key (its buffer unchanged), as when received
/// one after the other; a forged copy arriving first fails on its MAC and
/// does not stop the real one; one arriving after it is a replay.
#[test]
fn of_copies_in_one_batch_the_first_real_one_goes_on() {
    let key = PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(8));
    let keyring = Keyring::new(policy(100, false), key).unwrap();
    let mut client = Client::new(9);
    let node = keyring.current().public_key;
    let (p, q) = (client.packet(&node), client.packet(&node));
    let mut forged = q.to_vec();
    forged[VERSION_LEN + KEM_CIPHERTEXT_LEN] ^= 1;
    let mut batch = vec![
        p.to_vec(),
        p.to_vec(),
        forged.clone(),
        q.to_vec(),
        q.to_vec(),
        forged.clone(),
    ];
    let before = batch.clone();
    let mut got = Vec::new();
    keyring.receive_batch(batch.iter_mut().map(Vec::as_mut_slice), |_, r| {
        got.push(r.map(|a| a.epoch));
    });
    assert_eq!(
        got,
        [
            Ok(0),
            Err(Dropped::Replay),
            Err(Dropped::Mac),
            Ok(0),
            Err(Dropped::Replay),
            Err(Dropped::Replay),
        ]
    );
    for i in [1, 2, 4, 5] {
        assert_eq!(batch[i], before[i], "datagram {i} left as it was");
    }
    assert_ne!(batch[0], before[0]);
    assert_ne!(batch[3], before[3]);
    assert_eq!(keyring.accepted(), 2);
    assert_eq!(keyring.drops().get(Dropped::Replay), 3);
    assert_eq!(keyring.drops().get(Dropped::Mac), 1);
    assert_eq!(keyring.current().taken, 2);
}

/// The forwarder's batch holds what its single path holds: the same
/// results, counts, and packets handed out.
#[test]
fn the_forwarders_batch_holds_what_receive_holds() {
    let key = |s| PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(s));
    let forwarder = |s| {
        let k = Arc::new(Keyring::new(policy(100, false), key(s)).unwrap());
        Forwarder::new(k, ForwardPolicy::default())
    };
    let (batched, single) = (forwarder(10), forwarder(10));
    let pools = Pools::new(
        &mut Client::new(11),
        &batched.keyring().current().public_key,
        &[key(12).public_key().clone()],
        9,
    );
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    let batch: Vec<Vec<u8>> = (0..2 * BATCH + 1)
        .map(|_| pools.datagram(&mut rng))
        .collect();
    let now = Instant::now();
    let mut a = batch.clone();
    let mut views: Vec<&mut [u8]> = a.iter_mut().map(Vec::as_mut_slice).collect();
    let mut got = Vec::new();
    batched.receive_batch(&mut views, now, |i, r| {
        assert_eq!(i, got.len());
        got.push(r.map(|_| ()));
    });
    let mut b = batch;
    let want: Vec<_> = b
        .iter_mut()
        .map(|d| single.receive(d, now).map(|_| ()))
        .collect();
    assert_eq!(got, want);
    assert!(got.iter().any(Result::is_ok));
    assert_eq!(batched.counts(), single.counts());
    let drain = |f: &Forwarder| {
        let mut out = Vec::new();
        while let Some(due) = f.pop_due(now + HOUR) {
            match due.outgoing() {
                Outgoing::Packet { next_hop, packet } => out.push((next_hop, packet.to_vec())),
                other => panic!("forward packets only: {other:?}"),
            }
        }
        out
    };
    let (x, y) = (drain(&batched), drain(&single));
    assert_eq!(x.len(), got.iter().filter(|r| r.is_ok()).count());
    assert_eq!(x, y);
}
