//! `path` and `nodes_path`: lists of any length in, the library's
//! fixed-size path out, or the counts that were wrong.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use kemsphinx::{Command, NodeId, RecipientId};
use kemsphinx_support::{HopCount, Node, nodes_path, path};

fn nodes(n: u8) -> Vec<Node> {
    (0..n)
        .map(|i| Node::from_seed([i; 96], NodeId([i; 32])))
        .collect()
}

#[test]
fn four_nodes_and_four_command_lists_make_the_path_in_order() {
    let nodes = nodes(4);
    let commands: Vec<Vec<Command>> = (0..4u8)
        .map(|i| vec![Command::Recipient(RecipientId([i; 32]))])
        .collect();
    let path = nodes_path(&nodes, &commands).unwrap();
    for (i, hop) in path.iter().enumerate() {
        assert_eq!(hop.id, nodes[i].id);
        assert_eq!(hop.public_key, nodes[i].key.public_key());
        assert_eq!(hop.commands, &commands[i][..]);
    }
}

#[test]
fn any_other_count_is_refused_with_both_counts() {
    let five = nodes(5);
    let commands = vec![Vec::<Command>::new(); 4];
    let hops = |n: usize| five[..n].iter().map(Node::hop);
    assert_eq!(
        path(hops(3), &commands).unwrap_err(),
        HopCount {
            hops: 3,
            commands: 4
        }
    );
    assert_eq!(
        path(hops(5), &commands).unwrap_err(),
        HopCount {
            hops: 5,
            commands: 4
        }
    );
    assert_eq!(
        nodes_path(&five[..4], &commands[..3]).unwrap_err(),
        HopCount {
            hops: 4,
            commands: 3
        }
    );
}
