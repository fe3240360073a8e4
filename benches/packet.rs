//! Every packet operation at the granularity of the reference's published
//! baseline, with allocations per operation (`cargo bench --bench packet`).
//! Inputs are prepared outside the timed region; buffers are boxed once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use chacha20::ChaCha20Rng;
use divan::{Bencher, black_box};
use kemsphinx::geometry::{PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{Action, PrivateKey, Surb, create_packet, create_surb, hazmat, unwrap};
use kemsphinx_support::bench::{Buffers, Net};
use rand_core::SeedableRng;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

#[divan::bench]
fn kem_keygen(b: Bencher) {
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    b.bench_local(|| PrivateKey::generate(&mut rng));
}

#[divan::bench]
fn kem_encapsulate(b: Bencher) {
    let key = PrivateKey::from_seed(&[1; 96]);
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    b.bench_local(|| hazmat::encapsulate(key.public_key(), &mut rng).unwrap());
}

/// Decapsulation with the key expanded once at load (what unwrap uses).
#[divan::bench]
fn kem_decapsulate_cached(b: Bencher) {
    let key = PrivateKey::from_seed(&[1; 96]);
    let (ct, _) =
        hazmat::encapsulate(key.public_key(), &mut ChaCha20Rng::from_seed([1; 32])).unwrap();
    b.bench_local(|| hazmat::decapsulate(&key, black_box(&ct)).unwrap());
}

/// Decapsulation from the 1,280-byte encoding each time (what the reference
/// does per packet): load, validate, expand, decapsulate.
#[divan::bench]
fn kem_decapsulate_from_encoding(b: Bencher) {
    let key = PrivateKey::from_seed(&[1; 96]);
    let bytes = key.to_bytes();
    let (ct, _) =
        hazmat::encapsulate(key.public_key(), &mut ChaCha20Rng::from_seed([1; 32])).unwrap();
    b.bench_local(|| {
        hazmat::decapsulate(&PrivateKey::from_bytes(black_box(&bytes)).unwrap(), &ct).unwrap()
    });
}

#[divan::bench]
fn build_forward_packet(b: Bencher) {
    let net = Net::new();
    let path = net.forward_path();
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    let payload = Box::new([3u8; PAYLOAD_LEN]);
    let mut out = Box::new([0u8; PACKET_LEN]);
    b.bench_local(|| create_packet(&mut rng, &path, &payload, &mut out).unwrap());
}

#[divan::bench(name = "create_surb")]
fn create_surb_bench(b: Bencher) {
    let net = Net::new();
    let path = net.reply_path();
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    b.bench_local(|| create_surb(&mut rng, &path).unwrap());
}

/// Unwrap at hop 0, 1, 2 (forward) and 3 (deliver).
#[divan::bench(args = [0, 1, 2, 3])]
fn unwrap_hop(b: Bencher, hop: usize) {
    let net = Net::new();
    let packet = net.forward_packets().unwrap().swap_remove(hop);
    let key = &net.nodes[hop].key;
    b.with_inputs(|| packet.clone())
        .bench_local_refs(|p| matches!(unwrap(key, p).unwrap().action, Action::Forward { .. }));
}

#[divan::bench]
fn unwrap_all_four_hops(b: Bencher) {
    let net = Net::new();
    let packet = net.first_packet().unwrap();
    b.with_inputs(|| packet.clone()).bench_local_refs(|p| {
        for key in net.keys() {
            unwrap(key, p).unwrap();
        }
    });
}

#[divan::bench]
fn reply_from_surb(b: Bencher) {
    let net = Net::new();
    let payload = Box::new([4u8; PAYLOAD_LEN]);
    let (surb, _, _) = net.surb_reply(&payload).unwrap();
    let mut out = Box::new([0u8; PACKET_LEN]);
    b.with_inputs(|| Surb::from_bytes(&surb).unwrap())
        .bench_local_values(|surb| surb.reply(&payload, &mut out));
}

#[divan::bench]
fn decrypt_reply(b: Bencher) {
    let net = Net::new();
    let (_, keys, reply) = net.surb_reply(&[4; PAYLOAD_LEN]).unwrap();
    b.with_inputs(|| reply.clone())
        .bench_local_refs(|r| keys.decrypt_reply(r).map(|p| p[0]).unwrap());
}

/// The client's and the mixes' crypto for one request and its reply: a SURB,
/// a forward packet carrying it, four unwraps, a reply on the SURB, four
/// unwraps, and the reply's decryption.
#[divan::bench]
fn full_request_reply(b: Bencher) {
    let net = Net::new();
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    let mut bufs = Buffers::new();
    b.bench_local(|| net.request_reply(&mut rng, &mut bufs).unwrap());
}
