//! X25519 u-coordinates for the KEM's edge cases.
//!
//! X25519 ignores bit 255 and reduces `u` modulo `p = 2^255 − 19`, so a
//! point has several 32-byte encodings. The small-order points are the
//! ones whose Diffie–Hellman output is all zero for every secret; in
//! reduced form they are `u = 0` (order 2), `u = 1` (order 4), two points
//! of order 8, and `u = p − 1` (order 4 on the twist). `p` and `p + 1` are
//! the non-canonical encodings of 0 and 1; setting bit 255 gives one more
//! encoding of each. The values were checked with an independent
//! Montgomery ladder.

/// One small-order X25519 u-coordinate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmallOrderPoint<S = &'static str> {
    /// A short name (vector ids use it).
    pub name: S,
    /// What the point is.
    pub what: S,
    /// Its little-endian encoding.
    pub u: [u8; 32],
}

/// The small-order points, each in its encoding with bit 255 clear.
pub const SMALL_ORDER: [SmallOrderPoint; 7] = [
    SmallOrderPoint {
        name: "u0",
        what: "u = 0, the point (0, 0) of order 2 (the all-zero encoding: X25519 has no \
               encoding of the identity, so the all-zero point and the point of order 2 are \
               the same bytes)",
        u: u("0000000000000000000000000000000000000000000000000000000000000000"),
    },
    SmallOrderPoint {
        name: "u1",
        what: "u = 1, a point of order 4",
        u: u("0100000000000000000000000000000000000000000000000000000000000000"),
    },
    SmallOrderPoint {
        name: "order8-a",
        what: "a point of order 8",
        u: u("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
    },
    SmallOrderPoint {
        name: "order8-b",
        what: "the other point of order 8",
        u: u("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
    },
    SmallOrderPoint {
        name: "u-p-minus-1",
        what: "u = p - 1, a point of order 4 on the twist",
        u: u("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    },
    SmallOrderPoint {
        name: "u-p",
        what: "u = p, the non-canonical encoding of u = 0 (order 2)",
        u: u("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    },
    SmallOrderPoint {
        name: "u-p-plus-1",
        what: "u = p + 1, the non-canonical encoding of u = 1 (order 4)",
        u: u("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    },
];

/// `u = p + 2`: a non-canonical encoding of `u = 2`, a point of large order
/// on the twist. X25519 reduces it and computes a normal, non-zero output.
pub const P_PLUS_2: [u8; 32] =
    u("efffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");

/// Every small-order encoding, 14 in all: each of [`SMALL_ORDER`] as it is
/// and then with bit 255 set (named `<name>-bit255`).
#[must_use]
pub fn small_order_encodings() -> Vec<SmallOrderPoint<String>> {
    SMALL_ORDER
        .iter()
        .flat_map(|p| {
            let mut high = p.u;
            if let Some(top) = high.last_mut() {
                *top |= 0x80;
            }
            [
                SmallOrderPoint {
                    name: p.name.to_owned(),
                    what: p.what.to_owned(),
                    u: p.u,
                },
                SmallOrderPoint {
                    name: format!("{}-bit255", p.name),
                    what: format!("{}, with the unused bit 255 set", p.what),
                    u: high,
                },
            ]
        })
        .collect()
}

/// 32 bytes from 64 lowercase hex digits, at compile time: a malformed
/// literal fails the build.
const fn u(hex: &str) -> [u8; 32] {
    assert!(hex.len() == 64, "64 hex digits");
    let mut out = [0u8; 32];
    let mut digits = hex.as_bytes();
    let mut bytes: &mut [u8] = &mut out;
    while let ([hi, lo, rest @ ..], [byte, more @ ..]) = (digits, bytes) {
        *byte = (nibble(*hi) << 4) | nibble(*lo);
        digits = rest;
        bytes = more;
    }
    out
}

/// The value of one lowercase hex digit.
const fn nibble(digit: u8) -> u8 {
    assert!(
        digit.is_ascii_digit() || matches!(digit, b'a'..=b'f'),
        "a hex digit"
    );
    if digit.is_ascii_digit() {
        digit - b'0'
    } else {
        digit - b'a' + 10
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_fourteen_distinct_points() {
        let all = small_order_encodings();
        assert_eq!(all.len(), 14);
        for (i, a) in all.iter().enumerate() {
            assert!(
                all.iter()
                    .skip(i + 1)
                    .all(|b| a.u != b.u && a.name != b.name)
            );
        }
    }

    #[test]
    fn the_hex_literals_decode_as_written() {
        assert_eq!(SMALL_ORDER[1].u[0], 1);
        assert_eq!(P_PLUS_2[0], 0xef);
        assert_eq!(P_PLUS_2[31], 0x7f);
    }
}
