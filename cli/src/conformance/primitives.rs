//! Checks for the KEM and the per-hop primitives.

use aez5::Aez;
use kemsphinx::{PrivateKey, PublicKey, hazmat};
use serde_json::Value;

use crate::case::{KDF_FIELDS, decapsulation};

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
            let fields = decapsulation(&key, &ciphertext, op == "combiner")?;
            for (name, got) in &fields {
                same(name, got, &bytes(case, name)?)?;
            }
            if case.get("x25519_ephemeral").is_some() || case.get("mlkem_m").is_some() {
                let shared_secret = bytes(case, "shared_secret")?;
                from_randomness(case, key.public_key(), &ciphertext, &shared_secret, "")?;
            }
            Ok(())
        }
        other => Err(format!("unknown kem op `{other}`")),
    }
}

/// The encapsulation randomness `record` lists (`x25519_ephemeral`,
/// `mlkem_m`): encapsulating to `key` with it must give `ciphertext` and
/// `shared_secret`. `what` prefixes the failure.
pub(super) fn from_randomness(
    record: &Value,
    key: &PublicKey,
    ciphertext: &[u8],
    shared_secret: &[u8],
    what: &str,
) -> Outcome {
    let (ct, ss) = hazmat::encapsulate_deterministic(
        key,
        &array(record, "x25519_ephemeral")?,
        &array(record, "mlkem_m")?,
    )
    .map_err(|e| format!("{what}encapsulation failed: {e}"))?;
    same(
        &format!("{what}ciphertext from its randomness"),
        &ct,
        ciphertext,
    )?;
    same(
        &format!("{what}shared secret from its randomness"),
        ss.as_bytes(),
        shared_secret,
    )
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
