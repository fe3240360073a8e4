//! What a mix node calls for every packet does not copy it: the replay tag
//! is hashed where the packet lies, with no heap allocation (a counting
//! global allocator watches the calling thread).

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use kemsphinx::geometry::{PACKET_LEN, REPLAY_TAG_LEN};
use kemsphinx_ffi::{Status, kemsphinx_replay_tag};

/// Counts the bytes allocated by the thread that asked to be watched.
struct Counting;

thread_local! {
    static WATCHED: Cell<Option<usize>> = const { Cell::new(None) };
}

// SAFETY: defers every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        WATCHED.with(|w| w.set(w.get().map(|n| n + layout.size())));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_replay_tag_is_hashed_in_place() {
    let packet = vec![0x5au8; PACKET_LEN];
    let mut tag = [0u8; REPLAY_TAG_LEN];
    let expected = kemsphinx::replay_tag(packet.as_slice().try_into().unwrap());
    WATCHED.with(|w| w.set(Some(0)));
    // SAFETY: both pointers are to live buffers of the lengths passed.
    let status = unsafe {
        kemsphinx_replay_tag(
            packet.as_ptr(),
            PACKET_LEN,
            tag.as_mut_ptr(),
            REPLAY_TAG_LEN,
        )
    };
    let allocated = WATCHED.with(|w| w.replace(None)).unwrap();
    assert_eq!(status, Status::Ok as i32);
    assert_eq!(tag, expected.0);
    assert_eq!(allocated, 0, "bytes allocated to compute one replay tag");
}
