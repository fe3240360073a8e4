//! The C ABI's refusals, driven from Rust: NULL and length checks on every
//! pointer, typed key errors, outputs untouched on error, overlap allowed.

// Tests unwrap, index and panic freely; the library denies all of this.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::multiple_unsafe_ops_per_block
)]

use core::ptr::{null, null_mut};

use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, NODE_ID_LEN, PACKET_LEN, PAYLOAD_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN,
    REPLAY_TAG_LEN, SURB_KEYS_LEN, SURB_LEN,
};
use kemsphinx_ffi::*;

const OK: i32 = Status::Ok as i32;

fn code(s: Status) -> i32 {
    s as i32
}

fn generate() -> *mut PrivateKeyHandle {
    let mut key = null_mut();
    // SAFETY: `key` is a valid out-pointer.
    assert_eq!(unsafe { kemsphinx_private_key_generate(&mut key) }, OK);
    key
}

#[test]
fn keys_round_trip_and_bad_keys_are_refused_with_key_errors() {
    let key = generate();
    let mut raw = [0u8; PRIVATE_KEY_LEN];
    // SAFETY: in this test, every pointer is to a live local of the stated
    // length, and every handle is live until freed at the end.
    unsafe {
        assert_eq!(
            kemsphinx_private_key_to_bytes(key, raw.as_mut_ptr(), raw.len()),
            OK
        );
        let mut again = null_mut();
        assert_eq!(
            kemsphinx_private_key_from_bytes(raw.as_ptr(), raw.len(), &mut again),
            OK
        );
        kemsphinx_private_key_free(again);

        raw[40] ^= 1; // inside the stored encapsulation key
        let mut refused = null_mut();
        let status = kemsphinx_private_key_from_bytes(raw.as_ptr(), raw.len(), &mut refused);
        assert_eq!(status, code(Status::Key));
        assert!(refused.is_null(), "out-handle NULL on error");

        let mut public = [0u8; PUBLIC_KEY_LEN]; // all zero: small-order X25519
        let mut pk = null_mut();
        let status = kemsphinx_public_key_from_bytes(public.as_ptr(), public.len(), &mut pk);
        assert_eq!(status, code(Status::Key));
        public[0] = 9;
        let status = kemsphinx_public_key_from_bytes(public.as_ptr(), 1215, &mut pk);
        assert_eq!(status, code(Status::Length));
        assert!(pk.is_null());
        kemsphinx_private_key_free(key);
        kemsphinx_private_key_free(null_mut());
        kemsphinx_public_key_free(null_mut());
    }
}

#[test]
fn null_pointers_and_wrong_lengths_are_refused_before_any_work() {
    let key = generate();
    let mut packet = vec![0u8; PACKET_LEN];
    let mut tag = [7u8; REPLAY_TAG_LEN];
    let mut out = [7u8; PAYLOAD_LEN];
    let null_status = code(Status::Null);
    let length = code(Status::Length);
    // SAFETY: in this test, non-NULL pointers are to live locals at least as
    // long as the length passed with them.
    unsafe {
        let p = packet.as_mut_ptr();
        assert_eq!(
            kemsphinx_replay_tag(null(), PACKET_LEN, tag.as_mut_ptr(), 32),
            null_status
        );
        assert_eq!(
            kemsphinx_replay_tag(p, PACKET_LEN, null_mut(), 32),
            null_status
        );
        assert_eq!(
            kemsphinx_replay_tag(p, PACKET_LEN - 1, tag.as_mut_ptr(), 32),
            length
        );
        assert_eq!(
            kemsphinx_replay_tag(p, PACKET_LEN, tag.as_mut_ptr(), 31),
            length
        );
        assert_eq!(tag, [7u8; REPLAY_TAG_LEN], "output untouched on error");

        let mut res = core::mem::MaybeUninit::<Unwrapped>::uninit();
        assert_eq!(
            kemsphinx_unwrap(key, p, PACKET_LEN + 1, res.as_mut_ptr()),
            length
        );
        // An all-zero packet reaches the small-order X25519 check.
        assert_eq!(
            kemsphinx_unwrap(key, p, PACKET_LEN, res.as_mut_ptr()),
            code(Status::Kem)
        );
        assert!(packet.iter().all(|b| *b == 0), "packet unchanged on error");

        let k = [0u8; SURB_KEYS_LEN];
        let r = [0u8; ENCRYPTED_REPLY_LEN];
        let o = out.as_mut_ptr();
        assert_eq!(
            kemsphinx_decrypt_reply(
                null(),
                SURB_KEYS_LEN,
                r.as_ptr(),
                ENCRYPTED_REPLY_LEN,
                o,
                PAYLOAD_LEN
            ),
            null_status
        );
        assert_eq!(
            kemsphinx_decrypt_reply(k.as_ptr(), SURB_KEYS_LEN, r.as_ptr(), 5, o, PAYLOAD_LEN),
            length
        );
        assert_eq!(
            kemsphinx_decrypt_reply(
                k.as_ptr(),
                SURB_KEYS_LEN,
                r.as_ptr(),
                ENCRYPTED_REPLY_LEN,
                o,
                PAYLOAD_LEN
            ),
            code(Status::PayloadTag)
        );
        assert!(out.iter().all(|b| *b == 7), "payload untouched on error");

        let surb = [0u8; SURB_LEN];
        let mut hop = [0u8; NODE_ID_LEN];
        assert_eq!(
            kemsphinx_surb_reply(
                surb.as_ptr(),
                SURB_LEN,
                o,
                PAYLOAD_LEN,
                p,
                PACKET_LEN,
                hop.as_mut_ptr(),
                31
            ),
            length
        );
        assert_eq!(
            kemsphinx_create_packet(null(), 4, o, 32, o, PAYLOAD_LEN, p, PACKET_LEN),
            null_status
        );
        assert_eq!(
            kemsphinx_private_key_from_pem(null(), 0, &mut null_mut()),
            null_status
        );
        assert_eq!(kemsphinx_private_key_to_pem(null(), o, 1821), null_status);
        kemsphinx_private_key_free(key);
    }
}

#[test]
fn a_reply_may_be_built_from_a_payload_inside_its_own_output_buffer() {
    let key = generate();
    let mut pk = null_mut();
    let mut surb = vec![0u8; SURB_LEN];
    let mut surb_keys = [0u8; SURB_KEYS_LEN];
    // SAFETY: in this test, pointers to live locals of the stated lengths; the
    // deliberate overlap below is what the ABI allows for inputs/outputs.
    unsafe {
        assert_eq!(kemsphinx_private_key_public_key(key, &mut pk), OK);
        let path: Vec<Hop> = (0..4u8)
            .map(|i| Hop {
                node_id: [i; 32],
                public_key: pk,
                delay_ms: 0,
                has_delay: 0,
            })
            .collect();
        let (to, id) = ([1u8; 32], [2u8; 16]);
        let status = kemsphinx_create_surb(
            path.as_ptr(),
            4,
            to.as_ptr(),
            32,
            id.as_ptr(),
            16,
            surb.as_mut_ptr(),
            SURB_LEN,
            surb_keys.as_mut_ptr(),
            SURB_KEYS_LEN,
        );
        assert_eq!(status, OK);

        let mut buffer = vec![0x33u8; PACKET_LEN];
        let mut expected = vec![0u8; PACKET_LEN];
        let mut hop = [0u8; NODE_ID_LEN];
        let payload = [0x33u8; PAYLOAD_LEN];
        let status = kemsphinx_surb_reply(
            surb.as_ptr(),
            SURB_LEN,
            payload.as_ptr(),
            PAYLOAD_LEN,
            expected.as_mut_ptr(),
            PACKET_LEN,
            hop.as_mut_ptr(),
            NODE_ID_LEN,
        );
        assert_eq!(status, OK);
        let b = buffer.as_mut_ptr();
        let status = kemsphinx_surb_reply(
            surb.as_ptr(),
            SURB_LEN,
            b.add(100),
            PAYLOAD_LEN,
            b,
            PACKET_LEN,
            hop.as_mut_ptr(),
            NODE_ID_LEN,
        );
        assert_eq!(status, OK);
        assert_eq!(buffer, expected);
        assert_eq!(hop, [0u8; 32]);
        kemsphinx_public_key_free(pk);
        kemsphinx_private_key_free(key);
    }
}

#[test]
fn every_status_has_a_description() {
    for s in Status::ALL {
        // SAFETY: the function returns a static NUL-terminated string.
        let text = unsafe { core::ffi::CStr::from_ptr(kemsphinx_status_str(s as i32)) };
        assert!(!text.to_bytes().is_empty());
        assert_ne!(text.to_bytes(), b"unknown status");
    }
}

/// A pointer C code might leave in an uninitialised handle variable.
fn garbage<T>() -> *mut T {
    core::ptr::dangling_mut::<T>().wrapping_byte_add(0x0bad_0000)
}

/// `call` fails with `want`, and writes NULL to its out-handle.
fn refuses_with_null<T>(what: &str, want: Status, call: impl FnOnce(*mut *mut T) -> i32) {
    let mut out: *mut T = garbage();
    assert_eq!(call(&mut out), code(want), "{what}");
    assert!(out.is_null(), "{what}: out-handle left as {out:p}");
}

/// The C pattern `T *k; if (f(&k)) goto out; ... out: free(k);` must free
/// NULL, not whatever `k` held: every function that makes a handle writes
/// NULL to its out-pointer on every error.
#[test]
fn every_out_handle_is_null_after_every_error() {
    let seed = [0u8; 96];
    let private = [0u8; PRIVATE_KEY_LEN]; // inconsistent with its seed
    let public = [0u8; PUBLIC_KEY_LEN]; // small-order X25519
    let pem =
        b"-----BEGIN MLKEM768-X25519 PUBLIC KEY-----\n-----END MLKEM768-X25519 PUBLIC KEY-----\n";
    // Every call below: non-NULL pointers are to live locals at least as
    // long as the length passed with them; `out` is a valid out-pointer.
    refuses_with_null("seed NULL", Status::Null, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_private_key_from_seed(null(), 96, out) }
    });
    refuses_with_null("seed length", Status::Length, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_private_key_from_seed(seed.as_ptr(), 95, out) }
    });
    refuses_with_null("private NULL", Status::Null, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_private_key_from_bytes(null(), PRIVATE_KEY_LEN, out) }
    });
    refuses_with_null("private length", Status::Length, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_private_key_from_bytes(private.as_ptr(), 1, out) }
    });
    refuses_with_null("private invalid", Status::Key, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_private_key_from_bytes(private.as_ptr(), PRIVATE_KEY_LEN, out) }
    });
    refuses_with_null("private PEM NULL", Status::Null, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_private_key_from_pem(null(), 10, out) }
    });
    refuses_with_null("private PEM", Status::Pem, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_private_key_from_pem(pem.as_ptr(), pem.len(), out) }
    });
    refuses_with_null("public of NULL", Status::Null, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_private_key_public_key(null(), out) }
    });
    refuses_with_null("public NULL", Status::Null, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_public_key_from_bytes(null(), PUBLIC_KEY_LEN, out) }
    });
    refuses_with_null("public length", Status::Length, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_public_key_from_bytes(public.as_ptr(), PUBLIC_KEY_LEN + 1, out) }
    });
    refuses_with_null("public invalid", Status::Key, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_public_key_from_bytes(public.as_ptr(), PUBLIC_KEY_LEN, out) }
    });
    refuses_with_null("public PEM length", Status::Length, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_public_key_from_pem(pem.as_ptr(), usize::MAX, out) }
    });
    refuses_with_null("public PEM", Status::Length, |out| {
        // SAFETY: as said above the first call.
        unsafe { kemsphinx_public_key_from_pem(pem.as_ptr(), pem.len(), out) }
    });
    // And on success, a live handle.
    let mut key: *mut PrivateKeyHandle = garbage();
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            kemsphinx_private_key_from_seed(seed.as_ptr(), 96, &mut key),
            OK
        );
        let mut pk: *mut PublicKeyHandle = garbage();
        assert_eq!(kemsphinx_private_key_public_key(key, &mut pk), OK);
        assert!(!key.is_null() && !pk.is_null());
        kemsphinx_public_key_free(pk);
        kemsphinx_private_key_free(key);
    }
}
