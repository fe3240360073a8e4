//! Checks for the KEM and the per-hop primitives.

use kemsphinx::geometry::PRIVATE_KEY_LEN;
use kemsphinx::{PrivateKey, PublicKey, hazmat};
use serde_json::Value;

use crate::case::{computed, decapsulation};

use crate::json::{Outcome, array, bytes, same, string};

/// `kem`: decapsulation, key derivation and the combiner's intermediates.
pub(crate) fn kem(case: &Value) -> Outcome {
    match string(case, "op")? {
        "derive_key_pair" => primitive("derive_key_pair", case),
        op @ ("decapsulate" | "combiner") => {
            let key = key_pair(case)?;
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

/// `record`'s `private_key`, loaded and checked against its `public_key`
/// and, when it lists one, the 96-byte `seed` it is derived from.
pub(super) fn key_pair(record: &Value) -> Result<PrivateKey, String> {
    let private: [u8; PRIVATE_KEY_LEN] = array(record, "private_key")?;
    let key = PrivateKey::from_bytes(&private).map_err(|e| format!("private key refused: {e}"))?;
    same(
        "public key",
        key.public_key().as_bytes(),
        &bytes(record, "public_key")?,
    )?;
    if record.get("seed").is_some() {
        let derived = PrivateKey::from_seed(&array(record, "seed")?);
        same("key from its seed", &derived.to_bytes()[..], &private)?;
    }
    Ok(key)
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

/// `aez`, `kdf`, `stream`, `mac`, `replay_tag`: every field the inputs
/// determine, recomputed and compared (`aez` both ways).
pub(crate) fn primitive(kind: &str, case: &Value) -> Outcome {
    for (name, got) in computed(kind, case)? {
        same(name, &got, &bytes(case, name)?)?;
    }
    Ok(())
}
