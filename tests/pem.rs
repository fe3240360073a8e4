//! PEM keys: the reference's exact text, and every row of the pem module's
//! table of what is accepted and refused.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![cfg(feature = "pem")]

use base64ct::{Base64, Encoding};
use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{MLKEM_EK_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN, X25519_LEN};
use kemsphinx::pem::{
    PRIVATE_KEY_LABEL, PRIVATE_KEY_PEM_LEN, PUBLIC_KEY_LABEL, PUBLIC_KEY_PEM_LEN,
};
use kemsphinx::{Error, Input, KeyError, PemError, PrivateKey, PublicKey};
use rand_core::SeedableRng;

fn key(seed: u64) -> PrivateKey {
    PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(seed))
}

/// What Go's `pem.EncodeToMemory` writes for a block without headers:
/// boundary lines, standard padded base64 in 64-character lines, `\n`
/// after every line. Built here independently of the crate's encoder.
fn go_pem(label: &str, body: &[u8]) -> Vec<u8> {
    let b64 = Base64::encode_string(body);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out.into_bytes()
}

#[test]
fn labels_are_the_reference_scheme_name_and_key_kind() {
    assert_eq!(PUBLIC_KEY_LABEL, "MLKEM768-X25519 PUBLIC KEY");
    assert_eq!(PRIVATE_KEY_LABEL, "MLKEM768-X25519 PRIVATE KEY");
}

#[test]
fn public_key_text_is_byte_for_byte_the_reference_encoding() {
    let k = key(1);
    let text = k.public_key().to_pem();
    let expected = go_pem(PUBLIC_KEY_LABEL, k.public_key().as_bytes());
    assert_eq!(expected.len(), PUBLIC_KEY_PEM_LEN);
    assert_eq!(text[..], expected[..]);
    assert_eq!(PublicKey::from_pem(&expected).unwrap(), *k.public_key());
}

#[test]
fn private_key_text_is_byte_for_byte_the_reference_encoding() {
    let k = key(2);
    let text = k.to_pem();
    let expected = go_pem(PRIVATE_KEY_LABEL, &k.to_bytes()[..]);
    assert_eq!(expected.len(), PRIVATE_KEY_PEM_LEN);
    assert_eq!(text[..], expected[..]);
    let loaded = PrivateKey::from_pem(&expected).unwrap();
    assert_eq!(loaded.to_bytes()[..], k.to_bytes()[..]);
}

#[test]
fn wrong_labels_are_refused_before_decoding() {
    let k = key(4);
    let public = k.public_key().to_pem();
    let private = k.to_pem();
    assert_eq!(
        PrivateKey::from_pem(&public[..]).unwrap_err(),
        Error::Pem(PemError::Label {
            expected: PRIVATE_KEY_LABEL
        })
    );
    assert_eq!(
        PublicKey::from_pem(&private[..]).unwrap_err(),
        Error::Pem(PemError::Label {
            expected: PUBLIC_KEY_LABEL
        })
    );
    let body = k.public_key().as_bytes();
    for other in [
        "XWING PUBLIC KEY",
        "MLKEM768-X25519 PUBLICKEY",
        "PUBLIC KEY",
    ] {
        assert_eq!(
            PublicKey::from_pem(&go_pem(other, body)).unwrap_err(),
            Error::Pem(PemError::Label {
                expected: PUBLIC_KEY_LABEL
            }),
            "{other}"
        );
    }
    // The reference writes labels upper case; other cases are refused.
    let lower = go_pem("mlkem768-x25519 public key", body);
    assert_eq!(
        PublicKey::from_pem(&lower).unwrap_err(),
        Error::Pem(PemError::Label {
            expected: PUBLIC_KEY_LABEL
        })
    );
}

#[test]
fn wrong_lengths_name_the_key_and_both_lengths() {
    let k = key(5);
    for got in [
        0,
        1,
        PUBLIC_KEY_LEN - 1,
        PUBLIC_KEY_LEN + 1,
        PRIVATE_KEY_LEN,
    ] {
        let body = vec![9u8; got];
        assert_eq!(
            PublicKey::from_pem(&go_pem(PUBLIC_KEY_LABEL, &body)).unwrap_err(),
            Error::Length {
                input: Input::PublicKey,
                expected: PUBLIC_KEY_LEN,
                got
            }
        );
    }
    let raw = k.to_bytes();
    for got in [PRIVATE_KEY_LEN - 1, PRIVATE_KEY_LEN + 3, PUBLIC_KEY_LEN] {
        let mut body = raw.to_vec();
        body.resize(got, 0);
        assert_eq!(
            PrivateKey::from_pem(&go_pem(PRIVATE_KEY_LABEL, &body)).unwrap_err(),
            Error::Length {
                input: Input::PrivateKey,
                expected: PRIVATE_KEY_LEN,
                got
            }
        );
    }
}

#[test]
fn bad_base64_is_refused() {
    let text = key(6).public_key().to_pem();
    let first_body_byte = "-----BEGIN MLKEM768-X25519 PUBLIC KEY-----\n".len();
    for bad in [b'!', b'*', b' ', 0xc3] {
        let mut t = text.to_vec();
        t[first_body_byte + 10] = bad;
        assert_eq!(
            PublicKey::from_pem(&t).unwrap_err(),
            Error::Pem(PemError::Base64),
            "byte {bad:#04x}"
        );
    }
    // Padding in the middle of the text.
    let mut t = text.to_vec();
    t[first_body_byte + 4] = b'=';
    assert_eq!(
        PublicKey::from_pem(&t).unwrap_err(),
        Error::Pem(PemError::Base64)
    );
}

#[test]
fn lines_not_wrapped_at_64_are_refused() {
    let k = key(7);
    let b64 = Base64::encode_string(k.public_key().as_bytes());
    let mut t = format!("-----BEGIN {PUBLIC_KEY_LABEL}-----\n");
    for line in b64.as_bytes().chunks(76) {
        t.push_str(std::str::from_utf8(line).unwrap());
        t.push('\n');
    }
    t.push_str(&format!("-----END {PUBLIC_KEY_LABEL}-----\n"));
    assert!(matches!(
        PublicKey::from_pem(t.as_bytes()).unwrap_err(),
        Error::Pem(PemError::Base64 | PemError::Malformed)
    ));
}

#[test]
fn malformed_blocks_are_refused() {
    let text = key(8).public_key().to_pem();
    let s = std::str::from_utf8(&text).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        (
            "no boundaries",
            Base64::encode_string(&[1u8; 100]).into_bytes(),
        ),
        ("no END line", s.replace("-----END", "").into_bytes()),
        (
            "END label differs",
            s.replace("END MLKEM768-X25519 PUBLIC", "END MLKEM768-X25519 PRIVATE")
                .into_bytes(),
        ),
        ("truncated", text[..text.len() / 2].to_vec()),
        ("two blocks", [&text[..], &text[..]].concat()),
        ("text after the block", [&text[..], b"more"].concat()),
    ];
    for (what, t) in cases {
        assert_eq!(
            PublicKey::from_pem(&t).unwrap_err(),
            Error::Pem(PemError::Malformed),
            "{what}"
        );
    }
}

#[test]
fn inconsistent_private_keys_are_refused() {
    let raw = key(9).to_bytes();
    // A bit of the stored encapsulation key, or of the seed's `d`: either
    // way the stored key is no longer the one the seed derives. (The seed's
    // `z` only keys implicit rejection; nothing stored depends on it.)
    let d = X25519_LEN + MLKEM_EK_LEN;
    for at in [X25519_LEN, d - 1, d, d + 31] {
        let mut body = raw.to_vec();
        body[at] ^= 1;
        assert_eq!(
            PrivateKey::from_pem(&go_pem(PRIVATE_KEY_LABEL, &body)).unwrap_err(),
            Error::Key(KeyError::Inconsistent),
            "byte {at}"
        );
    }
}

#[test]
fn invalid_public_keys_are_refused() {
    let mut body = key(10).public_key().to_bytes();
    body[..X25519_LEN].fill(0);
    assert_eq!(
        PublicKey::from_pem(&go_pem(PUBLIC_KEY_LABEL, &body)).unwrap_err(),
        Error::Key(KeyError::X25519LowOrder)
    );
    let mut body = key(11).public_key().to_bytes();
    body[X25519_LEN..X25519_LEN + 2].fill(0xff);
    assert_eq!(
        PublicKey::from_pem(&go_pem(PUBLIC_KEY_LABEL, &body)).unwrap_err(),
        Error::Key(KeyError::MlKemEncapsulationKey)
    );
}

// ---- The table in the pem module docs, row by row. ----

const MALFORMED: Error = Error::Pem(PemError::Malformed);
const BASE64: Error = Error::Pem(PemError::Base64);

/// A public key's PEM text, as text.
fn pem_text(seed: u64) -> (PublicKey, String) {
    let k = key(seed).public_key().clone();
    let text = String::from_utf8(k.to_pem().to_vec()).unwrap();
    (k, text)
}

fn load(text: &str) -> Result<PublicKey, Error> {
    PublicKey::from_pem(text.as_bytes())
}

/// The text with the `n`th `\n` (0 = the one ending the BEGIN line)
/// replaced by `with`.
fn replace_nth_newline(text: &str, n: usize, with: &str) -> String {
    let at = text.match_indices('\n').nth(n).unwrap().0;
    format!("{}{with}{}", &text[..at], &text[at + 1..])
}

#[test]
fn to_pem_cannot_fail() {
    // The types are the point: no Result to unwrap.
    let public: [u8; PUBLIC_KEY_PEM_LEN] = key(20).public_key().to_pem();
    let private: zeroize::Zeroizing<[u8; PRIVATE_KEY_PEM_LEN]> = key(20).to_pem();
    assert_eq!(public[PUBLIC_KEY_PEM_LEN - 1], b'\n');
    assert_eq!(private[PRIVATE_KEY_PEM_LEN - 1], b'\n');
}

#[test]
fn row_begin_at_the_start_or_after_a_newline_is_accepted() {
    let (k, text) = pem_text(21);
    assert_eq!(load(&text).unwrap(), k);
    assert_eq!(load(&format!("comment\n{text}")).unwrap(), k);
    assert_eq!(load(&format!("comment\r\n{text}")).unwrap(), k);
    assert_eq!(load(&format!("\n\n{text}")).unwrap(), k);
}

#[test]
fn row_begin_anywhere_else_is_refused() {
    let (_, text) = pem_text(22);
    for before in ["hello world-", " ", "\t", "x", "comment\n ", "a\rb"] {
        assert_eq!(
            load(&format!("{before}{text}")),
            Err(MALFORMED),
            "{before:?}"
        );
    }
}

#[test]
fn row_a_byte_order_mark_before_begin_is_refused() {
    let (k, text) = pem_text(23);
    assert_eq!(load(&format!("\u{feff}{text}")), Err(MALFORMED));
    // On a line of its own it is text before the block, like any other.
    assert_eq!(load(&format!("\u{feff}\n{text}")).unwrap(), k);
}

#[test]
fn row_text_before_the_begin_line_is_ignored() {
    let (k, text) = pem_text(24);
    let before = "mix key for epoch 7\n\u{0}\u{c}binary junk -----BEGIN nothing\n\n";
    assert_eq!(load(&format!("{before}{text}")).unwrap(), k);
}

#[test]
fn row_lf_and_crlf_line_ends_mixed_freely_are_accepted() {
    let (k, text) = pem_text(25);
    assert_eq!(load(&text.replace('\n', "\r\n")).unwrap(), k);
    let lines = text.matches('\n').count();
    for n in 0..lines {
        assert_eq!(
            load(&replace_nth_newline(&text, n, "\r\n")).unwrap(),
            k,
            "{n}"
        );
    }
}

#[test]
fn row_a_lone_carriage_return_is_refused() {
    let (_, text) = pem_text(26);
    let lines = text.matches('\n').count();
    // As the end of any line: BEGIN, body, END.
    for n in 0..lines - 1 {
        assert_eq!(
            load(&replace_nth_newline(&text, n, "\r")),
            Err(MALFORMED),
            "{n}"
        );
    }
    // Inside a line, and after the block.
    let at = text.find('\n').unwrap() + 10;
    assert_eq!(
        load(&format!("{}\r{}", &text[..at], &text[at..])),
        Err(MALFORMED)
    );
    assert_eq!(load(&format!("{text}\r")), Err(MALFORMED));
    assert_eq!(load(&format!("{text}\n\r\n\r")), Err(MALFORMED));
}

#[test]
fn row_spaces_or_tabs_at_the_end_of_a_boundary_line_are_refused() {
    let (_, text) = pem_text(27);
    let last = text.matches('\n').count() - 1;
    for blank in [" ", "\t", " \t "] {
        let begin = replace_nth_newline(&text, 0, &format!("{blank}\n"));
        assert_eq!(load(&begin), Err(MALFORMED), "{blank:?}");
        let end = replace_nth_newline(&text, last, &format!("{blank}\n"));
        assert_eq!(load(&end), Err(MALFORMED), "{blank:?}");
    }
}

#[test]
fn row_a_wrong_or_missing_end_line_is_refused() {
    let (_, text) = pem_text(28);
    let cases = [
        text.replace("-----END MLKEM768-X25519 PUBLIC KEY-----\n", ""),
        text.replace(
            "-----END MLKEM768-X25519 PUBLIC",
            "-----END MLKEM768-X25519 PRIVATE",
        ),
        text.replace(
            "-----END MLKEM768-X25519 PUBLIC KEY-----",
            "-----END MLKEM768-X25519 PUBLIC KEY----",
        ),
        text.replace("-----END ", "-----END"),
        text.replace("-----END", "-- -END"),
        text.replace("\n-----END", "-----END"),
    ];
    for t in cases {
        assert_eq!(load(&t), Err(MALFORMED), "{t}");
    }
}

#[test]
fn row_a_blank_line_in_the_body_or_before_end_is_refused() {
    let (_, text) = pem_text(29);
    let lines = text.matches('\n').count();
    // After the BEGIN line, after a body line, before END.
    for n in [0, 1, 10, lines - 2] {
        for blank in ["\n\n", "\r\n\r\n", "\n\r\n"] {
            let t = replace_nth_newline(&text, n, blank);
            assert_eq!(load(&t), Err(BASE64), "{n} {blank:?}");
        }
    }
}

#[test]
fn row_headers_are_refused() {
    let (_, text) = pem_text(30);
    for header in [
        "Proc-Type: 4,ENCRYPTED\n\n",
        "Proc-Type: 4,ENCRYPTED\n",
        "Comment: x\n\n",
    ] {
        let t = replace_nth_newline(&text, 0, &format!("\n{header}"));
        assert_eq!(load(&t), Err(BASE64), "{header:?}");
    }
}

#[test]
fn row_spaces_or_tabs_in_the_body_are_refused() {
    let (_, text) = pem_text(31);
    let second_line = text.find('\n').unwrap() + 1;
    for blank in [" ", "\t"] {
        for at in [second_line, second_line + 10, second_line + 64] {
            let t = format!("{}{blank}{}", &text[..at], &text[at..]);
            assert_eq!(load(&t), Err(BASE64), "{at} {blank:?}");
        }
    }
}

#[test]
fn row_only_blank_space_and_line_ends_may_follow_the_end_line() {
    let (k, text) = pem_text(32);
    let bare = text.strip_suffix('\n').unwrap();
    assert_eq!(load(bare).unwrap(), k);
    for after in ["", "\n", "\n\n", "\r\n", " ", "\t", " \t \n\r\n\n  "] {
        assert_eq!(load(&format!("{text}{after}")).unwrap(), k, "{after:?}");
    }
}

#[test]
fn row_anything_else_after_the_end_line_is_refused() {
    let (_, text) = pem_text(33);
    for after in [
        "x",
        "\u{c}",
        "\n\u{c}",
        "\u{b}",
        "\u{0}",
        "\n# comment\n",
        "\u{a0}",
    ] {
        assert_eq!(load(&format!("{text}{after}")), Err(MALFORMED), "{after:?}");
    }
    assert_eq!(load(&format!("{text}{text}")), Err(MALFORMED));
    assert_eq!(load(&format!("{text}\n{text}")), Err(MALFORMED));
}

/// Every single byte, of a set that probes the table's rows, inserted at
/// every position of a key's text: exactly the insertions the table allows
/// load (and load the same key); every other is refused, none panics.
#[test]
fn one_inserted_byte_anywhere_is_refused_unless_the_table_allows_it() {
    let (k, text) = pem_text(34);
    let bytes = text.as_bytes();
    let probes = [b'\r', b'\n', b' ', b'\t', 0x0c, b'-', b'A', b'=', 0xef, 0];
    let mut accepted = Vec::new();
    for at in 0..=bytes.len() {
        for b in probes {
            let mut t = bytes.to_vec();
            t.insert(at, b);
            if let Ok(got) = PublicKey::from_pem(&t) {
                assert_eq!(got, k, "{at} {b:#04x}");
                accepted.push((at, b));
            }
        }
    }
    let mut allowed = vec![(0, b'\n')]; // a blank line before the block
    // `\r` before any `\n`: a CRLF line end.
    allowed.extend(
        bytes
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == b'\n')
            .map(|(i, _)| (i, b'\r')),
    );
    // A line end just before the final one, and blank space after it.
    allowed.push((bytes.len() - 1, b'\n'));
    allowed.extend([
        (bytes.len(), b'\n'),
        (bytes.len(), b' '),
        (bytes.len(), b'\t'),
    ]);
    allowed.sort_unstable();
    accepted.sort_unstable();
    assert_eq!(accepted, allowed);
}
