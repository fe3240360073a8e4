//! Fixed-size views into fixed-size arrays.
//!
//! Every offset in this crate is a constant, so every sub-array can be
//! checked at compile time. These helpers turn that check into a `const`
//! assertion (a wrong offset fails the build) and leave the packet code free
//! of slice indexing that could panic. The fallible conversion inside each
//! helper cannot fail once the assertion holds; its error branch is dead code
//! that the compiler removes.

/// `&a[OFF..OFF + LEN]` as an array reference.
#[inline(always)]
pub(crate) fn sub<const OFF: usize, const LEN: usize, const N: usize>(a: &[u8; N]) -> &[u8; LEN] {
    const { assert!(OFF + LEN <= N) };
    match a.get(OFF..OFF + LEN).map(<&[u8; LEN]>::try_from) {
        Some(Ok(view)) => view,
        _ => unreachable_range(),
    }
}

/// `&mut a[OFF..OFF + LEN]` as an array reference.
#[inline(always)]
pub(crate) fn sub_mut<const OFF: usize, const LEN: usize, const N: usize>(
    a: &mut [u8; N],
) -> &mut [u8; LEN] {
    const { assert!(OFF + LEN <= N) };
    match a.get_mut(OFF..OFF + LEN).map(<&mut [u8; LEN]>::try_from) {
        Some(Ok(view)) => view,
        _ => unreachable_range(),
    }
}

/// Split an array into its first `A` and last `B` bytes.
#[inline(always)]
pub(crate) fn split<const A: usize, const B: usize, const N: usize>(
    a: &[u8; N],
) -> (&[u8; A], &[u8; B]) {
    const { assert!(A + B == N) };
    let (x, y) = a.split_at(A);
    match (<&[u8; A]>::try_from(x), <&[u8; B]>::try_from(y)) {
        (Ok(x), Ok(y)) => (x, y),
        _ => unreachable_range(),
    }
}

/// Split a mutable array into its first `A` and last `B` bytes.
#[inline(always)]
pub(crate) fn split_mut<const A: usize, const B: usize, const N: usize>(
    a: &mut [u8; N],
) -> (&mut [u8; A], &mut [u8; B]) {
    const { assert!(A + B == N) };
    let (x, y) = a.split_at_mut(A);
    match (<&mut [u8; A]>::try_from(x), <&mut [u8; B]>::try_from(y)) {
        (Ok(x), Ok(y)) => (x, y),
        _ => unreachable_range(),
    }
}

/// `&buf[RANGE]` as an array reference, for a `const` range of
/// [`geometry::layout`](crate::geometry::layout): the range's length is
/// the array's, and a range outside `buf` fails the build.
macro_rules! field {
    ($buf:expr, $range:expr) => {
        $crate::bytes::sub::<{ $range.start }, { $range.end - $range.start }, _>($buf)
    };
}

/// `&mut buf[RANGE]` as an array reference (see [`field!`]).
macro_rules! field_mut {
    ($buf:expr, $range:expr) => {
        $crate::bytes::sub_mut::<{ $range.start }, { $range.end - $range.start }, _>($buf)
    };
}

pub(crate) use {field, field_mut};

/// The error branch of the helpers above. The `const` assertions make it
/// unreachable; it exists only because `try_from` is typed as fallible.
#[cold]
#[inline(never)]
#[allow(clippy::panic)]
fn unreachable_range() -> ! {
    panic!("constant range checked at compile time")
}
