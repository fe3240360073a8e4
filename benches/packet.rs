//! Every packet operation at the granularity of the reference's published
//! baseline, with allocations per operation (`cargo bench --bench packet`).
//! Inputs are prepared outside the timed region; buffers are boxed once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![allow(unused_qualifications)] // `kemsphinx::create_surb` reads better beside the bench of that name

use chacha20::ChaCha20Rng;
use divan::{Bencher, black_box};
use kemsphinx::geometry::{ENCRYPTED_REPLY_LEN, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{
    Action, Command, Hop, NodeId, PrivateKey, RecipientId, SurbId, create_packet, unwrap,
};
use rand_core::SeedableRng;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

/// Four mix nodes and the commands of a forward path and a SURB path.
struct Net {
    keys: Vec<PrivateKey>,
    ids: Vec<NodeId>,
    delay: [Command; 1],
    deliver: [Command; 1],
    reply: [Command; 2],
}

impl Net {
    fn new() -> Self {
        Self {
            keys: (0..4u8).map(|i| PrivateKey::from_seed(&[i; 96])).collect(),
            ids: (0..4u8).map(|i| NodeId([i; 32])).collect(),
            delay: [Command::NodeDelay(100)],
            deliver: [Command::Recipient(RecipientId([7; 32]))],
            reply: [
                Command::Recipient(RecipientId([8; 32])),
                Command::SurbReply(SurbId([9; 16])),
            ],
        }
    }

    fn path<'a>(&'a self, terminal: &'a [Command]) -> [Hop<'a>; 4] {
        std::array::from_fn(|i| Hop {
            id: self.ids[i],
            public_key: self.keys[i].public_key(),
            commands: if i < 3 { &self.delay } else { terminal },
        })
    }

    /// The forward packet as each hop receives it.
    fn packets(&self) -> Vec<Box<[u8; PACKET_LEN]>> {
        let mut rng = ChaCha20Rng::from_seed([1; 32]);
        let mut p = Box::new([0u8; PACKET_LEN]);
        create_packet(
            &mut rng,
            &self.path(&self.deliver),
            &[3; PAYLOAD_LEN],
            &mut p,
        )
        .unwrap();
        let mut out = vec![p.clone()];
        for key in &self.keys[..3] {
            unwrap(key, &mut p).unwrap();
            out.push(p.clone());
        }
        out
    }
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
    b.bench_local(|| key.public_key().encapsulate(&mut rng).unwrap());
}

/// Decapsulation with the key expanded once at load (what unwrap uses).
#[divan::bench]
fn kem_decapsulate_cached(b: Bencher) {
    let key = PrivateKey::from_seed(&[1; 96]);
    let (ct, _) = key
        .public_key()
        .encapsulate(&mut ChaCha20Rng::from_seed([1; 32]))
        .unwrap();
    b.bench_local(|| key.decapsulate(black_box(&ct)).unwrap());
}

/// Decapsulation from the 1,280-byte encoding each time (what the reference
/// does per packet): load, validate, expand, decapsulate.
#[divan::bench]
fn kem_decapsulate_from_encoding(b: Bencher) {
    let key = PrivateKey::from_seed(&[1; 96]);
    let bytes = key.to_bytes();
    let (ct, _) = key
        .public_key()
        .encapsulate(&mut ChaCha20Rng::from_seed([1; 32]))
        .unwrap();
    b.bench_local(|| {
        PrivateKey::from_bytes(black_box(&bytes))
            .unwrap()
            .decapsulate(&ct)
            .unwrap()
    });
}

#[divan::bench]
fn build_forward_packet(b: Bencher) {
    let net = Net::new();
    let path = net.path(&net.deliver);
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    let payload = Box::new([3u8; PAYLOAD_LEN]);
    let mut out = Box::new([0u8; PACKET_LEN]);
    b.bench_local(|| create_packet(&mut rng, &path, &payload, &mut out).unwrap());
}

#[divan::bench(name = "create_surb")]
fn create_surb_bench(b: Bencher) {
    let net = Net::new();
    let path = net.path(&net.reply);
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    b.bench_local(|| kemsphinx::create_surb(&mut rng, &path).unwrap());
}

/// Unwrap at hop 0, 1, 2 (forward) and 3 (deliver).
#[divan::bench(args = [0, 1, 2, 3])]
fn unwrap_hop(b: Bencher, hop: usize) {
    let net = Net::new();
    let packet = net.packets().swap_remove(hop);
    let key = &net.keys[hop];
    b.with_inputs(|| packet.clone())
        .bench_local_refs(|p| matches!(unwrap(key, p).unwrap().action, Action::Forward { .. }));
}

#[divan::bench]
fn unwrap_all_four_hops(b: Bencher) {
    let net = Net::new();
    let packet = net.packets().swap_remove(0);
    b.with_inputs(|| packet.clone()).bench_local_refs(|p| {
        for key in &net.keys {
            unwrap(key, p).unwrap();
        }
    });
}

#[divan::bench]
fn reply_from_surb(b: Bencher) {
    let net = Net::new();
    let (surb, _) =
        kemsphinx::create_surb(&mut ChaCha20Rng::from_seed([1; 32]), &net.path(&net.reply))
            .unwrap();
    let payload = Box::new([4u8; PAYLOAD_LEN]);
    let mut out = Box::new([0u8; PACKET_LEN]);
    b.bench_local(|| surb.reply(&payload, &mut out));
}

#[divan::bench]
fn decrypt_reply(b: Bencher) {
    let net = Net::new();
    let (surb, keys) =
        kemsphinx::create_surb(&mut ChaCha20Rng::from_seed([1; 32]), &net.path(&net.reply))
            .unwrap();
    let mut p = Box::new([0u8; PACKET_LEN]);
    surb.reply(&[4; PAYLOAD_LEN], &mut p);
    let mut reply = Box::new([0u8; ENCRYPTED_REPLY_LEN]);
    for key in &net.keys {
        if let Action::SurbReply {
            encrypted_reply, ..
        } = unwrap(key, &mut p).unwrap().action
        {
            *reply = *encrypted_reply;
        }
    }
    b.with_inputs(|| reply.clone())
        .bench_local_refs(|r| keys.decrypt_reply(r).map(|p| p[0]).unwrap());
}

/// The client's and the mixes' crypto for one request and its reply: a SURB,
/// a forward packet carrying it, four unwraps, a reply on the SURB, four
/// unwraps, and the reply's decryption.
#[divan::bench]
fn full_request_reply(b: Bencher) {
    let net = Net::new();
    let (fwd, back) = (net.path(&net.deliver), net.path(&net.reply));
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    let mut payload = Box::new([0u8; PAYLOAD_LEN]);
    let mut reply = Box::new([0u8; ENCRYPTED_REPLY_LEN]);
    b.bench_local(|| {
        let (surb, keys) = kemsphinx::create_surb(&mut rng, &back).unwrap();
        payload[2..2 + surb.as_bytes().len()].copy_from_slice(surb.as_bytes());
        create_packet(&mut rng, &fwd, &payload, &mut packet).unwrap();
        for key in &net.keys {
            unwrap(key, &mut packet).unwrap();
        }
        surb.reply(&payload, &mut packet);
        for key in &net.keys {
            if let Action::SurbReply {
                encrypted_reply, ..
            } = unwrap(key, &mut packet).unwrap().action
            {
                *reply = *encrypted_reply;
            }
        }
        keys.decrypt_reply(&mut reply).unwrap()[0]
    });
}
