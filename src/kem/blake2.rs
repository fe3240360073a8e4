//! The BLAKE2b constructions the hybrid KEM uses (SPEC.md §2.1, §2.3).
//!
//! BLAKE2Xb is the extendable-output mode of the BLAKE2X paper: a root
//! BLAKE2b-512 hash whose parameter block carries the XOF length, then one
//! BLAKE2b "output node" per 64 output bytes over the root digest. The KEM
//! never reads more than one node, so only the first node is computed. The
//! parameters below are exactly those of Go's `blake2b.NewXOF`, which the
//! reference uses; keyed BLAKE2b-256 is *not* the same function.
//!
//! `blake2b_simd` offers no `Zeroize`, yet its parameter blocks, states and
//! digests hold KEM secrets here (the Diffie–Hellman output as a key, the
//! split-PRF keys, the root digest). Every one this module owns is
//! overwritten with a fresh value before it is dropped (see [`Wiped`]).

use blake2b_simd::{Hash, Params, State};
use zeroize::Zeroizing;

/// XOF length that means "unknown in advance" (BLAKE2X §2).
pub(crate) const XOF_LENGTH_UNKNOWN: u32 = u32::MAX;

/// Digest length of a BLAKE2b root and of a full output node.
const FULL: usize = 64;
/// [`FULL`] as the output-length arithmetic's type.
#[cfg(feature = "hazmat")]
const NODE: u64 = 64;
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
    let root = xof_root(key, msg, xof_len);
    digest(&node_params(xof_len, 0, node_len).0, &[&root[..]])
}

/// The root of BLAKE2Xb: keyed BLAKE2b-512 whose parameter block carries
/// the XOF length. (`key` is at most 64 bytes: every caller's is.)
fn xof_root(key: &[u8], msg: &[u8], xof_len: u32) -> Zeroizing<[u8; FULL]> {
    let mut root_params = Wiped(Params::new());
    root_params
        .0
        .hash_length(FULL)
        .key(key)
        .node_offset(xof_word(xof_len, 0));
    digest::<FULL>(&root_params.0, &[msg])
}

/// Parameter bytes 8..12 are the node offset, 12..16 the XOF length:
/// blake2b_simd takes both as one little-endian u64.
fn xof_word(xof_len: u32, node: u32) -> u64 {
    (u64::from(xof_len) << 32) | u64::from(node)
}

/// The parameters of output node `node`, `node_len` bytes long.
fn node_params(xof_len: u32, node: u32, node_len: usize) -> Wiped<Params> {
    let mut params = Wiped(Params::new());
    params
        .0
        .hash_length(node_len)
        .fanout(0)
        .max_depth(0)
        .max_leaf_length(LEAF_LEN)
        .node_offset(xof_word(xof_len, node))
        .node_depth(0)
        .inner_hash_length(FULL);
    params
}

/// BLAKE2Xb(`key`, `msg`) declared with `xof_len` output bytes
/// ([`XOF_LENGTH_UNKNOWN`] for "unknown"), every output node, written over
/// `out`. The KEM reads only the first node ([`blake2xb_prefix`]); this is
/// for conformance tools. `false`, with `out` untouched, if `key` is longer
/// than 64 bytes or `out` is longer than the declared length allows.
#[cfg(feature = "hazmat")]
pub(crate) fn blake2xb(key: &[u8], msg: &[u8], xof_len: u32, out: &mut [u8]) -> bool {
    let limit = if xof_len == XOF_LENGTH_UNKNOWN {
        u64::from(u32::MAX) * NODE
    } else {
        u64::from(xof_len)
    };
    if key.len() > FULL || u64::try_from(out.len()).map_or(true, |len| len > limit) {
        return false;
    }
    let root = xof_root(key, msg, xof_len);
    for (chunk, node) in out.chunks_mut(FULL).zip(0u32..) {
        // A node is 64 bytes but for the last of a known length.
        let left = limit.saturating_sub(u64::from(node) * NODE);
        let node_len = usize::try_from(left.min(NODE)).unwrap_or(FULL);
        let hash = Wiped(node_params(xof_len, node, node_len).0.hash(&root[..]));
        for (o, h) in chunk.iter_mut().zip(hash.0.as_bytes()) {
            *o = *h;
        }
    }
    true
}

/// Unkeyed BLAKE2b with a 32-byte digest.
pub(crate) fn blake2b_256(parts: &[&[u8]]) -> Zeroizing<[u8; 32]> {
    keyed_blake2b_256(&[], parts)
}

/// BLAKE2b keyed mode with a 32-byte digest, over the concatenation of
/// `parts` (so callers never need to assemble a message buffer).
pub(crate) fn keyed_blake2b_256(key: &[u8], parts: &[&[u8]]) -> Zeroizing<[u8; 32]> {
    let mut params = Wiped(Params::new());
    params.0.hash_length(32).key(key);
    digest(&params.0, parts)
}

/// The first `N` bytes of the digest of `parts` under `params`, with the
/// state and digest wiped.
fn digest<const N: usize>(params: &Params, parts: &[&[u8]]) -> Zeroizing<[u8; N]> {
    let mut state = Wiped(params.to_state());
    for part in parts {
        state.0.update(part);
    }
    let hash = Wiped(state.0.finalize());
    prefix(hash.0.as_bytes())
}

/// A `blake2b_simd` value that is overwritten with a fresh one on drop: the
/// closest to zeroizing that its types allow. `black_box` keeps the stores
/// from being removed as dead.
struct Wiped<T: Fresh>(T);

/// What a wiped value is overwritten with.
trait Fresh {
    fn fresh() -> Self;
}

impl Fresh for Params {
    fn fresh() -> Self {
        Params::new()
    }
}

impl Fresh for State {
    fn fresh() -> Self {
        Params::new().to_state()
    }
}

impl Fresh for Hash {
    fn fresh() -> Self {
        Params::new().hash(&[])
    }
}

impl<T: Fresh> Drop for Wiped<T> {
    fn drop(&mut self) {
        self.0 = T::fresh();
        core::hint::black_box(&mut self.0);
    }
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
