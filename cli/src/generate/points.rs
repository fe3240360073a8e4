//! X25519 u-coordinates used by the KEM edge cases.
//!
//! X25519 ignores bit 255 and reduces `u` modulo `p = 2^255 − 19`, so a
//! point has several 32-byte encodings. The small-order points are the
//! ones whose Diffie–Hellman output is all zero for every secret; in
//! reduced form they are `u = 0` (order 2), `u = 1` (order 4), two points of
//! order 8, and `u = p − 1` (order 4 on the twist). `p` and `p + 1` are the
//! non-canonical encodings of 0 and 1; setting bit 255 gives one more
//! encoding of each. The values were checked with an independent
//! Montgomery ladder.

/// `(name, what it is, little-endian encoding with bit 255 clear)`.
pub(crate) const SMALL_ORDER: [(&str, &str, &str); 7] = [
    (
        "u0",
        "u = 0, the point (0, 0) of order 2 (the all-zero encoding: X25519 has no encoding of \
         the identity, so the all-zero point and the point of order 2 are the same bytes)",
        "0000000000000000000000000000000000000000000000000000000000000000",
    ),
    (
        "u1",
        "u = 1, a point of order 4",
        "0100000000000000000000000000000000000000000000000000000000000000",
    ),
    (
        "order8-a",
        "a point of order 8",
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
    ),
    (
        "order8-b",
        "the other point of order 8",
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
    ),
    (
        "u-p-minus-1",
        "u = p - 1, a point of order 4 on the twist",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ),
    (
        "u-p",
        "u = p, the non-canonical encoding of u = 0 (order 2)",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ),
    (
        "u-p-plus-1",
        "u = p + 1, the non-canonical encoding of u = 1 (order 4)",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ),
];

/// `u = p + 2`: a non-canonical encoding of `u = 2`, a point of large order
/// on the twist. X25519 reduces it and computes a normal, non-zero output.
pub(crate) const P_PLUS_2: &str =
    "efffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f";

/// Every small-order encoding: each of [`SMALL_ORDER`] as is and with
/// bit 255 set. `(id suffix, description, bytes)`.
pub(crate) fn small_order_encodings() -> Vec<(String, String, [u8; 32])> {
    SMALL_ORDER
        .iter()
        .flat_map(|(name, what, hex)| {
            let mut bytes = [0u8; 32];
            // The table is constant and checked by `table_decodes` below.
            if let Ok(b) = hex::decode(hex) {
                bytes.copy_from_slice(&b);
            }
            let mut high = bytes;
            high[31] |= 0x80;
            [
                ((*name).to_owned(), (*what).to_owned(), bytes),
                (
                    format!("{name}-bit255"),
                    format!("{what}, with the unused bit 255 set"),
                    high,
                ),
            ]
        })
        .collect()
}

/// `P_PLUS_2` as bytes.
pub(crate) fn p_plus_2() -> [u8; 32] {
    let mut out = [0u8; 32];
    if let Ok(b) = hex::decode(P_PLUS_2) {
        out.copy_from_slice(&b);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn table_decodes() {
        for (_, _, hex) in super::SMALL_ORDER {
            assert_eq!(hex::decode(hex).map(|b| b.len()), Ok(32));
        }
        assert_eq!(super::small_order_encodings().len(), 14);
    }
}
