//! Reading vector fields: hex strings of exact lengths, lists, ids.

use std::ops::Range;

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
    hex::decode(string(case, name)?).map_err(|e| format!("field `{name}`: bad hex: {e}"))
}

/// A hex field of exactly `N` bytes.
pub(crate) fn array<const N: usize>(case: &Value, name: &str) -> Result<[u8; N], String> {
    let v = bytes(case, name)?;
    let got = v.len();
    v.try_into()
        .map_err(|_| format!("field `{name}`: expected {N} bytes, got {got}"))
}

/// The bytes `range` of `bytes` (a packet, a key), as an array.
pub(crate) fn part<const N: usize>(bytes: &[u8], range: Range<usize>) -> Result<[u8; N], String> {
    let got = bytes.get(range).and_then(|k| k.try_into().ok());
    got.ok_or_else(|| format!("{} bytes: too short", bytes.len()))
}

/// A list field.
pub(crate) fn list<'a>(case: &'a Value, name: &str) -> Result<&'a Vec<Value>, String> {
    field(case, name)?
        .as_array()
        .ok_or_else(|| format!("field `{name}` is not a list"))
}

/// Decode a JSON string value as hex.
pub(crate) fn decode_value(v: &Value) -> Result<Vec<u8>, String> {
    hex::decode(v.as_str().ok_or("expected a hex string")?).map_err(|e| format!("bad hex: {e}"))
}

/// Compare two byte strings, saying where they first differ.
pub(crate) fn same(what: &str, got: &[u8], want: &[u8]) -> Outcome {
    if got == want {
        return Ok(());
    }
    let (got_len, want_len) = (got.len(), want.len());
    if got_len != want_len {
        return Err(format!("{what}: length {got_len} instead of {want_len}"));
    }
    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
    Err(format!("{what}: differs from byte {at}"))
}
