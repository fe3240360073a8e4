//! The crate's own tests of what lies behind the public API: epochs and
//! disk mode driven with bare replay tags.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod diag;
mod disk;
mod epochs;
mod faults;
mod memory;
mod schedule;
mod types;

/// What the crate's own tests reach past the packet for: tags without
/// packets (making thousands of real packets would cost minutes in a debug
/// build).
impl crate::Keyring {
    /// Remember `tag` in the current (`previous == false`) or previous
    /// epoch, as `receive` does after a packet's MAC verified.
    pub(crate) fn remember_tag(
        &self,
        tag: &kemsphinx::ReplayTag,
        previous: bool,
    ) -> Result<crate::Ticket, crate::Dropped> {
        let live = self.live();
        let epoch = match (&live.previous, previous) {
            (Some((e, _)), true) => e,
            _ => &live.current,
        };
        let (group, taken) = epoch.remember(tag, self.journal())?;
        self.taken(&live, epoch, taken);
        Ok(self.ticket(group))
    }

    /// Remember `tag` in the next epoch (published ahead), as `receive`
    /// does after a packet's MAC verified under its key.
    pub(crate) fn remember_next(
        &self,
        tag: &kemsphinx::ReplayTag,
    ) -> Result<crate::Ticket, crate::Dropped> {
        let live = self.live();
        let next = live.next.as_ref().ok_or(crate::Dropped::Other)?;
        let (group, taken) = next.remember(tag, self.journal())?;
        self.taken(&live, next, taken);
        Ok(self.ticket(group))
    }

    /// Whether `ticket` became durable within `timeout`.
    pub(crate) fn is_durable_within(
        &self,
        ticket: crate::Ticket,
        timeout: std::time::Duration,
    ) -> bool {
        self.wait_durable(ticket, timeout).is_ok()
    }

    /// Whether a live epoch has seen `tag` (the check before any key work).
    pub(crate) fn seen(&self, tag: &kemsphinx::ReplayTag) -> bool {
        let live = self.live();
        live.epochs().any(|e| e.seen(tag))
    }
}
