//! Valgrind's client requests, the three this check needs: is this process
//! running under valgrind, mark memory undefined (secret), mark it defined
//! (public). Natively each is a no-op that returns its default.
//!
//! A client request is a register-preserving instruction sequence that
//! valgrind's JIT recognises (valgrind.h documents it per platform); on
//! x86_64 it is four rotations of `rdi` by 3, 13, 61 and 51 bits (128 in
//! all: `rdi` ends unchanged) and `xchg rbx, rbx`, with the address of a
//! six-word request block in `rax`, the answer in `rdx`. Valgrind runs
//! this check on x86_64 only; elsewhere the requests return their default.

/// `VG_USERREQ__RUNNING_ON_VALGRIND`.
const RUNNING_ON_VALGRIND: usize = 0x1001;
/// `VG_USERREQ__COUNT_ERRORS`.
const COUNT_ERRORS: usize = 0x1201;
/// `VG_USERREQ_TOOL_BASE('M', 'C')`: memcheck's own requests start here.
const MEMCHECK: usize = (b'M' as usize) << 24 | (b'C' as usize) << 16;
/// `VG_USERREQ__MAKE_MEM_UNDEFINED`.
const MAKE_MEM_UNDEFINED: usize = MEMCHECK + 1;
/// `VG_USERREQ__MAKE_MEM_DEFINED`.
const MAKE_MEM_DEFINED: usize = MEMCHECK + 2;

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn request(default: usize, request: usize, addr: usize, len: usize) -> usize {
    let block: [usize; 6] = [request, addr, len, 0, 0, 0];
    let answer;
    // SAFETY: natively the sequence changes nothing but the flags: the four
    // rotations return `rdi` to its value (declared clobbered anyway) and
    // `xchg rbx, rbx` swaps a register with itself, so `rdx` keeps
    // `default`. Under valgrind the core reads the six words at `rax`, a
    // live local array, and writes its answer to `rdx`; memcheck's requests
    // change the definedness it tracks for `addr..addr + len`, never the
    // bytes. No stack is used. Memory is not declared untouched, so the
    // compiler reloads what it had cached after a request.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") block.as_ptr(),
            inout("rdx") default => answer,
            inout("rdi") 0usize => _,
            options(nostack),
        );
    }
    answer
}

#[cfg(not(target_arch = "x86_64"))]
fn request(default: usize, _request: usize, _addr: usize, _len: usize) -> usize {
    default
}

/// Whether this process runs under valgrind.
pub(crate) fn running() -> bool {
    request(0, RUNNING_ON_VALGRIND, 0, 0) != 0
}

/// The number of errors valgrind has reported so far.
pub(crate) fn errors() -> usize {
    request(0, COUNT_ERRORS, 0, 0)
}

/// Mark `len` bytes at `addr` undefined: secret, from here on.
pub(crate) fn secret_raw(addr: *mut u8, len: usize) {
    request(0, MAKE_MEM_UNDEFINED, addr as usize, len);
}

/// Mark `len` bytes at `addr` defined: public, from here on.
pub(crate) fn public_raw(addr: *mut u8, len: usize) {
    request(0, MAKE_MEM_DEFINED, addr as usize, len);
}

/// Mark a value secret.
pub(crate) fn secret<T: ?Sized>(value: &mut T) {
    secret_raw(core::ptr::from_mut(value).cast(), size_of_val(value));
}

/// Mark a value public.
pub(crate) fn public<T: ?Sized>(value: &mut T) {
    public_raw(core::ptr::from_mut(value).cast(), size_of_val(value));
}
