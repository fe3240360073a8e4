//! Input formats of the structured targets.
//!
//! Each format is decoded from any byte string (missing bytes read as zero,
//! so every input means something) and has an encoder, which the seed
//! builder uses to turn the conformance vectors into seeds.

use kemsphinx::geometry::{
    HOPS, KEM_CIPHERTEXT_LEN, KEY_SEED_LEN, PACKET_LEN, PAYLOAD_LEN, PRIVATE_KEY_LEN,
    SHARED_SECRET_LEN, SPRP_KEY_BLOCK_LEN, SURB_LEN,
};
use kemsphinx::{Command, hazmat};

use crate::model::{
    BLOCK, Keys, MAC, PAYLOAD, Step, check_hop_with_plain_payload, check_hop_with_shared_secret,
};

/// Reads fields off the front of an input; past the end it yields zeros.
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// Read from `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self(data)
    }

    /// Up to `n` bytes (fewer at the end of the input).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.0.split_at(n.min(self.0.len()));
        self.0 = tail;
        head
    }

    /// `N` bytes, zero-padded.
    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        *crate::padded::<N>(self.take(N))
    }

    /// One byte.
    pub fn byte(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    /// A big-endian `u16`.
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.array())
    }

    /// Everything left.
    pub fn rest(self) -> &'a [u8] {
        self.0
    }
}

/// The commands serialised at the front of `bytes`, in order, up to the
/// first null byte or unparsable command.
pub fn commands(bytes: &[u8]) -> Vec<Command> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Ok(Some((cmd, tail))) = hazmat::parse_command(rest) {
        out.push(cmd);
        rest = tail;
    }
    out
}

/// Serialise commands back to back.
pub fn serialise(commands: &[Command]) -> Vec<u8> {
    let mut out = Vec::new();
    for cmd in commands {
        out.extend_from_slice(hazmat::encode_command(cmd).as_bytes());
    }
    out
}

/// One XOR applied to a packet byte (`offset` is taken modulo the packet
/// length; a zero `xor` leaves the byte as it was).
#[derive(Clone, Copy, Debug)]
pub struct Mutation {
    /// Which byte.
    pub offset: u16,
    /// What to XOR into it.
    pub xor: u8,
}

impl Mutation {
    /// The byte this mutation changes.
    pub fn index(&self) -> usize {
        usize::from(self.offset) % PACKET_LEN
    }
}

/// Most mutations one input applies.
const MAX_MUTATIONS: usize = 8;

/// `unwrap_mutated`: a valid packet (forward, or a reply on a SURB) built
/// from the fuzzer's choices, then mutated before hop `start_hop`.
///
/// Layout: flags (bit 0: SURB, bits 1–2: start hop) ‖ RNG seed 32 ‖ per hop
/// a length byte and that many bytes of serialised commands ‖ mutation
/// count ‖ per mutation offset u16 and XOR byte ‖ payload prefix.
#[derive(Clone, Debug, Default)]
pub struct Mutated {
    /// Reply on a SURB instead of a forward packet.
    pub surb: bool,
    /// The hop whose incoming packet is mutated (0..4).
    pub start_hop: usize,
    /// Seed of the creation RNG.
    pub seed: [u8; 32],
    /// Each hop's caller commands, serialised.
    pub commands: [Vec<u8>; HOPS],
    /// Mutations of the packet as `start_hop` receives it.
    pub mutations: Vec<Mutation>,
    /// The payload's first bytes (the rest is zero).
    pub payload: Vec<u8>,
}

impl Mutated {
    /// Decode any byte string.
    pub fn decode(data: &[u8]) -> Self {
        let mut r = Reader::new(data);
        let flags = r.byte();
        let seed = r.array();
        let commands = std::array::from_fn(|_| {
            let n = usize::from(r.byte());
            r.take(n).to_vec()
        });
        let count = usize::from(r.byte()) % (MAX_MUTATIONS + 1);
        let mutations = (0..count)
            .map(|_| Mutation {
                offset: r.u16(),
                xor: r.byte(),
            })
            .collect();
        let payload = r.rest();
        Self {
            surb: flags & 1 == 1,
            start_hop: usize::from(flags >> 1) % HOPS,
            seed,
            commands,
            mutations,
            payload: payload[..payload.len().min(PAYLOAD_LEN)].to_vec(),
        }
    }

    /// The encoding [`Mutated::decode`] reads back.
    pub fn encode(&self) -> Vec<u8> {
        let hop = u8::try_from(self.start_hop % HOPS).unwrap();
        let mut out = vec![u8::from(self.surb) | (hop << 1)];
        out.extend_from_slice(&self.seed);
        for cmds in &self.commands {
            out.push(u8::try_from(cmds.len()).unwrap());
            out.extend_from_slice(cmds);
        }
        out.push(u8::try_from(self.mutations.len().min(MAX_MUTATIONS)).unwrap());
        for m in self.mutations.iter().take(MAX_MUTATIONS) {
            out.extend_from_slice(&m.offset.to_be_bytes());
            out.push(m.xor);
        }
        out.extend_from_slice(&self.payload);
        out
    }
}

/// Bytes of the hops' four SPRP key blocks in a [`Reply`] input.
pub const HOP_KEYS_LEN: usize = HOPS * SPRP_KEY_BLOCK_LEN;

/// `surb_reply`: a SURB, four hops' payload keys, a bit of the SURB keys
/// to corrupt, and bytes used both as the reply payload and as an
/// arbitrary encrypted reply.
///
/// Layout: corrupt bit u16 ‖ SURB 6,058 ‖ hop key blocks 256 ‖ rest.
pub struct Reply {
    /// Which bit of the 320 SURB key bytes to flip (modulo 2,560).
    pub corrupt_bit: u16,
    /// The SURB's bytes.
    pub surb: [u8; SURB_LEN],
    /// The hops' key blocks in the order the hops apply them.
    pub hop_keys: [u8; HOP_KEYS_LEN],
    /// The rest of the input.
    pub rest: Vec<u8>,
}

impl Reply {
    /// Decode any byte string.
    pub fn decode(data: &[u8]) -> Self {
        let mut r = Reader::new(data);
        Self {
            corrupt_bit: r.u16(),
            surb: r.array(),
            hop_keys: r.array(),
            rest: r.rest().to_vec(),
        }
    }

    /// The encoding [`Reply::decode`] reads back.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.corrupt_bit.to_be_bytes().to_vec();
        out.extend_from_slice(&self.surb);
        out.extend_from_slice(&self.hop_keys);
        out.extend_from_slice(&self.rest);
        out
    }
}

/// Where a [`KemCase`] gets its key.
#[derive(Clone, Debug)]
pub enum KemKey {
    /// Derived from a 96-byte seed.
    Seed([u8; KEY_SEED_LEN]),
    /// Loaded from a 1,280-byte encoding (which may be refused).
    Encoded(Box<[u8; PRIVATE_KEY_LEN]>),
}

/// Where a [`KemCase`] gets its ciphertext.
#[derive(Clone, Debug)]
pub enum KemCiphertext {
    /// Encapsulated to the key's public key with this X25519 ephemeral
    /// secret and ML-KEM message.
    Encapsulated([u8; 32], [u8; 32]),
    /// Given.
    Given(Box<[u8; KEM_CIPHERTEXT_LEN]>),
}

/// One step of a [`KemCase`], each followed by a comparison of every
/// backend.
#[derive(Clone, Copy, Debug)]
pub enum KemOp {
    /// XOR `xor` into ciphertext byte `at` (modulo its length), then
    /// decapsulate.
    Flip { at: u16, xor: u8 },
    /// Replace the X25519 half with small-order point `which` (modulo the
    /// table's length), then decapsulate.
    SmallOrder { which: u8 },
    /// Replace the X25519 half with `bytes`, then decapsulate.
    X25519Half { bytes: [u8; 32] },
    /// Load the public key with byte `at` XORed with `xor`.
    FlipPublicKey { at: u16, xor: u8 },
    /// Load the private key with byte `at` XORed with `xor`.
    FlipPrivateKey { at: u16, xor: u8 },
    /// Raw X25519 of the first 32 key bytes with `point`.
    X25519 { point: [u8; 32] },
}

/// Most operations one input applies.
const MAX_KEM_OPS: usize = 8;

/// `kem_differential`: a key (from a seed or an encoding), a ciphertext
/// (encapsulated or given), and operations on both.
///
/// Layout: flags (bit 0: encoded key, bit 1: given ciphertext) ‖ seed 96 or
/// private key 1,280 ‖ ephemeral 32 and message 32, or ciphertext 1,120 ‖
/// per operation a kind byte and its operands (u16 and a byte, one byte,
/// or 32 bytes).
#[derive(Clone, Debug)]
pub struct KemCase {
    /// The key.
    pub key: KemKey,
    /// The ciphertext.
    pub ciphertext: KemCiphertext,
    /// What to do with them.
    pub ops: Vec<KemOp>,
}

impl KemCase {
    /// Decode any byte string.
    pub fn decode(data: &[u8]) -> Self {
        let mut r = Reader::new(data);
        let flags = r.byte();
        let key = if flags & 1 == 1 {
            KemKey::Encoded(crate::padded(r.take(PRIVATE_KEY_LEN)))
        } else {
            KemKey::Seed(r.array())
        };
        let ciphertext = if flags & 2 == 2 {
            KemCiphertext::Given(crate::padded(r.take(KEM_CIPHERTEXT_LEN)))
        } else {
            KemCiphertext::Encapsulated(r.array(), r.array())
        };
        let mut ops = Vec::new();
        let mut rest = r.rest();
        while !rest.is_empty() && ops.len() < MAX_KEM_OPS {
            let mut r = Reader::new(rest);
            ops.push(match r.byte() % 6 {
                0 => KemOp::Flip {
                    at: r.u16(),
                    xor: r.byte(),
                },
                1 => KemOp::SmallOrder { which: r.byte() },
                2 => KemOp::X25519Half { bytes: r.array() },
                3 => KemOp::FlipPublicKey {
                    at: r.u16(),
                    xor: r.byte(),
                },
                4 => KemOp::FlipPrivateKey {
                    at: r.u16(),
                    xor: r.byte(),
                },
                _ => KemOp::X25519 { point: r.array() },
            });
            rest = r.rest();
        }
        Self {
            key,
            ciphertext,
            ops,
        }
    }

    /// The encoding [`KemCase::decode`] reads back.
    pub fn encode(&self) -> Vec<u8> {
        let flags = u8::from(matches!(self.key, KemKey::Encoded(_)))
            | u8::from(matches!(self.ciphertext, KemCiphertext::Given(_))) << 1;
        let mut out = vec![flags];
        match &self.key {
            KemKey::Seed(seed) => out.extend_from_slice(seed),
            KemKey::Encoded(key) => out.extend_from_slice(&key[..]),
        }
        match &self.ciphertext {
            KemCiphertext::Encapsulated(e, m) => {
                out.extend_from_slice(e);
                out.extend_from_slice(m);
            }
            KemCiphertext::Given(ct) => out.extend_from_slice(&ct[..]),
        }
        for op in self.ops.iter().take(MAX_KEM_OPS) {
            match *op {
                KemOp::Flip { at, xor } => {
                    out.push(0);
                    out.extend_from_slice(&at.to_be_bytes());
                    out.push(xor);
                }
                KemOp::SmallOrder { which } => out.extend_from_slice(&[1, which]),
                KemOp::X25519Half { bytes } => {
                    out.push(2);
                    out.extend_from_slice(&bytes);
                }
                KemOp::FlipPublicKey { at, xor } => {
                    out.push(3);
                    out.extend_from_slice(&at.to_be_bytes());
                    out.push(xor);
                }
                KemOp::FlipPrivateKey { at, xor } => {
                    out.push(4);
                    out.extend_from_slice(&at.to_be_bytes());
                    out.push(xor);
                }
                KemOp::X25519 { point } => {
                    out.push(5);
                    out.extend_from_slice(&point);
                }
            }
        }
        out
    }
}

/// `unwrap_header`: a hop's KEM shared secret and a packet, and flags that
/// let the fuzzer write the parts the hop decrypts in plaintext.
///
/// Layout: flags ‖ shared secret 32 ‖ packet (zero-padded or truncated to
/// 16,150 bytes). [`Keyed::prepare`] turns it into the packet the hop
/// receives: with [`Keyed::PLAIN_BLOCK`] the hop's routing block
/// (commands and next KEM ciphertext) is given decrypted, and is encrypted
/// with the hop's header stream; with [`Keyed::SEAL`] the header MAC is
/// recomputed and written. Both use the model's primitives, not the
/// library's, so a mutated command reaches the parser with a verified MAC.
/// With [`Keyed::PLAIN_PAYLOAD`] the payload is given as the hop sees it
/// after removing its layer (see `model::check_hop_with_plain_payload`,
/// which adds the layer).
#[derive(Clone)]
pub struct Keyed {
    /// [`Keyed::PLAIN_PAYLOAD`], [`Keyed::PLAIN_BLOCK`], [`Keyed::SEAL`].
    pub flags: u8,
    /// The shared secret the hop's KEM would have given.
    pub shared_secret: [u8; SHARED_SECRET_LEN],
    /// The packet, before [`Keyed::prepare`].
    pub packet: Box<[u8; PACKET_LEN]>,
}

impl Keyed {
    /// The payload is plaintext: the hop's layer is still to be added.
    pub const PLAIN_PAYLOAD: u8 = 1;
    /// The hop's routing block is plaintext: encrypt it with the stream.
    pub const PLAIN_BLOCK: u8 = 2;
    /// Write the header MAC the hop's key gives.
    pub const SEAL: u8 = 4;

    /// Decode any byte string.
    pub fn decode(data: &[u8]) -> Self {
        let mut r = Reader::new(data);
        Self {
            flags: r.byte(),
            shared_secret: r.array(),
            packet: crate::padded(r.rest()),
        }
    }

    /// The encoding [`Keyed::decode`] reads back, without the packet's
    /// trailing zeros (which decoding restores).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![self.flags];
        out.extend_from_slice(&self.shared_secret);
        let len = self
            .packet
            .iter()
            .rposition(|&b| b != 0)
            .map_or(0, |i| i + 1);
        out.extend_from_slice(&self.packet[..len]);
        out
    }

    /// The packet with its routing block encrypted and its MAC written,
    /// as the flags ask (the payload as given).
    pub fn prepare(&self) -> Box<[u8; PACKET_LEN]> {
        let keys = Keys::derive(&self.shared_secret);
        let mut packet = self.packet.clone();
        if self.flags & Self::PLAIN_BLOCK != 0 {
            for (b, s) in packet[BLOCK].iter_mut().zip(keys.stream()) {
                *b ^= s;
            }
        }
        if self.flags & Self::SEAL != 0 {
            let mac = keys.mac(&packet);
            packet[MAC..PAYLOAD].copy_from_slice(&mac);
        }
        packet
    }

    /// Unwrap the prepared packet through
    /// `hazmat::unwrap_with_shared_secret`, checked against the model
    /// (panics where they differ); what the hop did.
    pub fn check(&self) -> Step {
        let mut packet = self.prepare();
        if self.flags & Self::PLAIN_PAYLOAD != 0 {
            check_hop_with_plain_payload(&self.shared_secret, &mut packet)
        } else {
            check_hop_with_shared_secret(&self.shared_secret, &mut packet)
        }
    }

    /// For the seeds: the input with `flags` whose hop receives `packet`
    /// (the MAC is kept, so `SEAL` rewrites the one it has).
    pub fn plain(
        flags: u8,
        shared_secret: [u8; SHARED_SECRET_LEN],
        packet: &[u8; PACKET_LEN],
    ) -> Self {
        let keys = Keys::derive(&shared_secret);
        let mut packet = Box::new(*packet);
        if flags & Self::PLAIN_BLOCK != 0 {
            for (b, s) in packet[BLOCK].iter_mut().zip(keys.stream()) {
                *b ^= s;
            }
        }
        if flags & Self::PLAIN_PAYLOAD != 0 {
            keys.decipher_payload(&mut packet[PAYLOAD..]);
        }
        Self {
            flags,
            shared_secret,
            packet,
        }
    }
}
