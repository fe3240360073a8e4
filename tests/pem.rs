//! PEM keys: the reference's exact text, and every way loading refuses.

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
    let text = k.public_key().to_pem().unwrap();
    let expected = go_pem(PUBLIC_KEY_LABEL, k.public_key().as_bytes());
    assert_eq!(expected.len(), PUBLIC_KEY_PEM_LEN);
    assert_eq!(text[..], expected[..]);
    assert_eq!(PublicKey::from_pem(&expected).unwrap(), *k.public_key());
}

#[test]
fn private_key_text_is_byte_for_byte_the_reference_encoding() {
    let k = key(2);
    let text = k.to_pem().unwrap();
    let expected = go_pem(PRIVATE_KEY_LABEL, &k.to_bytes()[..]);
    assert_eq!(expected.len(), PRIVATE_KEY_PEM_LEN);
    assert_eq!(text[..], expected[..]);
    let loaded = PrivateKey::from_pem(&expected).unwrap();
    assert_eq!(loaded.to_bytes()[..], k.to_bytes()[..]);
}

#[test]
fn text_before_the_block_crlf_and_trailing_whitespace_are_accepted() {
    let k = key(3);
    let pem = k.public_key().to_pem().unwrap();
    let mut text = b"mix key for epoch 7\n".to_vec();
    text.extend_from_slice(&pem);
    assert_eq!(PublicKey::from_pem(&text).unwrap(), *k.public_key());
    let crlf = std::str::from_utf8(&pem).unwrap().replace('\n', "\r\n");
    assert_eq!(
        PublicKey::from_pem(crlf.as_bytes()).unwrap(),
        *k.public_key()
    );
    let mut trailing = pem.to_vec();
    trailing.extend_from_slice(b"\n\n  \t\n");
    assert_eq!(PublicKey::from_pem(&trailing).unwrap(), *k.public_key());
    let bare = &pem[..pem.len() - 1];
    assert_eq!(PublicKey::from_pem(bare).unwrap(), *k.public_key());
}

#[test]
fn wrong_labels_are_refused_before_decoding() {
    let k = key(4);
    let public = k.public_key().to_pem().unwrap();
    let private = k.to_pem().unwrap();
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
    let text = key(6).public_key().to_pem().unwrap();
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
    let text = key(8).public_key().to_pem().unwrap();
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
        (
            "header line",
            s.replacen("KEY-----\n", "KEY-----\nProc-Type: 4,ENCRYPTED\n\n", 1)
                .into_bytes(),
        ),
        ("truncated", text[..text.len() / 2].to_vec()),
        ("two blocks", [&text[..], &text[..]].concat()),
        ("text after the block", [&text[..], b"more"].concat()),
    ];
    for (what, t) in cases {
        assert!(
            matches!(PublicKey::from_pem(&t).unwrap_err(), Error::Pem(_)),
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
