//! A `no_std` consumer of kemsphinx: one exported function that loads a key
//! and unwraps a packet in place, so the whole packet path is compiled, and
//! one that loads a PEM key.
#![no_std]

use kemsphinx::geometry::{PACKET_LEN, PRIVATE_KEY_LEN};
use kemsphinx::{Action, PrivateKey, unwrap};

/// Unwrap `packet` with `key`: 1 forward, 2 deliver, 3 reply, 0 error.
#[unsafe(no_mangle)]
pub extern "C" fn kemsphinx_no_std_unwrap(
    key: &[u8; PRIVATE_KEY_LEN],
    packet: &mut [u8; PACKET_LEN],
) -> u8 {
    let Ok(key) = PrivateKey::from_bytes(key) else {
        return 0;
    };
    match unwrap(&key, packet).map(|u| u.action) {
        Ok(Action::Forward { .. }) => 1,
        Ok(Action::Deliver { .. }) => 2,
        Ok(Action::SurbReply { .. }) => 3,
        _ => 0,
    }
}

/// Load a PEM private key: 1 loaded, 0 refused. (Keeps the PEM code in the
/// build, to show it needs neither std nor an allocator.)
#[unsafe(no_mangle)]
pub extern "C" fn kemsphinx_no_std_load_pem(
    text: &[u8; kemsphinx::pem::PRIVATE_KEY_PEM_LEN],
) -> u8 {
    u8::from(PrivateKey::from_pem(text).is_ok())
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
