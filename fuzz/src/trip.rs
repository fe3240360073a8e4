//! A packet's trip through the four fixed nodes, for `unwrap_mutated`:
//! build a valid packet from the fuzzer's choices, walk it hop by hop, then
//! walk a mutated copy and compare.

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::{ENCRYPTED_REPLY_LEN, HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{Command, Error, SurbKeys, create_packet, create_surb, path};
use rand_core::SeedableRng;

use crate::input::{Mutated, commands};
use crate::model::{KEM_CT, PAYLOAD, Step, check_hop};
use crate::{nodes, padded};

/// A valid packet as hop 0 receives it, and what it must deliver.
pub struct Trip {
    /// The caller's commands per hop.
    pub commands: [Vec<Command>; HOPS],
    /// The packet hop 0 receives.
    pub first: Box<[u8; PACKET_LEN]>,
    /// The payload the terminal hop (or the SURB's creator) must get.
    pub payload: Box<[u8; PAYLOAD_LEN]>,
    /// For a reply on a SURB, the creator's keys.
    pub surb_keys: Option<SurbKeys>,
}

/// What a walk saw.
pub struct Walk {
    /// The packet each hop received, from the first hop walked on.
    pub received: Vec<Box<[u8; PACKET_LEN]>>,
    /// What each hop did.
    pub steps: Vec<Step>,
    /// For a SURB reply handed over, the creator's decryption of it.
    pub decrypted: Option<Result<Vec<u8>, Error>>,
}

impl Trip {
    /// Build the packet. `None` when creation refused the commands, after
    /// checking that it refused them cleanly (a command error, nothing
    /// written).
    pub fn create(input: &Mutated) -> Option<Self> {
        let nodes = nodes();
        let cmds: [Vec<Command>; HOPS] = std::array::from_fn(|i| commands(&input.commands[i]));
        let path = path(
            nodes.each_ref().map(|n| (n.id, n.key.public_key())),
            cmds.each_ref().map(Vec::as_slice),
        );
        let mut rng = ChaCha20Rng::from_seed(input.seed);
        let payload = padded::<PAYLOAD_LEN>(&input.payload);
        let mut first = Box::new([0xa5; PACKET_LEN]);
        let surb_keys = if input.surb {
            match create_surb(&mut rng, &path) {
                Ok((surb, keys)) => {
                    assert_eq!(surb.reply(&payload, &mut first), nodes[0].id);
                    Some(keys)
                }
                Err(e) => return refused(e, &first),
            }
        } else {
            match create_packet(&mut rng, &path, &payload, &mut first) {
                Ok(()) => None,
                Err(e) => return refused(e, &first),
            }
        };
        Some(Self {
            commands: cmds,
            first,
            payload,
            surb_keys,
        })
    }

    /// Unwrap from hop `from` on, each hop checked against the model, until
    /// a hop refuses the packet or does not forward it.
    pub fn walk(&self, from: usize, mut packet: Box<[u8; PACKET_LEN]>) -> Walk {
        let mut walk = Walk {
            received: Vec::new(),
            steps: Vec::new(),
            decrypted: None,
        };
        for node in &nodes()[from..] {
            walk.received.push(packet.clone());
            let step = check_hop(&node.key, &mut packet);
            walk.steps.push(step.clone());
            match step {
                Step::Forward { .. } => continue,
                Step::Reply { reply, .. } => {
                    walk.decrypted = self.surb_keys.as_ref().map(|k| decrypt(k, &reply));
                }
                _ => {}
            }
            break;
        }
        walk
    }

    /// A walk of the unmodified packet: every hop accepts it, forward hops
    /// carry the caller's commands plus `next_node_hop` to the right node,
    /// and the payload arrives intact.
    pub fn assert_delivers(&self, walk: &Walk) {
        assert_eq!(walk.steps.len(), HOPS, "a valid packet was refused");
        for (i, step) in walk.steps.iter().enumerate() {
            let commands = match step {
                Step::Forward {
                    next_hop, commands, ..
                } => {
                    assert_eq!(*next_hop, nodes()[i + 1].id);
                    commands
                }
                Step::Deliver {
                    commands, payload, ..
                } => {
                    assert!(self.surb_keys.is_none() && payload[..] == self.payload[..]);
                    commands
                }
                Step::Reply { commands, .. } => {
                    let decrypted = walk.decrypted.as_ref().unwrap().as_ref().unwrap();
                    assert!(decrypted[..] == self.payload[..], "reply decrypted wrong");
                    commands
                }
                Step::Failed(e) => panic!("hop {i} refused a valid packet: {e}"),
            };
            let own: Vec<Command> = commands
                .iter()
                .filter(|c| !matches!(c, Command::NextNodeHop { .. }))
                .copied()
                .collect();
            assert_eq!(own, self.commands[i], "hop {i} got other commands");
        }
    }

    /// A walk of the packet `original` delivered, mutated before hop `from`
    /// into `mutated`: the same walk if no byte changed; otherwise refused
    /// at `from` if the header changed, and at the terminal hop (or by the
    /// SURB's creator) if only the payload did.
    pub fn assert_mutated(&self, original: &Walk, from: usize, mutated: &Walk) {
        let before = &original.received[from];
        let after = &mutated.received[0];
        let changed = |range: std::ops::Range<usize>| before[range.clone()] != after[range];
        if !changed(0..PACKET_LEN) {
            assert_eq!(mutated.steps, original.steps[from..]);
            assert_eq!(mutated.decrypted, original.decrypted);
        } else if changed(0..PAYLOAD) {
            let expected = if changed(0..KEM_CT) {
                vec![Error::Version]
            } else if changed(KEM_CT..KEM_CT + 32) {
                vec![Error::Mac, Error::Kem]
            } else {
                vec![Error::Mac]
            };
            assert_eq!(mutated.steps.len(), 1, "modified header accepted");
            assert!(matches!(&mutated.steps[0], Step::Failed(e) if expected.contains(e)));
        } else {
            let (last, forwarded) = mutated.steps.split_last().unwrap();
            assert_eq!(forwarded, &original.steps[from..HOPS - 1]);
            assert_eq!(mutated.steps.len(), HOPS - from, "stopped before the end");
            match (last, &mutated.decrypted) {
                (Step::Failed(Error::PayloadTag), None) => assert!(self.surb_keys.is_none()),
                (Step::Reply { .. }, Some(Err(Error::PayloadTag))) => {}
                other => panic!("modified payload not caught: {other:?}"),
            }
        }
    }
}

/// Creation refused: it must be a command error with nothing written.
fn refused<T>(e: Error, out: &[u8; PACKET_LEN]) -> Option<T> {
    assert!(matches!(e, Error::Command(_)), "creation failed with {e}");
    assert!(out.iter().all(|&b| b == 0xa5), "output written on error");
    None
}

/// Decrypt a reply as its creator; on error the buffer must be unchanged.
pub fn decrypt(keys: &SurbKeys, reply: &[u8]) -> Result<Vec<u8>, Error> {
    let mut buf: Box<[u8; ENCRYPTED_REPLY_LEN]> = padded(reply);
    let before = buf.clone();
    match keys.decrypt_reply(&mut buf) {
        Ok(payload) => Ok(payload.to_vec()),
        Err(e) => {
            assert!(buf == before, "reply buffer changed on error");
            Err(e)
        }
    }
}
