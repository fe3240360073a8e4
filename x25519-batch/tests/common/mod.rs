//! What the tests share: the backends this CPU must have, read from the
//! standard library's own feature detection rather than from the crate,
//! so that a backend the crate fails to offer on a CPU that has it fails
//! the tests instead of leaving them with fewer backends to compare.

#![allow(dead_code)]

use x25519_batch::{Backend, mul_batch_on, mul_each_on};

/// Every backend this CPU and build must have, portable first.
pub(crate) fn expected() -> Vec<Backend> {
    #[allow(unused_mut)]
    let mut have = vec![Backend::Portable];
    #[cfg(all(target_arch = "x86_64", not(x25519_backend = "portable")))]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            have.push(Backend::Avx2);
        }
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512ifma")
        {
            have.push(Backend::Ifma);
        }
    }
    have
}

/// [`expected`], after checking that the crate offers exactly those: each
/// one runs, every other one is refused.
pub(crate) fn all() -> Vec<Backend> {
    let have = expected();
    for b in Backend::ALL {
        let offered = mul_batch_on(b, &[0; 32], &[], &mut []).is_some();
        assert_eq!(offered, have.contains(&b), "{b:?}: offered {offered}");
    }
    have
}

/// `X25519(k, u)` for each point on backend `b`, one scalar for all.
pub(crate) fn batch(b: Backend, k: &[u8; 32], points: &[[u8; 32]]) -> Vec<[u8; 32]> {
    let mut out = vec![[0xa5; 32]; points.len()];
    mul_batch_on(b, k, points, &mut out)
        .expect("backend available")
        .expect("lengths match");
    out
}

/// `X25519(k_i, u_i)` for each pair on backend `b`.
pub(crate) fn each(b: Backend, ks: &[[u8; 32]], points: &[[u8; 32]]) -> Vec<[u8; 32]> {
    let mut out = vec![[0xa5; 32]; points.len()];
    mul_each_on(b, ks, points, &mut out)
        .expect("backend available")
        .expect("lengths match");
    out
}

/// 32 bytes from hex.
pub(crate) fn h32(s: &str) -> [u8; 32] {
    hex::decode(s).expect("hex").try_into().expect("32 bytes")
}
