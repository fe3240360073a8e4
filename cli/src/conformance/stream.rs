//! A vector file read one case at a time, so that a run's memory is the
//! file's text and one case, whatever the number of cases.
//!
//! Two passes over the text. The first checks that it is JSON, one object,
//! and takes its `schema` and `kind` (whichever order the keys come in)
//! without keeping anything of `cases` but its shape and length. The second
//! hands each case to the caller as it is parsed, and drops it before the
//! next. A document that is not JSON, or not one object, or repeats a key
//! of the schema, is refused before any case runs.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// What the first pass found.
pub(super) struct Header {
    /// `schema`, if present (any JSON value; the caller judges it).
    pub(super) schema: Option<Value>,
    /// `kind`, if present.
    pub(super) kind: Option<Value>,
    /// The number of cases, if `cases` is a list.
    pub(super) cases: Option<usize>,
}

/// The first pass.
///
/// # Errors
/// Why the text is not one `kemsphinx-vectors/1`-shaped object: not JSON
/// (serde_json's message), another JSON value, or a repeated key.
pub(super) fn header(text: &[u8]) -> Result<Header, String> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let header = match de.deserialize_any(HeaderVisitor) {
        Ok(Some(header)) => header,
        Ok(None) => {
            // Another JSON value: say so only if the whole text is JSON.
            return Err(match serde_json::from_slice::<IgnoredAny>(text) {
                Ok(_) => format!("not a {} object", super::SCHEMA),
                Err(e) => format!("not JSON: {e}"),
            });
        }
        Err(e) => return Err(reason(&e)),
    };
    de.end().map_err(|e| format!("not JSON: {e}"))?;
    Ok(header)
}

/// The second pass: `each` is called with every case, in order.
///
/// # Errors
/// A parse error (the first pass has already accepted the text, so only
/// if it changed in between, which it cannot: it is one buffer).
pub(super) fn cases(text: &[u8], each: &mut dyn FnMut(usize, Value)) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_slice(text);
    de.deserialize_map(CasesIn { each }).map_err(|e| reason(&e))
}

/// A serde_json error as a failure reason: syntax and end-of-input errors
/// mean the text is not JSON; the others are ours (a repeated key).
fn reason(e: &serde_json::Error) -> String {
    if e.is_syntax() || e.is_eof() || e.is_io() {
        format!("not JSON: {e}")
    } else {
        e.to_string()
    }
}

/// The visitor methods of every JSON scalar, each answering `None`: the
/// first pass keeps nothing of a scalar where it looks for a list or an
/// object.
macro_rules! scalars_are_none {
    () => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
}

struct HeaderVisitor;

impl<'de> Visitor<'de> for HeaderVisitor {
    /// `None` for any JSON value but an object.
    type Value = Option<Header>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut header = Header {
            schema: None,
            kind: None,
            cases: None,
        };
        let (mut schema, mut kind, mut cases) = (false, false, false);
        while let Some(key) = map.next_key::<String>()? {
            let seen = match key.as_str() {
                "schema" => &mut schema,
                "kind" => &mut kind,
                "cases" => &mut cases,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if std::mem::replace(seen, true) {
                return Err(de::Error::custom(format!("`{key}` appears twice")));
            }
            match key.as_str() {
                "schema" => header.schema = Some(map.next_value()?),
                "kind" => header.kind = Some(map.next_value()?),
                _ => header.cases = map.next_value_seed(CountCases)?,
            }
        }
        Ok(Some(header))
    }

    scalars_are_none!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// `cases` in the first pass: its length if it is a list, keeping nothing.
struct CountCases;

impl<'de> DeserializeSeed<'de> for CountCases {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CountCases {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut n = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(Some(n))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    scalars_are_none!();
}

/// The second pass over the top-level object: `cases` element by element,
/// every other value skipped.
struct CasesIn<'f> {
    each: &'f mut dyn FnMut(usize, Value),
}

impl<'de> Visitor<'de> for CasesIn<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "cases" {
                map.next_value_seed(EachCase { each: self.each })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// `cases` in the second pass (the first pass has checked it is a list).
struct EachCase<'f> {
    each: &'f mut dyn FnMut(usize, Value),
}

impl<'de> DeserializeSeed<'de> for EachCase<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EachCase<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of cases")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut n = 0;
        while let Some(case) = seq.next_element::<Value>()? {
            (self.each)(n, case);
            n += 1;
        }
        Ok(())
    }
}
