//! The fuzzer picks the RNG seed, every hop's commands, the payload and a
//! few byte mutations. A valid packet (forward, or a reply on a SURB) is
//! built over four fixed nodes and walked: every hop must accept it and the
//! payload must arrive. Then a mutated copy is walked from the chosen hop:
//! the same walk if no byte changed, else a clean error at the right hop
//! (header: that hop; payload: the terminal hop or the SURB's creator)
//! with the buffer unchanged. Every hop is checked against the model.
//! Unlike raw bytes, this gets past the header MAC.

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use kemsphinx_fuzz::input::Mutated;
use kemsphinx_fuzz::trip::Trip;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = Mutated::decode(data);
    let Some(trip) = Trip::create(&input) else {
        return;
    };
    let original = trip.walk(0, trip.first.clone());
    trip.assert_delivers(&original);
    let from = input.start_hop;
    let mut packet = original.received[from].clone();
    for m in &input.mutations {
        packet[m.index()] ^= m.xor;
    }
    let mutated = trip.walk(from, packet);
    trip.assert_mutated(&original, from, &mutated);
});
