//! Routing commands: what each hop is told to do (SPEC.md §4).
//!
//! Each hop's routing information starts with an 82-byte commands area.
//! Commands are a one-byte id and a fixed-size body, read in order until a
//! null byte (after which everything must be zero) or the end of the area.
//! Parsing here is strict: unknown ids, truncated bodies, trailing bytes and
//! repeated commands are refused, and the commands must name exactly one
//! action for the mix (forward, deliver, or deliver a SURB reply).

use core::fmt;

use crate::error::{CommandError, Error, Input, array_ref};
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
            type Error = Error;

            fn try_from(bytes: &[u8]) -> Result<Self, Error> {
                array_ref($input, bytes).map(|b| Self(*b))
            }
        }

        impl AsRef<[u8]> for $name {
            fn as_ref(&self) -> &[u8] {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(", stringify!($name))?;
                for b in &self.0 {
                    write!(f, "{b:02x}")?;
                }
                write!(f, ")")
            }
        }
    };
}

identifier!(
    /// A mix node's 32-byte identifier.
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

/// The longest encoded command.
const MAX_COMMAND_LEN: usize = NEXT_NODE_HOP_CMD_LEN;

impl Command {
    /// Length of the encoding: id byte and body.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        match self {
            Self::NextNodeHop { .. } => NEXT_NODE_HOP_CMD_LEN,
            Self::Recipient(_) => RECIPIENT_CMD_LEN,
            Self::SurbReply(_) => SURB_REPLY_CMD_LEN,
            Self::NodeDelay(_) => NODE_DELAY_CMD_LEN,
        }
    }

    /// The wire encoding, in a buffer of the longest command's size, and
    /// its length.
    #[must_use]
    pub fn encode(&self) -> ([u8; MAX_COMMAND_LEN], usize) {
        let mut out = [0u8; MAX_COMMAND_LEN];
        let (head, body) = out.split_at_mut(1);
        let id = match self {
            Self::NextNodeHop { id: node, mac } => {
                let (n, m) = body.split_at_mut(NODE_ID_LEN);
                n.copy_from_slice(&node.0);
                for (o, b) in m.iter_mut().zip(mac) {
                    *o = *b;
                }
                id::NEXT_NODE_HOP
            }
            Self::Recipient(r) => copy_body(body, &r.0, id::RECIPIENT),
            Self::SurbReply(s) => copy_body(body, &s.0, id::SURB_REPLY),
            Self::NodeDelay(ms) => copy_body(body, &ms.to_be_bytes(), id::NODE_DELAY),
        };
        head.fill(id);
        (out, self.encoded_len())
    }

    /// Read one command from the front of `bytes`; returns it and the rest.
    /// `Ok(None)` means a null byte: the caller checks what follows.
    ///
    /// # Errors
    /// [`CommandError::UnknownId`] or [`CommandError::Truncated`].
    pub fn parse(bytes: &[u8]) -> Result<Option<(Self, &[u8])>, CommandError> {
        let Some((&id, body)) = bytes.split_first() else {
            return Err(CommandError::Truncated);
        };
        let cmd = match id {
            id::NULL => return Ok(None),
            id::NEXT_NODE_HOP => {
                let (node, body) = take::<NODE_ID_LEN>(body)?;
                let (mac, _) = take::<MAC_LEN>(body)?;
                Self::NextNodeHop {
                    id: NodeId(*node),
                    mac: *mac,
                }
            }
            id::RECIPIENT => Self::Recipient(RecipientId(*take(body)?.0)),
            id::SURB_REPLY => Self::SurbReply(SurbId(*take(body)?.0)),
            id::NODE_DELAY => Self::NodeDelay(u32::from_be_bytes(*take(body)?.0)),
            other => return Err(CommandError::UnknownId(other)),
        };
        let rest = bytes.get(cmd.encoded_len()..).unwrap_or_default();
        Ok(Some((cmd, rest)))
    }

    /// Which of the four kinds this is (duplicates are refused per kind).
    const fn kind(&self) -> usize {
        match self {
            Self::NextNodeHop { .. } => 0,
            Self::Recipient(_) => 1,
            Self::SurbReply(_) => 2,
            Self::NodeDelay(_) => 3,
        }
    }
}

/// Copy a fixed body after the id byte and return the id.
fn copy_body(body: &mut [u8], bytes: &[u8], id: u8) -> u8 {
    for (o, b) in body.iter_mut().zip(bytes) {
        *o = *b;
    }
    id
}

/// The first `N` bytes of `bytes` as an array, and the rest.
fn take<const N: usize>(bytes: &[u8]) -> Result<(&[u8; N], &[u8]), CommandError> {
    bytes
        .split_first_chunk::<N>()
        .ok_or(CommandError::Truncated)
}

/// Number of command kinds; with duplicates refused, the most one area holds.
const KINDS: usize = 4;

/// The commands of one hop, in wire order (at most one of each kind).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Commands {
    items: [Option<Command>; KINDS],
}

impl Commands {
    /// Parse a whole 82-byte commands area, strictly.
    ///
    /// # Errors
    /// Any [`CommandError`] of parsing.
    pub fn parse(area: &[u8; COMMANDS_LEN]) -> Result<Self, CommandError> {
        let mut out = Self::default();
        let mut rest: &[u8] = area;
        let mut seen = [false; KINDS];
        while !rest.is_empty() {
            let Some((cmd, tail)) = Command::parse(rest)? else {
                if rest.iter().any(|&b| b != 0) {
                    return Err(CommandError::TrailingData);
                }
                break;
            };
            let kind = cmd.kind();
            if seen.get(kind).copied().unwrap_or(true) {
                return Err(CommandError::Duplicate);
            }
            seen.iter_mut().skip(kind).take(1).for_each(|s| *s = true);
            out.push(cmd);
            rest = tail;
        }
        Ok(out)
    }

    /// Append a command (callers guarantee there is room).
    fn push(&mut self, cmd: Command) {
        if let Some(slot) = self.items.iter_mut().find(|s| s.is_none()) {
            *slot = Some(cmd);
        }
    }

    /// The commands in wire order.
    pub fn iter(&self) -> impl Iterator<Item = &Command> {
        self.items.iter().flatten()
    }

    /// Number of commands.
    #[must_use]
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether the area held no command.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `node_delay`, if any.
    #[must_use]
    pub fn delay(&self) -> Option<u32> {
        self.iter().find_map(|c| match c {
            Command::NodeDelay(ms) => Some(*ms),
            _ => None,
        })
    }

    /// The single action these commands describe.
    ///
    /// # Errors
    /// [`CommandError::NoAction`] when they describe none or several.
    pub(crate) fn action(&self) -> Result<Plan, CommandError> {
        let (mut next, mut recipient, mut surb) = (None, None, None);
        for cmd in self.iter() {
            match *cmd {
                Command::NextNodeHop { id, mac } => next = Some((id, mac)),
                Command::Recipient(r) => recipient = Some(r),
                Command::SurbReply(s) => surb = Some(s),
                Command::NodeDelay(_) => {}
            }
        }
        match (next, recipient, surb) {
            (Some((id, mac)), None, None) => Ok(Plan::Forward { id, mac }),
            (None, Some(recipient), None) => Ok(Plan::Deliver { recipient }),
            (None, Some(recipient), Some(surb_id)) => Ok(Plan::Reply { recipient, surb_id }),
            _ => Err(CommandError::NoAction),
        }
    }
}

/// What a hop's commands tell the mix to do.
#[derive(Clone, Copy)]
pub(crate) enum Plan {
    /// Forward to `id`, with `mac` as the outgoing header's MAC.
    Forward { id: NodeId, mac: [u8; MAC_LEN] },
    /// Deliver the payload to `recipient`.
    Deliver { recipient: RecipientId },
    /// Deliver the encrypted reply to `recipient`, tagged with `surb_id`.
    Reply {
        recipient: RecipientId,
        surb_id: SurbId,
    },
}

/// Which action the creator expects a hop's commands to produce.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    Forward,
    Deliver,
    Reply,
}

/// Write a hop's commands area: the caller's commands, then `next_node_hop`
/// if there is a next hop, then zeros. Checks everything unwrap will check,
/// so a created packet is always one the hop accepts.
///
/// # Errors
/// [`CommandError::ReservedCommand`], [`CommandError::TooLong`],
/// [`CommandError::WrongTerminalAction`] or any parse error.
pub(crate) fn write_area(
    caller: &[Command],
    next: Option<(NodeId, [u8; MAC_LEN])>,
    expect: Expect,
    area: &mut [u8; COMMANDS_LEN],
) -> Result<(), CommandError> {
    if caller
        .iter()
        .any(|c| matches!(c, Command::NextNodeHop { .. }))
    {
        return Err(CommandError::ReservedCommand);
    }
    let appended = next.map(|(id, mac)| Command::NextNodeHop { id, mac });
    let mut scratch = [0u8; COMMANDS_LEN];
    let mut rest: &mut [u8] = &mut scratch;
    for cmd in caller.iter().chain(appended.iter()) {
        let (enc, len) = cmd.encode();
        let (dst, tail) = core::mem::take(&mut rest)
            .split_at_mut_checked(len)
            .ok_or(CommandError::TooLong)?;
        dst.copy_from_slice(enc.get(..len).unwrap_or_default());
        rest = tail;
    }
    let got = match Commands::parse(&scratch)?.action()? {
        Plan::Forward { .. } => Expect::Forward,
        Plan::Deliver { .. } => Expect::Deliver,
        Plan::Reply { .. } => Expect::Reply,
    };
    if got != expect {
        return Err(CommandError::WrongTerminalAction);
    }
    *area = scratch;
    Ok(())
}
