//! Cases for the KEM and the per-hop primitives: `kem`, `aez`, `kdf`,
//! `stream`, `mac`, `replay_tag`.

use kemsphinx::geometry::{
    ENCRYPTED_PAYLOAD_LEN, KEM_CIPHERTEXT_LEN, KEY_SEED_LEN, X25519_LEN, layout,
};
use kemsphinx::{PrivateKey, hazmat};
use serde_json::{Value, json};

use super::drbg::{Drbg, Gen};
use crate::case::computed;
use crate::case::hex;

/// Fixed encapsulation randomness: X25519 ephemeral secret, ML-KEM `m`.
type Randomness = ([u8; 32], [u8; 32]);

/// `kem`: key derivation, encapsulation with recorded randomness,
/// decapsulation, combiner intermediates, and non-canonical X25519 halves.
pub(crate) fn kem(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let mut cases = Vec::new();
    let fixed: [(&str, [u8; KEY_SEED_LEN]); 2] = [
        ("all-zero seed", [0; KEY_SEED_LEN]),
        ("all-0xff seed", [0xff; KEY_SEED_LEN]),
    ];
    for (n, (what, seed)) in fixed.into_iter().enumerate() {
        cases.push(derive(&format!("kem-derive-{n:02}"), &seed, what)?);
    }
    for n in 2..4 {
        let seed = rng.array::<KEY_SEED_LEN>();
        cases.push(derive(
            &format!("kem-derive-{n:02}"),
            &seed,
            "seed from the DRBG",
        )?);
    }
    let randomness: [(&str, Option<Randomness>); 5] = [
        ("randomness from the DRBG", None),
        ("randomness from the DRBG", None),
        ("randomness from the DRBG", None),
        (
            "all-zero X25519 ephemeral secret (clamped to 2^254) and ML-KEM m",
            Some(([0; 32], [0; 32])),
        ),
        (
            "all-0xff X25519 ephemeral secret and ML-KEM m",
            Some(([0xff; 32], [0xff; 32])),
        ),
    ];
    for (n, (what, fixed)) in randomness.into_iter().enumerate() {
        let key = PrivateKey::from_seed(&rng.array());
        let (eph, m) = match fixed {
            Some(r) => r,
            None => (rng.array(), rng.array()),
        };
        let op = if n < 2 { "combiner" } else { "decapsulate" };
        cases.push(encapsulation(
            &format!("kem-{op}-{n:02}"),
            op,
            &key,
            &eph,
            &m,
            what,
        )?);
    }
    cases.extend(non_canonical(rng)?);
    Ok(cases)
}

/// A `derive_key_pair` case.
fn derive(id: &str, seed: &[u8; KEY_SEED_LEN], what: &str) -> Gen<Value> {
    let case = json!({ "id": id, "op": "derive_key_pair", "seed": hex(seed), "note": what });
    filled("derive_key_pair", case)
}

/// A `decapsulate` or `combiner` case made by encapsulating with explicit
/// randomness, recorded in `x25519_ephemeral` and `mlkem_m`.
fn encapsulation(
    id: &str,
    op: &str,
    key: &PrivateKey,
    eph: &[u8; 32],
    m: &[u8; 32],
    what: &str,
) -> Gen<Value> {
    let (ct, ss) = hazmat::encapsulate_deterministic(key.public_key(), eph, m)
        .map_err(|e| format!("{id}: {e}"))?;
    let mut case = decapsulation(id, op, key, &ct, what)?;
    if case.get("shared_secret") != Some(&hex(ss.as_bytes())) {
        return Err(format!("{id}: encapsulation and decapsulation disagree"));
    }
    case["x25519_ephemeral"] = hex(eph);
    case["mlkem_m"] = hex(m);
    Ok(case)
}

/// A decapsulation case (with the combiner's intermediates for `combiner`).
fn decapsulation(
    id: &str,
    op: &str,
    key: &PrivateKey,
    ct: &hazmat::KemCiphertext,
    what: &str,
) -> Gen<Value> {
    let mut case = json!({
        "id": id, "op": op, "note": what,
        "public_key": hex(key.public_key().as_bytes()),
        "private_key": hex(&key.to_bytes()[..]),
        "ciphertext": hex(ct),
    });
    let fields = crate::case::decapsulation(key, ct, op == "combiner");
    for (name, value) in fields.map_err(|e| format!("{id}: {e}"))? {
        case[name] = hex(value);
    }
    Ok(case)
}

/// Decapsulations of ciphertexts whose X25519 half is a non-canonical
/// encoding of a large-order point: reduced as X25519 does, never refused,
/// and hashed as the bytes were sent.
fn non_canonical(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let key = PrivateKey::from_seed(&rng.array());
    let (ct, _) = hazmat::encapsulate_deterministic(key.public_key(), &rng.array(), &rng.array())
        .map_err(|e| e.to_string())?;
    let mut high = ct;
    if let Some(b) = high.get_mut(X25519_LEN - 1) {
        *b |= 0x80;
    }
    let mut p2 = ct;
    if let Some(x) = p2.get_mut(..X25519_LEN) {
        x.copy_from_slice(&kemsphinx_support::P_PLUS_2);
    }
    Ok(vec![
        decapsulation(
            "kem-combiner-noncanonical-bit255",
            "combiner",
            &key,
            &high,
            "X25519 half of a real ciphertext with the unused bit 255 set: X25519 ignores the \
             bit (x25519_shared_secret is that of the unmodified ciphertext), but the adapter \
             and the combiner hash the bytes as sent, so the shared secret differs",
        )?,
        decapsulation(
            "kem-combiner-noncanonical-p-plus-2",
            "combiner",
            &key,
            &p2,
            "X25519 half u = p + 2, a non-canonical encoding of u = 2 (a large-order point on \
             the twist): reduced and used, not refused",
        )?,
    ])
}

/// `aez`: the SPRP at every length 0..=64 and at the format's length.
pub(crate) fn aez(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let lengths = (0..=64).chain([ENCRYPTED_PAYLOAD_LEN, ENCRYPTED_PAYLOAD_LEN]);
    let case = |(n, len)| {
        let (key, nonce, plaintext) = (rng.array::<48>(), rng.array::<16>(), rng.bytes(len));
        let id = format!("aez-{n:02}-len{len}");
        let case =
            json!({ "id": id, "key": hex(key), "nonce": hex(nonce), "plaintext": hex(plaintext) });
        filled("aez", case)
    };
    lengths.enumerate().map(case).collect()
}

/// `kdf`: HKDF-Expand and its split.
pub(crate) fn kdf(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let ikms = [[0u8; 32], [0xff; 32], rng.array(), rng.array()];
    let case = |(n, ikm)| {
        filled(
            "kdf",
            json!({ "id": format!("kdf-{n:02}"), "ikm": hex(ikm) }),
        )
    };
    ikms.iter().enumerate().map(case).collect()
}

/// `stream`: the 6,010-byte keystream a hop uses, including counter
/// wrap-around and a carry out of the low 64 bits.
pub(crate) fn stream(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let mut carry = [0u8; 16];
    if let Some(low) = carry.get_mut(8..) {
        low.fill(0xff);
    }
    let ivs: [(&str, [u8; 16]); 3] = [
        ("IV from the DRBG", rng.array()),
        (
            "IV ff…ff: the 128-bit counter wraps to zero after the first block",
            [0xff; 16],
        ),
        (
            "IV 00…00 ff…ff: the counter carries out of the low 64 bits after the first block",
            carry,
        ),
    ];
    let case = |(n, (what, iv)): (usize, &(&str, [u8; 16]))| {
        let (id, key) = (format!("stream-{n:02}"), rng.array::<32>());
        filled(
            "stream",
            json!({ "id": id, "key": hex(key), "iv": hex(iv), "note": what }),
        )
    };
    ivs.iter().enumerate().map(case).collect()
}

/// `mac` (a new kind): HMAC-SHA256 with a 32-byte key, including the
/// header-prefix length the format MACs.
pub(crate) fn mac(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let lengths = [0, 1, 64, 65, layout::packet::AUTHENTICATED.end];
    let case = |(n, len)| {
        let (key, message) = (rng.array::<32>(), rng.bytes(len));
        let id = format!("mac-{n:02}-len{len}");
        filled(
            "mac",
            json!({ "id": id, "key": hex(key), "message": hex(message) }),
        )
    };
    lengths.into_iter().enumerate().map(case).collect()
}

/// `replay_tag`: SHA-512/256 of KEM ciphertexts.
pub(crate) fn replay_tag(rng: &mut Drbg) -> Gen<Vec<Value>> {
    let cts: [[u8; KEM_CIPHERTEXT_LEN]; 3] = [
        [0; KEM_CIPHERTEXT_LEN],
        [0xff; KEM_CIPHERTEXT_LEN],
        rng.array(),
    ];
    let case = |(n, ct)| {
        let id = format!("replay-{n:02}");
        filled("replay_tag", json!({ "id": id, "kem_ciphertext": hex(ct) }))
    };
    cts.iter().enumerate().map(case).collect()
}

/// `case` with every field its inputs determine filled in.
fn filled(kind: &str, mut case: Value) -> Gen<Value> {
    for (name, value) in computed(kind, &case)? {
        case[name] = hex(value);
    }
    Ok(case)
}
