//! RFC 7748 §5.2: the two test vectors and the iterated test, on every
//! backend this CPU has, through the one-scalar and the per-lane entry
//! points, alone and in a full group of lanes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
use common::{all, batch, each, h32};
use x25519_batch::Backend;

/// The two single-multiplication vectors of §5.2: (scalar, u, result).
const VECTORS: [(&str, &str, &str); 2] = [
    (
        "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
        "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
        "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552",
    ),
    (
        "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
        "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
        "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957",
    ),
];

#[test]
fn section_5_2_vectors() {
    for b in all() {
        for (k, u, r) in VECTORS {
            let (k, u, r) = (h32(k), h32(u), h32(r));
            assert_eq!(batch(b, &k, &[u]), [r], "{b:?}");
            assert_eq!(each(b, &[k], &[u]), [r], "{b:?}");
            // Every lane position of a batch of 2·lanes + 1.
            let n = 2 * b.lanes() + 1;
            assert_eq!(batch(b, &k, &vec![u; n]), vec![r; n], "{b:?}");
            assert_eq!(each(b, &vec![k; n], &vec![u; n]), vec![r; n], "{b:?}");
        }
    }
}

/// The iterated test: `k ← X25519(k, u)` with `u` the old `k`, from
/// `k = u = 9`. Runs `lanes` independent copies side by side on the
/// vector backends (each lane iterating its own chain).
fn iterate(b: Backend, n: usize) -> [u8; 32] {
    let lanes = b.lanes();
    let mut k =
        vec![h32("0900000000000000000000000000000000000000000000000000000000000000"); lanes];
    let mut u = k.clone();
    for _ in 0..n {
        let r = each(b, &k, &u);
        u = std::mem::replace(&mut k, r);
    }
    assert!(k.iter().all(|x| *x == k[0]), "{b:?}: lanes disagree");
    k[0]
}

#[test]
fn iterated_1() {
    for b in all() {
        assert_eq!(
            iterate(b, 1),
            h32("422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079"),
            "{b:?}"
        );
    }
}

#[test]
fn iterated_1000() {
    for b in all() {
        assert_eq!(
            iterate(b, 1000),
            h32("684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"),
            "{b:?}"
        );
    }
}

/// 10^6 iterations (minutes in release: `cargo test --release -p
/// x25519-batch --test rfc7748 -- --ignored`).
#[test]
#[ignore]
fn iterated_1000000() {
    for b in all() {
        assert_eq!(
            iterate(b, 1_000_000),
            h32("7c3911e0ab2586fd864497297e575e6f3bc601c0883c30df5f4dd2d24f665424"),
            "{b:?}"
        );
    }
}
