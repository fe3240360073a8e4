//! X25519 for a batch of points under one secret on the workspace's
//! `x25519-batch` crate (feature `x25519-batch`, x86_64): eight points per
//! ladder with AVX-512 IFMA, or four with AVX2 ([`active`]), detected
//! once per process. Otherwise
//! (or when the build is forced portable with
//! `--cfg kemsphinx_backend="portable"`) [`shared_secrets`] declines and
//! the backend's own X25519 computes each point, as for a single unwrap:
//! `x25519-batch`'s portable ladder would be slower than the backends' own
//! code. Every path computes RFC 7748's function bit for bit (the crate's
//! differential tests; `tests/unwrap_batch.rs` against the scalar path).

use zeroize::Zeroizing;

use crate::geometry::X25519_LEN;

/// Whether batches run on `x25519-batch`'s vector code in this process,
/// as measured (`x25519-batch`'s README, on a Zen 4, µs per point in
/// groups of a full vector): the IFMA ladder (6.2 in groups of 8) and the
/// AVX2 one (14.0 in groups of 4) both beat every backend's own X25519,
/// s2n-bignum's assembly (23.8) included, so either is taken wherever the
/// CPU has it.
pub(crate) fn active() -> bool {
    !cfg!(kemsphinx_backend = "portable")
        && matches!(
            x25519_batch::backend(),
            x25519_batch::Backend::Ifma | x25519_batch::Backend::Avx2
        )
}

/// The name of the batch path in this process: `"ifma"`, `"avx2"` or
/// `"scalar"` (the backend's own X25519, one point at a time).
#[cfg(feature = "hazmat")]
pub(crate) fn name() -> &'static str {
    match x25519_batch::backend() {
        _ if !active() => "scalar",
        x25519_batch::Backend::Ifma => "ifma",
        x25519_batch::Backend::Avx2 => "avx2",
        _ => "scalar",
    }
}

/// Fewer points than this go to the backend's X25519 one at a time: a
/// ladder costs the same however many of its lanes are used (IFMA: 50 µs
/// a group of 8, AVX2: 56 µs a group of 4, against 23.8 µs a point on
/// s2n-bignum's assembly), so a group pays from three points on.
pub(crate) const MIN_POINTS: usize = 3;

/// `X25519(secret, point)` for the first `count` of `points` on the vector
/// code, `None` inside where it is all zero (small order) or past
/// `count`; `None` outside when the vector code does not run here or
/// `count` is under [`MIN_POINTS`].
pub(crate) fn shared_secrets<const N: usize>(
    secret: &[u8; X25519_LEN],
    points: &[[u8; X25519_LEN]; N],
    count: usize,
) -> Option<[Option<Zeroizing<[u8; X25519_LEN]>>; N]> {
    if count < MIN_POINTS || !active() {
        return None;
    }
    let mut out = Zeroizing::new([[0u8; X25519_LEN]; N]);
    let used = out.get_mut(..count)?;
    x25519_batch::mul_batch(secret, points.get(..count)?, used).ok()?;
    let mut lane = 0;
    Some(out.each_ref().map(|dh| {
        lane += 1;
        (lane <= count && !super::all_zero(dh)).then(|| Zeroizing::new(*dh))
    }))
}
