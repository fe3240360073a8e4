//! The Go AEZ's own vector files (CC0): full AEZ with associated data and
//! authenticators, and its extract / hash / prf layers.
//!
//! Every number read from a file that sizes an allocation (`tau`) is checked
//! before anything is allocated: it must be at most [`MAX_TAU`] and agree
//! with the lengths of the file's own byte strings, so the memory a case
//! takes is bounded by the size of the file. A case that breaks this is a
//! failure, never an abort.

use aez5::{Aez, extract};
use serde_json::Value;

use super::json::{Outcome, array, bytes, decode_value, list, number, same};

/// The largest `tau` (bytes, or bits for `hash`) a case may ask for: far
/// above any real vector (the Go AEZ's largest is 247 bytes for `prf`, 478
/// bits for `hash`).
pub(crate) const MAX_TAU: u64 = 1 << 20;

/// Which layer a file tests, told by its first case's fields.
#[derive(Clone, Copy)]
pub(crate) enum Layer {
    Encrypt,
    Extract,
    Hash,
    Prf,
}

/// Recognise an AEZ vector list; `None` for anything else.
pub(crate) fn layer_of(cases: &[Value]) -> Option<Layer> {
    let first = cases.first()?.as_object()?;
    let has =
        |names: &[&str]| names.iter().all(|n| first.contains_key(*n)) && first.len() == names.len();
    if has(&["k", "nonce", "data", "tau", "m", "c"]) {
        Some(Layer::Encrypt)
    } else if has(&["a", "b"]) {
        Some(Layer::Extract)
    } else if has(&["k", "tau", "data", "v"]) {
        Some(Layer::Hash)
    } else if has(&["k", "delta", "tau", "r"]) {
        Some(Layer::Prf)
    } else {
        None
    }
}

impl Layer {
    /// The kind name used in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Encrypt => "aez-encrypt",
            Self::Extract => "aez-extract",
            Self::Hash => "aez-hash",
            Self::Prf => "aez-prf",
        }
    }

    /// Check one case of this layer.
    pub(crate) fn check(self, case: &Value) -> Outcome {
        match self {
            Self::Encrypt => encrypt(case),
            Self::Extract => same(
                "extract",
                &extract(&bytes(case, "a")?)[..],
                &bytes(case, "b")?,
            ),
            Self::Hash => hash(case),
            Self::Prf => prf(case),
        }
    }
}

/// The `data` list as byte strings.
fn data(case: &Value) -> Result<Vec<Vec<u8>>, String> {
    list(case, "data")?.iter().map(decode_value).collect()
}

/// A `tau` field, at most [`MAX_TAU`].
fn tau(case: &Value) -> Result<usize, String> {
    let tau = number(case, "tau")?;
    if tau > MAX_TAU {
        return Err(format!(
            "tau {tau} is over this runner's bound of {MAX_TAU}"
        ));
    }
    usize::try_from(tau).map_err(|e| e.to_string())
}

/// Full AEZ encryption and decryption (any key length, AD, τ).
fn encrypt(case: &Value) -> Outcome {
    let key = bytes(case, "k")?;
    let nonce = bytes(case, "nonce")?;
    let ad = data(case)?;
    let ad: Vec<&[u8]> = ad.iter().map(Vec::as_slice).collect();
    let tau = tau(case)?;
    let m = bytes(case, "m")?;
    let c = bytes(case, "c")?;
    if m.len().checked_add(tau) != Some(c.len()) {
        return Err(format!(
            "c is {} bytes, not m ({}) plus tau ({tau})",
            c.len(),
            m.len()
        ));
    }
    let aez = Aez::from_key(&key);
    let mut out = m.clone();
    out.resize(c.len(), 0);
    aez.encrypt(&nonce, &ad, tau, &mut out)
        .map_err(|e| e.to_string())?;
    same("encrypt", &out, &c)?;
    let mut back = c.clone();
    let plain = aez
        .decrypt(&nonce, &ad, tau, &mut back)
        .map_err(|e| e.to_string())?;
    same("decrypt", plain, &m)?;
    if tau > 0 {
        // A flipped bit must be refused when there is an authenticator.
        let mut forged = c;
        if let Some(b) = forged.last_mut() {
            *b ^= 1;
        }
        if aez.decrypt(&nonce, &ad, tau, &mut forged).is_ok() {
            return Err("a forged ciphertext decrypted".into());
        }
    }
    Ok(())
}

/// AEZ-hash of a tweak vector `(τ in bits, nonce, AD…)`: the file's `data`
/// list is the nonce followed by the AD strings.
fn hash(case: &Value) -> Outcome {
    let aez = Aez::new(&array(case, "k")?);
    let tau = u128::try_from(tau(case)?).map_err(|e| e.to_string())?;
    let data = data(case)?;
    let (nonce, ad) = data
        .split_first()
        .map_or((&[][..], &[][..]), |(n, a)| (n.as_slice(), a));
    let ad: Vec<&[u8]> = ad.iter().map(Vec::as_slice).collect();
    same("hash", &aez.hash(tau, nonce, &ad), &bytes(case, "v")?)
}

/// AEZ-prf.
fn prf(case: &Value) -> Outcome {
    let aez = Aez::new(&array(case, "k")?);
    let (tau, r) = (tau(case)?, bytes(case, "r")?);
    if tau != r.len() {
        return Err(format!("r is {} bytes, not tau ({tau})", r.len()));
    }
    let mut out = vec![0u8; tau];
    aez.prf(&array(case, "delta")?, &mut out);
    same("prf", &out, &r)
}
