//! The BLAKE2b constructions the hybrid KEM uses (SPEC.md §2.1, §2.3).
//!
//! BLAKE2Xb is the extendable-output mode of the BLAKE2X paper: a root
//! BLAKE2b-512 hash whose parameter block carries the XOF length, then one
//! BLAKE2b "output node" per 64 output bytes over the root digest. The KEM
//! never reads more than one node, so only the first node is computed. The
//! parameters below are exactly those of Go's `blake2b.NewXOF`, which the
//! reference uses; keyed BLAKE2b-256 is *not* the same function.

use blake2b_simd::Params;
use zeroize::Zeroizing;

/// XOF length that means "unknown in advance" (BLAKE2X §2).
pub(crate) const XOF_LENGTH_UNKNOWN: u32 = u32::MAX;

/// Digest length of a BLAKE2b root and of a full output node.
const FULL: usize = 64;
/// BLAKE2X's leaf length for output nodes: one full digest.
const LEAF_LEN: u32 = 64;

/// The first `N` bytes of BLAKE2Xb(`key`, `msg`) declared with `xof_len`
/// output bytes; `node_len` is the digest length of the first output node
/// (`xof_len` itself when it is at most 64, otherwise 64).
pub(crate) fn blake2xb_prefix<const N: usize>(
    key: &[u8],
    msg: &[u8],
    xof_len: u32,
    node_len: usize,
) -> Zeroizing<[u8; N]> {
    // Parameter bytes 8..12 are the node offset, 12..16 the XOF length:
    // blake2b_simd takes both as one little-endian u64.
    let xof_word = u64::from(xof_len) << 32;
    let root = Params::new()
        .hash_length(FULL)
        .key(key)
        .node_offset(xof_word)
        .hash(msg);
    let root = prefix::<FULL>(root.as_bytes());
    let node = Params::new()
        .hash_length(node_len)
        .fanout(0)
        .max_depth(0)
        .max_leaf_length(LEAF_LEN)
        .node_offset(xof_word) // node index 0
        .node_depth(0)
        .inner_hash_length(FULL)
        .hash(&root[..]);
    prefix(node.as_bytes())
}

/// Unkeyed BLAKE2b with a 32-byte digest.
pub(crate) fn blake2b_256(parts: &[&[u8]]) -> Zeroizing<[u8; 32]> {
    keyed_blake2b_256(&[], parts)
}

/// BLAKE2b keyed mode with a 32-byte digest, over the concatenation of
/// `parts` (so callers never need to assemble a message buffer).
pub(crate) fn keyed_blake2b_256(key: &[u8], parts: &[&[u8]]) -> Zeroizing<[u8; 32]> {
    let mut state = Params::new().hash_length(32).key(key).to_state();
    for part in parts {
        state.update(part);
    }
    prefix(state.finalize().as_bytes())
}

/// The first `N` bytes of a digest, zero-padded if it is shorter (it never
/// is: every caller asks for a digest of at least `N` bytes).
fn prefix<const N: usize>(digest: &[u8]) -> Zeroizing<[u8; N]> {
    let mut out = Zeroizing::new([0u8; N]);
    for (o, d) in out.iter_mut().zip(digest) {
        *o = *d;
    }
    out
}
