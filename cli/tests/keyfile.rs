//! Reading keys: what the command accepts, the bound on what it reads, and
//! key bytes held only in buffers that are wiped when dropped.

// Tests unwrap, index and panic freely.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::scratch;

use chacha20::ChaCha20Rng;
use kemsphinx::PrivateKey;
use kemsphinx_cli::keyfile::{
    Encoding, MAX_INPUT, decode_private_key, hex_or_binary, read_input, read_private_key,
};
use rand_core::SeedableRng;
use zeroize::Zeroizing;

fn key() -> PrivateKey {
    PrivateKey::generate(&mut ChaCha20Rng::seed_from_u64(1))
}

#[test]
fn key_bytes_read_by_the_cli_are_held_in_buffers_wiped_on_drop() {
    let dir = scratch("zeroizing");
    let k = key();
    let path = dir.join("key.hex");
    std::fs::write(&path, hex::encode(&k.to_bytes()[..])).unwrap();
    // The types are the point: both are wiped when dropped.
    let text: Zeroizing<Vec<u8>> = read_input(&path).unwrap();
    let (bytes, encoding): (Zeroizing<Vec<u8>>, Encoding) = hex_or_binary(&text);
    assert_eq!(encoding, Encoding::Hex);
    assert_eq!(bytes[..], k.to_bytes()[..]);
    let (raw, encoding) = hex_or_binary(&k.to_bytes()[..]);
    assert_eq!((raw[..].len(), encoding), (1280, Encoding::Binary));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inputs_longer_than_the_bound_are_refused() {
    let dir = scratch("bound");
    let path = dir.join("big");
    std::fs::write(&path, vec![b'0'; MAX_INPUT + 1]).unwrap();
    let err = read_input(&path).unwrap_err();
    assert!(err.contains("over the bound"), "{err}");
    std::fs::write(&path, vec![b'0'; MAX_INPUT]).unwrap();
    assert_eq!(read_input(&path).unwrap().len(), MAX_INPUT);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn pem_keys_load_with_text_before_the_block() {
    let dir = scratch("pem");
    let k = key();
    let mut text = b"# mix key, epoch 7\n".to_vec();
    text.extend_from_slice(&k.to_pem()[..]);
    let loaded = decode_private_key(&text).unwrap();
    assert_eq!(loaded.public_key(), k.public_key());
    let path = dir.join("key.pem");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(
        read_private_key(&path).unwrap().public_key(),
        k.public_key()
    );
    // A PEM block that the library refuses is reported as PEM, not as a
    // binary key of the wrong length.
    let err =
        decode_private_key(b"junk -----BEGIN MLKEM768-X25519 PRIVATE KEY-----\n").unwrap_err();
    assert!(err.starts_with("PEM private key refused"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inspect_usage_says_which_keys_it_takes() {
    let usage = kemsphinx_cli::inspect::USAGE;
    assert!(usage.contains("PEM"), "{usage}");
    assert!(
        !usage.contains("raw 1,280-byte private key, binary or hex)"),
        "{usage}"
    );
}
