//! Routing commands: what each hop is told to do (SPEC.md §4).
//!
//! Each hop's routing block starts with an 82-byte commands area. Commands
//! are a one-byte id and a fixed-size body, read in order until a null byte
//! (after which everything must be zero) or the end of the area. Parsing is
//! strict: unknown ids, truncated bodies, trailing bytes and repeated
//! commands are refused, and the commands must name exactly one [`Route`],
//! so a parsed [`Commands`] always has one.
//!
//! The creator validates and encodes each hop's area once ([`Area`]), by
//! the same parser, so it can only create areas every hop accepts; the next
//! hop's MAC, known only later, is patched into a slot fixed at validation.

use crate::bytes::{field_mut, split_mut};
use crate::error::{CommandError, Input};
use crate::geometry::layout::internal::commands as at;
use crate::geometry::{
    COMMANDS_LEN, MAC_LEN, NEXT_NODE_HOP_CMD_LEN, NODE_DELAY_CMD_LEN, NODE_ID_LEN,
    RECIPIENT_CMD_LEN, RECIPIENT_ID_LEN, SURB_ID_LEN, SURB_REPLY_CMD_LEN,
};

/// Command ids on the wire.
mod id {
    pub(super) const NULL: u8 = 0x00;
    pub(super) const NEXT_NODE_HOP: u8 = 0x01;
    pub(super) const RECIPIENT: u8 = 0x02;
    pub(super) const SURB_REPLY: u8 = 0x03;
    pub(super) const NODE_DELAY: u8 = 0x80;
}

/// Define a fixed-size identifier newtype with the conversions every id
/// needs: from an array, from a slice (with a length error), hex `Debug`.
macro_rules! identifier {
    ($(#[$doc:meta])* $name:ident, $len:expr, $input:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub [u8; $len]);

        impl From<[u8; $len]> for $name {
            fn from(bytes: [u8; $len]) -> Self {
                Self(bytes)
            }
        }

        impl TryFrom<&[u8]> for $name {
            type Error = crate::error::Error;

            fn try_from(bytes: &[u8]) -> Result<Self, crate::error::Error> {
                crate::error::array_ref($input, bytes).map(|b| Self(*b))
            }
        }

        impl AsRef<[u8]> for $name {
            fn as_ref(&self) -> &[u8] {
                &self.0
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}(", stringify!($name))?;
                for b in &self.0 {
                    write!(f, "{b:02x}")?;
                }
                write!(f, ")")
            }
        }
    };
}

pub(crate) use identifier;

identifier!(
    /// A mix node's 32-byte identifier, as the `next_node_hop` command
    /// carries it.
    ///
    /// The format treats it as opaque bytes. Katzenpost fills it with the
    /// BLAKE2b-256 hash of the node's *identity* public key (its signing
    /// key, as the PKI descriptor publishes it: `IdentityKey.Sum256()`).
    /// It is not derived from the mix key ([`PublicKey`](crate::PublicKey)),
    /// which rotates every epoch: a node keeps its id across key epochs.
    NodeId,
    NODE_ID_LEN,
    Input::NodeId
);
identifier!(
    /// The 32-byte identifier of a recipient at the terminal hop.
    RecipientId,
    RECIPIENT_ID_LEN,
    Input::RecipientId
);
identifier!(
    /// The 16-byte identifier that links a SURB reply to its SURB.
    SurbId,
    SURB_ID_LEN,
    Input::SurbId
);

/// One routing command.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Command {
    /// Forward to `id`; the outgoing header's MAC is `mac`. Added by the
    /// packet creator, never given by the caller.
    NextNodeHop {
        /// The next hop.
        id: NodeId,
        /// The next hop's header MAC.
        mac: [u8; MAC_LEN],
    },
    /// Deliver to this recipient (terminal hop).
    Recipient(RecipientId),
    /// The payload is a reply to the SURB with this id (terminal hop).
    SurbReply(SurbId),
    /// Hold the packet this many milliseconds before forwarding.
    NodeDelay(u32),
}

/// A command's wire encoding: one array of exactly its length per kind, so
/// there is no length to get wrong.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Encoded {
    NextNodeHop([u8; NEXT_NODE_HOP_CMD_LEN]),
    Recipient([u8; RECIPIENT_CMD_LEN]),
    SurbReply([u8; SURB_REPLY_CMD_LEN]),
    NodeDelay([u8; NODE_DELAY_CMD_LEN]),
}

impl Encoded {
    /// The id byte and body.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            Self::NextNodeHop(b) => b,
            Self::Recipient(b) => b,
            Self::SurbReply(b) => b,
            Self::NodeDelay(b) => b,
        }
    }
}

/// `id ‖ body` as one array of `1 + B` bytes.
fn with_id<const B: usize, const N: usize>(id: u8, body: &[u8; B]) -> [u8; N] {
    let mut out = [0u8; N];
    let (head, tail) = split_mut::<1, B, N>(&mut out);
    *head = [id];
    *tail = *body;
    out
}

impl Command {
    /// The wire encoding.
    pub(crate) fn encode(&self) -> Encoded {
        match self {
            Self::NextNodeHop { id: node, mac } => {
                let mut out = [0u8; NEXT_NODE_HOP_CMD_LEN];
                let (head, body) = split_mut::<1, { NODE_ID_LEN + MAC_LEN }, _>(&mut out);
                let (n, m) = split_mut::<NODE_ID_LEN, MAC_LEN, _>(body);
                (*head, *n, *m) = ([id::NEXT_NODE_HOP], node.0, *mac);
                Encoded::NextNodeHop(out)
            }
            Self::Recipient(r) => Encoded::Recipient(with_id(id::RECIPIENT, &r.0)),
            Self::SurbReply(s) => Encoded::SurbReply(with_id(id::SURB_REPLY, &s.0)),
            Self::NodeDelay(ms) => Encoded::NodeDelay(with_id(id::NODE_DELAY, &ms.to_be_bytes())),
        }
    }

    /// Read one command from the front of `bytes`; returns it and the rest.
    /// `Ok(None)` at the end: an empty input, or a null byte followed only
    /// by zeros.
    ///
    /// # Errors
    /// [`CommandError::UnknownId`], [`CommandError::Truncated`] or
    /// [`CommandError::TrailingData`].
    pub(crate) fn read(bytes: &[u8]) -> Result<Option<(Self, &[u8])>, CommandError> {
        let Some((&id, body)) = bytes.split_first() else {
            return Ok(None);
        };
        let (cmd, rest) = match id {
            id::NULL if body.iter().all(|&b| b == 0) => return Ok(None),
            id::NULL => return Err(CommandError::TrailingData),
            id::NEXT_NODE_HOP => {
                let (node, rest) = take::<NODE_ID_LEN>(body)?;
                let (mac, rest) = take::<MAC_LEN>(rest)?;
                let id = NodeId(*node);
                (Self::NextNodeHop { id, mac: *mac }, rest)
            }
            id::RECIPIENT => {
                take(body).map(|(r, rest)| (Self::Recipient(RecipientId(*r)), rest))?
            }
            id::SURB_REPLY => take(body).map(|(s, rest)| (Self::SurbReply(SurbId(*s)), rest))?,
            id::NODE_DELAY => {
                take(body).map(|(d, rest)| (Self::NodeDelay(u32::from_be_bytes(*d)), rest))?
            }
            other => return Err(CommandError::UnknownId(other)),
        };
        Ok(Some((cmd, rest)))
    }

    /// A bit of its own for each of the four kinds (repeats are refused).
    const fn kind_bit(&self) -> u8 {
        match self {
            Self::NextNodeHop { .. } => 1,
            Self::Recipient(_) => 2,
            Self::SurbReply(_) => 4,
            Self::NodeDelay(_) => 8,
        }
    }
}

/// The first `N` bytes of `bytes` as an array, and the rest.
fn take<const N: usize>(bytes: &[u8]) -> Result<(&[u8; N], &[u8]), CommandError> {
    bytes
        .split_first_chunk::<N>()
        .ok_or(CommandError::Truncated)
}

/// Number of command kinds; with repeats refused, the most one area holds.
const KINDS: usize = 4;

/// What a hop's commands tell it to do: exactly one of three.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Route {
    /// Forward to `next_hop`, with `mac` as the outgoing header's MAC.
    Forward {
        next_hop: NodeId,
        mac: [u8; MAC_LEN],
    },
    /// Deliver the payload to `recipient`.
    Deliver { recipient: RecipientId },
    /// Deliver the encrypted reply to `recipient`, tagged with `surb_id`.
    Reply {
        recipient: RecipientId,
        surb_id: SurbId,
    },
}

impl Route {
    /// The one route `commands` name.
    ///
    /// # Errors
    /// [`CommandError::NoAction`] when they name none or several.
    fn of<'c>(commands: impl Iterator<Item = &'c Command>) -> Result<Self, CommandError> {
        let (mut next, mut recipient, mut surb) = (None, None, None);
        for cmd in commands {
            match *cmd {
                Command::NextNodeHop { id, mac } => next = Some((id, mac)),
                Command::Recipient(r) => recipient = Some(r),
                Command::SurbReply(s) => surb = Some(s),
                Command::NodeDelay(_) => {}
            }
        }
        match (next, recipient, surb) {
            (Some((next_hop, mac)), None, None) => Ok(Self::Forward { next_hop, mac }),
            (None, Some(recipient), None) => Ok(Self::Deliver { recipient }),
            (None, Some(recipient), Some(surb_id)) => Ok(Self::Reply { recipient, surb_id }),
            _ => Err(CommandError::NoAction),
        }
    }
}

/// The commands of one hop, in wire order, parsed strictly: at most one of
/// each kind, and together they name exactly one action.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Commands {
    items: [Option<Command>; KINDS],
    route: Route,
}

impl Commands {
    /// Parse a whole 82-byte commands area.
    ///
    /// # Errors
    /// Any [`CommandError`] of parsing (SPEC.md §4).
    pub(crate) fn parse(area: &[u8; COMMANDS_LEN]) -> Result<Self, CommandError> {
        let mut items = [None; KINDS];
        let mut slots = items.iter_mut();
        let mut seen = 0u8;
        let mut rest: &[u8] = area;
        while let Some((cmd, tail)) = Command::read(rest)? {
            if seen & cmd.kind_bit() != 0 {
                return Err(CommandError::Duplicate);
            }
            seen |= cmd.kind_bit();
            // A fifth command of four kinds would repeat one.
            *slots.next().ok_or(CommandError::Duplicate)? = Some(cmd);
            rest = tail;
        }
        let route = Route::of(items.iter().flatten())?;
        Ok(Self { items, route })
    }

    /// The commands in wire order.
    pub fn iter(&self) -> impl Iterator<Item = &Command> {
        self.items.iter().flatten()
    }

    /// Number of commands (one to four: parsed commands always name an
    /// action, so there is no `is_empty`).
    #[must_use]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// The `node_delay`, if any.
    #[must_use]
    pub fn delay(&self) -> Option<u32> {
        self.iter().find_map(|c| match c {
            Command::NodeDelay(ms) => Some(*ms),
            _ => None,
        })
    }

    /// The one thing these commands tell the hop to do.
    pub(crate) fn route(&self) -> Route {
        self.route
    }
}

/// Which action the terminal hop of a path being created must have: a
/// forward packet's delivers, a SURB's replies.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Terminal {
    Deliver,
    Reply,
}

/// Where a forwarding hop's `next_node_hop` MAC sits in its area. The
/// creator appends `next_node_hop` after the caller's commands, and a
/// forwarding hop accepts nothing else from the caller but a `node_delay`,
/// so there are exactly two places.
#[derive(Clone, Copy)]
enum MacSlot {
    /// `next_node_hop` first: [`MAC_FIRST`](at::MAC_FIRST).
    First,
    /// After a `node_delay`: [`MAC_AFTER_DELAY`](at::MAC_AFTER_DELAY).
    AfterDelay,
}

/// One hop's commands area as the creator writes it: validated and encoded
/// once; a forwarding hop's next-hop MAC is patched in by [`Area::write`].
pub(crate) struct Area {
    bytes: [u8; COMMANDS_LEN],
    mac: Option<MacSlot>,
}

impl Area {
    /// The area for a hop given `caller`'s commands, followed by
    /// `next_node_hop(next)` if the hop forwards; a terminal hop must have
    /// the `terminal` action. Checks everything unwrap will check.
    ///
    /// # Errors
    /// [`CommandError::ReservedCommand`], [`CommandError::TooLong`],
    /// [`CommandError::WrongTerminalAction`] or any parse error.
    pub(crate) fn new(
        caller: &[Command],
        next: Option<NodeId>,
        terminal: Terminal,
    ) -> Result<Self, CommandError> {
        if caller
            .iter()
            .any(|c| matches!(c, Command::NextNodeHop { .. }))
        {
            return Err(CommandError::ReservedCommand);
        }
        let appended = next.map(|id| Command::NextNodeHop {
            id,
            mac: [0; MAC_LEN],
        });
        let mut bytes = [0u8; COMMANDS_LEN];
        let mut rest: &mut [u8] = &mut bytes;
        for cmd in caller.iter().chain(appended.iter()) {
            let encoded = cmd.encode();
            let (dst, tail) = core::mem::take(&mut rest)
                .split_at_mut_checked(encoded.as_bytes().len())
                .ok_or(CommandError::TooLong)?;
            dst.copy_from_slice(encoded.as_bytes());
            rest = tail;
        }
        let mac = match (Commands::parse(&bytes)?.route(), caller, terminal) {
            (Route::Forward { .. }, [], _) => Some(MacSlot::First),
            (Route::Forward { .. }, [Command::NodeDelay(_)], _) => Some(MacSlot::AfterDelay),
            (Route::Deliver { .. }, _, Terminal::Deliver)
            | (Route::Reply { .. }, _, Terminal::Reply) => None,
            // The parser has refused every other forwarding area.
            (Route::Forward { .. }, ..) => return Err(CommandError::NoAction),
            (Route::Deliver { .. } | Route::Reply { .. }, ..) => {
                return Err(CommandError::WrongTerminalAction);
            }
        };
        Ok(Self { bytes, mac })
    }

    /// An area taken verbatim: no command checked, no MAC slot. Only for
    /// negative test vectors (feature `hazmat`).
    #[cfg(feature = "hazmat")]
    pub(crate) fn raw(bytes: [u8; COMMANDS_LEN]) -> Self {
        Self { bytes, mac: None }
    }

    /// Write the area into `out`, with `next_mac` in its `next_node_hop`
    /// (ignored by a terminal or raw area).
    pub(crate) fn write(&self, next_mac: &[u8; MAC_LEN], out: &mut [u8; COMMANDS_LEN]) {
        *out = self.bytes;
        match self.mac {
            None => {}
            Some(MacSlot::First) => *field_mut!(out, at::MAC_FIRST) = *next_mac,
            Some(MacSlot::AfterDelay) => *field_mut!(out, at::MAC_AFTER_DELAY) = *next_mac,
        }
    }
}
