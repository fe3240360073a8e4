//! The conversions and traits the public types promise (CHANGELOG 0.1.0):
//! what a node stores in maps, parses from the wire and wipes on drop.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use std::collections::HashMap;

use kemsphinx::geometry::{PACKET_LEN, REPLAY_TAG_LEN, SURB_KEYS_LEN};
use kemsphinx::{
    Command, Error, Input, NodeId, PrivateKey, PublicKey, ReplayTag, SurbKeys, path, replay_tag,
};
use zeroize::ZeroizeOnDrop;

#[test]
fn replay_tags_convert_like_node_ids() {
    let bytes = [0x5a; REPLAY_TAG_LEN];
    let tag = ReplayTag::from(bytes);
    assert_eq!(tag.0, bytes);
    assert_eq!(tag.as_ref(), &bytes[..]);
    assert_eq!(ReplayTag::try_from(&bytes[..]).unwrap(), tag);
    for len in [0, REPLAY_TAG_LEN - 1, REPLAY_TAG_LEN + 1] {
        assert_eq!(
            ReplayTag::try_from(&vec![0; len][..]),
            Err(Error::Length {
                input: Input::ReplayTag,
                expected: REPLAY_TAG_LEN,
                got: len
            })
        );
    }
    assert_eq!(
        format!("{tag:?}"),
        format!("ReplayTag({})", "5a".repeat(32))
    );
    // A tag of the same packet is the same key in a set.
    let packet = [7u8; PACKET_LEN];
    let mut seen = std::collections::HashSet::new();
    assert!(seen.insert(replay_tag(&packet)));
    assert!(!seen.insert(replay_tag(&packet)));
}

#[test]
fn public_keys_key_a_map() {
    let mut rng = common::rng(3);
    let keys: Vec<PrivateKey> = (0..3).map(|_| PrivateKey::generate(&mut rng)).collect();
    let mut directory: HashMap<PublicKey, usize> = HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        assert!(directory.insert(k.public_key().clone(), i).is_none());
    }
    for (i, k) in keys.iter().enumerate() {
        let parsed = PublicKey::from_bytes(k.public_key().as_bytes()).unwrap();
        assert_eq!(directory.get(&parsed), Some(&i), "equal keys hash alike");
    }
}

#[test]
fn secrets_are_zeroize_on_drop() {
    fn wiped<T: ZeroizeOnDrop>() {}
    wiped::<PrivateKey>();
    wiped::<SurbKeys>();
    wiped::<kemsphinx::Surb>();
    wiped::<aez5::Aez>();
}

#[test]
fn surb_keys_take_any_320_bytes_and_slices_of_only_that_length() {
    let keys = SurbKeys::from_bytes(&[1; SURB_KEYS_LEN]);
    assert_eq!(*keys.to_bytes(), [1; SURB_KEYS_LEN]);
    let short = SurbKeys::try_from(&[1u8; SURB_KEYS_LEN - 1][..]).unwrap_err();
    assert_eq!(
        short,
        Error::Length {
            input: Input::SurbKeys,
            expected: SURB_KEYS_LEN,
            got: SURB_KEYS_LEN - 1
        }
    );
}

/// `path` puts node `i` and command list `i` at hop `i`, the first hop
/// first: every test, bench and example builds its path with it.
#[test]
fn path_puts_each_node_and_its_commands_at_its_hop() {
    let bytes = [0u8, 1, 2, 3];
    let keys = bytes.map(|b| PrivateKey::from_seed(&[b; 96]));
    let commands = bytes.map(|b| [Command::NodeDelay(u32::from(b))]);
    let nodes = std::array::from_fn(|i| (NodeId([bytes[i]; 32]), keys[i].public_key()));
    let path = path(nodes, commands.each_ref().map(|c| &c[..]));
    for (i, hop) in path.iter().enumerate() {
        assert_eq!(hop.id, NodeId([bytes[i]; 32]));
        assert!(std::ptr::eq(hop.public_key, keys[i].public_key()));
        assert_eq!(hop.commands, &commands[i]);
    }
}
