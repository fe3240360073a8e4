//! Fixtures of the benchmarks (`benches/`) and the performance report
//! (`examples/report`), feature `bench`: four mixes with fixed keys, their
//! forward and SURB paths, packets as each hop receives them, a SURB with
//! its reply, one whole request and reply in caller-owned buffers, the
//! primitives of one unwrap run alone ([`MlKemAlone`],
//! [`blake2b_kem_work`]), and queues of distinct first-hop packets for the
//! batch unwrap ([`Net::first_packets`]).
//!
//! Everything is deterministic (fixed seeds), so two builds — say the two
//! KEM backends — time the same inputs.

pub mod cases;
mod primitives;

use core::fmt;

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{ENCRYPTED_REPLY_LEN, HOPS, PACKET_LEN, PAYLOAD_LEN, SURB_LEN};
use kemsphinx::{
    Action, Command, Error, NodeId, Path, PrivateKey, RecipientId, SurbId, SurbKeys, create_packet,
    create_surb, unwrap,
};
use rand_core::SeedableRng;

use crate::Node;

pub use primitives::{MlKemAlone, blake2b_kem_work, libcrux_avx2};

/// A packet buffer.
pub type Packet = Box<[u8; PACKET_LEN]>;

/// A fixture that could not be prepared: the library refused an operation
/// on inputs it made itself, or a SURB's reply never reached its terminal
/// hop. Either means the build is broken, not the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// The library returned an error.
    Library(Error),
    /// The last hop of a SURB path did not hand over a reply.
    NoReply,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Library(e) => write!(f, "the library refused its own fixture: {e}"),
            Self::NoReply => f.write_str("the SURB's last hop handed over no reply"),
        }
    }
}

impl std::error::Error for Broken {}

impl From<Error> for Broken {
    fn from(e: Error) -> Self {
        Self::Library(e)
    }
}

/// Four mixes (keys from the seeds `[i; 96]`, ids `[i; 32]`) and the
/// commands of a forward path and a SURB path.
pub struct Net {
    /// The mixes, first hop first.
    pub nodes: [Node; HOPS],
    delay: [Command; 1],
    deliver: [Command; 1],
    reply: [Command; 2],
}

/// The buffers a client and its mixes work in, allocated once.
pub struct Buffers {
    packet: Packet,
    payload: Box<[u8; PAYLOAD_LEN]>,
    reply: Box<[u8; ENCRYPTED_REPLY_LEN]>,
}

impl Default for Buffers {
    fn default() -> Self {
        Self::new()
    }
}

impl Buffers {
    /// Zeroed buffers.
    #[must_use]
    pub fn new() -> Self {
        Self {
            packet: Box::new([0; PACKET_LEN]),
            payload: Box::new([0; PAYLOAD_LEN]),
            reply: Box::new([0; ENCRYPTED_REPLY_LEN]),
        }
    }
}

/// A SURB's bytes, its keys, and the encrypted reply its last hop hands
/// over.
pub type SurbReply = (
    Box<[u8; SURB_LEN]>,
    SurbKeys,
    Box<[u8; ENCRYPTED_REPLY_LEN]>,
);

impl Default for Net {
    fn default() -> Self {
        Self::new()
    }
}

impl Net {
    /// The four mixes.
    #[must_use]
    pub fn new() -> Self {
        let ids = [0u8, 1, 2, 3];
        Self {
            nodes: ids.map(|i| Node::from_seed([i; 96], NodeId([i; 32]))),
            delay: [Command::NodeDelay(100)],
            deliver: [Command::Recipient(RecipientId([7; 32]))],
            reply: [
                Command::Recipient(RecipientId([8; 32])),
                Command::SurbReply(SurbId([9; 16])),
            ],
        }
    }

    /// The mixes' keys, first hop first.
    pub fn keys(&self) -> impl Iterator<Item = &PrivateKey> {
        self.nodes.iter().map(|n| &n.key)
    }

    /// The first hop's key.
    #[must_use]
    pub fn first_key(&self) -> &PrivateKey {
        let [first, ..] = &self.nodes;
        &first.key
    }

    /// Delays at every hop but the last, which gets `terminal`.
    fn path<'a>(&'a self, terminal: &'a [Command]) -> Path<'a> {
        let delay = &self.delay;
        kemsphinx::path(
            self.nodes.each_ref().map(Node::hop),
            [delay, delay, delay, terminal],
        )
    }

    /// The forward path: delays, then delivery.
    #[must_use]
    pub fn forward_path(&self) -> Path<'_> {
        self.path(&self.deliver)
    }

    /// The SURB path: delays, then a reply to the client.
    #[must_use]
    pub fn reply_path(&self) -> Path<'_> {
        self.path(&self.reply)
    }

    /// The forward packet as each hop receives it, first hop first.
    ///
    /// # Errors
    /// [`Broken`] if the library refuses to make or unwrap it.
    pub fn forward_packets(&self) -> Result<Vec<Packet>, Broken> {
        let mut rng = ChaCha20Rng::from_seed([1; 32]);
        let mut p: Packet = Box::new([0u8; PACKET_LEN]);
        create_packet(&mut rng, &self.forward_path(), &[3; PAYLOAD_LEN], &mut p)?;
        let mut out = vec![p.clone()];
        for key in self.keys().take(HOPS - 1) {
            unwrap(key, &mut p)?;
            out.push(p.clone());
        }
        Ok(out)
    }

    /// The packet the first hop receives.
    ///
    /// # Errors
    /// As [`Net::forward_packets`].
    pub fn first_packet(&self) -> Result<Packet, Broken> {
        self.forward_packets()?
            .into_iter()
            .next()
            .ok_or(Broken::NoReply)
    }

    /// `n` distinct packets for the first hop (each its own ephemeral
    /// keys and routing secrets), the queue a batch unwrap drains.
    ///
    /// # Errors
    /// [`Broken`] if the library refuses to make one.
    pub fn first_packets(&self, n: usize) -> Result<Vec<Packet>, Broken> {
        let mut rng = ChaCha20Rng::from_seed([2; 32]);
        let path = self.forward_path();
        (0..n)
            .map(|_| {
                let mut p: Packet = Box::new([0u8; PACKET_LEN]);
                create_packet(&mut rng, &path, &[3; PAYLOAD_LEN], &mut p)?;
                Ok(p)
            })
            .collect()
    }

    /// A SURB over the SURB path, its keys, and the encrypted reply its
    /// last hop hands over for a reply of `payload`.
    ///
    /// # Errors
    /// [`Broken`] if the library refuses a step, or no reply comes out.
    pub fn surb_reply(&self, payload: &[u8; PAYLOAD_LEN]) -> Result<SurbReply, Broken> {
        let (surb, keys) = create_surb(&mut ChaCha20Rng::from_seed([1; 32]), &self.reply_path())?;
        let bytes = Box::new(*surb.as_bytes());
        let mut p: Packet = Box::new([0u8; PACKET_LEN]);
        surb.reply(payload, &mut p);
        let mut reply = Box::new([0u8; ENCRYPTED_REPLY_LEN]);
        let mut replied = false;
        for key in self.keys() {
            if let Action::SurbReply {
                encrypted_reply, ..
            } = unwrap(key, &mut p)?.action
            {
                *reply = *encrypted_reply;
                replied = true;
            }
        }
        if replied {
            Ok((bytes, keys, reply))
        } else {
            Err(Broken::NoReply)
        }
    }

    /// One request carrying a SURB and its reply, all the crypto of both,
    /// in the caller's buffers: a SURB, a forward packet carrying it, four
    /// unwraps, a reply on the SURB, four unwraps, the reply's decryption.
    /// Returns the reply's first byte.
    ///
    /// # Errors
    /// [`Broken`] if the library refuses a step, or no reply comes out.
    pub fn request_reply(&self, rng: &mut ChaCha20Rng, bufs: &mut Buffers) -> Result<u8, Broken> {
        let Buffers {
            packet,
            payload,
            reply,
        } = bufs;
        let (surb, keys) = create_surb(rng, &self.reply_path())?;
        if let Some(area) = payload.get_mut(2..2 + SURB_LEN) {
            area.copy_from_slice(surb.as_bytes());
        }
        create_packet(rng, &self.forward_path(), payload, packet)?;
        for key in self.keys() {
            unwrap(key, packet)?;
        }
        surb.reply(payload, packet);
        let mut replied = false;
        for key in self.keys() {
            if let Action::SurbReply {
                encrypted_reply, ..
            } = unwrap(key, packet)?.action
            {
                **reply = *encrypted_reply;
                replied = true;
            }
        }
        if !replied {
            return Err(Broken::NoReply);
        }
        let opened = keys.decrypt_reply(reply)?;
        Ok(opened.first().copied().unwrap_or_default())
    }
}
