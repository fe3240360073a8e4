//! X25519 for a batch of points under one secret on the workspace's
//! `x25519-batch` crate (feature `x25519-batch`, x86_64): eight points per
//! ladder with AVX-512 IFMA, four with AVX2, detected once per process.
//! Where neither runs (or the build is forced portable with
//! `--cfg kemsphinx_backend="portable"`), [`shared_secrets`] declines and
//! the backend's own X25519 computes each point, as for a single unwrap:
//! `x25519-batch`'s portable ladder would be slower than the backends' own
//! code. Every path computes RFC 7748's function bit for bit (the crate's
//! differential tests; `tests/unwrap_batch.rs` against the scalar path).

use zeroize::Zeroizing;

use crate::geometry::X25519_LEN;

/// Whether batches run on `x25519-batch`'s vector code in this process.
pub(crate) fn active() -> bool {
    !cfg!(kemsphinx_backend = "portable")
        && x25519_batch::backend() != x25519_batch::Backend::Portable
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

/// `X25519(secret, point)` for each of `points` on the vector code, `None`
/// inside where it is all zero (small order); `None` outside when the
/// vector code does not run here.
pub(crate) fn shared_secrets<const N: usize>(
    secret: &[u8; X25519_LEN],
    points: &[[u8; X25519_LEN]; N],
) -> Option<[Option<Zeroizing<[u8; X25519_LEN]>>; N]> {
    if !active() {
        return None;
    }
    let mut out = Zeroizing::new([[0u8; X25519_LEN]; N]);
    x25519_batch::mul_batch(secret, points, &mut out[..]).ok()?;
    Some(
        out.each_ref()
            .map(|dh| (!super::all_zero(dh)).then(|| Zeroizing::new(*dh))),
    )
}
