//! HPQC's own vectors for this crate's KEM (`vectors/upstream/hpqc/`,
//! provenance and schemas in its `PROVENANCE.md`): the `MLKEM768-X25519`
//! split-PRF combiner (a file built by HPQC's Go generator and one by the
//! Lean port), the X25519 adapter, and the BLAKE2b-256 and BLAKE2Xb they are
//! built on. The KEM cases run on every KEM backend this build has (the
//! default build: libcrux, and libcrux's portable code; CI runs this file
//! again on the RustCrypto backend). SPEC.md §10 says what each file
//! checks and which cases cannot run.
//!
//! HPQC records each case under two X25519 adapters: "blake2b-xof", the
//! one the registered `MLKEM768-X25519` (and so this crate) uses, and
//! "sha256-v1", an alternative this crate does not implement. Both share
//! every input; only the adapter's secret and the combined secret differ.
//! For "sha256-v1" cases everything but the adapter's own output runs: the
//! keys, both ciphertexts, ML-KEM, and the combiner over the recorded
//! adapter secret.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kemsphinx::geometry::{MLKEM_CT_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN, X25519_LEN};
use kemsphinx::hazmat::kem_backends::{self as kem, Backend};
use kemsphinx::hazmat::{self, KemCiphertext};
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/upstream/hpqc");

/// The `vectors` of a file, after checking its envelope names `primitive`.
fn vectors(name: &str, primitive: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{DIR}/{name}")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["primitive"], primitive);
    assert_eq!(doc["format_version"], 1);
    doc["vectors"].as_array().unwrap().clone()
}

fn hex(case: &Value, field: &str) -> Vec<u8> {
    hex::decode(case[field].as_str().unwrap()).unwrap()
}

fn array<const N: usize>(case: &Value, field: &str) -> [u8; N] {
    hex(case, field).try_into().unwrap()
}

/// Whether a case uses this crate's X25519 adapter.
fn ours(case: &Value) -> bool {
    match case["prf"].as_str().unwrap() {
        "blake2b-xof" => true,
        "sha256-v1" => false,
        other => panic!("unknown adapter {other}"),
    }
}

/// How many cases of a combiner file ran whole (our adapter) and how many
/// without the adapter's own output.
#[derive(Debug, PartialEq)]
struct Ran {
    whole: usize,
    without_adapter: usize,
}

/// One combiner case on one backend.
fn combiner_case(backend: Backend, case: &Value) {
    let name = case["name"].as_str().unwrap();
    let x_static: [u8; X25519_LEN] = array(case, "x25519_static_private_key_hex");
    let x_ephemeral: [u8; X25519_LEN] = array(case, "x25519_ephemeral_private_key_hex");
    let x_ct: [u8; X25519_LEN] = array(case, "x25519_ciphertext_hex");
    let (ek, mlkem_ct) = (
        hex(case, "mlkem_encapsulation_key_hex"),
        hex(case, "mlkem_ciphertext_hex"),
    );
    let seed: [u8; 64] = [hex(case, "mlkem_d_hex"), hex(case, "mlkem_z_hex")]
        .concat()
        .try_into()
        .unwrap();

    // Each component from the recorded seeds.
    assert_eq!(
        kem::x25519_base_point(backend, &x_static),
        array(case, "x25519_static_public_key_hex"),
        "{name}"
    );
    assert_eq!(
        kem::x25519_base_point(backend, &x_ephemeral),
        x_ct,
        "{name}"
    );
    let (derived_ek, mlkem_ss) =
        kem::mlkem_decapsulate(backend, &seed, mlkem_ct.as_slice().try_into().unwrap());
    assert_eq!(derived_ek.to_vec(), ek, "{name}: ML-KEM encapsulation key");
    assert_eq!(
        mlkem_ss,
        array(case, "mlkem_shared_secret_hex"),
        "{name}: ML-KEM secret"
    );
    let combined_ct = hex(case, "combined_ciphertext_hex");
    assert_eq!(
        combined_ct,
        [&x_ct[..], &mlkem_ct].concat(),
        "{name}: ciphertext order"
    );

    // The combiner over the recorded component secrets and ciphertexts.
    let x_ss: [u8; 32] = array(case, "x25519_shared_secret_hex");
    let combined: [u8; 32] = array(case, "combined_shared_secret_hex");
    let mlkem_ct: [u8; MLKEM_CT_LEN] = mlkem_ct.try_into().unwrap();
    assert_eq!(
        *hazmat::split_prf(&x_ss, &x_ct, &mlkem_ss, &mlkem_ct),
        combined,
        "{name}: split-PRF"
    );
    if !ours(case) {
        return;
    }

    // The whole KEM: the private key as this crate encodes it (X25519
    // secret ‖ ML-KEM encapsulation key ‖ d ‖ z) loads and gives the
    // public key; encapsulating with the recorded randomness gives the
    // ciphertext and secret; decapsulating gives them back, through the
    // adapter.
    let private: [u8; PRIVATE_KEY_LEN] = [&x_static[..], &ek, &seed].concat().try_into().unwrap();
    let public: [u8; PUBLIC_KEY_LEN] = [
        &array::<X25519_LEN>(case, "x25519_static_public_key_hex")[..],
        &ek,
    ]
    .concat()
    .try_into()
    .unwrap();
    assert_eq!(
        kem::public_key(backend, &private).unwrap(),
        public,
        "{name}"
    );
    let (ct, ss) =
        kem::encapsulate_deterministic(backend, &public, &x_ephemeral, &array(case, "mlkem_m_hex"))
            .unwrap();
    assert_eq!(
        ct.to_vec(),
        combined_ct,
        "{name}: encapsulation's ciphertext"
    );
    assert_eq!(*ss.as_bytes(), combined, "{name}: encapsulation's secret");
    let trace = kem::debug_decapsulate(backend, &private, &ct).unwrap();
    assert_eq!(trace.x25519_adapter_shared_secret, x_ss, "{name}: adapter");
    assert_eq!(trace.mlkem_shared_secret, mlkem_ss, "{name}");
    assert_eq!(trace.shared_secret, combined, "{name}: decapsulation");
}

fn combiner_file(name: &str) -> Ran {
    let cases = vectors(name, "mlkem768_x25519_combiner");
    for &backend in Backend::ALL {
        for case in &cases {
            combiner_case(backend, case);
        }
    }
    let whole = cases.iter().filter(|c| ours(c)).count();
    Ran {
        whole,
        without_adapter: cases.len() - whole,
    }
}

#[test]
fn combiner_built_by_hpqcs_go_generator() {
    let ran = combiner_file("mlkem768_x25519_combiner.json");
    assert_eq!(
        ran,
        Ran {
            whole: 3,
            without_adapter: 3
        }
    );
}

#[test]
fn combiner_built_by_hpqcs_lean_port() {
    let ran = combiner_file("lean_mlkem768_x25519_combiner_vectors.json");
    assert_eq!(
        ran,
        Ran {
            whole: 3,
            without_adapter: 0
        }
    );
}

/// The X25519 adapter (hashed ElGamal): the keys for every case; for this
/// crate's adapter, the secret through decapsulation (with an ML-KEM half
/// from a fixed seed beside it, which the adapter's output does not
/// depend on) and the ciphertext through encapsulation.
#[test]
fn x25519_adapter() {
    let cases = vectors("adapter_test_vectors.json", "kem_adapter");
    let seed = [7u8; 64];
    for &backend in Backend::ALL {
        let (ek, _) = kem::mlkem_decapsulate(backend, &seed, &[0; MLKEM_CT_LEN]);
        for case in &cases {
            let name = case["name"].as_str().unwrap();
            assert_eq!(case["nike_name"], "x25519");
            let x_static: [u8; X25519_LEN] = array(case, "static_private_key_hex");
            let x_public: [u8; X25519_LEN] = array(case, "static_public_key_hex");
            let x_ephemeral: [u8; X25519_LEN] = array(case, "ephemeral_private_key_hex");
            let x_ct: [u8; X25519_LEN] = array(case, "ciphertext_hex");
            assert_eq!(
                kem::x25519_base_point(backend, &x_static),
                x_public,
                "{name}"
            );
            assert_eq!(
                kem::x25519_base_point(backend, &x_ephemeral),
                x_ct,
                "{name}"
            );
            if !ours(case) {
                continue;
            }
            let private: [u8; PRIVATE_KEY_LEN] =
                [&x_static[..], &ek, &seed].concat().try_into().unwrap();
            let public: [u8; PUBLIC_KEY_LEN] = [&x_public[..], &ek].concat().try_into().unwrap();
            let (ct, _) =
                kem::encapsulate_deterministic(backend, &public, &x_ephemeral, &[1; 32]).unwrap();
            assert_eq!(ct[..X25519_LEN], x_ct, "{name}: encapsulation");
            let mut ct: KemCiphertext = ct;
            ct[X25519_LEN..].fill(0x5a);
            let trace = kem::debug_decapsulate(backend, &private, &ct).unwrap();
            assert_eq!(
                trace.x25519_adapter_shared_secret,
                array(case, "shared_secret_hex"),
                "{name}"
            );
        }
    }
    assert_eq!(cases.iter().filter(|c| ours(c)).count(), 3);
    assert_eq!(cases.len(), 6);
}

#[test]
fn blake2b_256() {
    let cases = vectors("blake2b_256.json", "blake2b_256");
    for case in &cases {
        let digest = hazmat::blake2b_256(&hex(case, "key_hex"), &hex(case, "msg_hex")).unwrap();
        assert_eq!(digest, array(case, "digest_hex"), "{}", case["name"]);
    }
    assert_eq!(cases.len(), 7);
}

/// BLAKE2Xb as Go's `blake2b.NewXOF(size, key)`: its size 0 is "unknown",
/// BLAKE2X's all-ones length.
#[test]
fn blake2b_xof() {
    let cases = vectors("blake2b_xof.json", "blake2b_xof");
    for case in &cases {
        let size = u32::try_from(case["xof_size"].as_u64().unwrap()).unwrap();
        let xof_len = if size == 0 {
            hazmat::BLAKE2XB_LENGTH_UNKNOWN
        } else {
            size
        };
        let mut out = vec![0u8; usize::try_from(case["length"].as_u64().unwrap()).unwrap()];
        assert!(hazmat::blake2xb(
            &hex(case, "key_hex"),
            &hex(case, "msg_hex"),
            xof_len,
            &mut out
        ));
        assert_eq!(out, hex(case, "out_hex"), "{}", case["name"]);
    }
    assert_eq!(cases.len(), 5);
}

/// What the library refuses rather than panics on.
#[test]
fn blake2_hazmat_refuses_what_blake2b_cannot_take() {
    assert_eq!(hazmat::blake2b_256(&[0; 65], b""), None);
    let mut out = [0xaa; 33];
    assert!(!hazmat::blake2xb(&[0; 65], b"", 32, &mut out[..32]));
    assert!(!hazmat::blake2xb(&[], b"", 32, &mut out));
    assert_eq!(out, [0xaa; 33], "unchanged");
}
