//! Stopping a run from outside, and seeing how far it got: a shared flag the
//! event loop polls, and the simulated time it reports back.
//!
//! A simulation can run for hours of wall time, and the thread that wants it
//! stopped (a Ctrl-C handler, a sweep shutting down) or wants to show its
//! progress is not the one running it. The engine reads the flag once every
//! [`CANCEL_CHECK_EVENTS`] events and stores its simulated time then: one
//! relaxed atomic load and one store per batch, which cost nothing measurable,
//! while even slow events (a few microseconds each) keep the reaction within
//! milliseconds.

use cclab_wire::Time;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Events between two reads of the cancellation flag: a run stops at most this
/// many events after [`CancelToken::cancel`] (and before its first event if the
/// token was cancelled beforehand).
pub const CANCEL_CHECK_EVENTS: u64 = 1024;

/// A request to stop a run, shared by cloning. Cancelling is permanent. The
/// run also reports through it how far it has got ([`CancelToken::progress`]).
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    cancelled: AtomicBool,
    /// Simulated time reached, and where the run ends (0: no run has reported).
    reached: AtomicU64,
    end: AtomicU64,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every run holding a clone of this token to stop.
    pub fn cancel(&self) {
        // Relaxed: the flag publishes no other data, and the engine only needs
        // to see it eventually (it reads it again every batch of events).
        self.0.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed)
    }

    /// The simulated time reached and the time the run ends, as last reported
    /// (at most [`CANCEL_CHECK_EVENTS`] events ago); `None` before a run has
    /// started. With several runs holding one token, it is whichever reported last.
    pub fn progress(&self) -> Option<(Time, Time)> {
        let end = self.0.end.load(Ordering::Relaxed);
        (end > 0).then(|| (self.0.reached.load(Ordering::Relaxed), end))
    }

    /// Called by the engine: a reader may see `reached` of one batch with `end`
    /// of the same run, as both only grow within a run.
    pub(crate) fn report(&self, reached: Time, end: Time) {
        self.0.reached.store(reached, Ordering::Relaxed);
        self.0.end.store(end, Ordering::Relaxed);
    }
}

/// A run stopped by its [`CancelToken`] before the end of its window. The
/// engine's state is then that of an unfinished run: not a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled {
    /// Simulated time the run had reached.
    pub at: Time,
    /// Where it would have ended.
    pub end: Time,
    /// Events it had processed.
    pub events: u64,
}

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = |t: Time| t as f64 / 1e9;
        write!(
            f,
            "cancelled at {:.3} of {} simulated seconds, after {} events",
            seconds(self.at),
            seconds(self.end),
            self.events
        )
    }
}

impl std::error::Error for Cancelled {}
