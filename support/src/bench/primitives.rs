//! The primitives of one unwrap that the library does not expose as hooks,
//! run alone the way the selected KEM backend runs them.

use kemsphinx::geometry::MLKEM_CT_LEN;

/// ML-KEM-768 decapsulation alone, with the crate, code path and key form
/// the selected KEM backend ([`kemsphinx::KEM_BACKEND`]) uses on unwrap:
/// libcrux's unpacked key pair (AVX2 where the CPU has it and the build is
/// not forced portable), or RustCrypto `ml-kem`'s expanded key.
pub struct MlKemAlone {
    path: &'static str,
    ciphertext: [u8; MLKEM_CT_LEN],
    run: Box<dyn FnMut() -> [u8; 32]>,
}

impl Default for MlKemAlone {
    fn default() -> Self {
        Self::new()
    }
}

impl MlKemAlone {
    /// The seed `d ‖ z` of the key.
    pub const SEED: [u8; 64] = [7; 64];

    /// A key from [`MlKemAlone::SEED`] and a ciphertext to it, on the selected
    /// backend's code path.
    #[must_use]
    pub fn new() -> Self {
        if kemsphinx::KEM_BACKEND == "rustcrypto" {
            return Self::rustcrypto();
        }
        #[cfg(target_arch = "x86_64")]
        if libcrux_avx2() {
            use libcrux_ml_kem::mlkem768::avx2::unpacked as avx2;
            let kp = avx2::generate_key_pair(Self::SEED);
            let (ct, _) = avx2::encapsulate(kp.public_key(), [9; 32]);
            return Self {
                path: "libcrux-ml-kem, AVX2",
                ciphertext: *ct.as_slice(),
                run: Box::new(move || avx2::decapsulate(&kp, &ct)),
            };
        }
        use libcrux_ml_kem::mlkem768::portable::unpacked as portable;
        let kp = portable::generate_key_pair(Self::SEED);
        let (ct, _) = portable::encapsulate(kp.public_key(), [9; 32]);
        Self {
            path: "libcrux-ml-kem, portable",
            ciphertext: *ct.as_slice(),
            run: Box::new(move || portable::decapsulate(&kp, &ct)),
        }
    }

    /// RustCrypto `ml-kem`, as the `rustcrypto` backend runs it.
    fn rustcrypto() -> Self {
        use ml_kem::kem::Decapsulate;
        let dk = ml_kem::DecapsulationKey::<ml_kem::MlKem768>::from_seed(Self::SEED.into());
        let (ct, _) = dk
            .encapsulation_key()
            .encapsulate_deterministic(&[9; 32].into());
        Self {
            path: "RustCrypto ml-kem, portable",
            ciphertext: ct.into(),
            run: Box::new(move || dk.decapsulate(&ct).into()),
        }
    }

    /// One decapsulation; returns the shared secret.
    pub fn decapsulate(&mut self) -> [u8; 32] {
        (self.run)()
    }

    /// The ciphertext it decapsulates.
    #[must_use]
    pub fn ciphertext(&self) -> &[u8; MLKEM_CT_LEN] {
        &self.ciphertext
    }

    /// The crate and code path this runs on, e.g. `libcrux-ml-kem, AVX2`.
    #[must_use]
    pub fn path(&self) -> &'static str {
        self.path
    }
}

/// Whether the libcrux backend runs ML-KEM on AVX2 in this process (as
/// `kemsphinx`'s own choice: the CPU has AVX2 and the build is not forced
/// portable with `--cfg kemsphinx_backend="portable"`).
#[must_use]
pub fn libcrux_avx2() -> bool {
    cfg!(target_arch = "x86_64")
        && !cfg!(kemsphinx_backend = "portable")
        && libcrux_platform::simd256_support()
}

/// The BLAKE2b work of one decapsulation: the adapter's BLAKE2Xb (a root
/// and one output node) and the split PRF's two key hashes and two keyed
/// hashes over the 1,143-byte message.
#[must_use]
pub fn blake2b_kem_work(msg: &[u8; 1_143]) -> [blake2b_simd::Hash; 2] {
    let root = blake2b_simd::Params::new()
        .hash_length(64)
        .key(&[1; 32])
        .node_offset(32 << 32)
        .hash(&[2; 64]);
    let node = blake2b_simd::Params::new()
        .hash_length(32)
        .fanout(0)
        .max_depth(0)
        .max_leaf_length(64)
        .node_offset(32 << 32)
        .inner_hash_length(64)
        .hash(root.as_bytes());
    let kx = blake2b_simd::Params::new()
        .hash_length(32)
        .hash(node.as_bytes());
    let km = blake2b_simd::Params::new().hash_length(32).hash(&[3; 32]);
    [
        blake2b_simd::Params::new()
            .hash_length(32)
            .key(kx.as_bytes())
            .hash(msg),
        blake2b_simd::Params::new()
            .hash_length(32)
            .key(km.as_bytes())
            .hash(msg),
    ]
}
