//! Key handles: load, generate, export, free.
//!
//! A private key is validated and expanded once, when its handle is made;
//! every unwrap then reuses it. Public keys are validated the same way and
//! are what a path is built from.

use core::ffi::c_int;

use getrandom::SysRng;
use kemsphinx::geometry::{KEY_SEED_LEN, PRIVATE_KEY_LEN, PUBLIC_KEY_LEN};
use kemsphinx::pem::{PRIVATE_KEY_PEM_LEN, PUBLIC_KEY_PEM_LEN};
use kemsphinx::{PrivateKey, PublicKey};
use rand_core::UnwrapErr;
use zeroize::Zeroizing;

use crate::guard;
use crate::raw::{Out, free, handle, make_handle, read_into, slice};

/// A loaded private key (`kemsphinx_private_key` in C). Opaque.
pub struct PrivateKeyHandle(pub(crate) PrivateKey);

/// A validated public key (`kemsphinx_public_key` in C). Opaque.
pub struct PublicKeyHandle(pub(crate) PublicKey);

/// Generate a key pair from the operating system's RNG.
///
/// Like every function that makes a handle, writes the handle to `*out`
/// on success and NULL on any error (unless `out` is NULL).
///
/// # Safety
/// `out` is NULL or valid for a write of one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_private_key_generate(out: *mut *mut PrivateKeyHandle) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        make_handle(out, || {
            Ok(PrivateKeyHandle(PrivateKey::generate(&mut UnwrapErr(
                SysRng,
            ))))
        })
    }
}

/// Derive a key pair from a `KEMSPHINX_KEY_SEED_LEN`-byte seed exactly as
/// the reference's `DeriveKeyPair` does (deterministic: for tests and for
/// keys derived from a master secret).
///
/// # Safety
/// `seed` is NULL or valid for `seed_len` reads; `out` as in
/// [`kemsphinx_private_key_generate`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_private_key_from_seed(
    seed: *const u8,
    seed_len: usize,
    out: *mut *mut PrivateKeyHandle,
) -> c_int {
    let body = || {
        let mut bytes = Zeroizing::new([0u8; KEY_SEED_LEN]);
        // SAFETY: forwarded contract.
        unsafe { read_into(seed, seed_len, &mut bytes) }?;
        Ok(PrivateKeyHandle(PrivateKey::from_seed(&bytes)))
    };
    // SAFETY: forwarded contract.
    unsafe { make_handle(out, body) }
}

/// Load a private key from its `KEMSPHINX_PRIVATE_KEY_LEN`-byte encoding,
/// refusing one whose stored encapsulation key does not match its seed.
///
/// # Safety
/// `bytes` is NULL or valid for `len` reads; `out` as in
/// [`kemsphinx_private_key_generate`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_private_key_from_bytes(
    bytes: *const u8,
    len: usize,
    out: *mut *mut PrivateKeyHandle,
) -> c_int {
    let body = || {
        let mut raw = Zeroizing::new([0u8; PRIVATE_KEY_LEN]);
        // SAFETY: forwarded contract.
        unsafe { read_into(bytes, len, &mut raw) }?;
        Ok(PrivateKeyHandle(PrivateKey::from_bytes(&raw)?))
    };
    // SAFETY: forwarded contract.
    unsafe { make_handle(out, body) }
}

/// Load a private key from PEM text (`MLKEM768-X25519 PRIVATE KEY`).
///
/// # Safety
/// `text` is NULL or valid for `len` reads; `out` as in
/// [`kemsphinx_private_key_generate`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_private_key_from_pem(
    text: *const u8,
    len: usize,
    out: *mut *mut PrivateKeyHandle,
) -> c_int {
    let body = || {
        // SAFETY: forwarded contract.
        let text = unsafe { slice(text, len) }?;
        Ok(PrivateKeyHandle(PrivateKey::from_pem(text)?))
    };
    // SAFETY: forwarded contract.
    unsafe { make_handle(out, body) }
}

/// Write the private key's `KEMSPHINX_PRIVATE_KEY_LEN`-byte encoding.
///
/// # Safety
/// `key` is NULL or a live handle; `out` is NULL or valid for `len` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_private_key_to_bytes(
    key: *const PrivateKeyHandle,
    out: *mut u8,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let key = unsafe { handle(key) }?;
        // SAFETY: forwarded contract.
        let out = unsafe { Out::<PRIVATE_KEY_LEN>::new(out, len) }?;
        out.write(&key.0.to_bytes());
        Ok(())
    })
}

/// Write the private key as PEM text, `KEMSPHINX_PRIVATE_KEY_PEM_LEN`
/// bytes, not NUL-terminated.
///
/// # Safety
/// As [`kemsphinx_private_key_to_bytes`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_private_key_to_pem(
    key: *const PrivateKeyHandle,
    out: *mut u8,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let key = unsafe { handle(key) }?;
        // SAFETY: forwarded contract.
        let out = unsafe { Out::<PRIVATE_KEY_PEM_LEN>::new(out, len) }?;
        out.write(&key.0.to_pem());
        Ok(())
    })
}

/// A new public key handle for the private key's public half.
///
/// # Safety
/// `key` is NULL or a live handle; `out` as in
/// [`kemsphinx_private_key_generate`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_private_key_public_key(
    key: *const PrivateKeyHandle,
    out: *mut *mut PublicKeyHandle,
) -> c_int {
    let body = || {
        // SAFETY: forwarded contract.
        let key = unsafe { handle(key) }?;
        Ok(PublicKeyHandle(key.0.public_key().clone()))
    };
    // SAFETY: forwarded contract.
    unsafe { make_handle(out, body) }
}

/// Release a private key (its secrets are zeroized). NULL is a no-op.
///
/// # Safety
/// `key` is NULL or a live handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_private_key_free(key: *mut PrivateKeyHandle) {
    // The status is dropped: freeing has nothing to report (a caught panic
    // would leave the key leaked, not freed twice).
    let _ = guard(|| {
        // SAFETY: forwarded contract.
        unsafe { free(key) };
        Ok(())
    });
}

/// Load a public key from its `KEMSPHINX_PUBLIC_KEY_LEN`-byte encoding.
///
/// # Safety
/// `bytes` is NULL or valid for `len` reads; `out` is NULL or valid for a
/// write of one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_public_key_from_bytes(
    bytes: *const u8,
    len: usize,
    out: *mut *mut PublicKeyHandle,
) -> c_int {
    let body = || {
        let mut raw = [0u8; PUBLIC_KEY_LEN];
        // SAFETY: forwarded contract.
        unsafe { read_into(bytes, len, &mut raw) }?;
        Ok(PublicKeyHandle(PublicKey::from_bytes(&raw)?))
    };
    // SAFETY: forwarded contract.
    unsafe { make_handle(out, body) }
}

/// Load a public key from PEM text (`MLKEM768-X25519 PUBLIC KEY`).
///
/// # Safety
/// As [`kemsphinx_public_key_from_bytes`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_public_key_from_pem(
    text: *const u8,
    len: usize,
    out: *mut *mut PublicKeyHandle,
) -> c_int {
    let body = || {
        // SAFETY: forwarded contract.
        let text = unsafe { slice(text, len) }?;
        Ok(PublicKeyHandle(PublicKey::from_pem(text)?))
    };
    // SAFETY: forwarded contract.
    unsafe { make_handle(out, body) }
}

/// Write the public key's `KEMSPHINX_PUBLIC_KEY_LEN`-byte encoding.
///
/// # Safety
/// `key` is NULL or a live handle; `out` is NULL or valid for `len` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_public_key_to_bytes(
    key: *const PublicKeyHandle,
    out: *mut u8,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let key = unsafe { handle(key) }?;
        // SAFETY: forwarded contract.
        let out = unsafe { Out::<PUBLIC_KEY_LEN>::new(out, len) }?;
        out.write(key.0.as_bytes());
        Ok(())
    })
}

/// Write the public key as PEM text, `KEMSPHINX_PUBLIC_KEY_PEM_LEN` bytes,
/// not NUL-terminated.
///
/// # Safety
/// As [`kemsphinx_public_key_to_bytes`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_public_key_to_pem(
    key: *const PublicKeyHandle,
    out: *mut u8,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let key = unsafe { handle(key) }?;
        // SAFETY: forwarded contract.
        let out = unsafe { Out::<PUBLIC_KEY_PEM_LEN>::new(out, len) }?;
        out.write(&key.0.to_pem());
        Ok(())
    })
}

/// Release a public key. NULL is a no-op.
///
/// # Safety
/// `key` is NULL or a live handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kemsphinx_public_key_free(key: *mut PublicKeyHandle) {
    let _ = guard(|| {
        // SAFETY: forwarded contract.
        unsafe { free(key) };
        Ok(())
    });
}
