//! The benchmark fixtures do what the benchmarks and the report say they
//! time: the packets are the ones each hop receives, the SURB's reply
//! opens, and ML-KEM alone computes the selected backend's function.

use kemsphinx::geometry::PAYLOAD_LEN;
use kemsphinx::hazmat::kem_backends::{self, Backend};
use kemsphinx::{Action, unwrap};
use kemsphinx_support::bench::{Buffers, MlKemAlone, Net};

#[test]
fn forward_packets_are_what_each_hop_receives() {
    let net = Net::new();
    let packets = net.forward_packets().unwrap();
    assert_eq!(packets.len(), 4);
    assert_eq!(packets[0], net.first_packet().unwrap());
    for (hop, key) in net.keys().enumerate() {
        let mut p = packets[hop].clone();
        let out = unwrap(key, &mut p).unwrap();
        match out.action {
            Action::Forward { .. } => {
                assert!(hop < 3);
                assert_eq!(p, packets[hop + 1]);
            }
            Action::Deliver { payload, .. } => {
                assert_eq!(hop, 3);
                assert_eq!(payload[..], [3u8; PAYLOAD_LEN][..payload.len()]);
            }
            Action::SurbReply { .. } => panic!("a forward packet became a reply"),
        }
    }
}

#[test]
fn the_surb_reply_opens_to_the_payload() {
    let net = Net::new();
    let payload = [0x5c; PAYLOAD_LEN];
    let (_, keys, mut reply) = net.surb_reply(&payload).unwrap();
    assert_eq!(keys.decrypt_reply(&mut reply).unwrap(), &payload);
}

#[test]
fn a_request_and_its_reply_run_to_the_end() {
    let net = Net::new();
    let mut bufs = Buffers::new();
    let mut rng = <chacha20::ChaCha20Rng as rand_core::SeedableRng>::from_seed([1; 32]);
    for _ in 0..3 {
        // The payload is zero but for the SURB from byte 2 on.
        assert_eq!(net.request_reply(&mut rng, &mut bufs), Ok(0));
    }
}

#[test]
fn mlkem_alone_is_the_selected_backends_decapsulation() {
    let mut alone = MlKemAlone::new();
    let (_, expected) =
        kem_backends::mlkem_decapsulate(Backend::SELECTED, &MlKemAlone::SEED, alone.ciphertext());
    assert_eq!(alone.decapsulate(), expected);
    let crate_name = match kemsphinx::KEM_BACKEND {
        "rustcrypto" => "RustCrypto ml-kem",
        _ => "libcrux-ml-kem",
    };
    assert!(alone.path().starts_with(crate_name), "{}", alone.path());
}
