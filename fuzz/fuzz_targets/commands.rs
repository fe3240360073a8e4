//! The routing-command parser and serialiser.
//!
//! - One command from a slice of any length: its encoding is exactly the
//!   bytes it was parsed from, and the rest is what follows.
//! - A whole 82-byte area (the input, zero-padded): when it parses,
//!   serialising the commands and zero-padding gives the area back, and
//!   parsing that gives the same commands.
//! - Commands read off the input, serialised back to back: when they fit,
//!   parsing gives them back, `Duplicate` if a kind repeats, or `NoAction`
//!   unless they name exactly one action (SPEC.md §4).

#![no_main]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use kemsphinx::geometry::COMMANDS_LEN;
use kemsphinx::{Command, CommandError, hazmat};
use kemsphinx_fuzz::input::{commands, serialise};
use kemsphinx_fuzz::padded;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    one_command(data);
    whole_area(data);
    serialised(data);
});

fn one_command(data: &[u8]) {
    match hazmat::parse_command(data) {
        Ok(Some((cmd, rest))) => {
            let enc = hazmat::encode_command(&cmd);
            let len = enc.as_bytes().len();
            assert_eq!(enc.as_bytes(), &data[..len]);
            assert_eq!(rest, &data[len..]);
        }
        Ok(None) => assert!(data.iter().all(|&b| b == 0)),
        Err(CommandError::TrailingData) => {
            assert_eq!(data[0], 0);
            assert!(data.iter().any(|&b| b != 0));
        }
        Err(CommandError::UnknownId(id)) => {
            assert_eq!(id, data[0]);
            assert!(![0x00, 0x01, 0x02, 0x03, 0x80].contains(&id));
        }
        Err(CommandError::Truncated) => assert!(data.len() < 65),
        Err(e) => panic!("single command: {e:?}"),
    }
}

fn whole_area(data: &[u8]) {
    let area = padded::<COMMANDS_LEN>(data);
    let Ok(parsed) = hazmat::parse_commands(&area) else {
        return;
    };
    let list: Vec<Command> = parsed.iter().copied().collect();
    assert_eq!(parsed.len(), list.len());
    let again = padded::<COMMANDS_LEN>(&serialise(&list));
    assert_eq!(again, area, "serialise(parse(area)) != area");
    assert_eq!(hazmat::parse_commands(&again), Ok(parsed));
}

fn serialised(data: &[u8]) {
    let list = commands(data);
    let bytes = serialise(&list);
    if bytes.len() > COMMANDS_LEN {
        return;
    }
    let parsed = hazmat::parse_commands(&padded(&bytes));
    let mut kinds: Vec<u8> = list.iter().map(kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    if kinds.len() < list.len() {
        assert_eq!(parsed, Err(CommandError::Duplicate));
    } else if one_action(&kinds) {
        assert_eq!(parsed.unwrap().iter().copied().collect::<Vec<_>>(), list);
    } else {
        assert_eq!(parsed, Err(CommandError::NoAction));
    }
}

/// The command's id byte.
fn kind(cmd: &Command) -> u8 {
    hazmat::encode_command(cmd).as_bytes()[0]
}

/// SPEC.md §4, from distinct sorted ids: forward (`next_node_hop` alone),
/// deliver (`recipient` alone) or reply (`recipient` and `surb_reply`),
/// each optionally with `node_delay` (0x80).
fn one_action(kinds: &[u8]) -> bool {
    let routing: Vec<u8> = kinds.iter().copied().filter(|&k| k != 0x80).collect();
    matches!(routing.as_slice(), [0x01] | [0x02] | [0x02, 0x03])
}
