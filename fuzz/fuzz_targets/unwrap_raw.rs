//! Arbitrary bytes as a received datagram: the length boundary, then
//! unwrapping (zero-padded or truncated to a packet) with a fixed key.
//! Never a panic; every outcome, success or error, must match the model
//! (`src/model.rs`), which recomputes the header MAC outside the library:
//! a success is only possible with a verified MAC, and an error leaves the
//! buffer as it was. A forwarded packet is unwrapped again with the same
//! key (the seeds route every hop through it).

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use kemsphinx::geometry::PACKET_LEN;
use kemsphinx::{Error, Input, packet_mut};
use kemsphinx_fuzz::model::{Step, check_hop};
use kemsphinx_fuzz::{padded, raw_key};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut datagram = data.to_vec();
    match packet_mut(&mut datagram) {
        Ok(packet) => assert!(packet[..] == data[..]),
        Err(e) => assert_eq!(
            e,
            Error::Length {
                input: Input::Packet,
                expected: PACKET_LEN,
                got: data.len()
            }
        ),
    }
    let mut packet = padded::<PACKET_LEN>(data);
    for _ in 0..4 {
        if !matches!(check_hop(raw_key(), &mut packet), Step::Forward { .. }) {
            break;
        }
    }
});
