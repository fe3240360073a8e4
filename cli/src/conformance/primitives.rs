//! Checks for the KEM and the per-hop primitives.

use kemsphinx::aez::Aez;
use kemsphinx::{PrivateKey, ReplayTag, hop, kem};
use serde_json::Value;

use super::json::{Outcome, array, bytes, same, string};

/// `kem`: decapsulation, key derivation and the combiner's intermediates.
pub(crate) fn kem(case: &Value) -> Outcome {
    match string(case, "op")? {
        "derive_key_pair" => {
            let key = PrivateKey::from_seed(&array(case, "seed")?);
            same(
                "public key",
                key.public_key().as_bytes(),
                &bytes(case, "public_key")?,
            )?;
            same(
                "private key",
                &key.to_bytes()[..],
                &bytes(case, "private_key")?,
            )
        }
        op @ ("decapsulate" | "combiner") => {
            let key = PrivateKey::from_bytes(&array(case, "private_key")?)
                .map_err(|e| format!("private key refused: {e}"))?;
            same(
                "public key",
                key.public_key().as_bytes(),
                &bytes(case, "public_key")?,
            )?;
            let traced = kem::debug_decapsulate(&key, &array(case, "ciphertext")?)
                .map_err(|e| format!("decapsulation failed: {e}"))?;
            if op == "combiner" {
                let steps: [(&str, &[u8]); 6] = [
                    (
                        "x25519_adapter_shared_secret",
                        &traced.x25519_adapter_shared_secret,
                    ),
                    ("mlkem_shared_secret", &traced.mlkem_shared_secret),
                    ("splitprf_key_x25519", &traced.splitprf_key_x25519),
                    ("splitprf_key_mlkem", &traced.splitprf_key_mlkem),
                    ("splitprf_hash_x25519", &traced.splitprf_hash_x25519),
                    ("splitprf_hash_mlkem", &traced.splitprf_hash_mlkem),
                ];
                for (name, got) in steps {
                    same(name, got, &bytes(case, name)?)?;
                }
            }
            same(
                "shared secret",
                &traced.shared_secret,
                &bytes(case, "shared_secret")?,
            )
        }
        other => Err(format!("unknown kem op `{other}`")),
    }
}

/// `aez`: the SPRP both ways (τ = 0, no AD, 48-byte key).
pub(crate) fn aez(case: &Value) -> Outcome {
    let aez = Aez::new(&array(case, "key")?);
    let nonce = array(case, "nonce")?;
    let plaintext = bytes(case, "plaintext")?;
    let ciphertext = bytes(case, "ciphertext")?;
    let mut buf = plaintext.clone();
    aez.encipher(&nonce, &mut buf);
    same("encipher", &buf, &ciphertext)?;
    aez.decipher(&nonce, &mut buf);
    same("decipher", &buf, &plaintext)
}

/// `kdf`: HKDF-Expand and its split into per-hop keys.
pub(crate) fn kdf(case: &Value) -> Outcome {
    let okm = hop::debug_kdf(&array(case, "ikm")?);
    same("okm", &okm[..], &bytes(case, "okm")?)?;
    let parts = [
        ("header_mac_key", 0..32),
        ("header_encryption_key", 32..64),
        ("header_encryption_iv", 64..80),
        ("payload_encryption_key", 80..128),
    ];
    for (name, range) in parts {
        same(
            name,
            okm.get(range).unwrap_or_default(),
            &bytes(case, name)?,
        )?;
    }
    Ok(())
}

/// `stream`: the AES-256-CTR keystream prefix.
pub(crate) fn stream(case: &Value) -> Outcome {
    let want = bytes(case, "keystream")?;
    let mut got = vec![0u8; want.len()];
    hop::debug_keystream(&array(case, "key")?, &array(case, "iv")?, &mut got);
    same("keystream", &got, &want)
}

/// `replay_tag`: SHA-512/256 of the KEM ciphertext.
pub(crate) fn replay_tag(case: &Value) -> Outcome {
    let tag = ReplayTag::of_ciphertext(&array(case, "kem_ciphertext")?);
    same("replay tag", &tag.0, &bytes(case, "replay_tag")?)
}
