//! AEZ (τ = 0, no AD, the payload SPRP) at every length 0..=16,150.
//!
//! Input: key 48 ‖ nonce 16 ‖ bit index u16 ‖ message. Asserted: encipher
//! is deterministic and decipher inverts it (both ways round); flipping one
//! bit of the message changes the ciphertext (a permutation is injective:
//! certain); for 16 bytes or more the ciphertext differs from the message
//! (a fixed point has probability 2^-128; shorter inputs are left alone,
//! where a fixed point is merely unlikely).

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use aez5::Aez;
use kemsphinx::geometry::PACKET_LEN;
use kemsphinx_fuzz::input::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let (key, nonce) = (r.array::<48>(), r.array::<16>());
    let flip = usize::from(r.u16());
    let m = r.rest();
    let m = &m[..m.len().min(PACKET_LEN)];
    let aez = Aez::new(&key);

    let c = enc(&aez, &nonce, m);
    assert_eq!(enc(&aez, &nonce, m), c, "not deterministic");
    assert_eq!(dec(&aez, &nonce, &c), m, "decipher(encipher(m)) != m");
    assert_eq!(enc(&aez, &nonce, &dec(&aez, &nonce, m)), m);
    if m.len() >= 16 {
        assert_ne!(c, m, "fixed point");
    }
    if !m.is_empty() {
        let bit = flip % (m.len() * 8);
        let mut m2 = m.to_vec();
        m2[bit / 8] ^= 1 << (bit % 8);
        assert_ne!(enc(&aez, &nonce, &m2), c, "two messages, one ciphertext");
    }
});

fn enc(aez: &Aez, nonce: &[u8; 16], m: &[u8]) -> Vec<u8> {
    let mut buf = m.to_vec();
    aez.encipher(nonce, &mut buf);
    buf
}

fn dec(aez: &Aez, nonce: &[u8; 16], c: &[u8]) -> Vec<u8> {
    let mut buf = c.to_vec();
    aez.decipher(nonce, &mut buf);
    buf
}
