//! A log a node can never wait for.
//!
//! Whoever sends a node datagrams decides how often it has something to
//! say, so a node's log is rate-limited (a burst of [`BURST`] lines, then
//! [`PER_SECOND`] a second; the rest only counted, and the count reported
//! with the next line that goes out), and it never writes to standard error
//! itself: it hands each line to one writer thread through a bounded queue
//! and drops the line (counting it) when the queue is full. If standard
//! error is a pipe nobody reads, the writer thread blocks and the nodes go
//! on.

use std::sync::OnceLock;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::time::Instant;

/// Lines a log may write at once, after a quiet spell.
pub const BURST: u32 = 20;
/// Lines a log may write per second, sustained.
pub const PER_SECOND: u32 = 5;
/// Lines waiting for the writer thread, at most.
const QUEUE: usize = 256;

/// The writer thread's queue: made on first use, never closed. The thread
/// is not joined (it may be blocked on standard error for good); it ends
/// with the process.
fn stderr_queue() -> SyncSender<String> {
    static QUEUE_TX: OnceLock<SyncSender<String>> = OnceLock::new();
    QUEUE_TX
        .get_or_init(|| {
            let (tx, rx) = mpsc::sync_channel::<String>(QUEUE);
            std::thread::Builder::new()
                .name("mixnet-log".into())
                .spawn(move || {
                    for line in rx {
                        eprintln!("{line}");
                    }
                })
                .expect("spawn the log writer");
            tx
        })
        .clone()
}

/// One node's (or thread's) rate-limited, non-blocking log.
pub struct Log {
    queue: SyncSender<String>,
    /// Lines that may go out now (a token bucket of depth [`BURST`]).
    tokens: f64,
    last: Instant,
    /// Lines not written since the last one that was.
    pending: u64,
    /// Lines not written, in all.
    suppressed: u64,
}

impl Log {
    /// A log to standard error (through the shared writer thread).
    pub fn stderr() -> Self {
        Self::to(stderr_queue())
    }

    /// A log to `queue` (tests read it).
    pub fn to(queue: SyncSender<String>) -> Self {
        Self {
            queue,
            tokens: f64::from(BURST),
            last: Instant::now(),
            pending: 0,
            suppressed: 0,
        }
    }

    /// Log the line `make` builds, if the rate allows it at `now` and the
    /// queue has room; otherwise count it. `make` runs only for lines that
    /// go out. Never blocks.
    pub fn line(&mut self, now: Instant, make: impl FnOnce() -> String) {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + elapsed * f64::from(PER_SECOND)).min(f64::from(BURST));
        if self.tokens < 1.0 {
            self.pending += 1;
            self.suppressed += 1;
            return;
        }
        self.tokens -= 1.0;
        let mut text = make();
        if self.pending > 0 {
            text.push_str(&format!(" ({} earlier lines not logged)", self.pending));
        }
        match self.queue.try_send(text) {
            Ok(()) => self.pending = 0,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.pending += 1;
                self.suppressed += 1;
            }
        }
    }

    /// Lines not written so far (rate limit or full queue).
    pub fn suppressed(&self) -> u64 {
        self.suppressed
    }
}
