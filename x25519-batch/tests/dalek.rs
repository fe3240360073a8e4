//! Every backend this CPU has against x25519-dalek's `x25519`, an
//! independent implementation: random scalars and points at every batch
//! length 1..=2·lanes+1 (so every lane position, full and padded groups),
//! through both entry points; then the edge cases of RFC 7748's
//! semantics: non-canonical and bit-255 encodings of u, the small-order
//! points (all-zero output) and extreme scalars.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
use chacha20::ChaCha20Rng;
use common::{all, batch, each, h32};
use rand_core::{Rng, SeedableRng};
use x25519_batch::{Backend, LengthMismatch, mul_batch, mul_batch_on, mul_each};

fn reference(k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
    x25519_dalek::x25519(*k, *u)
}

fn random(rng: &mut ChaCha20Rng) -> [u8; 32] {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    b
}

/// Random inputs (all 256 bits random, so bit 255 of u and the bits
/// clamping clears are set half the time), each batch length up to
/// 2·lanes + 1, a few rounds each.
#[test]
fn random_batches_match_dalek() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x7748);
    for b in all() {
        for n in 1..=2 * b.lanes() + 1 {
            for _ in 0..4 {
                let k = random(&mut rng);
                let pts: Vec<_> = (0..n).map(|_| random(&mut rng)).collect();
                let want: Vec<_> = pts.iter().map(|u| reference(&k, u)).collect();
                assert_eq!(batch(b, &k, &pts), want, "{b:?} mul_batch, n = {n}");

                let ks: Vec<_> = (0..n).map(|_| random(&mut rng)).collect();
                let want: Vec<_> = ks.iter().zip(&pts).map(|(k, u)| reference(k, u)).collect();
                assert_eq!(each(b, &ks, &pts), want, "{b:?} mul_each, n = {n}");
            }
        }
    }
}

/// One point that differs from its neighbours in each lane position in
/// turn: a lane that took its neighbour's scalar or point would show.
#[test]
fn every_lane_position_is_its_own() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x1a4e);
    for b in all() {
        let n = 2 * b.lanes() + 1;
        let k0 = random(&mut rng);
        let u0 = random(&mut rng);
        for pos in 0..n {
            let (k1, u1) = (random(&mut rng), random(&mut rng));
            let mut ks = vec![k0; n];
            let mut pts = vec![u0; n];
            ks[pos] = k1;
            pts[pos] = u1;
            let got = each(b, &ks, &pts);
            for (i, r) in got.iter().enumerate() {
                let want = if i == pos {
                    reference(&k1, &u1)
                } else {
                    reference(&k0, &u0)
                };
                assert_eq!(*r, want, "{b:?} lane {i}, odd one at {pos}");
            }
        }
    }
}

/// `u` plus `2^255` (bit 255 set): X25519 ignores that bit.
fn with_top_bit(u: [u8; 32]) -> [u8; 32] {
    let mut u = u;
    u[31] |= 0x80;
    u
}

/// The small-order points, reduced: u = 0, 1, the two points of order 8,
/// p − 1.
const SMALL_ORDER: [&str; 5] = [
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
    "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
];

/// `u + p`, another encoding of the same u, if it is below 2^255.
fn plus_p(u: [u8; 32]) -> Option<[u8; 32]> {
    let p = h32("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
    let mut out = [0u8; 32];
    let mut carry = 0u16;
    for i in 0..32 {
        let s = u16::from(u[i]) + u16::from(p[i]) + carry;
        out[i] = s.to_le_bytes()[0];
        carry = s >> 8;
    }
    // Only sums below 2^255 are encodings (bit 255 is ignored, not a bit
    // of the value).
    (carry == 0 && out[31] < 0x80).then_some(out)
}

/// Every encoding of every small-order point: as it is, plus p where that
/// stays below 2^255, and each of those with bit 255 set.
fn small_order_encodings() -> Vec<[u8; 32]> {
    let mut all = vec![];
    for s in SMALL_ORDER {
        let u = h32(s);
        for e in [Some(u), plus_p(u)].into_iter().flatten() {
            all.push(e);
            all.push(with_top_bit(e));
        }
    }
    all
}

#[test]
fn small_order_points_give_zero() {
    let enc = small_order_encodings();
    // Only 0 and 1 have a second encoding below 2^255 (p and p + 1):
    // (2·2 + 3)·2.
    assert_eq!(enc.len(), 14);
    let mut rng = ChaCha20Rng::seed_from_u64(0x5a11);
    for b in all() {
        for k in [[0u8; 32], [0xff; 32], random(&mut rng)] {
            let got = batch(b, &k, &enc);
            for (u, r) in enc.iter().zip(&got) {
                assert_eq!(*r, [0; 32], "{b:?} u = {}", hex::encode(u));
                assert_eq!(*r, reference(&k, u));
            }
        }
    }
}

/// u = 0, 1, 9, p − 1, p, p + 1, p + 2, 2^255 − 1 (≡ 18), 2^256 − 1
/// (bit 255 set: the same u), 2^255 (bit 255 alone: u = 0): each against
/// dalek, under the scalars all-zero, all-ff and random.
#[test]
fn edge_coordinates_match_dalek() {
    let p_plus = |d: u8| {
        let mut u = h32("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
        u[0] += d;
        u
    };
    let small = |x: u8| {
        let mut u = [0u8; 32];
        u[0] = x;
        u
    };
    let mut p_minus_1 = p_plus(0);
    p_minus_1[0] -= 1;
    let mut top_only = [0u8; 32];
    top_only[31] = 0x80;
    let mut max255 = [0xff; 32];
    max255[31] = 0x7f;
    let pts = [
        small(0),
        small(1),
        small(9),
        p_minus_1,
        p_plus(0),
        p_plus(1),
        p_plus(2),
        max255,
        [0xff; 32],
        top_only,
    ];
    let mut rng = ChaCha20Rng::seed_from_u64(0xed9e);
    for b in all() {
        for k in [[0u8; 32], [0xff; 32], random(&mut rng), random(&mut rng)] {
            let want: Vec<_> = pts.iter().map(|u| reference(&k, u)).collect();
            assert_eq!(batch(b, &k, &pts), want, "{b:?} k = {}", hex::encode(k));
        }
    }
}

/// 2^255 − 1 (and 2^256 − 1, whose bit 255 is dropped) is 18 + p: its
/// result equals u = 18's.
#[test]
fn non_canonical_u_is_reduced() {
    let mut eighteen = [0u8; 32];
    eighteen[0] = 18;
    let mut max255 = [0xff; 32];
    max255[31] = 0x7f;
    let k = [0x42; 32];
    for b in all() {
        let got = batch(b, &k, &[eighteen, max255, [0xff; 32]]);
        assert_eq!(got[0], got[1], "{b:?}");
        assert_eq!(got[0], got[2], "{b:?}");
        assert_eq!(got[0], reference(&k, &eighteen));
    }
}

#[test]
fn lengths_must_match() {
    let mut out = [[7u8; 32]; 2];
    assert_eq!(
        mul_batch(&[1; 32], &[[9; 32]; 3], &mut out),
        Err(LengthMismatch)
    );
    assert_eq!(
        mul_each(&[[1; 32]; 2], &[[9; 32]; 3], &mut out),
        Err(LengthMismatch)
    );
    assert_eq!(
        mul_each(&[[1; 32]; 3], &[[9; 32]; 2], &mut out),
        Err(LengthMismatch)
    );
    assert_eq!(out, [[7; 32]; 2], "nothing written");
    for b in all() {
        assert_eq!(
            mul_batch_on(b, &[1; 32], &[[9; 32]; 1], &mut out),
            Some(Err(LengthMismatch))
        );
    }
    // The empty batch is a batch.
    assert_eq!(mul_batch(&[1; 32], &[], &mut []), Ok(()));
}

/// The default backend is the widest this CPU has.
#[test]
fn default_backend_is_the_widest() {
    let have = all();
    assert_eq!(x25519_batch::backend(), *have.last().unwrap());
    let _ = Backend::ALL;
}

/// HACL*'s ladder (libcrux-curve25519), the default KEM backend's X25519.
fn hacl(k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
    let mut out = [0u8; 32];
    libcrux_curve25519::hacl::scalarmult(&mut out, k, u);
    out
}

/// s2n-bignum's assembly through graviola (all-zero output reported as
/// an error there, as zeros here), on a CPU with every feature it asserts.
/// Only in builds without debug assertions, as kemsphinx uses it.
#[cfg(all(target_arch = "x86_64", not(debug_assertions)))]
fn s2n(k: &[u8; 32], u: &[u8; 32]) -> Option<[u8; 32]> {
    use graviola::key_agreement::x25519::{PublicKey, StaticPrivateKey};
    if !(std::arch::is_x86_feature_detected!("aes")
        && std::arch::is_x86_feature_detected!("pclmulqdq")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("adx")
        && std::arch::is_x86_feature_detected!("avx")
        && std::arch::is_x86_feature_detected!("avx2"))
    {
        return None;
    }
    Some(
        StaticPrivateKey::from_array(k)
            .diffie_hellman(&PublicKey::from_array(u))
            .map_or([0; 32], |s| s.0),
    )
}

/// The other scalar backends kemsphinx has (HACL*, and s2n-bignum in
/// release builds on x86-64) agree with every batch backend on random
/// inputs, small-order points and non-canonical encodings.
#[test]
fn other_scalar_backends_agree() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5ca1);
    let mut pts: Vec<[u8; 32]> = (0..40).map(|_| random(&mut rng)).collect();
    pts.extend(small_order_encodings());
    pts.push([0xff; 32]);
    for b in all() {
        for k in [random(&mut rng), [0; 32], [0xff; 32]] {
            let got = batch(b, &k, &pts);
            for (u, r) in pts.iter().zip(&got) {
                assert_eq!(*r, hacl(&k, u), "{b:?} vs HACL*, u = {}", hex::encode(u));
                #[cfg(all(target_arch = "x86_64", not(debug_assertions)))]
                if let Some(s) = s2n(&k, u) {
                    assert_eq!(*r, s, "{b:?} vs s2n-bignum, u = {}", hex::encode(u));
                }
            }
        }
    }
}
