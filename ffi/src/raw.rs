//! The only places raw pointers from C become Rust values.
//!
//! Each helper checks for NULL and for the exact length, then relies on the
//! one thing it cannot check, stated in its `# Safety` section: a non-NULL
//! pointer is valid for the stated length. Inputs are copied into Rust-owned
//! memory; outputs are validated up front and written last, by a plain
//! copy, so overlapping inputs and outputs are harmless.

use core::ffi::c_int;
use core::ptr;

use zeroize::Zeroizing;

use crate::{Status, guard};

/// Copy exactly `N` bytes from C into `dst`.
///
/// # Safety
/// `src` is NULL or valid for reads of `len` bytes.
pub(crate) unsafe fn read_into<const N: usize>(
    src: *const u8,
    len: usize,
    dst: &mut [u8; N],
) -> Result<(), Status> {
    if src.is_null() {
        return Err(Status::Null);
    }
    if len != N {
        return Err(Status::Length);
    }
    // SAFETY: `src` is non-NULL and, by the caller's contract, valid for
    // `len == N` reads; `dst` is N bytes of Rust memory, which C cannot
    // legitimately point into, so the two do not overlap; `u8` has no
    // alignment requirement.
    unsafe { ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), N) };
    Ok(())
}

/// Copy exactly `N` bytes from C onto the heap (packet-sized values).
///
/// # Safety
/// As [`read_into`].
pub(crate) unsafe fn read_boxed<const N: usize>(
    src: *const u8,
    len: usize,
) -> Result<Box<Zeroizing<[u8; N]>>, Status> {
    // Wiped when dropped: these copies hold payloads, SURBs (with their
    // reply key) and, after decryption, reply plaintext.
    let mut out = Box::new(Zeroizing::new([0u8; N]));
    // SAFETY: forwarded contract.
    unsafe { read_into(src, len, &mut out) }?;
    Ok(out)
}

/// Borrow exactly `N` bytes in place (no copy) for the duration of a call.
///
/// # Safety
/// `src` is NULL or valid for reads of `len` bytes, not written during
/// `'a`.
pub(crate) unsafe fn borrow<'a, const N: usize>(
    src: *const u8,
    len: usize,
) -> Result<&'a [u8; N], Status> {
    if src.is_null() {
        return Err(Status::Null);
    }
    if len != N {
        return Err(Status::Length);
    }
    // SAFETY: non-NULL, exactly N bytes, and by the caller's contract valid
    // for reads and not written during `'a`; `[u8; N]` has alignment 1.
    Ok(unsafe { &*src.cast::<[u8; N]>() })
}

/// Borrow a variable-length input (PEM text) for the duration of a call.
///
/// # Safety
/// `src` is NULL or valid for reads of `len` bytes, not written during
/// `'a`.
pub(crate) unsafe fn slice<'a>(src: *const u8, len: usize) -> Result<&'a [u8], Status> {
    if src.is_null() {
        return Err(Status::Null);
    }
    // No valid C object is longer than `isize::MAX` bytes.
    if isize::try_from(len).is_err() {
        return Err(Status::Length);
    }
    // SAFETY: non-NULL and, by the caller's contract, valid and unaliased
    // by writes for `len` bytes (checked above to fit an object); `u8`
    // needs no alignment.
    Ok(unsafe { core::slice::from_raw_parts(src, len) })
}

/// An output buffer of exactly `N` bytes, checked but not yet written.
pub(crate) struct Out<const N: usize>(*mut u8);

impl<const N: usize> Out<N> {
    /// Check an output buffer before any work is done.
    ///
    /// # Safety
    /// `dst` is NULL or valid for writes of `len` bytes until the returned
    /// value is written or dropped.
    pub(crate) unsafe fn new(dst: *mut u8, len: usize) -> Result<Self, Status> {
        if dst.is_null() {
            return Err(Status::Null);
        }
        if len != N {
            return Err(Status::Length);
        }
        Ok(Self(dst))
    }

    /// Write the result: the function's last step.
    pub(crate) fn write(self, bytes: &[u8; N]) {
        // SAFETY: `new` checked non-NULL and length N, and its caller
        // promised validity for N writes; `bytes` is Rust memory, so the
        // ranges do not overlap.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), self.0, N) };
    }
}

/// Check an out-pointer to a value before any work is done.
pub(crate) struct OutValue<T>(*mut T);

impl<T> OutValue<T> {
    /// # Safety
    /// `dst` is NULL or valid for a write of `T` (alignment is not needed:
    /// the write is unaligned).
    pub(crate) unsafe fn new(dst: *mut T) -> Result<Self, Status> {
        if dst.is_null() {
            return Err(Status::Null);
        }
        Ok(Self(dst))
    }

    /// Write the value (without reading or dropping the old one).
    pub(crate) fn write(self, value: T) {
        // SAFETY: non-NULL, and valid for a write of `T` by `new`'s
        // contract; `write_unaligned` needs no alignment.
        unsafe { self.0.write_unaligned(value) };
    }
}

/// Borrow a handle.
///
/// # Safety
/// `handle` is NULL or a live handle of type `T` made by this library.
pub(crate) unsafe fn handle<'a, T>(handle: *const T) -> Result<&'a T, Status> {
    // SAFETY: a live handle is a valid `Box<T>` allocation that nobody
    // mutates (handles are immutable); NULL gives `None`.
    unsafe { handle.as_ref() }.ok_or(Status::Null)
}

/// Make a handle for C: run `body` (as [`guard`] does: a panic is
/// [`Status::Internal`]) and write the new handle to `*out` on success,
/// NULL on every error. `out` itself NULL is [`Status::Null`], with nothing
/// written. `*out` is written last, after `body` has read its inputs, so
/// `out` may point into an input.
///
/// # Safety
/// `out` is NULL or valid for a write of one pointer.
pub(crate) unsafe fn make_handle<T>(
    out: *mut *mut T,
    body: impl FnOnce() -> Result<T, Status>,
) -> c_int {
    // SAFETY: forwarded contract.
    let out = match unsafe { OutValue::new(out) } {
        Ok(out) => out,
        Err(status) => return status as c_int,
    };
    let mut made = None;
    let status = guard(|| {
        made = Some(body()?);
        Ok(())
    });
    match made {
        Some(value) if status == Status::Ok as c_int => {
            out.write(Box::into_raw(Box::new(value)));
        }
        _ => out.write(ptr::null_mut()),
    }
    status
}

/// Release a handle made by [`make_handle`]; NULL is a no-op.
///
/// # Safety
/// `handle` is NULL or a live handle of type `T`, not used afterwards.
pub(crate) unsafe fn free<T>(handle: *mut T) {
    if !handle.is_null() {
        // SAFETY: a live handle came from `Box::into_raw` in `make_handle` and is
        // released exactly once, by the caller's contract.
        drop(unsafe { Box::from_raw(handle) });
    }
}
