//! The packet paths never touch the heap: a counting global allocator
//! (`allocation-counter`) watches this thread while it creates, unwraps, replies and decrypts.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{commands, deliver_to, nodes, path, payload, reply_to, rng};
use kemsphinx::geometry::layout::packet as at;
use kemsphinx::geometry::{ENCRYPTED_REPLY_LEN, PACKET_LEN};
use kemsphinx::{Action, BATCH, PrivateKey, create_packet, create_surb, unwrap, unwrap_batch};

/// Allocations made by `f` on this thread (the `allocation-counter`
/// crate's global allocator counts them).
fn allocations<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (out.unwrap(), info.count_total)
}

#[test]
fn packet_paths_do_not_allocate() {
    // Everything the operations need is prepared outside the watch.
    let mut rng = rng(11);
    let nodes = nodes(&mut rng);
    let fwd = commands([5, 6, 7], deliver_to([3; 32]));
    let back = commands([1, 2, 3], reply_to([4; 32], [5; 16]));
    let (fwd_path, back_path) = (path(&nodes, &fwd), path(&nodes, &back));
    let msg = payload(&mut rng);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let mut reply = Box::new([0u8; ENCRYPTED_REPLY_LEN]);

    let (created, n) = allocations(|| create_packet(&mut rng, &fwd_path, &msg, &mut packet));
    created.unwrap();
    assert_eq!(n, 0, "create_packet allocated");

    for (i, node) in nodes.iter().enumerate() {
        let (is_forward, n) = allocations(|| {
            matches!(
                unwrap(&node.key, &mut packet).map(|o| o.action),
                Ok(Action::Forward { .. })
            )
        });
        assert_eq!(n, 0, "unwrap at hop {i} allocated");
        assert_eq!(is_forward, i < 3);
    }

    let (surb, n) = allocations(|| create_surb(&mut rng, &back_path));
    let (surb, keys) = surb.unwrap();
    assert_eq!(n, 0, "create_surb allocated");

    let (_, n) = allocations(|| surb.reply(&msg, &mut packet));
    assert_eq!(n, 0, "reply allocated");
    for node in &nodes {
        let (out, n) = allocations(|| match unwrap(&node.key, &mut packet).map(|o| o.action) {
            Ok(Action::SurbReply {
                encrypted_reply, ..
            }) => Some(*encrypted_reply),
            _ => None,
        });
        assert_eq!(n, 0, "unwrap of the reply allocated");
        if let Some(r) = out {
            *reply = r;
        }
    }
    let (opened, n) = allocations(|| keys.decrypt_reply(&mut reply).map(|p| p == &*msg));
    assert_eq!(n, 0, "decrypt_reply allocated");
    assert_eq!(opened, Ok(true));

    // A batch unwrap: a batch and a half of first-hop packets, two keys.
    let mut batch: Vec<[u8; PACKET_LEN]> = (0..BATCH + BATCH / 2)
        .map(|_| {
            let mut p = [0u8; PACKET_LEN];
            create_packet(&mut rng, &fwd_path, &msg, &mut p).unwrap();
            p
        })
        .collect();
    let other = PrivateKey::from_seed(&[1; 96]);
    let (forwarded, n) = allocations(|| {
        unwrap_batch([&other, &nodes[0].key], batch.iter_mut())
            .filter(|r| matches!(r, Ok((1, u)) if matches!(u.action, Action::Forward { .. })))
            .count()
    });
    assert_eq!(n, 0, "unwrap_batch allocated");
    assert_eq!(forwarded, BATCH + BATCH / 2);

    // Noise under three keys: every key tried on every packet, a batch
    // at a time.
    // (A valid version, so that the trial reaches the keys.)
    let mut noise = vec![[0x5au8; PACKET_LEN]; BATCH + 3];
    for p in &mut noise {
        p[at::VERSION].fill(0);
    }
    let third = PrivateKey::from_seed(&[2; 96]);
    let (refused, n) = allocations(|| {
        unwrap_batch([&other, &third, &nodes[0].key], noise.iter_mut())
            .filter(|r| matches!(r, Err(kemsphinx::Error::Mac)))
            .count()
    });
    assert_eq!(n, 0, "unwrap_batch of noise under three keys allocated");
    assert_eq!(refused, BATCH + 3);

    // The counter itself works: a Box allocates.
    let (_, n) = allocations(|| std::hint::black_box(Box::new(1u8)));
    assert_eq!(n, 1);
}
