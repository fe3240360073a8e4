//! A four-hop request and reply, end to end, with timings.
//!
//! Generates four mix keys, sends a forward packet whose payload carries a
//! SURB, unwraps it at each hop, replies on the SURB, unwraps the reply at
//! each hop and decrypts it. Repeats the whole exchange and prints sizes
//! and the median time of each operation.
//!
//! ```text
//! cargo run --release --example roundtrip [-- ITERATIONS]
//! ```

// Example code indexes and unwraps freely; the library denies all of this.
#![allow(clippy::indexing_slicing, clippy::expect_used, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, HEADER_LEN, KEM_CIPHERTEXT_LEN, PACKET_LEN, PAYLOAD_LEN, PRIVATE_KEY_LEN,
    PUBLIC_KEY_LEN, SURB_KEYS_LEN, SURB_LEN,
};
use kemsphinx::{
    Action, Command, NodeId, PrivateKey, RecipientId, Surb, SurbId, create_packet, create_surb,
    path, unwrap,
};
use rand_core::{Rng, UnwrapErr};

/// The upper layer's framing of a forward payload: flags ‖ reserved ‖ SURB
/// ‖ message (not part of the packet format; shown for completeness).
const SURB_FLAG: u8 = 1;
const MESSAGE_LEN: usize = PAYLOAD_LEN - 2 - SURB_LEN;

/// Time taken by each operation, one sample per run.
#[derive(Default)]
struct Timings {
    rows: Vec<(&'static str, Vec<Duration>)>,
}

impl Timings {
    fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        let took = start.elapsed();
        match self.rows.iter_mut().find(|(n, _)| *n == name) {
            Some((_, samples)) => samples.push(took),
            None => self.rows.push((name, vec![took])),
        }
        out
    }

    fn print(&mut self) {
        println!("\n{:<34} {:>12} {:>12}", "operation", "median", "min");
        for (name, samples) in &mut self.rows {
            samples.sort();
            let median = samples[samples.len() / 2];
            println!("{name:<34} {:>12.1?} {:>12.1?}", median, samples[0]);
        }
    }
}

fn main() -> Result<(), kemsphinx::Error> {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(25);
    let mut rng = UnwrapErr(getrandom::SysRng);
    let mut t = Timings::default();

    let keys: Vec<PrivateKey> = (0..4)
        .map(|_| t.time("generate key", || PrivateKey::generate(&mut rng)))
        .collect();
    let ids: Vec<NodeId> = (0..4u8).map(|i| NodeId([i; 32])).collect();
    let client = RecipientId([0xc1; 32]);
    let service = RecipientId([0x5e; 32]);
    let delay = [Command::NodeDelay(0)];
    let to_service = [Command::Recipient(service)];
    let back_to_client = [
        Command::Recipient(client),
        Command::SurbReply(SurbId([0x11; 16])),
    ];
    let nodes = std::array::from_fn(|i| (ids[i], keys[i].public_key()));
    let forward_path = path(nodes, [&delay, &delay, &delay, &to_service]);
    let reply_path = path(nodes, [&delay, &delay, &delay, &back_to_client]);

    let mut packet = Box::new([0u8; PACKET_LEN]);
    let mut request = Box::new([0u8; PAYLOAD_LEN]);
    let mut answer = Box::new([0u8; PAYLOAD_LEN]);
    for run in 0..iterations {
        // Client: a SURB for the answer, framed into the request payload.
        let (surb, surb_keys) = t.time("create SURB", || create_surb(&mut rng, &reply_path))?;
        request[0] = SURB_FLAG;
        request[2..2 + SURB_LEN].copy_from_slice(surb.as_bytes());
        rng.fill_bytes(&mut request[2 + SURB_LEN..]);
        t.time("create forward packet", || {
            create_packet(&mut rng, &forward_path, &request, &mut packet)
        })?;

        // Four mixes; the last delivers to the service.
        let mut delivered = None;
        for (hop, key) in keys.iter().enumerate() {
            let name = [
                "unwrap hop 0",
                "unwrap hop 1",
                "unwrap hop 2",
                "unwrap hop 3 (deliver)",
            ][hop];
            let out = t.time(name, || unwrap(key, &mut packet))?;
            if let Action::Deliver { payload, .. } = out.action {
                delivered = Some(Box::new(*payload));
            }
        }
        let delivered = delivered.expect("the fourth hop delivers");
        assert_eq!(delivered[..], request[..]);

        // Service: answer on the SURB it found in the payload.
        let surb = Surb::try_from(&delivered[2..2 + SURB_LEN])?;
        rng.fill_bytes(&mut answer[..]);
        let first_hop = t.time("reply from SURB", || surb.reply(&answer, &mut packet));
        assert_eq!(first_hop, ids[0]);

        let mut reply = None;
        for (hop, key) in keys.iter().enumerate() {
            let name = [
                "unwrap reply hop 0",
                "unwrap reply hop 1",
                "unwrap reply hop 2",
                "unwrap reply hop 3",
            ][hop];
            let out = t.time(name, || unwrap(key, &mut packet))?;
            if let Action::SurbReply {
                encrypted_reply, ..
            } = out.action
            {
                reply = Some(Box::new(*encrypted_reply));
            }
        }
        let mut reply = reply.expect("the fourth hop hands over the reply");

        // Client: decrypt with the SURB keys.
        let plain = t.time("decrypt reply", || surb_keys.decrypt_reply(&mut reply))?;
        assert_eq!(plain[..], answer[..]);
        if run == 0 {
            println!(
                "round trip ok: request delivered, reply decrypted ({MESSAGE_LEN}-byte message space)"
            );
        }
    }

    println!(
        "\nsizes (bytes): packet {PACKET_LEN}, header {HEADER_LEN}, payload {PAYLOAD_LEN}, \
              SURB {SURB_LEN}, SURB keys {SURB_KEYS_LEN}, encrypted reply {ENCRYPTED_REPLY_LEN}, \
              public key {PUBLIC_KEY_LEN}, private key {PRIVATE_KEY_LEN}, KEM ciphertext {KEM_CIPHERTEXT_LEN}"
    );
    println!(
        "{iterations} round trips on this machine (wall-clock; use the benches for careful numbers):"
    );
    t.print();
    Ok(())
}
