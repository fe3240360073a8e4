//! Creating a header, shared by forward packets and SURBs (SPEC.md §5.1).
//!
//! A header is `00 00 ‖ KEM ciphertext ‖ routing info ‖ MAC`. The routing
//! info is built backwards from the terminal hop: each hop's 1,202-byte
//! block (commands ‖ next hop's KEM ciphertext) is prepended and the whole
//! 4,808 bytes encrypted with that hop's stream. The "filler" that hops
//! shift in at the end is computed first, so every hop's MAC covers exactly
//! the bytes that hop will see.
//!
//! Every check happens before: [`Areas::new`] validates and encodes all
//! four commands areas, so [`build`] cannot fail and never writes a header
//! that a hop would refuse.

use rand_core::CryptoRng;

use crate::bytes::{field, field_mut, sub_mut};
use crate::commands::{Area, Command, NodeId, Terminal};
use crate::error::{CommandError, Error};
use crate::geometry::layout::{block, packet};
use crate::geometry::{
    HEADER_LEN, HOPS, MAC_LEN, PER_HOP_ROUTING_LEN, ROUTING_INFO_LEN, SHARED_SECRET_LEN, STREAM_LEN,
};
use crate::hop::HopKeys;
use crate::kem::{Ciphertext, PublicKey};

/// One hop of a path: who it is, its KEM key, and the commands it gets.
/// [`path`] builds all four from the nodes and their commands.
#[derive(Clone, Copy, Debug)]
pub struct Hop<'a> {
    /// The node's id (what the previous hop forwards to).
    pub id: NodeId,
    /// The node's KEM public key.
    pub public_key: &'a PublicKey,
    /// Commands for this hop, in order. `next_node_hop` is added by the
    /// creator; the terminal hop needs a `recipient` (and a `surb_reply` in
    /// a SURB). Together with `next_node_hop` they must fit in 82 bytes.
    pub commands: &'a [Command],
}

/// A path: exactly four hops, the first one first (built by [`path`]).
pub type Path<'a> = [Hop<'a>; HOPS];

/// The path through `nodes` (each a node's id and KEM public key, the first
/// hop first), hop `i` given `commands[i]`.
///
/// This is what a client does with the four nodes it picked from its PKI:
/// each mix gets its own delay, the last hop the recipient (and, in a SURB,
/// the SURB id). It is the one way the repository's tests, benches, fuzz
/// targets, examples and the node's start-up self-check build a path, so it
/// lives here, where a client and the published `kemsphinx-node` can reach
/// it, and not in the unpublished test support. Two fixed-size arrays, so
/// it cannot fail, panic or allocate; the commands are checked (and
/// `next_node_hop` added) when [`create_packet`](crate::create_packet) or
/// [`create_surb`](crate::create_surb) takes the path.
///
/// ```
/// use kemsphinx::{Command, NodeId, PrivateKey, RecipientId};
/// let keys: [PrivateKey; 4] = std::array::from_fn(|i| PrivateKey::from_seed(&[i as u8; 96]));
/// let nodes = std::array::from_fn(|i| (NodeId([i as u8; 32]), keys[i].public_key()));
/// let deliver = [Command::Recipient(RecipientId([7; 32]))];
/// let delay = |ms| [Command::NodeDelay(ms)];
/// let (d0, d1, d2) = (delay(40), delay(90), delay(15));
/// let path = kemsphinx::path(nodes, [&d0, &d1, &d2, &deliver]);
/// assert_eq!((path[3].id, path[3].commands), (NodeId([3; 32]), &deliver[..]));
/// ```
#[must_use]
pub fn path<'a>(
    nodes: [(NodeId, &'a PublicKey); HOPS],
    commands: [&'a [Command]; HOPS],
) -> Path<'a> {
    let hop = |(id, public_key), commands| Hop {
        id,
        public_key,
        commands,
    };
    let ([n0, n1, n2, n3], [c0, c1, c2, c3]) = (nodes, commands);
    [hop(n0, c0), hop(n1, c1), hop(n2, c2), hop(n3, c3)]
}

/// What the creator knows about one hop after encapsulating to it.
pub(crate) struct HopSecret {
    pub(crate) ciphertext: Ciphertext,
    pub(crate) keys: HopKeys,
}

impl HopSecret {
    /// Encapsulate a fresh secret to `hop` and derive its keys.
    fn encapsulate<R: CryptoRng + ?Sized>(rng: &mut R, hop: &Hop<'_>) -> Result<Self, Error> {
        let (ciphertext, ss) = hop.public_key.encapsulate(rng)?;
        Ok(Self::from_parts(&ciphertext, ss.as_bytes()))
    }

    /// The hop's secret from a known encapsulation.
    pub(crate) fn from_parts(ciphertext: &Ciphertext, ss: &[u8; SHARED_SECRET_LEN]) -> Self {
        Self {
            ciphertext: *ciphertext,
            keys: HopKeys::derive(ss),
        }
    }
}

/// The per-hop secrets of a whole path.
pub(crate) type PathSecrets = [HopSecret; HOPS];

/// Encapsulate to every hop of `path`, first hop first.
pub(crate) fn encapsulate_path<R: CryptoRng + ?Sized>(
    rng: &mut R,
    path: &Path<'_>,
) -> Result<PathSecrets, Error> {
    let [a, b, c, d] = path;
    Ok([
        HopSecret::encapsulate(rng, a)?,
        HopSecret::encapsulate(rng, b)?,
        HopSecret::encapsulate(rng, c)?,
        HopSecret::encapsulate(rng, d)?,
    ])
}

/// The four commands areas of a path, validated and encoded.
pub(crate) struct Areas([Area; HOPS]);

impl Areas {
    /// Validate every hop's commands: hops 0–2 forward to the next hop's id,
    /// the terminal hop has the `terminal` action.
    ///
    /// # Errors
    /// The [`CommandError`] of the first hop whose area cannot be created.
    pub(crate) fn new(path: &Path<'_>, terminal: Terminal) -> Result<Self, CommandError> {
        let [a, b, c, d] = path;
        Ok(Self([
            Area::new(a.commands, Some(b.id), terminal)?,
            Area::new(b.commands, Some(c.id), terminal)?,
            Area::new(c.commands, Some(d.id), terminal)?,
            Area::new(d.commands, None, terminal)?,
        ]))
    }

    /// As [`Areas::new`] for a forward packet, except that each hop with a
    /// raw area gets those 82 bytes verbatim (for negative test vectors).
    ///
    /// # Errors
    /// As [`Areas::new`], for the hops without a raw area.
    #[cfg(feature = "hazmat")]
    pub(crate) fn with_raw(
        path: &Path<'_>,
        raw: &[Option<[u8; crate::geometry::COMMANDS_LEN]>; HOPS],
    ) -> Result<Self, CommandError> {
        let area = |hop: &Hop<'_>, next: Option<&Hop<'_>>, raw: &Option<_>| match raw {
            Some(bytes) => Ok(Area::raw(*bytes)),
            None => Area::new(hop.commands, next.map(|n| n.id), Terminal::Deliver),
        };
        let ([a, b, c, d], [ra, rb, rc, rd]) = (path, raw);
        Ok(Self([
            area(a, Some(b), ra)?,
            area(b, Some(c), rb)?,
            area(c, Some(d), rc)?,
            area(d, None, rd)?,
        ]))
    }
}

/// Write the header for `areas` and `secrets` into `header`.
pub(crate) fn build(areas: &Areas, secrets: &PathSecrets, header: &mut [u8; HEADER_LEN]) {
    header.fill(0);
    write_filler(secrets, field_mut!(header, packet::ROUTING_INFO));
    let ([a0, a1, a2, a3], [s0, s1, s2, s3]) = (&areas.0, secrets);
    let mut mac = seal_hop(a3, s3, None, header);
    for (area, secret, next) in [(a2, s2, s3), (a1, s1, s2), (a0, s0, s1)] {
        mac = seal_hop(area, secret, Some((&next.ciphertext, &mac)), header);
    }
    *field_mut!(header, packet::MAC) = mac;
}

/// Prepend one hop's block to the routing info and encrypt it, set the
/// hop's KEM ciphertext, and return the hop's MAC. `next` is the next hop's
/// ciphertext and MAC (none at the terminal hop).
fn seal_hop(
    area: &Area,
    secret: &HopSecret,
    next: Option<(&Ciphertext, &[u8; MAC_LEN])>,
    header: &mut [u8; HEADER_LEN],
) -> [u8; MAC_LEN] {
    let routing = field_mut!(header, packet::ROUTING_INFO);
    if next.is_some() {
        // Shift the next hop's view right, dropping the tail this hop's
        // stream turns back into filler.
        routing.copy_within(
            ..ROUTING_INFO_LEN - PER_HOP_ROUTING_LEN,
            PER_HOP_ROUTING_LEN,
        );
    }
    let hop_block = sub_mut::<0, PER_HOP_ROUTING_LEN, ROUTING_INFO_LEN>(routing);
    let (mac, ciphertext) = next.map_or(([0; MAC_LEN], [0; _]), |(ct, mac)| (*mac, *ct));
    area.write(&mac, field_mut!(hop_block, block::COMMANDS));
    *field_mut!(hop_block, block::NEXT_KEM_CIPHERTEXT) = ciphertext;
    match next {
        // The terminal block alone: the filler after it is already what the
        // terminal hop's stream will turn it into.
        None => secret.keys.apply_stream(0, hop_block),
        Some(_) => secret.keys.apply_stream(0, routing),
    }
    *field_mut!(header, packet::KEM_CIPHERTEXT) = secret.ciphertext;
    secret.keys.mac(field!(header, packet::AUTHENTICATED))
}

/// The filler: what the terminal hop sees after its own block, i.e. the
/// blocks the first three hops' streams shift in, each re-encrypted by the
/// streams of the hops after it. Written into `routing[1202..]`.
fn write_filler(secrets: &PathSecrets, routing: &mut [u8; ROUTING_INFO_LEN]) {
    const FILLER_LEN: usize = ROUTING_INFO_LEN - PER_HOP_ROUTING_LEN;
    let filler = sub_mut::<PER_HOP_ROUTING_LEN, FILLER_LEN, ROUTING_INFO_LEN>(routing);
    let [s0, s1, s2, _] = secrets;
    filler_part::<PER_HOP_ROUTING_LEN>(s0, filler);
    filler_part::<{ 2 * PER_HOP_ROUTING_LEN }>(s1, filler);
    filler_part::<{ 3 * PER_HOP_ROUTING_LEN }>(s2, filler);
}

/// XOR the last `LEN` bytes of a hop's 6,010-byte stream into the first
/// `LEN` bytes of the filler.
fn filler_part<const LEN: usize>(
    secret: &HopSecret,
    filler: &mut [u8; ROUTING_INFO_LEN - PER_HOP_ROUTING_LEN],
) {
    let part = sub_mut::<0, LEN, { ROUTING_INFO_LEN - PER_HOP_ROUTING_LEN }>(filler);
    secret.keys.apply_stream(STREAM_LEN - LEN, part);
}
