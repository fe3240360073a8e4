//! Metrics through the [`metrics`](https://docs.rs/metrics) facade, with
//! the crate feature `metrics` (off by default): the node installs any
//! exporter (Prometheus, StatsD, …) and these are emitted where the
//! events happen. Without an installed recorder the facade's calls do
//! nothing; without the feature they are not compiled at all.
//!
//! Named as Katzenpost's server names them where it has one (so its
//! dashboards read a node on this crate), `kemsphinx_node_…` otherwise.
//! The table is in the crate's README.
#![cfg_attr(not(feature = "metrics"), allow(dead_code))]

use std::time::Duration;

use crate::health::Role;
use crate::{Discarded, Dropped, SelfCheck};

/// Counter: packets accepted (unwrapped, tag remembered).
pub(crate) const UNWRAPS: &str = "katzenpost_sphinx_unwraps_total";
/// Counter: replays dropped.
pub(crate) const REPLAYED: &str = "katzenpost_replayed_packets_total";
/// Counter: every packet dropped, by the keyring or the forwarder.
pub(crate) const DROPPED: &str = "katzenpost_dropped_packets_total";
/// Counter, label `reason` ([`Dropped::name`], [`Discarded::name`]).
pub(crate) const DROPPED_REASON: &str = "katzenpost_dropped_reason_total";
/// Gauges: [`self_check`](crate::self_check)'s rates and cores.
pub(crate) const SOLO: &str = "katzenpost_server_selfcheck_sphinx_ops_per_sec_solo";
pub(crate) const SATURATED: &str = "katzenpost_server_selfcheck_sphinx_ops_per_sec_saturated";
pub(crate) const CPUS: &str = "katzenpost_server_selfcheck_num_cpu";
/// Gauge: tags waiting for their group commit (disk mode).
pub(crate) const PENDING: &str = "kemsphinx_node_pending_tags";
/// Gauge, label `role`: a live epoch's tags / capacity.
pub(crate) const FILL: &str = "kemsphinx_node_epoch_fill";
/// Gauge: 1 while the replay store cannot be written, else 0.
pub(crate) const DISK_FAILING: &str = "kemsphinx_node_disk_failing";
/// Histogram: a group commit's time, in seconds (disk mode).
pub(crate) const COMMIT_SECONDS: &str = "kemsphinx_node_group_commit_seconds";

/// A packet accepted.
#[inline]
pub(crate) fn accepted() {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(UNWRAPS).increment(1);
}

/// A datagram dropped by the keyring.
#[inline]
pub(crate) fn dropped(why: Dropped) {
    #[cfg(feature = "metrics")]
    {
        if why == Dropped::Replay {
            ::metrics::counter!(REPLAYED).increment(1);
        }
        drop_reason(why.name());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = why;
}

/// A packet dropped by the forwarder.
#[inline]
pub(crate) fn discarded(why: Discarded) {
    #[cfg(feature = "metrics")]
    drop_reason(why.name());
    #[cfg(not(feature = "metrics"))]
    let _ = why;
}

/// `counter!(name, "reason" => $reason)` with the label a literal for
/// each known reason, so its key is static (a label value given as an
/// expression makes the facade build the key, allocating, per call).
#[cfg(feature = "metrics")]
macro_rules! by_reason {
    ($reason:expr, $($name:literal),*) => {
        match $reason {
            $($name => ::metrics::counter!(DROPPED_REASON, "reason" => $name).increment(1),)*
            other => ::metrics::counter!(DROPPED_REASON, "reason" => other).increment(1),
        }
    };
}

#[cfg(feature = "metrics")]
fn drop_reason(reason: &'static str) {
    ::metrics::counter!(DROPPED).increment(1);
    by_reason!(
        reason,
        "length",
        "replay",
        "disk_failing",
        "version",
        "kem",
        "mac",
        "commands",
        "payload_tag",
        "epoch_full",
        "other",
        "queue_full",
        "delay_too_long",
        "not_durable",
        "stopped"
    );
}

/// The start-up self-check's result.
pub(crate) fn self_check(check: &SelfCheck) {
    #[cfg(feature = "metrics")]
    {
        ::metrics::gauge!(SOLO).set(check.one_core);
        ::metrics::gauge!(SATURATED).set(check.all_cores);
        #[allow(clippy::cast_precision_loss)] // a count of cores
        ::metrics::gauge!(CPUS).set(check.cores as f64);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = check;
}

/// After a group commit (or a failed try): the tags still waiting, and
/// whether the disk is failing.
pub(crate) fn commit(pending: u64, took: Option<Duration>) {
    #[cfg(feature = "metrics")]
    {
        #[allow(clippy::cast_precision_loss)] // a gauge
        ::metrics::gauge!(PENDING).set(pending as f64);
        ::metrics::gauge!(DISK_FAILING).set(if took.is_some() { 0.0 } else { 1.0 });
        if let Some(took) = took {
            ::metrics::histogram!(COMMIT_SECONDS).record(took.as_secs_f64());
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (pending, took);
}

/// A live epoch's fill (0 for a role no epoch holds now).
#[inline]
pub(crate) fn fill(role: Role, taken: usize, capacity: usize) {
    #[cfg(feature = "metrics")]
    {
        #[allow(clippy::cast_precision_loss)] // a ratio
        let fill = taken as f64 / capacity.max(1) as f64;
        // Literal labels: a static key, nothing allocated per packet.
        match role {
            Role::Current => ::metrics::gauge!(FILL, "role" => "current").set(fill),
            Role::Previous => ::metrics::gauge!(FILL, "role" => "previous").set(fill),
            Role::Next => ::metrics::gauge!(FILL, "role" => "next").set(fill),
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (role, taken, capacity);
}
