//! Stand-in for the vector paths where they are not built (other
//! architectures, `--cfg x25519_backend="portable"`): an uninhabited type,
//! so the portable path is the only one.

use crate::{Backend, Scalars};

/// No vector path exists in this build: this type has no values.
#[derive(Clone, Copy)]
pub(crate) enum Fast {}

impl Fast {
    pub(crate) fn detect() -> Option<Self> {
        None
    }

    pub(crate) fn select(_: Backend) -> Option<Self> {
        None
    }

    pub(crate) fn backend(self) -> Backend {
        match self {}
    }

    pub(crate) fn run(self, _: Scalars<'_>, _: &[[u8; 32]], _: &mut [[u8; 32]]) {
        match self {}
    }
}
