//! What a mix node calls for every packet does not copy it: the replay tag
//! is hashed where the packet lies, with no heap allocation (the
//! `allocation-counter` crate's global allocator watches the calling
//! thread).

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(clippy::unwrap_used, clippy::panic)]

use kemsphinx::geometry::{PACKET_LEN, REPLAY_TAG_LEN};
use kemsphinx_ffi::{Status, kemsphinx_replay_tag};

#[test]
fn the_replay_tag_is_hashed_in_place() {
    let packet = vec![0x5au8; PACKET_LEN];
    let mut tag = [0u8; REPLAY_TAG_LEN];
    let expected = kemsphinx::replay_tag(packet.as_slice().try_into().unwrap());
    let mut status = 0;
    let allocated = allocation_counter::measure(|| {
        // SAFETY: both pointers are to live buffers of the lengths passed.
        status = unsafe {
            kemsphinx_replay_tag(
                packet.as_ptr(),
                PACKET_LEN,
                tag.as_mut_ptr(),
                REPLAY_TAG_LEN,
            )
        };
    })
    .bytes_total;
    assert_eq!(status, Status::Ok as i32);
    assert_eq!(tag, expected.0);
    assert_eq!(allocated, 0, "bytes allocated to compute one replay tag");
}
