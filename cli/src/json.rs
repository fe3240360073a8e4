//! Reading vector fields: hex strings of exact lengths, lists, ids.

use serde_json::Value;

/// Why a case failed, as a line of text.
pub(crate) type Outcome = Result<(), String>;

/// A field that must be present.
pub(crate) fn field<'a>(case: &'a Value, name: &str) -> Result<&'a Value, String> {
    case.get(name)
        .ok_or_else(|| format!("missing field `{name}`"))
}

/// A string field.
pub(crate) fn string<'a>(case: &'a Value, name: &str) -> Result<&'a str, String> {
    field(case, name)?
        .as_str()
        .ok_or_else(|| format!("field `{name}` is not a string"))
}

/// A hex field of any length.
pub(crate) fn bytes(case: &Value, name: &str) -> Result<Vec<u8>, String> {
    decode(string(case, name)?).map_err(|e| format!("field `{name}`: {e}"))
}

/// A hex field of exactly `N` bytes.
pub(crate) fn array<const N: usize>(case: &Value, name: &str) -> Result<[u8; N], String> {
    let v = bytes(case, name)?;
    let got = v.len();
    v.try_into()
        .map_err(|_| format!("field `{name}`: expected {N} bytes, got {got}"))
}

/// A list field.
pub(crate) fn list<'a>(case: &'a Value, name: &str) -> Result<&'a Vec<Value>, String> {
    field(case, name)?
        .as_array()
        .ok_or_else(|| format!("field `{name}` is not a list"))
}

/// Decode one hex string.
pub(crate) fn decode(s: &str) -> Result<Vec<u8>, String> {
    hex::decode(s).map_err(|e| format!("bad hex: {e}"))
}

/// Decode a JSON string value as hex.
pub(crate) fn decode_value(v: &Value) -> Result<Vec<u8>, String> {
    decode(v.as_str().ok_or("expected a hex string")?)
}

/// Compare two byte strings, saying where they first differ.
pub(crate) fn same(what: &str, got: &[u8], want: &[u8]) -> Outcome {
    if got == want {
        return Ok(());
    }
    if got.len() != want.len() {
        return Err(format!(
            "{what}: length {} instead of {}",
            got.len(),
            want.len()
        ));
    }
    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
    Err(format!("{what}: differs from byte {at}"))
}
