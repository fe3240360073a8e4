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
//!
//! With feature `hazmat`, a tool may choose the backend for the process
//! ([`choose`]), so that a path the CPU would not pick is measured and
//! tested too (AVX2 on a CPU with IFMA); without it, the choice is always
//! the automatic one.

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
/// `"scalar"` (the backend's own X25519, one point at a time), or
/// `"portable"` when a tool has chosen `x25519-batch`'s portable ladder
/// ([`choose`]).
#[cfg(feature = "hazmat")]
pub(crate) fn name() -> &'static str {
    chosen().map_or_else(automatic_name, label)
}

/// The name of the path batches take in this process when no tool has
/// chosen one: `"ifma"`, `"avx2"` or `"scalar"`.
#[cfg(feature = "hazmat")]
pub(crate) fn automatic_name() -> &'static str {
    if active() {
        label(x25519_batch::backend())
    } else {
        "scalar"
    }
}

/// A backend's name in [`name`] and [`automatic_name`].
#[cfg(feature = "hazmat")]
fn label(backend: x25519_batch::Backend) -> &'static str {
    match backend {
        x25519_batch::Backend::Ifma => "ifma",
        x25519_batch::Backend::Avx2 => "avx2",
        x25519_batch::Backend::Portable => "portable",
        _ => "scalar",
    }
}

/// The backend a tool chose for this process's batches (feature `hazmat`,
/// [`choose`]); `None` (the automatic choice, [`active`]) without it.
fn chosen() -> Option<x25519_batch::Backend> {
    #[cfg(feature = "hazmat")]
    return choice::get();
    #[cfg(not(feature = "hazmat"))]
    None
}

/// Whether batches can run on `backend` in this process: this CPU has its
/// instructions, and the build is not forced portable
/// (`--cfg kemsphinx_backend="portable"`, which leaves only the portable
/// ladder).
#[cfg(feature = "hazmat")]
pub(crate) fn available(backend: x25519_batch::Backend) -> bool {
    let vector = backend != x25519_batch::Backend::Portable;
    !(vector && cfg!(kemsphinx_backend = "portable"))
        && choice::encode(backend).is_some()
        && x25519_batch::mul_batch_on(backend, &[0; X25519_LEN], &[], &mut []).is_some()
}

/// Make this process's batches run on `backend` (feature `hazmat`: tools
/// and benchmarks measuring a path the CPU would not pick, such as AVX2
/// on a CPU with IFMA), or on the automatic choice with `None`. Returns
/// `false`, changing nothing, if `backend` is not [`available`].
#[cfg(feature = "hazmat")]
pub(crate) fn choose(backend: Option<x25519_batch::Backend>) -> bool {
    choose_if(backend, available)
}

/// [`choose`] with what is available given, so that the refusal is tested
/// on a CPU that has every backend.
#[cfg(feature = "hazmat")]
fn choose_if(
    backend: Option<x25519_batch::Backend>,
    available: impl Fn(x25519_batch::Backend) -> bool,
) -> bool {
    let accepted = backend.is_none_or(available);
    if accepted {
        choice::set(backend);
    }
    accepted
}

/// The chosen backend, one process-wide atomic: 0 is the automatic
/// choice. Relaxed: it publishes nothing but itself, and a batch reads it
/// once.
#[cfg(feature = "hazmat")]
mod choice {
    use core::sync::atomic::{AtomicU8, Ordering};

    use x25519_batch::Backend;

    static CHOICE: AtomicU8 = AtomicU8::new(0);

    /// A backend's code in [`CHOICE`]; `None` for backends this crate
    /// does not know (it names each in [`super::name`]).
    pub(super) fn encode(backend: Backend) -> Option<u8> {
        match backend {
            Backend::Portable => Some(1),
            Backend::Avx2 => Some(2),
            Backend::Ifma => Some(3),
            _ => None,
        }
    }

    pub(super) fn get() -> Option<Backend> {
        match CHOICE.load(Ordering::Relaxed) {
            1 => Some(Backend::Portable),
            2 => Some(Backend::Avx2),
            3 => Some(Backend::Ifma),
            _ => None,
        }
    }

    pub(super) fn set(backend: Option<Backend>) {
        CHOICE.store(backend.and_then(encode).unwrap_or(0), Ordering::Relaxed);
    }
}

/// Fewer points than this go to the backend's X25519 one at a time: a
/// ladder costs the same however many of its lanes are used (IFMA: 50 µs
/// a group of 8, AVX2: 56 µs a group of 4, against 23.8 µs a point on
/// s2n-bignum's assembly), so a group pays from three points on.
pub(crate) const MIN_POINTS: usize = 3;

/// `X25519(secret, point)` for the first `count` of `points` on the vector
/// code (or on the backend a tool chose, feature `hazmat`), `None` inside
/// where it is all zero (small order) or past `count`; `None` outside
/// when neither runs here or `count` is under [`MIN_POINTS`].
pub(crate) fn shared_secrets<const N: usize>(
    secret: &[u8; X25519_LEN],
    points: &[[u8; X25519_LEN]; N],
    count: usize,
) -> Option<[Option<Zeroizing<[u8; X25519_LEN]>>; N]> {
    if count < MIN_POINTS {
        return None;
    }
    let chosen = chosen();
    if chosen.is_none() && !active() {
        return None;
    }
    let mut out = Zeroizing::new([[0u8; X25519_LEN]; N]);
    let used = out.get_mut(..count)?;
    let points = points.get(..count)?;
    match chosen {
        Some(backend) => x25519_batch::mul_batch_on(backend, secret, points, used)?,
        None => x25519_batch::mul_batch(secret, points, used),
    }
    .ok()?;
    let mut lane = 0;
    Some(out.each_ref().map(|dh| {
        lane += 1;
        (lane <= count && !super::all_zero(dh)).then(|| Zeroizing::new(*dh))
    }))
}

#[cfg(all(test, feature = "hazmat"))]
mod tests {
    use x25519_batch::Backend;

    use super::{automatic_name, choice, choose_if, name};

    #[test]
    fn an_unavailable_backend_is_refused_and_changes_nothing() {
        // The only test in this binary that chooses: nothing else reads
        // or sets the choice concurrently.
        let before = name();
        for backend in Backend::ALL {
            assert!(!choose_if(Some(backend), |_| false), "{backend:?}");
            assert_eq!(choice::get(), None);
            assert_eq!(name(), before);
        }
        assert!(choose_if(Some(Backend::Portable), |b| b == Backend::Portable));
        assert_eq!(choice::get(), Some(Backend::Portable));
        assert_eq!(name(), "portable");
        assert!(!choose_if(Some(Backend::Avx2), |b| b == Backend::Portable));
        assert_eq!(
            choice::get(),
            Some(Backend::Portable),
            "the earlier choice stays"
        );
        assert_eq!(
            automatic_name(),
            before,
            "the automatic path, whatever is chosen"
        );
        assert!(
            choose_if(None, |_| false),
            "the automatic choice is always available"
        );
        assert_eq!(choice::get(), None);
        assert_eq!(name(), before);
    }
}
