//! The primitives one unwrap is made of, each alone, so the cost of an
//! unwrap can be compared with the sum of its parts (`cargo bench --bench
//! primitives`). Sizes are the ones a hop processes.
//!
//! The KEM benches run on every backend compiled in (`kem::differential`):
//! `libcrux` (as the library runs it: AVX2 ML-KEM, X25519 on verified
//! assembly where the CPU has them), `libcrux-portable`, and, built with
//! `--features rustcrypto`, `rustcrypto` (which is then also the backend
//! behind `hybrid_decapsulate` and the packet benches).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use aes::Aes256;
use aez5::Aez;
use ctr::Ctr128BE;
use ctr::cipher::{KeyIvInit, StreamCipher};
use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use hmac::{Hmac, KeyInit, Mac};
use kemsphinx::geometry::{
    ENCRYPTED_PAYLOAD_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN, MAC_LEN, STREAM_LEN,
};
use kemsphinx::hazmat::kem_backends::{self as differential, Backend};
use kemsphinx::{PrivateKey, hazmat};
use kemsphinx_support::bench::{self as fixtures, MlKemAlone};
use sha2::Sha256;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

/// The ML-KEM-768 decapsulation the unwrap path uses, on its own (the
/// selected backend's crate and code path: libcrux unpacked, AVX2 where
/// available; or RustCrypto `ml-kem`).
#[divan::bench]
fn mlkem768_decapsulate(b: Bencher) {
    let mut mlkem = MlKemAlone::new();
    b.bench_local(|| mlkem.decapsulate());
}

/// ML-KEM-768 encapsulation to an expanded public key, on its own.
#[divan::bench]
fn mlkem768_encapsulate(b: Bencher) {
    use libcrux_ml_kem::mlkem768::portable::unpacked as portable;
    #[cfg(target_arch = "x86_64")]
    if libcrux_platform::simd256_support() {
        use libcrux_ml_kem::mlkem768::avx2::unpacked as avx2;
        let kp = avx2::generate_key_pair([7; 64]);
        return b.bench_local(|| avx2::encapsulate(kp.public_key(), black_box([9; 32])));
    }
    let kp = portable::generate_key_pair([7; 64]);
    b.bench_local(|| portable::encapsulate(kp.public_key(), black_box([9; 32])));
}

/// RustCrypto `ml-kem`'s ML-KEM-768 decapsulation, expanded key cached (the
/// `rustcrypto` backend's).
#[divan::bench]
fn mlkem768_decapsulate_rustcrypto(b: Bencher) {
    use ml_kem::kem::Decapsulate;
    let dk = ml_kem::DecapsulationKey::<ml_kem::MlKem768>::from_seed([7; 64].into());
    let (ct, _) = dk
        .encapsulation_key()
        .encapsulate_deterministic(&[9; 32].into());
    b.bench_local(|| dk.decapsulate(black_box(&ct)));
}

/// X25519 with a variable point (what decapsulation does), per backend.
#[divan::bench(args = Backend::ALL)]
fn x25519_shared_secret(b: Bencher, backend: &Backend) {
    let point = differential::x25519_base_point(*backend, &[5; 32]);
    b.bench_local(|| differential::x25519(*backend, black_box(&[3; 32]), black_box(&point)));
}

/// X25519 with the base point (what encapsulation adds), per backend.
#[divan::bench(args = Backend::ALL)]
fn x25519_base_point(b: Bencher, backend: &Backend) {
    b.bench_local(|| differential::x25519_base_point(*backend, black_box(&[5; 32])));
}

/// The BLAKE2b work of one decapsulation (see `kemsphinx_support::bench::blake2b_kem_work`).
#[divan::bench]
fn blake2b_kem_work(b: Bencher) {
    let msg = [0x5au8; 1_143];
    b.bench_local(|| fixtures::blake2b_kem_work(black_box(&msg)));
}

/// HKDF-SHA256-Expand to 160 bytes (the per-hop key set).
#[divan::bench]
fn hkdf_expand_160(b: Bencher) {
    b.bench_local(|| hazmat::kdf(black_box(&[4; 32])));
}

/// AES-256-CTR over one hop's 6,010-byte header keystream.
#[divan::bench]
fn aes256_ctr_6010(b: Bencher) {
    let mut buf = vec![0u8; STREAM_LEN];
    b.counter(BytesCount::new(STREAM_LEN)).bench_local(|| {
        let mut c = Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into());
        c.apply_keystream(black_box(&mut buf));
    });
}

/// AES-256-CTR over 10,188 bytes, the yardstick for AEZ.
#[divan::bench]
fn aes256_ctr_10188(b: Bencher) {
    let mut buf = vec![0u8; ENCRYPTED_PAYLOAD_LEN];
    b.counter(BytesCount::new(ENCRYPTED_PAYLOAD_LEN))
        .bench_local(|| {
            let mut c = Ctr128BE::<Aes256>::new(&[1; 32].into(), &[2; 16].into());
            c.apply_keystream(black_box(&mut buf));
        });
}

/// HMAC-SHA256 over the 5,930 authenticated header bytes.
#[divan::bench]
fn hmac_sha256_5930(b: Bencher) {
    let msg = vec![0u8; HEADER_LEN - MAC_LEN];
    b.counter(BytesCount::new(msg.len())).bench_local(|| {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&[6; MAC_LEN]).unwrap();
        m.update(black_box(&msg));
        m.finalize()
    });
}

/// AEZ encipher of a 10,188-byte payload (key setup included, as per hop).
#[divan::bench]
fn aez_encipher_10188(b: Bencher) {
    let mut buf = vec![0u8; ENCRYPTED_PAYLOAD_LEN];
    b.counter(BytesCount::new(ENCRYPTED_PAYLOAD_LEN))
        .bench_local(|| Aez::new(black_box(&[8; 48])).encipher(&[9; 16], &mut buf));
}

/// AEZ decipher of a 10,188-byte payload (key setup included, as per hop).
#[divan::bench]
fn aez_decipher_10188(b: Bencher) {
    let mut buf = vec![0u8; ENCRYPTED_PAYLOAD_LEN];
    b.counter(BytesCount::new(ENCRYPTED_PAYLOAD_LEN))
        .bench_local(|| Aez::new(black_box(&[8; 48])).decipher(&[9; 16], &mut buf));
}

/// SHA-512/256 of a KEM ciphertext: the replay tag.
#[divan::bench]
fn replay_tag(b: Bencher) {
    let ct = [0x77u8; KEM_CIPHERTEXT_LEN];
    b.bench_local(|| hazmat::replay_tag_of(black_box(&ct)));
}

/// The whole hybrid decapsulation through the crate (cached expanded key;
/// the selected backend).
#[divan::bench]
fn hybrid_decapsulate(b: Bencher) {
    let key = PrivateKey::from_seed(&[1; 96]);
    let mut rng = chacha20::ChaCha20Rng::from_seed([2; 32]);
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut rng).unwrap();
    b.bench_local(|| hazmat::decapsulate(&key, black_box(&ct)));
}

/// Loading a private key encoding and one hybrid decapsulation, per
/// backend (the differential hooks are stateless: each call loads its key,
/// which checks the stored encapsulation key against its seed).
#[divan::bench(args = Backend::ALL)]
fn hybrid_load_and_decapsulate_on(b: Bencher, backend: &Backend) {
    let key = PrivateKey::from_seed(&[1; 96]);
    let mut rng = chacha20::ChaCha20Rng::from_seed([2; 32]);
    let (ct, _) = hazmat::encapsulate(key.public_key(), &mut rng).unwrap();
    let private = key.to_bytes();
    b.bench_local(|| differential::decapsulate(*backend, black_box(&private), black_box(&ct)));
}

use rand_core::SeedableRng;
