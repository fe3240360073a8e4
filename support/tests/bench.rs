//! The benchmark fixtures do what the benchmarks and the report say they
//! time: the packets are the ones each hop receives, the SURB's reply
//! opens, ML-KEM alone computes the selected backend's function, and the
//! batch table's ways compute the same results from the same inputs.

// The helper that runs the batch table is not a test function, where
// clippy allows these already.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use kemsphinx::geometry::PAYLOAD_LEN;
use kemsphinx::hazmat::kem_backends::{self, Backend};
use kemsphinx::{Action, unwrap};
use std::sync::Mutex;

use kemsphinx_support::bench::cases::{self, BatchRow, Input, UnwrapOnAvx2, Way};
use kemsphinx_support::bench::{Buffers, MlKemAlone, Net};

#[test]
fn forward_packets_are_what_each_hop_receives() {
    let net = Net::new();
    let packets = net.forward_packets().unwrap();
    assert_eq!(packets.len(), 4);
    assert_eq!(packets[0], net.first_packet().unwrap());
    for (hop, key) in net.keys().enumerate() {
        let mut p = packets[hop].clone();
        let out = unwrap(key, &mut p).unwrap();
        match out.action {
            Action::Forward { .. } => {
                assert!(hop < 3);
                assert_eq!(p, packets[hop + 1]);
            }
            Action::Deliver { payload, .. } => {
                assert_eq!(hop, 3);
                assert_eq!(payload[..], [3u8; PAYLOAD_LEN][..payload.len()]);
            }
            Action::SurbReply { .. } => panic!("a forward packet became a reply"),
        }
    }
}

#[test]
fn the_surb_reply_opens_to_the_payload() {
    let net = Net::new();
    let payload = [0x5c; PAYLOAD_LEN];
    let (_, keys, mut reply) = net.surb_reply(&payload).unwrap();
    assert_eq!(keys.decrypt_reply(&mut reply).unwrap(), &payload);
}

#[test]
fn a_request_and_its_reply_run_to_the_end() {
    let net = Net::new();
    let mut bufs = Buffers::new();
    let mut rng = <chacha20::ChaCha20Rng as rand_core::SeedableRng>::from_seed([1; 32]);
    for _ in 0..3 {
        // The payload is zero but for the SURB from byte 2 on.
        assert_eq!(net.request_reply(&mut rng, &mut bufs), Ok(0));
    }
}

#[test]
fn mlkem_alone_is_the_selected_backends_decapsulation() {
    let mut alone = MlKemAlone::new();
    let (_, expected) =
        kem_backends::mlkem_decapsulate(Backend::SELECTED, &MlKemAlone::SEED, alone.ciphertext());
    assert_eq!(alone.decapsulate(), expected);
    let crate_name = match kemsphinx::KEM_BACKEND {
        "rustcrypto" => "RustCrypto ml-kem",
        _ => "libcrux-ml-kem",
    };
    assert!(alone.path().starts_with(crate_name), "{}", alone.path());
}

/// Each row of the batch table, run once on a fresh input: what it returned
/// and the input afterwards.
/// Whoever runs the batch table: its rows forced onto AVX2 choose the
/// process's batch path while they run, which [`run_batch_rows`] checks
/// is given back.
static TABLE: Mutex<()> = Mutex::new(());

fn run_batch_rows(net: &Net) -> Vec<(BatchRow, u64, Input)> {
    let _table = TABLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let rows = cases::batch_rows();
    let table = cases::batch(net).unwrap();
    assert_eq!(table.len(), rows.len());
    rows.into_iter()
        .zip(table)
        .map(|(row, mut case)| {
            assert_eq!(case.name, row.name);
            let mut input = (case.setup)();
            let out = (case.run)(&mut input);
            assert_eq!(
                kem_backends::x25519_batch_path(),
                kem_backends::x25519_batch_path_automatic(),
                "{} gave the automatic path back",
                row.name
            );
            (row, out, input)
        })
        .collect()
}

#[test]
fn batch_rows_name_their_units_and_cover_every_way() {
    let rows = cases::batch_rows();
    for row in &rows {
        let op = if row.way.is_x25519() {
            "X25519"
        } else {
            "unwrap"
        };
        assert!(
            row.name.starts_with(&format!("{op} ×{}, ", row.n)),
            "{}",
            row.name
        );
    }
    let has = |way: Way, n: usize| rows.iter().any(|r| r.way == way && r.n == n);
    let lanes = cases::x25519_batch_backends();
    assert!(lanes.contains(&x25519_batch::Backend::Portable));
    assert!(lanes.contains(&cases::x25519_batch_selected()));
    for n in cases::X25519_SIZES {
        assert!(has(Way::Scalar, n) && has(Way::Dalek, n));
        assert!(lanes.iter().all(|b| has(Way::Batch(*b), n)));
    }
    for n in cases::UNWRAP_SIZES {
        assert!(has(Way::UnwrapBatch, n) && has(Way::UnwrapSingle, n));
    }
    // unwrap_batch forced onto AVX2 at whole batches, where the CPU has
    // AVX2 and unwrap_batch takes another path by itself; nowhere else.
    let on_avx2: Vec<usize> = rows
        .iter()
        .filter(|r| matches!(r.way, Way::UnwrapBatchOn(_)))
        .inspect(|r| assert_eq!(r.way, Way::UnwrapBatchOn(x25519_batch::Backend::Avx2)))
        .map(|r| r.n)
        .collect();
    let status = cases::unwrap_on_avx2();
    match status {
        UnwrapOnAvx2::Timed { automatic, .. } => {
            assert_eq!(on_avx2, cases::UNWRAP_AVX2_SIZES);
            assert_ne!(automatic, "avx2");
            assert!(lanes.contains(&x25519_batch::Backend::Avx2));
        }
        UnwrapOnAvx2::AutomaticIsAvx2 | UnwrapOnAvx2::NoAvx2 => assert!(on_avx2.is_empty()),
    }
    if lanes.contains(&x25519_batch::Backend::Avx2)
        && kem_backends::x25519_batch_path_automatic() != "avx2"
    {
        assert!(matches!(status, UnwrapOnAvx2::Timed { .. }), "{status}");
    }
    let names = cases::batch_names();
    assert!(
        names
            .iter()
            .enumerate()
            .all(|(i, n)| !names[..i].contains(n))
    );
}

#[test]
fn every_x25519_way_computes_the_same_batch() {
    let net = Net::new();
    let runs = run_batch_rows(&net);
    for n in cases::X25519_SIZES {
        let of_size: Vec<_> = runs
            .iter()
            .filter(|(r, ..)| r.way.is_x25519() && r.n == n)
            .collect();
        // The KEM backend, x25519-dalek and every batch backend.
        assert_eq!(of_size.len(), 2 + cases::x25519_batch_backends().len());
        let (first, digest, _) = of_size[0];
        assert_eq!(first.way, Way::Scalar);
        assert_ne!(*digest, 0);
        for (row, d, _) in &of_size {
            assert_eq!(d, digest, "{} differs from {}", row.name, first.name);
        }
    }
}

#[test]
fn the_unwrap_rows_unwrap_the_same_distinct_packets_alike() {
    let net = Net::new();
    let queue = net.first_packets(16).unwrap();
    assert!(
        queue
            .iter()
            .enumerate()
            .all(|(i, p)| !queue[..i].contains(p))
    );
    let runs = run_batch_rows(&net);
    for n in cases::UNWRAP_SIZES {
        let after = |way: Way| {
            let (_, ok, input) = runs
                .iter()
                .find(|(r, ..)| r.way == way && r.n == n)
                .unwrap();
            assert_eq!(*ok, n as u64, "every packet unwraps");
            match input {
                Input::Packets(p) => p.clone(),
                _ => panic!("an unwrap row without packets"),
            }
        };
        let (batched, single) = (after(Way::UnwrapBatch), after(Way::UnwrapSingle));
        assert_eq!(batched.len(), n);
        // Both forwarded the same packets: the queue's first n, unwrapped;
        // and so did unwrap_batch forced onto AVX2, where it has rows.
        assert!(batched == single);
        let forced = Way::UnwrapBatchOn(x25519_batch::Backend::Avx2);
        if runs.iter().any(|(r, ..)| r.way == forced && r.n == n) {
            assert!(after(forced) == single);
        }
        for (out, original) in single.iter().zip(&queue) {
            let mut p = original.clone();
            let unwrapped = unwrap(net.first_key(), &mut p).unwrap();
            assert!(matches!(unwrapped.action, Action::Forward { .. }));
            assert!(&p == out);
        }
    }
}
