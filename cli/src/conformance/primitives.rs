//! Checks for the KEM and the per-hop primitives.

use std::ops::Range;

use kemsphinx::aez::Aez;
use kemsphinx::geometry::X25519_LEN;
use kemsphinx::geometry::layout::kdf;
use kemsphinx::{PrivateKey, hazmat};
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
            let ciphertext = array(case, "ciphertext")?;
            let traced = hazmat::debug_decapsulate(&key, &ciphertext)
                .map_err(|e| format!("decapsulation failed: {e}"))?;
            if case.get("x25519_ephemeral").is_some() || case.get("mlkem_m").is_some() {
                encapsulation(case, &key, &ciphertext, &traced.shared_secret)?;
            }
            if op == "combiner" {
                same(
                    "x25519_shared_secret",
                    &x25519_raw(&key.to_bytes()[..X25519_LEN], &ciphertext)?,
                    &bytes(case, "x25519_shared_secret")?,
                )?;
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

/// The optional encapsulation randomness of a `decapsulate` or `combiner`
/// case: encapsulating to the public key with it must give the case's
/// ciphertext and shared secret.
fn encapsulation(
    case: &Value,
    key: &PrivateKey,
    ciphertext: &hazmat::KemCiphertext,
    shared_secret: &[u8; 32],
) -> Outcome {
    let (ct, ss) = key
        .public_key()
        .encapsulate_deterministic(&array(case, "x25519_ephemeral")?, &array(case, "mlkem_m")?)
        .map_err(|e| format!("encapsulation failed: {e}"))?;
    same("ciphertext from the randomness", &ct, ciphertext)?;
    same(
        "shared secret from the randomness",
        ss.as_bytes(),
        shared_secret,
    )
}

/// Raw X25519 of a secret (clamped) and a point, as the combiner's
/// `x25519_shared_secret` records it. Computed with `x25519-dalek`, an
/// implementation independent of the library's own (HACL* via libcrux), so
/// this intermediate is checked by a second opinion.
pub(crate) fn x25519_raw(
    secret: &[u8],
    ciphertext: &hazmat::KemCiphertext,
) -> Result<[u8; 32], String> {
    let secret: [u8; X25519_LEN] = secret.try_into().map_err(|_| "short X25519 secret")?;
    let point: [u8; X25519_LEN] = ciphertext
        .get(..X25519_LEN)
        .and_then(|p| p.try_into().ok())
        .ok_or("short ciphertext")?;
    Ok(x25519_dalek::StaticSecret::from(secret)
        .diffie_hellman(&x25519_dalek::PublicKey::from(point))
        .to_bytes())
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

/// The `kdf` kind's fields: the parts of the 160-byte output by name.
pub(crate) const KDF_FIELDS: [(&str, Range<usize>); 4] = [
    ("header_mac_key", kdf::MAC_KEY),
    ("header_encryption_key", kdf::STREAM_KEY),
    ("header_encryption_iv", kdf::STREAM_IV),
    ("payload_encryption_key", kdf::SPRP_KEY),
];

/// `kdf`: HKDF-Expand and its split into per-hop keys.
pub(crate) fn kdf(case: &Value) -> Outcome {
    let okm = hazmat::kdf(&array(case, "ikm")?);
    same("okm", &okm[..], &bytes(case, "okm")?)?;
    for (name, range) in KDF_FIELDS {
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
    hazmat::keystream(&array(case, "key")?, &array(case, "iv")?, &mut got);
    same("keystream", &got, &want)
}

/// `mac`: HMAC-SHA256 with a 32-byte key.
pub(crate) fn mac(case: &Value) -> Outcome {
    same(
        "mac",
        &hazmat::mac(&array(case, "key")?, &bytes(case, "message")?),
        &bytes(case, "mac")?,
    )
}

/// `replay_tag`: SHA-512/256 of the KEM ciphertext.
pub(crate) fn replay_tag(case: &Value) -> Outcome {
    let tag = hazmat::replay_tag_of(&array(case, "kem_ciphertext")?);
    same("replay tag", &tag.0, &bytes(case, "replay_tag")?)
}
