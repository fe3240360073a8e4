//! The start-up self-check: can this machine unwrap, and how fast?
//!
//! A node that starts on a build or CPU that unwraps wrongly, or far more
//! slowly than its operator planned, should say so before it takes
//! traffic. [`self_check`] builds one packet for a fresh key, unwraps
//! copies of it for a while on one thread and then on every core, and
//! reports unwraps per second (Katzenpost's server runs the same kind of
//! check on start).

use std::time::{Duration, Instant};

use getrandom::SysRng;
use kemsphinx::geometry::{HOPS, PACKET_LEN, PAYLOAD_LEN};
use kemsphinx::{Command, NodeId, PrivateKey, RecipientId, create_packet, path, unwrap};
use rand_core::UnwrapErr;

/// What [`self_check`] measured.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SelfCheck {
    /// Unwraps per second on one thread.
    pub one_core: f64,
    /// Unwraps per second with one thread per core, all together.
    pub all_cores: f64,
    /// The threads of `all_cores` (the available parallelism).
    pub cores: usize,
}

/// Why [`self_check`] failed: the node must not start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelfCheckError {
    /// The packet did not build, or a copy did not unwrap.
    #[error("self-check packet: {0}")]
    Packet(#[from] kemsphinx::Error),
    /// A copy unwrapped, but not to the hop it was built for.
    #[error("self-check packet unwrapped to the wrong hop")]
    WrongHop,
    /// A measuring thread panicked.
    #[error("self-check thread panicked")]
    Thread,
}

/// Unwrap copies of one packet for `time` on one thread, then for `time`
/// on one thread per core.
///
/// # Errors
/// If the packet does not build or a copy does not unwrap to the hop it
/// was built for: this build or CPU computes the format wrongly, and the
/// node must not start.
pub fn self_check(time: Duration) -> Result<SelfCheck, SelfCheckError> {
    let mut rng = UnwrapErr(SysRng);
    let keys: [PrivateKey; HOPS] = std::array::from_fn(|_| PrivateKey::generate(&mut rng));
    let delay = [Command::NodeDelay(1)];
    let deliver = [Command::Recipient(RecipientId([0; 32]))];
    let mut id = 0u8;
    let nodes = keys.each_ref().map(|key| {
        id += 1;
        (NodeId([id; 32]), key.public_key())
    });
    let path = path(nodes, [&delay, &delay, &delay, &deliver]);
    let mut packet = Box::new([0u8; PACKET_LEN]);
    create_packet(&mut rng, &path, &[0; PAYLOAD_LEN], &mut packet)?;
    let [key, ..] = &keys;
    let run = || -> Result<u64, SelfCheckError> {
        let mut copy = Box::new([0u8; PACKET_LEN]);
        let (start, mut n) = (Instant::now(), 0u64);
        while start.elapsed() < time {
            copy.copy_from_slice(&packet[..]);
            match unwrap(key, &mut copy)?.action {
                kemsphinx::Action::Forward { next_hop, .. } if next_hop == NodeId([2; 32]) => {}
                _ => return Err(SelfCheckError::WrongHop),
            }
            n += 1;
        }
        Ok(n)
    };
    let rate = |n: u64, t: Duration| n as f64 / t.as_secs_f64();
    let start = Instant::now();
    let one_core = rate(run()?, start.elapsed());
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let start = Instant::now();
    let counts: Vec<Result<u64, SelfCheckError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cores).map(|_| s.spawn(run)).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(SelfCheckError::Thread)))
            .collect()
    });
    let elapsed = start.elapsed();
    let mut total = 0;
    for c in counts {
        total += c?;
    }
    let check = SelfCheck {
        one_core,
        all_cores: rate(total, elapsed),
        cores,
    };
    crate::instrument::self_check(&check);
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check's packet unwraps at its first hop to the second hop's id
    /// (a path built in another order fails with `WrongHop`), and every
    /// run counts at least one unwrap.
    #[test]
    fn the_check_passes_on_this_build() {
        let check = self_check(Duration::from_millis(20)).unwrap();
        assert!(check.one_core > 0.0 && check.all_cores > 0.0);
        assert!(check.cores >= 1);
    }
}
