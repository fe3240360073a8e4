//! Which code paths this build runs on this CPU: the KEM backend, its
//! X25519 and ML-KEM-768 halves (AVX2, NEON or portable for libcrux), aez5's AEZ-core, and the AES rounds under
//! aez5's portable path and the header stream (the `aes` crate's choice:
//! AES-NI, ARMv8's AES instructions, or its bitsliced code), and the
//! X25519 path of a batch unwrap (`x25519-batch`'s IFMA or AVX2 code, or
//! the backend's X25519 a point at a time). `.ci/platforms` runs
//! it on every target (`-- --nocapture` shows the line) and sets
//! `KEMSPHINX_EXPECT_PATHS` to what that target must run, so that a step
//! meant to exercise, say, graviola's aarch64 assembly fails if it ran the
//! portable code instead.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kemsphinx::hazmat::kem_backends;

/// `backend x25519 mlkem aez aes`, each a short name.
fn paths() -> String {
    let x25519 = match kemsphinx::KEM_BACKEND {
        "libcrux" if kem_backends::x25519_asm_active() => "s2n-asm",
        "libcrux" => "hacl-portable",
        _ => "dalek",
    };
    let mlkem = match kemsphinx::KEM_BACKEND {
        "libcrux" if mlkem_avx2() => "libcrux-avx2",
        "libcrux" if mlkem_neon() => "libcrux-neon",
        "libcrux" => "libcrux-portable",
        _ => "rustcrypto",
    };
    let aez = match aez5::Aez::new(&[0; 48]).backend() {
        aez5::Backend::Portable => "portable".to_owned(),
        aez5::Backend::AesNi => "aesni".to_owned(),
        aez5::Backend::Vaes => "vaes".to_owned(),
        aez5::Backend::Vaes512 => "vaes512".to_owned(),
        other => format!("{other:?}"),
    };
    format!(
        "{} {x25519} {mlkem} {aez} {} batch-{}",
        kemsphinx::KEM_BACKEND,
        aes(),
        kem_backends::x25519_batch_path()
    )
}

/// The `aes` crate's AES: it uses the CPU's instructions when it detects
/// them (the same detection as here) unless built with
/// `--cfg aes_backend="soft"`, and its bitsliced code otherwise.
fn aes() -> &'static str {
    #[cfg(all(target_arch = "x86_64", not(aes_backend = "soft")))]
    if std::arch::is_x86_feature_detected!("aes") {
        return "aes-ni";
    }
    #[cfg(all(target_arch = "aarch64", not(aes_backend = "soft")))]
    if std::arch::is_aarch64_feature_detected!("aes") {
        return "armv8-aes";
    }
    "bitsliced-aes"
}

#[cfg(feature = "libcrux")]
fn mlkem_avx2() -> bool {
    kem_backends::mlkem_avx2_active()
}

#[cfg(not(feature = "libcrux"))]
fn mlkem_avx2() -> bool {
    false
}

#[cfg(feature = "libcrux")]
fn mlkem_neon() -> bool {
    kem_backends::mlkem_neon_active()
}

#[cfg(not(feature = "libcrux"))]
fn mlkem_neon() -> bool {
    false
}

#[test]
fn the_code_paths_are_the_expected_ones() {
    let paths = paths();
    println!(
        "code paths on {} ({}-endian, {}-bit pointers): {paths}",
        std::env::consts::ARCH,
        if cfg!(target_endian = "big") {
            "big"
        } else {
            "little"
        },
        usize::BITS,
    );
    // Only x86_64 has the AVX2 ML-KEM and the AES-NI/VAES AEZ code.
    if !cfg!(target_arch = "x86_64") {
        assert!(!paths.contains("avx2"), "{paths}");
        assert!(paths.contains(" portable "), "{paths}");
    }
    // NEON ML-KEM only on aarch64, and there always on libcrux unless the
    // build forces the portable code.
    if !cfg!(target_arch = "aarch64") {
        assert!(!paths.contains("neon"), "{paths}");
    } else if kemsphinx::KEM_BACKEND == "libcrux" && !cfg!(kemsphinx_backend = "portable") {
        assert!(paths.contains(" libcrux-neon "), "{paths}");
    }
    // Only x86_64 and aarch64 have s2n-bignum's X25519 and AES instructions.
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert!(!paths.contains("s2n-asm"), "{paths}");
        assert!(paths.contains(" bitsliced-aes "), "{paths}");
    }
    // The batched X25519 runs only on x86_64, and there on IFMA whenever
    // the CPU has it (with AVX-512DQ, which every IFMA CPU has), unless the build leaves it out or forces the
    // portable code (on AVX2 only where the backend's X25519 is not
    // s2n-bignum's assembly, which is faster).
    if !cfg!(target_arch = "x86_64") {
        assert!(paths.ends_with(" batch-scalar"), "{paths}");
    }
    #[cfg(target_arch = "x86_64")]
    if cfg!(feature = "x25519-batch")
        && !cfg!(kemsphinx_backend = "portable")
        && std::arch::is_x86_feature_detected!("avx512ifma")
        && std::arch::is_x86_feature_detected!("avx512dq")
    {
        assert!(paths.ends_with(" batch-ifma"), "{paths}");
    }
    if paths.contains(" s2n-asm ") {
        assert!(!paths.ends_with(" batch-avx2"), "{paths}");
    }
    if let Ok(expected) = std::env::var("KEMSPHINX_EXPECT_PATHS") {
        assert_eq!(
            paths, expected,
            "not the code paths this run is meant to test"
        );
    }
}
