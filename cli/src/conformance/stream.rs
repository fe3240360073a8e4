//! A vector file read one case at a time, so that a run's memory is the
//! file's text and one case, whatever the number of cases.
//!
//! Two passes over the text. The first parses the top-level object into a
//! [`Header`]: `schema` and `kind` (whichever order the keys come in), and
//! of `cases` only the span of text it takes (checked to be JSON, nothing
//! of it kept). A document that is not JSON, not one object, or repeats a
//! key of the schema is refused before any case runs. The second pass
//! parses that span one element at a time, each dropped before the next.

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer as _, IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::MAX_CASE_LEN;

/// What the first pass found. `schema` and `kind` are read only as
/// strings: anything else is refused where it starts, never parsed (as a
/// `Value`, a list of `{"":0}` in `schema` took 683 MiB).
#[derive(Deserialize)]
pub(super) struct Header<'a> {
    /// `schema`, if present (the caller judges it).
    pub(super) schema: Option<String>,
    /// `kind`, if present.
    pub(super) kind: Option<String>,
    /// The text of `cases`, if present.
    #[serde(borrow)]
    pub(super) cases: Option<&'a RawValue>,
}

/// The first pass.
///
/// # Errors
/// Why the text is not one `kemsphinx-vectors/1`-shaped object: not JSON
/// (serde_json's message), another JSON value, a repeated key, or a
/// `schema` or `kind` that is not a string.
pub(super) fn header(text: &[u8]) -> Result<Header<'_>, String> {
    // serde would also read a list as a header's fields in order: only an
    // object is one.
    let object = text.trim_ascii_start().starts_with(b"{");
    match serde_json::from_slice::<Header<'_>>(text) {
        Ok(header) if object => Ok(header),
        Err(e) if object && e.is_data() => Err(e.to_string()),
        Err(e) if object => Err(format!("not JSON: {e}")),
        _ => Err(match serde_json::from_slice::<IgnoredAny>(text) {
            Ok(_) => format!("not a {} object", super::SCHEMA),
            Err(e) => format!("not JSON: {e}"),
        }),
    }
}

/// The second pass: `each` is called with every case of `cases` (a list:
/// the caller has checked), in order: the case, or why it cannot be read
/// (longer than [`MAX_CASE_LEN`], or nested deeper than serde_json's limit
/// of 128).
///
/// # Errors
/// Not a list of JSON values.
pub(super) fn cases(cases: &RawValue, each: Each<'_>) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(cases.get());
    de.deserialize_seq(EachCase(each))
        .map_err(|e| e.to_string())
}

/// What the second pass hands each case to.
type Each<'f> = &'f mut dyn FnMut(Result<Value, String>);

/// `cases` in the second pass.
struct EachCase<'f>(Each<'f>);

impl<'de> Visitor<'de> for EachCase<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of cases")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(case) = seq.next_element::<&RawValue>()? {
            let (text, len) = (case.get(), case.get().len());
            (self.0)(if len > MAX_CASE_LEN {
                Err(format!(
                    "{len} bytes, over the bound of {MAX_CASE_LEN} for a case"
                ))
            } else {
                serde_json::from_str(text).map_err(|e| e.to_string())
            });
        }
        Ok(())
    }
}
