//! kemsphinx on a Cortex-M4F, `#![no_std]`, no allocator: four keys
//! derived from seeds, a four-hop packet created, unwrapped at every hop
//! and its payload checked at the last. Run under QEMU (`mps2-an386`), it
//! prints the stack high-water mark of each operation through semihosting
//! and exits with the result.
//!
//! Stack measurement: before each operation the unused stack (from the end
//! of the static data up to just below the current stack pointer) is
//! painted with a pattern; after it, the lowest word no longer holding the
//! pattern marks the deepest point the operation reached. The figure is
//! the distance from the stack pointer at the call to that point: the
//! operation's own frames and everything it calls, not the caller's
//! buffers (the packet, the keys), which a firmware places where it likes.
//! It is exact for this build and this input; interrupt handlers, which a
//! real firmware adds on top, are not included.
#![no_std]
#![no_main]

use core::ptr::{read_volatile, write_volatile};

use chacha20::ChaCha20Rng;
use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use kemsphinx::geometry::{KEY_SEED_LEN, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{Action, Command, NodeId, PrivateKey, RecipientId, create_packet, path, unwrap};
use rand_core::SeedableRng;

/// What the unused stack is painted with.
const PAINT: u32 = 0x5afe_c0de;
/// Bytes left unpainted below the painter's own stack pointer (its frame
/// and the volatile stores' spills).
const PAINT_MARGIN: usize = 256;

unsafe extern "C" {
    /// End of `.bss`/`.uninit`, from cortex-m-rt's `link.x`: everything
    /// from here to the stack pointer is free stack.
    static mut __sheap: u32;
}

/// Address of the lowest free stack word.
fn stack_floor() -> usize {
    (&raw const __sheap) as usize
}

/// Paint every free stack word below this function's frame.
#[inline(never)]
fn paint() {
    let top = cortex_m::register::msp::read() as usize - PAINT_MARGIN;
    let mut at = stack_floor();
    while at < top {
        // SAFETY: `at` is word-aligned (`__sheap` is 4-aligned by link.x),
        // lies between the end of the static data and below the live
        // stack, so no Rust object lives there; no interrupt is enabled
        // that could be using it.
        unsafe { write_volatile(at as *mut u32, PAINT) };
        at += 4;
    }
}

/// Run `f` and return how deep below the caller's stack pointer it went,
/// in bytes (see the module documentation).
fn high_water(f: impl FnOnce()) -> usize {
    let sp = cortex_m::register::msp::read() as usize;
    paint();
    f();
    let mut at = stack_floor();
    // SAFETY: as in `paint`: word-aligned addresses of free stack memory,
    // read only.
    while at < sp && unsafe { read_volatile(at as *const u32) } == PAINT {
        at += 4;
    }
    sp - at
}

/// `PrivateKey::from_seed`, never inlined, so that its frames lie below
/// the stack pointer `high_water` reads.
#[inline(never)]
fn load_key(seed: &[u8; KEY_SEED_LEN], out: &mut Option<PrivateKey>) {
    *out = Some(PrivateKey::from_seed(seed));
}

/// `create_packet` for `keys`, never inlined (see `load_key`).
#[inline(never)]
fn create(keys: &[PrivateKey; 4], payload: &[u8; PAYLOAD_LEN], out: &mut [u8; PACKET_LEN]) -> bool {
    let mut rng = ChaCha20Rng::from_seed([7; 32]);
    let delay = [Command::NodeDelay(50)];
    let deliver = [Command::Recipient(RecipientId([9; 32]))];
    let nodes = core::array::from_fn(|i| (NodeId([i as u8; 32]), keys[i].public_key()));
    let path = path(nodes, [&delay, &delay, &delay, &deliver]);
    create_packet(&mut rng, &path, payload, out).is_ok()
}

/// `unwrap` at one hop, never inlined (see `load_key`): 1 forward to the
/// expected next hop, 2 delivered with the expected payload, 0 otherwise.
#[inline(never)]
fn unwrap_at(
    key: &PrivateKey,
    hop: u8,
    payload: &[u8; PAYLOAD_LEN],
    packet: &mut [u8; PACKET_LEN],
) -> u8 {
    match unwrap(key, packet).map(|u| u.action) {
        Ok(Action::Forward { next_hop, .. }) if next_hop == NodeId([hop + 1; 32]) => 1,
        Ok(Action::Deliver {
            recipient,
            payload: p,
        }) if recipient == RecipientId([9; 32]) && p[..] == payload[..] => 2,
        _ => 0,
    }
}

#[entry]
fn main() -> ! {
    let mut slots: [Option<PrivateKey>; 4] = [None, None, None, None];
    let mut load = 0;
    for (i, slot) in slots.iter_mut().enumerate() {
        let seed = [i as u8 + 1; KEY_SEED_LEN];
        load = load.max(high_water(|| load_key(&seed, slot)));
    }
    let [Some(a), Some(b), Some(c), Some(d)] = slots else {
        fail("key derivation")
    };
    let keys = [a, b, c, d];

    let mut payload = [0u8; PAYLOAD_LEN];
    for (i, byte) in payload.iter_mut().enumerate() {
        *byte = i as u8;
    }
    let mut packet = [0u8; PACKET_LEN];
    let mut created = false;
    let create_stack = high_water(|| created = create(&keys, &payload, &mut packet));
    if !created {
        fail("create_packet");
    }

    let mut unwrap_stack = 0;
    for (hop, key) in keys.iter().enumerate() {
        let mut result = 0;
        let hop = hop as u8;
        unwrap_stack = unwrap_stack.max(high_water(|| {
            result = unwrap_at(key, hop, &payload, &mut packet);
        }));
        if result != if hop < 3 { 1 } else { 2 } {
            fail("unwrap");
        }
    }
    hprintln!(
        "cortex-m ({}): four-hop packet created and unwrapped; stack high-water: \
         key from seed {} B, create_packet {} B, unwrap {} B; a loaded PrivateKey is {} B",
        kemsphinx::KEM_BACKEND,
        load,
        create_stack,
        unwrap_stack,
        core::mem::size_of::<PrivateKey>()
    );
    debug::exit(debug::EXIT_SUCCESS);
    halt()
}

/// Report `what` failed and stop QEMU with a failure status.
fn fail(what: &str) -> ! {
    hprintln!("cortex-m: {} failed", what);
    debug::exit(debug::EXIT_FAILURE);
    halt()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    hprintln!("cortex-m: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    halt()
}

/// Wait forever (reached only off QEMU, where semihosting's exit returns).
fn halt() -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}
