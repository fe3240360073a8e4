//! `unwrap_batch` is `unwrap_any`, packet by packet: the same result and
//! the same buffer afterwards for every mix of packets (for the first key,
//! for a later key, for no key, noise, malformed, with a small-order
//! ephemeral key), one to three live keys, every batch length from 0 to
//! 2·BATCH + 1 and every position in a batch; and it allocates nothing.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{commands, deliver_to, nodes, path, payload, rng};
use kemsphinx::geometry::PACKET_LEN;
use kemsphinx::geometry::layout::packet as at;
use kemsphinx::{BATCH, Error, PrivateKey, create_packet, unwrap_any, unwrap_batch};
use rand_core::Rng;

/// A packet's outcome, comparable: the key position and action's kind, or
/// the error, and the buffer afterwards.
type Outcome = (Result<(usize, String), Error>, Box<[u8; PACKET_LEN]>);

fn describe(r: Result<(usize, kemsphinx::Unwrapped<'_>), Error>) -> Result<(usize, String), Error> {
    r.map(|(i, u)| {
        (
            i,
            format!("{:?} {:?} {:?}", u.replay_tag, u.commands, u.action),
        )
    })
}

/// Packets of every kind, for the first hop: built for `keys[k]`, or
/// damaged, chosen by `rng`.
fn mixed_packets(
    rng: &mut chacha20::ChaCha20Rng,
    count: usize,
) -> (Vec<PrivateKey>, Vec<Box<[u8; PACKET_LEN]>>) {
    let sets: Vec<_> = (0..3).map(|_| nodes(rng)).collect();
    let cmds = commands([1, 2, 3], deliver_to([9; 32]));
    let msg = payload(rng);
    let mut packets = Vec::new();
    for _ in 0..count {
        let set = &sets[usize::try_from(rng.next_u32() % 3).unwrap()];
        let mut p = Box::new([0u8; PACKET_LEN]);
        create_packet(rng, &path(set, &cmds), &msg, &mut p).unwrap();
        match rng.next_u32() % 8 {
            0 => p[at::MAC.start] ^= 1,            // no key's MAC verifies
            1 => p[at::VERSION.start] = 1,         // refused before the KEM
            2 => p[at::KEM_X25519].fill(0),        // a small-order point
            3 => p[at::PAYLOAD.start + 5] ^= 0x80, // forwarded, payload changed
            _ => {}
        }
        packets.push(p);
    }
    // The node's live keys: set 0's first hop (current), set 1's
    // (previous); set 2's packets are for a key the node does not have.
    let keys = sets
        .into_iter()
        .take(2)
        .map(|mut s| s.swap_remove(0).key)
        .collect();
    (keys, packets)
}

#[test]
fn batch_results_are_unwrap_any_packet_by_packet() {
    let mut rng = rng(21);
    let (keys, packets) = mixed_packets(&mut rng, 2 * BATCH + 1);
    let live = [&keys[0], &keys[1]];
    let one: Vec<Outcome> = packets
        .iter()
        .map(|p| {
            let mut p = p.clone();
            let r = describe(unwrap_any(live, &mut p));
            (r, p)
        })
        .collect();
    assert!(one.iter().any(|(r, _)| matches!(r, Ok((0, _)))));
    assert!(one.iter().any(|(r, _)| matches!(r, Ok((1, _)))));
    assert!(one.iter().any(|(r, _)| r.is_err()));

    for len in 0..=packets.len() {
        for start in [0, packets.len() - len] {
            let mut batch: Vec<Box<[u8; PACKET_LEN]>> = packets[start..start + len].to_vec();
            let results: Vec<_> = unwrap_batch(live, batch.iter_mut().map(|b| &mut **b))
                .map(describe)
                .collect();
            assert_eq!(results.len(), len);
            for (i, (r, after)) in results.into_iter().zip(&batch).enumerate() {
                let (want, want_after) = &one[start + i];
                assert_eq!(&r, want, "length {len}, packet {i}");
                assert_eq!(after, want_after, "length {len}, packet {i}: the buffer");
            }
        }
    }
}

/// `count` packets: for one of four key sets' first hops in turn, or
/// noise (random bytes with a valid version, which no key opens), every
/// eighth; and of each kind, some damaged (MAC, a small-order point, the
/// payload). With the first hops' keys of the four sets (a node holds at
/// most the first three).
fn packets_for_three_keys(
    rng: &mut chacha20::ChaCha20Rng,
    count: usize,
) -> (Vec<PrivateKey>, Vec<Box<[u8; PACKET_LEN]>>) {
    let sets: Vec<_> = (0..4).map(|_| nodes(rng)).collect();
    let cmds = commands([1, 2, 3], deliver_to([9; 32]));
    let msg = payload(rng);
    let mut packets = Vec::new();
    for j in 0..count {
        let mut p = Box::new([0u8; PACKET_LEN]);
        if j % 8 == 7 {
            rng.fill_bytes(&mut p[..]);
            p[at::VERSION].fill(0);
        } else {
            create_packet(rng, &path(&sets[j % 4], &cmds), &msg, &mut p).unwrap();
            match (j / 8) % 6 {
                0 => p[at::MAC.start] ^= 1,
                1 => p[at::KEM_X25519].fill(0),
                2 => p[at::PAYLOAD.start + 7] ^= 0x10,
                _ => {}
            }
        }
        packets.push(p);
    }
    let keys = sets.into_iter().map(|mut s| s.swap_remove(0).key).collect();
    (keys, packets)
}

/// `unwrap_batch(live, batch)` against `unwrap_any(live, packet)` for
/// each packet of `batch`: results and buffers afterwards.
fn assert_batch_is_unwrap_any(live: &[&PrivateKey], batch: &[Box<[u8; PACKET_LEN]>], what: &str) {
    let want: Vec<Outcome> = batch
        .iter()
        .map(|p| {
            let mut p = p.clone();
            let r = describe(unwrap_any(live.iter().copied(), &mut p));
            (r, p)
        })
        .collect();
    let mut got = batch.to_vec();
    let results: Vec<_> = unwrap_batch(live.iter().copied(), got.iter_mut().map(|b| &mut **b))
        .map(describe)
        .collect();
    assert_eq!(results.len(), batch.len(), "{what}");
    for (i, ((r, after), (want, want_after))) in
        results.into_iter().zip(&got).zip(&want).enumerate()
    {
        assert_eq!(&r, want, "{what}, packet {i}");
        assert_eq!(after, want_after, "{what}, packet {i}: the buffer");
    }
}

#[test]
fn every_live_key_is_tried_as_by_unwrap_any() {
    // Random mixes over one to three live keys: packets for each, for a
    // fourth key, noise and damaged ones, every length to 2·BATCH + 1,
    // each length drawn several times so that each kind lands in every
    // position of a batch.
    let mut rng = rng(24);
    let (keys, pool) = packets_for_three_keys(&mut rng, 48);
    let all: Vec<_> = pool
        .iter()
        .map(|p| unwrap_any(&keys[..3], &mut p.clone()).map(|(i, _)| i))
        .collect();
    for kind in [Ok(0), Ok(1), Ok(2), Err(Error::Mac), Err(Error::Kem)] {
        assert!(all.contains(&kind), "the pool has {kind:?}: {all:?}");
    }
    for n in 1..=3 {
        let live: Vec<&PrivateKey> = keys.iter().take(n).collect();
        for len in 0..=2 * BATCH + 1 {
            for draw in 0..4 {
                let batch: Vec<_> = (0..len)
                    .map(|_| pool[usize::try_from(rng.next_u32()).unwrap() % pool.len()].clone())
                    .collect();
                let what = format!("{n} keys, length {len}, draw {draw}");
                assert_batch_is_unwrap_any(&live, &batch, &what);
            }
        }
    }
}

#[test]
fn whole_batches_for_a_later_key_or_none() {
    // The later keys' batched path with every lane used: batches all for
    // the second key, all for the third, all noise, and one packet of
    // another kind in each position among them.
    let mut rng = rng(25);
    let sets: Vec<_> = (0..3).map(|_| nodes(&mut rng)).collect();
    let live = [&sets[0][0].key, &sets[1][0].key, &sets[2][0].key];
    let cmds = commands([1, 2, 3], deliver_to([9; 32]));
    let msg = payload(&mut rng);
    let mut for_key = |k: usize| -> Vec<Box<[u8; PACKET_LEN]>> {
        (0..BATCH)
            .map(|_| {
                let mut p = Box::new([0u8; PACKET_LEN]);
                create_packet(&mut rng, &path(&sets[k], &cmds), &msg, &mut p).unwrap();
                p
            })
            .collect()
    };
    let (first, second, third) = (for_key(0), for_key(1), for_key(2));
    let noise: Vec<_> = (0..BATCH)
        .map(|_| {
            let mut p = Box::new([0u8; PACKET_LEN]);
            rng.fill_bytes(&mut p[..]);
            p[at::VERSION].fill(0);
            p
        })
        .collect();
    // Each kind opens where it should.
    for (batch, want) in [
        (&first, Some(0)),
        (&second, Some(1)),
        (&third, Some(2)),
        (&noise, None),
    ] {
        let mut p = batch[0].clone();
        assert_eq!(unwrap_any(live, &mut p).ok().map(|(i, _)| i), want);
    }
    for (name, whole) in [
        ("second key", &second),
        ("third key", &third),
        ("noise", &noise),
    ] {
        assert_batch_is_unwrap_any(&live, whole, name);
        for at in 0..BATCH {
            for other in [&first[at], &second[at], &third[at], &noise[at]] {
                let mut batch = whole.clone();
                batch[at] = other.clone();
                assert_batch_is_unwrap_any(&live, &batch, &format!("{name}, another at {at}"));
            }
        }
    }
}

#[test]
fn batch_with_no_key_refuses_every_packet_unchanged() {
    let mut rng = rng(22);
    let (_, packets) = mixed_packets(&mut rng, 3);
    let mut copies = packets.clone();
    let none: [&PrivateKey; 0] = [];
    for r in unwrap_batch(none, copies.iter_mut().map(|b| &mut **b)) {
        assert!(r.is_err());
    }
    assert_eq!(copies, packets);
}

#[test]
fn batch_unwraps_a_whole_path() {
    // Every hop in turn, each hop's packets in one batch.
    let mut rng = rng(23);
    let nodes = nodes(&mut rng);
    let cmds = commands([1, 2, 3], deliver_to([9; 32]));
    let msg = payload(&mut rng);
    let mut batch: Vec<Box<[u8; PACKET_LEN]>> = (0..BATCH + 3)
        .map(|_| {
            let mut p = Box::new([0u8; PACKET_LEN]);
            create_packet(&mut rng, &path(&nodes, &cmds), &msg, &mut p).unwrap();
            p
        })
        .collect();
    for (hop, node) in nodes.iter().enumerate() {
        let mut delivered = 0;
        for r in unwrap_batch([&node.key], batch.iter_mut().map(|b| &mut **b)) {
            match r.unwrap().1.action {
                kemsphinx::Action::Forward { .. } => assert!(hop < 3),
                kemsphinx::Action::Deliver { payload, .. } => {
                    assert_eq!(payload, &*msg);
                    delivered += 1;
                }
                kemsphinx::Action::SurbReply { .. } => panic!("no SURB here"),
            }
        }
        assert_eq!(delivered, if hop == 3 { BATCH + 3 } else { 0 });
    }
}

/// The batch outcomes of `packets` under `live`, each with its buffer
/// afterwards.
fn batch_outcomes(live: &[&PrivateKey], packets: &[Box<[u8; PACKET_LEN]>]) -> Vec<Outcome> {
    let mut got = packets.to_vec();
    let results: Vec<_> = unwrap_batch(live.iter().copied(), got.iter_mut().map(|b| &mut **b))
        .map(describe)
        .collect();
    results.into_iter().zip(got).collect()
}

// Needs `hazmat` to choose the path: on in the repository (the tests'
// dev-dependency on this crate), off in the published package's tests.
#[cfg(all(feature = "hazmat", feature = "x25519-batch", target_arch = "x86_64"))]
#[test]
fn a_chosen_batch_path_unwraps_as_the_automatic_one() {
    // The only test in this binary that chooses a path (process-wide):
    // the others' batches may run on it meanwhile, with the same results.
    use kemsphinx::hazmat::kem_backends::{
        X25519BatchPathUnavailable, set_x25519_batch_path, x25519_batch_path,
        x25519_batch_path_automatic, x25519_batch_path_available,
    };
    use x25519_batch::Backend;

    let mut rng = rng(26);
    let (keys, packets) = mixed_packets(&mut rng, 2 * BATCH + 1);
    let live = [&keys[0], &keys[1]];
    let single: Vec<Outcome> = packets
        .iter()
        .map(|p| {
            let mut p = p.clone();
            (describe(unwrap_any(live, &mut p)), p)
        })
        .collect();
    let automatic_path = x25519_batch_path();
    assert_eq!(x25519_batch_path_automatic(), automatic_path);
    let automatic = batch_outcomes(&live, &packets);
    assert_eq!(automatic, single);
    // The CPU's AVX2 is available to choose, unless a build flag keeps
    // the vector code out.
    let avx2_built = !cfg!(kemsphinx_backend = "portable") && !cfg!(x25519_backend = "portable");
    if avx2_built && std::arch::is_x86_feature_detected!("avx2") {
        assert!(x25519_batch_path_available(Backend::Avx2));
    }
    assert!(x25519_batch_path_available(Backend::Portable));
    // A build forced portable has no vector path to choose, whatever the
    // CPU: the refusals below run there (CI's portable step).
    if cfg!(kemsphinx_backend = "portable") {
        assert!(!x25519_batch_path_available(Backend::Avx2));
        assert!(!x25519_batch_path_available(Backend::Ifma));
    }
    let mut chosen = 0;
    for backend in Backend::ALL {
        if !x25519_batch_path_available(backend) {
            // Refused, and the automatic path stays.
            assert_eq!(
                set_x25519_batch_path(Some(backend)),
                Err(X25519BatchPathUnavailable)
            );
            assert_eq!(x25519_batch_path(), automatic_path, "{backend:?}");
            assert_eq!(batch_outcomes(&live, &packets), single, "{backend:?}");
            continue;
        }
        set_x25519_batch_path(Some(backend)).unwrap();
        let name = match backend {
            Backend::Avx2 => "avx2",
            Backend::Ifma => "ifma",
            _ => "portable",
        };
        assert_eq!(x25519_batch_path(), name);
        assert_eq!(x25519_batch_path_automatic(), automatic_path);
        let got = batch_outcomes(&live, &packets);
        set_x25519_batch_path(None).unwrap();
        assert_eq!(got, single, "{backend:?}");
        chosen += 1;
    }
    assert!(chosen >= 1);
    assert_eq!(x25519_batch_path(), automatic_path);
}
