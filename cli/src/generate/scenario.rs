//! Paths, packets and SURBs made from the DRBG, and the hop-by-hop walk
//! that records what each hop sees: shared by the `forward`, `surb` and
//! `negative` files.

use kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN, SPRP_KEY_BLOCK_LEN};
use kemsphinx::{Command, Path, Surb, SurbKeys, create_packet, create_surb, hazmat};
use kemsphinx_support::{Node, encoded};
use serde_json::{Value, json};

use super::drbg::{Drbg, Gen};
use crate::case::hex;
pub(crate) use crate::case::{Terminal, Walk};

/// A packet buffer.
pub(crate) type Packet = Box<[u8; PACKET_LEN]>;

/// A fresh, zeroed packet buffer.
pub(crate) fn packet_buffer() -> Packet {
    Box::new([0u8; PACKET_LEN])
}

/// Four nodes: for each, a key seed then an id from the DRBG.
pub(crate) fn nodes(rng: &mut Drbg) -> [Node; HOPS] {
    kemsphinx_support::nodes(&mut rng.0)
}

/// A node as a case lists it (with the optional `seed`).
pub(crate) fn node_json(n: &Node) -> Value {
    json!({
        "id": hex(n.id.0),
        "public_key": hex(n.key.public_key().as_bytes()),
        "private_key": hex(&n.key.to_bytes()[..]),
        "seed": hex(n.seed),
    })
}

/// The path over `nodes` with per-hop `commands`.
pub(crate) fn path<'a>(nodes: &'a [Node], commands: &'a [Vec<Command>]) -> Gen<Path<'a>> {
    kemsphinx_support::nodes_path(nodes, commands).map_err(|e| e.to_string())
}

/// Per-hop command lists as a case lists them.
pub(crate) fn commands_json(commands: &[Vec<Command>]) -> Value {
    commands
        .iter()
        .map(|hop| hop.iter().map(|c| hex(encoded(c))).collect::<Vec<_>>())
        .collect()
}

/// One hop's encapsulation, with the randomness that made it.
pub(crate) struct Encap {
    pub(crate) x25519_ephemeral: [u8; 32],
    pub(crate) mlkem_m: [u8; 32],
    pub(crate) encapsulation: hazmat::Encapsulation,
}

/// Encapsulate to every hop, drawing (as `create_packet` does) the X25519
/// ephemeral secret and then the ML-KEM `m` for each hop in path order.
pub(crate) fn encapsulate(rng: &mut Drbg, path: &Path<'_>) -> Gen<Vec<Encap>> {
    path.iter()
        .map(|hop| {
            let (x25519_ephemeral, mlkem_m) = (rng.array(), rng.array());
            let (ciphertext, ss) =
                hazmat::encapsulate_deterministic(hop.public_key, &x25519_ephemeral, &mlkem_m)
                    .map_err(|e| e.to_string())?;
            Ok(Encap {
                x25519_ephemeral,
                mlkem_m,
                encapsulation: (ciphertext, *ss.as_bytes()),
            })
        })
        .collect()
}

/// The encapsulations in the form the hazmat creators take.
pub(crate) fn parts(encaps: &[Encap]) -> Gen<[hazmat::Encapsulation; HOPS]> {
    let v: Vec<_> = encaps.iter().map(|e| e.encapsulation).collect();
    v.try_into()
        .map_err(|_| format!("{HOPS} encapsulations expected"))
}

/// The `encapsulations` field of a case.
pub(crate) fn encaps_json(encaps: &[Encap]) -> Value {
    encaps
        .iter()
        .map(|e| {
            json!({
                "x25519_ephemeral": hex(e.x25519_ephemeral),
                "mlkem_m": hex(e.mlkem_m),
                "shared_secret": hex(e.encapsulation.1),
            })
        })
        .collect()
}

/// A forward packet from the DRBG. It is made twice, by `create_packet`
/// fed a copy of the DRBG and from the explicitly drawn encapsulations,
/// and the two must agree: the corpus is what the normal API creates.
pub(crate) fn forward_packet(
    rng: &mut Drbg,
    path: &Path<'_>,
    payload: &[u8; PAYLOAD_LEN],
) -> Gen<(Packet, Vec<Encap>)> {
    let mut normal = packet_buffer();
    create_packet(&mut rng.fork(), path, payload, &mut normal).map_err(|e| e.to_string())?;
    let encaps = encapsulate(rng, path)?;
    let mut explicit = packet_buffer();
    hazmat::create_packet_from_encapsulations(path, &parts(&encaps)?, payload, &mut explicit)
        .map_err(|e| e.to_string())?;
    if normal != explicit {
        return Err("create_packet and the recorded randomness disagree".into());
    }
    Ok((explicit, encaps))
}

/// A SURB from the DRBG (reply key block first, then the encapsulations,
/// as `create_surb` draws them), checked against `create_surb` likewise.
pub(crate) fn make_surb(rng: &mut Drbg, path: &Path<'_>) -> Gen<(Surb, SurbKeys, Vec<Encap>)> {
    let (normal, normal_keys) = create_surb(&mut rng.fork(), path).map_err(|e| e.to_string())?;
    let reply_key = rng.array::<SPRP_KEY_BLOCK_LEN>();
    let encaps = encapsulate(rng, path)?;
    let (surb, keys) = hazmat::create_surb_from_encapsulations(path, &parts(&encaps)?, &reply_key)
        .map_err(|e| e.to_string())?;
    if normal.as_bytes() != surb.as_bytes() || normal_keys.to_bytes() != keys.to_bytes() {
        return Err("create_surb and the recorded randomness disagree".into());
    }
    Ok((surb, keys, encaps))
}

/// Walk `first` through `nodes`, which must forward it to the end and
/// there hand it over as `terminal` says.
pub(crate) fn walk(nodes: &[Node], first: &[u8; PACKET_LEN], terminal: Terminal) -> Gen<Walk> {
    let keys: Vec<_> = nodes.iter().map(|n| (n.id, &n.key)).collect();
    crate::case::walk(&keys, first, terminal)
}

/// The packets of a walk as a case lists them.
pub(crate) fn packets_json(walk: &Walk) -> Value {
    walk.packets.iter().map(|p| hex(&p[..])).collect()
}
