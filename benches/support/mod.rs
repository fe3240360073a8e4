//! Fixtures shared by the benches and the report
//! (`examples/report` includes this file by path): four mixes with fixed
//! keys, their paths, prepared packets and replies, and the primitives of
//! one unwrap run alone.

#![allow(dead_code, unreachable_pub)]

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{ENCRYPTED_REPLY_LEN, PACKET_LEN, PAYLOAD_LEN, SURB_LEN};
use kemsphinx::{
    Action, Command, Hop, NodeId, PrivateKey, RecipientId, SurbId, SurbKeys, create_packet,
    create_surb, unwrap,
};
use rand_core::SeedableRng;

/// Four mixes and the commands of a forward path and a SURB path.
pub struct Net {
    pub keys: Vec<PrivateKey>,
    ids: Vec<NodeId>,
    delay: [Command; 1],
    deliver: [Command; 1],
    reply: [Command; 2],
}

/// The buffers a client and its mixes work in, allocated once.
pub struct Buffers {
    packet: Box<[u8; PACKET_LEN]>,
    payload: Box<[u8; PAYLOAD_LEN]>,
    reply: Box<[u8; ENCRYPTED_REPLY_LEN]>,
}

impl Buffers {
    pub fn new() -> Self {
        Self {
            packet: Box::new([0; PACKET_LEN]),
            payload: Box::new([0; PAYLOAD_LEN]),
            reply: Box::new([0; ENCRYPTED_REPLY_LEN]),
        }
    }
}

impl Net {
    pub fn new() -> Self {
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

    /// The forward path: delays, then delivery.
    pub fn forward_path(&self) -> [Hop<'_>; 4] {
        self.path(&self.deliver)
    }

    /// The SURB path: delays, then a reply to the client.
    pub fn reply_path(&self) -> [Hop<'_>; 4] {
        self.path(&self.reply)
    }

    /// The forward packet as each hop receives it.
    pub fn forward_packets(&self) -> Vec<Box<[u8; PACKET_LEN]>> {
        let mut rng = ChaCha20Rng::from_seed([1; 32]);
        let mut p = Box::new([0u8; PACKET_LEN]);
        create_packet(&mut rng, &self.forward_path(), &[3; PAYLOAD_LEN], &mut p).unwrap();
        let mut out = vec![p.clone()];
        for key in &self.keys[..3] {
            unwrap(key, &mut p).unwrap();
            out.push(p.clone());
        }
        out
    }

    /// A SURB's bytes, its keys, and the encrypted reply its terminal hop
    /// hands over for a reply of `payload`.
    pub fn surb_reply(
        &self,
        payload: &[u8; PAYLOAD_LEN],
    ) -> (
        Box<[u8; SURB_LEN]>,
        SurbKeys,
        Box<[u8; ENCRYPTED_REPLY_LEN]>,
    ) {
        let (surb, keys) =
            create_surb(&mut ChaCha20Rng::from_seed([1; 32]), &self.reply_path()).unwrap();
        let bytes = Box::new(*surb.as_bytes());
        let mut p = Box::new([0u8; PACKET_LEN]);
        surb.reply(payload, &mut p);
        let mut reply = Box::new([0u8; ENCRYPTED_REPLY_LEN]);
        for key in &self.keys {
            if let Action::SurbReply {
                encrypted_reply, ..
            } = unwrap(key, &mut p).unwrap().action
            {
                *reply = *encrypted_reply;
            }
        }
        (bytes, keys, reply)
    }

    /// One request carrying a SURB and its reply, all the crypto of both,
    /// in the caller's buffers.
    pub fn request_reply(&self, rng: &mut ChaCha20Rng, bufs: &mut Buffers) -> u8 {
        let Buffers {
            packet,
            payload,
            reply,
        } = bufs;
        let (surb, keys) = create_surb(rng, &self.reply_path()).unwrap();
        payload[2..2 + surb.as_bytes().len()].copy_from_slice(surb.as_bytes());
        create_packet(rng, &self.forward_path(), payload, packet).unwrap();
        for key in &self.keys {
            unwrap(key, packet).unwrap();
        }
        surb.reply(payload, packet);
        for key in &self.keys {
            if let Action::SurbReply {
                encrypted_reply, ..
            } = unwrap(key, packet).unwrap().action
            {
                **reply = *encrypted_reply;
            }
        }
        keys.decrypt_reply(reply).unwrap()[0]
    }
}

/// ML-KEM-768 decapsulation alone, with the backend and key form the
/// unwrap path uses (libcrux, unpacked, AVX2 where the CPU has it).
pub struct MlKemAlone {
    run: Box<dyn FnMut() -> [u8; 32]>,
}

impl MlKemAlone {
    pub fn new() -> Self {
        #[cfg(target_arch = "x86_64")]
        if libcrux_platform::simd256_support() {
            use libcrux_ml_kem::mlkem768::avx2::unpacked as avx2;
            let kp = avx2::generate_key_pair([7; 64]);
            let (ct, _) = avx2::encapsulate(kp.public_key(), [9; 32]);
            return Self {
                run: Box::new(move || avx2::decapsulate(&kp, &ct)),
            };
        }
        use libcrux_ml_kem::mlkem768::portable::unpacked as portable;
        let kp = portable::generate_key_pair([7; 64]);
        let (ct, _) = portable::encapsulate(kp.public_key(), [9; 32]);
        Self {
            run: Box::new(move || portable::decapsulate(&kp, &ct)),
        }
    }

    pub fn decapsulate(&mut self) -> [u8; 32] {
        (self.run)()
    }
}

/// The BLAKE2b work of one decapsulation: the adapter's BLAKE2Xb (a root
/// and one output node) and the split PRF's two key hashes and two keyed
/// hashes over the 1,143-byte message.
pub fn blake2b_kem_work(msg: &[u8; 1_143]) -> [blake2b_simd::Hash; 2] {
    let root = blake2b_simd::Params::new()
        .hash_length(64)
        .key(&[1; 32])
        .node_offset(32 << 32)
        .hash(&[2; 64]);
    let node = blake2b_simd::Params::new()
        .hash_length(32)
        .fanout(0)
        .max_depth(0)
        .max_leaf_length(64)
        .node_offset(32 << 32)
        .inner_hash_length(64)
        .hash(root.as_bytes());
    let kx = blake2b_simd::Params::new()
        .hash_length(32)
        .hash(node.as_bytes());
    let km = blake2b_simd::Params::new().hash_length(32).hash(&[3; 32]);
    [
        blake2b_simd::Params::new()
            .hash_length(32)
            .key(kx.as_bytes())
            .hash(msg),
        blake2b_simd::Params::new()
            .hash_length(32)
            .key(km.as_bytes())
            .hash(msg),
    ]
}
