//! Stand-in for the fast paths where they are not built (other
//! architectures, `--cfg aes_backend="soft"`, `--cfg aez_backend="portable"`):
//! an uninhabited type, so the portable path is the only one.

use crate::block::Parts;
use crate::keys::Keys;
use crate::{Backend, Dir, Tweak};

/// No fast path exists in this build: this type has no values.
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

    pub(crate) fn crypt(self, _: &Keys, _: Tweak<'_>, _: Parts<'_>, _: Dir) {
        match self {}
    }
}
