//! The implementations this CPU must have, for the tests that compare them.
//! Which ones exist is read here from the standard library's own feature
//! detection, not from the crate, so that a path the crate fails to offer
//! on a CPU that has it fails these tests instead of leaving them with
//! fewer paths to compare.

use aez5::{Aez, Backend};

/// Every implementation this CPU and build must have, portable first.
pub(crate) fn expected() -> Vec<Backend> {
    let mut have = vec![Backend::Portable];
    #[cfg(all(
        target_arch = "x86_64",
        not(aes_backend = "soft"),
        not(aez_backend = "portable")
    ))]
    if std::arch::is_x86_feature_detected!("aes") {
        have.push(Backend::AesNi);
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("vaes")
        {
            have.push(Backend::Vaes);
            if std::arch::is_x86_feature_detected!("avx512f") {
                have.push(Backend::Vaes512);
            }
        }
    }
    have
}

/// An instance on each of [`expected`]; panics if the crate refuses one of
/// them or offers one that is not expected.
pub(crate) fn all(key: &[u8; 48]) -> Vec<Aez> {
    let expected = expected();
    for b in [Backend::AesNi, Backend::Vaes, Backend::Vaes512] {
        if !expected.contains(&b) {
            assert!(
                Aez::with_backend(key, b).is_none(),
                "{b:?} offered, but this CPU or build lacks it"
            );
        }
    }
    expected
        .into_iter()
        .map(|b| {
            let aez = Aez::with_backend(key, b)
                .unwrap_or_else(|| panic!("{b:?} refused, but this CPU and build have it"));
            assert_eq!(aez.backend(), b);
            aez
        })
        .collect()
}
