//! What the fuzz targets share: the fixed mix nodes, the input formats
//! (decoded by the targets, written by the seed builder), and an
//! independent model of one hop's unwrapping that every unwrap is checked
//! against.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

pub mod input;
pub mod model;
pub mod trip;

use std::sync::OnceLock;

use kemsphinx::geometry::{HOPS, KEY_SEED_LEN};
use kemsphinx::{NodeId, PrivateKey};

/// A mix node: its id and its loaded key.
pub struct Node {
    /// Where the previous hop forwards to.
    pub id: NodeId,
    /// The node's private key.
    pub key: PrivateKey,
}

/// Four fixed nodes, derived once per process: key generation costs more
/// than a whole execution, and fixed keys let committed seeds stay valid.
pub fn nodes() -> &'static [Node; HOPS] {
    static NODES: OnceLock<[Node; HOPS]> = OnceLock::new();
    NODES.get_or_init(|| {
        std::array::from_fn(|i| {
            let i = u8::try_from(i).unwrap();
            Node {
                id: NodeId([0x10 + i; 32]),
                key: PrivateKey::from_seed(&[0xa0 + i; KEY_SEED_LEN]),
            }
        })
    })
}

/// The one key `unwrap_raw` unwraps with (node 0's).
pub fn raw_key() -> &'static PrivateKey {
    &nodes()[0].key
}

/// Copy `data` into a zero-filled array of `N` bytes (truncating).
pub fn padded<const N: usize>(data: &[u8]) -> Box<[u8; N]> {
    let mut out = Box::new([0u8; N]);
    let n = data.len().min(N);
    out[..n].copy_from_slice(&data[..n]);
    out
}

/// The slice boundary: a wrong length is `Error::Length` naming the input,
/// the one expected length and the length given; the right length is never
/// a length error.
pub fn check_length<T>(
    result: Result<T, kemsphinx::Error>,
    input: kemsphinx::Input,
    expected: usize,
    got: usize,
) {
    let length = kemsphinx::Error::Length {
        input,
        expected,
        got,
    };
    match result {
        Err(e) if got != expected => assert_eq!(e, length),
        Ok(_) if got != expected => panic!("{input} of {got} bytes accepted"),
        Err(kemsphinx::Error::Length { .. }) => panic!("{input} of the right length refused"),
        _ => {}
    }
}
