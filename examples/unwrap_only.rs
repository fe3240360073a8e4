//! The smallest program that unwraps a packet: `cargo run --release
//! --example report` builds it and reports its `.text` size as the code a
//! mix node links for the packet path.

fn main() {
    let mut key = [0u8; kemsphinx::geometry::PRIVATE_KEY_LEN];
    let mut packet = Box::new([0u8; kemsphinx::geometry::PACKET_LEN]);
    let mut args = std::env::args_os().skip(1);
    let (Some(k), Some(p)) = (args.next(), args.next()) else {
        eprintln!("usage: unwrap_only KEY_FILE PACKET_FILE");
        std::process::exit(2);
    };
    let (Ok(k), Ok(p)) = (std::fs::read(k), std::fs::read(p)) else {
        std::process::exit(2);
    };
    if k.len() != key.len() || p.len() != packet.len() {
        std::process::exit(2);
    }
    key.copy_from_slice(&k);
    packet.copy_from_slice(&p);
    let outcome = kemsphinx::PrivateKey::from_bytes(&key)
        .and_then(|key| kemsphinx::unwrap(&key, &mut packet).map(|_| ()));
    std::process::exit(i32::from(outcome.is_err()));
}
