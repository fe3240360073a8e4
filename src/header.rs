//! Creating a header, shared by forward packets and SURBs (SPEC.md §5).
//!
//! A header is `00 00 ‖ KEM ciphertext ‖ routing info ‖ MAC`. The routing
//! info is built backwards from the terminal hop: each hop's 1,202-byte
//! block (commands ‖ next hop's KEM ciphertext) is prepended and the whole
//! 4,808 bytes encrypted with that hop's stream. The "filler" that hops
//! shift in at the end is computed first, so every hop's MAC covers exactly
//! the bytes that hop will see.

use rand_core::CryptoRng;

use crate::bytes::sub_mut;
use crate::commands::{Command, Expect, NodeId, write_area};
use crate::error::Error;
use crate::geometry::{
    COMMANDS_LEN, HEADER_LEN, HOPS, KEM_CIPHERTEXT_LEN, MAC_LEN, PER_HOP_ROUTING_LEN,
    ROUTING_INFO_LEN, STREAM_LEN, offset,
};
use crate::hop::HopKeys;
use crate::kem::{Ciphertext, PublicKey};

/// One hop of a path: who it is, its KEM key, and the commands it gets.
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

/// A path: exactly four hops, the first one first.
pub type Path<'a> = [Hop<'a>; HOPS];

/// What the creator knows about one hop after encapsulating to it.
pub(crate) struct HopSecret {
    pub(crate) ciphertext: Ciphertext,
    pub(crate) keys: HopKeys,
}

impl HopSecret {
    /// Encapsulate a fresh secret to `hop` and derive its keys.
    fn encapsulate<R: CryptoRng + ?Sized>(rng: &mut R, hop: &Hop<'_>) -> Result<Self, Error> {
        let (ciphertext, ss) = hop.public_key.encapsulate(rng)?;
        Ok(Self {
            ciphertext,
            keys: HopKeys::derive(ss.as_bytes()),
        })
    }

    /// The hop's secret from a known encapsulation.
    #[cfg(feature = "hazmat")]
    pub(crate) fn from_parts(
        ciphertext: &Ciphertext,
        ss: &[u8; crate::geometry::SHARED_SECRET_LEN],
    ) -> Self {
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

/// The action hop `index` must produce: forward, except at the terminal.
fn expect_at(index: usize, terminal: Expect) -> Expect {
    if index + 1 < HOPS {
        Expect::Forward
    } else {
        terminal
    }
}

/// Check every hop's commands before any work is done, so creation either
/// fails before touching the output or succeeds.
///
/// # Errors
/// [`Error::Command`] for the first hop whose commands cannot be created.
pub(crate) fn check_commands(path: &Path<'_>, terminal: Expect) -> Result<(), Error> {
    let mut area = [0u8; COMMANDS_LEN];
    for (index, hop) in path.iter().enumerate() {
        // The real MAC is not known yet; any 32 bytes have the same length.
        let next = path.get(index + 1).map(|n| (n.id, [0u8; MAC_LEN]));
        write_area(hop.commands, next, expect_at(index, terminal), &mut area)?;
    }
    Ok(())
}

/// Write the header for `path` into `header`. Commands must have passed
/// [`check_commands`] with the same `terminal`.
///
/// # Errors
/// [`Error::Command`] only if `check_commands` was skipped.
pub(crate) fn build(
    path: &Path<'_>,
    secrets: &PathSecrets,
    terminal: Expect,
    header: &mut [u8; HEADER_LEN],
) -> Result<(), Error> {
    build_with(path, secrets, header, |index, hop, next, area| {
        write_area(hop.commands, next, expect_at(index, terminal), area).map_err(Error::from)
    })
}

/// A commands area given verbatim, bypassing every command check.
#[cfg(feature = "hazmat")]
pub(crate) type RawArea = [u8; COMMANDS_LEN];

/// [`build`] for a forward packet, except that each hop with a raw area
/// gets those 82 bytes verbatim instead of its checked commands (and no
/// `next_node_hop`). For negative test vectors only: it exists to make
/// headers whose MAC is valid but whose commands are malformed.
///
/// # Errors
/// [`Error::Command`] if a hop without a raw area has commands that
/// cannot be created.
#[cfg(feature = "hazmat")]
pub(crate) fn build_with_raw_areas(
    path: &Path<'_>,
    secrets: &PathSecrets,
    raw: &[Option<RawArea>; HOPS],
    header: &mut [u8; HEADER_LEN],
) -> Result<(), Error> {
    build_with(path, secrets, header, |index, hop, next, area| {
        match raw.get(index).copied().flatten() {
            Some(raw) => {
                *area = raw;
                Ok(())
            }
            None => write_area(hop.commands, next, expect_at(index, Expect::Deliver), area)
                .map_err(Error::from),
        }
    })
}

/// The header construction of SPEC.md §5.1, with `write` filling each
/// hop's commands area from its index, its hop and the next hop's id and
/// MAC (none at the terminal hop).
fn build_with(
    path: &Path<'_>,
    secrets: &PathSecrets,
    header: &mut [u8; HEADER_LEN],
    mut write: impl FnMut(
        usize,
        &Hop<'_>,
        Option<(NodeId, [u8; MAC_LEN])>,
        &mut [u8; COMMANDS_LEN],
    ) -> Result<(), Error>,
) -> Result<(), Error> {
    header.fill(0);
    write_filler(
        secrets,
        sub_mut::<{ offset::ROUTING }, ROUTING_INFO_LEN, HEADER_LEN>(header),
    );

    let mut next: Option<(NodeId, [u8; MAC_LEN])> = None;
    for index in (0..HOPS).rev() {
        let (Some(hop), Some(secret)) = (path.get(index), secrets.get(index)) else {
            continue;
        };
        let next_ct = secrets.get(index + 1).map(|s| &s.ciphertext);
        let routing = sub_mut::<{ offset::ROUTING }, ROUTING_INFO_LEN, HEADER_LEN>(header);
        let encrypted_len = if next_ct.is_some() {
            // Shift the next hop's view right, dropping the tail this hop's
            // stream turns back into filler.
            routing.copy_within(
                ..ROUTING_INFO_LEN - PER_HOP_ROUTING_LEN,
                PER_HOP_ROUTING_LEN,
            );
            ROUTING_INFO_LEN
        } else {
            PER_HOP_ROUTING_LEN
        };
        let block = sub_mut::<0, PER_HOP_ROUTING_LEN, ROUTING_INFO_LEN>(routing);
        write(
            index,
            hop,
            next,
            sub_mut::<0, COMMANDS_LEN, PER_HOP_ROUTING_LEN>(block),
        )?;
        write_next_ciphertext(next_ct, block);
        secret
            .keys
            .apply_stream(0, routing.get_mut(..encrypted_len).unwrap_or_default());

        *sub_mut::<{ offset::KEM_CT }, KEM_CIPHERTEXT_LEN, HEADER_LEN>(header) = secret.ciphertext;
        let mac = secret
            .keys
            .mac(&[header.get(..offset::MAC).unwrap_or_default()]);
        next = Some((hop.id, mac));
    }
    if let Some((_, mac)) = next {
        *sub_mut::<{ offset::MAC }, MAC_LEN, HEADER_LEN>(header) = mac;
    }
    Ok(())
}

/// The filler: what the terminal hop sees after its own block, i.e. the
/// blocks the first three hops' streams shift in, each re-encrypted by the
/// streams of the hops after it. Written into `routing[1202..]`.
fn write_filler(secrets: &PathSecrets, routing: &mut [u8; ROUTING_INFO_LEN]) {
    let filler = routing.get_mut(PER_HOP_ROUTING_LEN..).unwrap_or_default();
    for (index, secret) in secrets.iter().take(HOPS - 1).enumerate() {
        let len = PER_HOP_ROUTING_LEN * (index + 1);
        let part = filler.get_mut(..len).unwrap_or_default();
        secret.keys.apply_stream(STREAM_LEN - len, part);
    }
}

/// The rest of one hop's plaintext block after its commands area: the next
/// hop's KEM ciphertext (zeros at the terminal hop).
fn write_next_ciphertext(next_ct: Option<&Ciphertext>, block: &mut [u8; PER_HOP_ROUTING_LEN]) {
    let ct = sub_mut::<COMMANDS_LEN, KEM_CIPHERTEXT_LEN, PER_HOP_ROUTING_LEN>(block);
    match next_ct {
        Some(next_ct) => *ct = *next_ct,
        None => ct.fill(0),
    }
}
