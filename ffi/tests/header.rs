//! The hand-written header agrees with the Rust side: every length constant,
//! every status and action code, and the set of exported functions.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeMap;

use kemsphinx::geometry as g;
use kemsphinx::pem;
use kemsphinx_ffi::{Action, Status};

const HEADER: &str = include_str!("../include/kemsphinx.h");

/// `NAME value` for every `#define KEMSPHINX_NAME value` and every
/// `KEMSPHINX_NAME = value` enum entry in the header.
fn header_numbers() -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in HEADER.lines().map(str::trim) {
        let (name, value) = if let Some(rest) = line.strip_prefix("#define KEMSPHINX_") {
            match rest.split_once(' ') {
                Some((n, v)) => (n, v.trim()),
                None => continue,
            }
        } else if let Some(rest) = line.strip_prefix("KEMSPHINX_") {
            let (n, v) = rest.split_once(" = ").unwrap();
            (n, v.split([',', ' ']).next().unwrap())
        } else {
            continue;
        };
        if name == "H" {
            continue; // the include guard
        }
        let value = value.parse().unwrap_or_else(|_| panic!("{name}: {value}"));
        assert!(out.insert(name.to_owned(), value).is_none(), "{name} twice");
    }
    out
}

#[test]
fn every_constant_in_the_header_is_the_rust_value() {
    let mut rust: BTreeMap<String, usize> = [
        ("HOPS", g::HOPS),
        ("PACKET_LEN", g::PACKET_LEN),
        ("HEADER_LEN", g::HEADER_LEN),
        ("PAYLOAD_LEN", g::PAYLOAD_LEN),
        ("ENCRYPTED_REPLY_LEN", g::ENCRYPTED_REPLY_LEN),
        ("SURB_LEN", g::SURB_LEN),
        ("SURB_KEYS_LEN", g::SURB_KEYS_LEN),
        ("PUBLIC_KEY_LEN", g::PUBLIC_KEY_LEN),
        ("PRIVATE_KEY_LEN", g::PRIVATE_KEY_LEN),
        ("KEY_SEED_LEN", g::KEY_SEED_LEN),
        ("PUBLIC_KEY_PEM_LEN", pem::PUBLIC_KEY_PEM_LEN),
        ("PRIVATE_KEY_PEM_LEN", pem::PRIVATE_KEY_PEM_LEN),
        ("NODE_ID_LEN", g::NODE_ID_LEN),
        ("RECIPIENT_ID_LEN", g::RECIPIENT_ID_LEN),
        ("SURB_ID_LEN", g::SURB_ID_LEN),
        ("REPLAY_TAG_LEN", g::REPLAY_TAG_LEN),
        ("ACTION_FORWARD", Action::Forward as usize),
        ("ACTION_DELIVER", Action::Deliver as usize),
        ("ACTION_SURB_REPLY", Action::SurbReply as usize),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_owned(), v))
    .collect();
    for s in Status::ALL {
        let name = match s {
            Status::Ok => "OK".to_owned(),
            other => format!("ERR_{}", screaming(&format!("{other:?}"))),
        };
        rust.insert(name, usize::try_from(s as i32).unwrap());
    }
    assert_eq!(header_numbers(), rust);
}

/// `PayloadTag` → `PAYLOAD_TAG`.
fn screaming(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Names of the `kemsphinx_*` functions in `text` that are followed by `(`
/// and preceded by `prefix`.
fn functions(text: &str, prefix: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .match_indices(prefix)
        .filter_map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest[name.len()..].starts_with('(').then_some(name)
        })
        .filter(|n| n.starts_with("kemsphinx_"))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_header_declares_exactly_the_exported_functions() {
    let declared = {
        let mut v = functions(HEADER, "int ");
        v.extend(functions(HEADER, "void "));
        v.extend(functions(HEADER, "char *"));
        v.sort();
        v
    };
    let sources = [
        include_str!("../src/lib.rs"),
        include_str!("../src/keys.rs"),
        include_str!("../src/unwrap.rs"),
        include_str!("../src/create.rs"),
    ]
    .concat();
    let mut exported = functions(&sources, "extern \"C\" fn ");
    exported.sort();
    assert_eq!(declared, exported);
    assert_eq!(exported.len(), 21);
    assert_eq!(
        sources.matches("#[unsafe(no_mangle)]").count(),
        exported.len()
    );
}
