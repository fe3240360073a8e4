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

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use kemsphinx::geometry::ENCRYPTED_PAYLOAD_LEN;
use kemsphinx::hazmat::kem_backends::{self as differential, Backend};
use kemsphinx::{PrivateKey, hazmat};
use kemsphinx_support::bench::Net;
use kemsphinx_support::bench::cases::{self, OwnedCase, UNWRAP_PARTS};

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

/// One unwrap and each primitive it is made of (the report's table:
/// `kemsphinx_support::bench::cases::unwrap_parts`).
#[divan::bench(args = UNWRAP_PARTS)]
fn unwrap_part(b: Bencher, name: &str) {
    let net = Net::new();
    let case = cases::find(cases::unwrap_parts(&net), name)
        .unwrap()
        .unwrap();
    let (setup, run) = (case.setup, case.run);
    b.with_inputs(setup).bench_local_refs(run);
}

/// AES-256-CTR over 10,188 bytes, and AEZ both ways on every
/// implementation this CPU has (the report's table:
/// `kemsphinx_support::bench::cases::aez_and_ctr`).
#[divan::bench(args = cases::aez_and_ctr_names())]
#[allow(clippy::ptr_arg)] // divan hands each argument by reference
fn aez_and_ctr(b: Bencher, name: &String) {
    let case = OwnedCase::find(cases::aez_and_ctr(), name).unwrap();
    let (setup, run) = (case.setup, case.run);
    b.counter(BytesCount::new(ENCRYPTED_PAYLOAD_LEN))
        .with_inputs(setup)
        .bench_local_refs(run);
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
