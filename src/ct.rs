//! Where a secret-derived value becomes public, said once per place
//! (SPEC.md §12, "Secret-independence under valgrind").
//!
//! The constant-time check (`ctgrind/` in the repository) runs every packet
//! operation under valgrind's memcheck with every secret marked undefined:
//! memcheck then reports each branch and each memory index that depends on
//! one. A few values are computed from secrets and yet public by design —
//! a verdict the API returns, or bytes the API hands to the caller. Each is
//! passed through [`declassify`] at the one place it becomes public, with a
//! comment saying why. In the check's build (`--cfg kemsphinx_ctgrind`,
//! with `std`) that marks the value defined; in every other build it is an
//! empty inline function.

use subtle::Choice;

/// Mark `value` public: from here on its bytes may decide branches.
///
/// Takes `&mut` so that the compiler reads the value from memory again
/// after the call (the hook is opaque to it), where memcheck now sees it
/// defined, rather than a register copy it would still see as undefined.
#[inline(always)]
pub(crate) fn declassify<T: ?Sized>(value: &mut T) {
    #[cfg(kemsphinx_ctgrind)]
    hook::call(value);
    #[cfg(not(kemsphinx_ctgrind))]
    let _ = value;
}

/// A constant-time comparison's verdict as a `bool` to branch on: the
/// callers' verdicts are what the API returns (a MAC, a payload tag, an
/// all-zero Diffie–Hellman output), so they are public.
#[inline(always)]
pub(crate) fn verdict(choice: Choice) -> bool {
    let mut verdict = bool::from(choice);
    declassify(&mut verdict);
    verdict
}

#[cfg(all(kemsphinx_ctgrind, not(feature = "std")))]
compile_error!("--cfg kemsphinx_ctgrind needs the `std` feature");

/// The check's hook: a function the harness registers once, which makes
/// memcheck see a range of memory as defined.
#[cfg(kemsphinx_ctgrind)]
pub mod hook {
    use std::sync::OnceLock;

    static HOOK: OnceLock<fn(*mut u8, usize)> = OnceLock::new();

    /// Register the function that marks `len` bytes at a pointer defined.
    /// Returns `false` if one was registered before.
    pub fn set_declassify(mark_defined: fn(*mut u8, usize)) -> bool {
        HOOK.set(mark_defined).is_ok()
    }

    pub(super) fn call<T: ?Sized>(value: &mut T) {
        if let Some(mark_defined) = HOOK.get() {
            mark_defined(core::ptr::from_mut(value).cast(), size_of_val(value));
        }
    }
}
