//! Whether the congestion window is in use, for a flow whose window grows
//! only then (`cwnd_growth = "cwnd_limited"`, [`crate::cc::CwndGrowth`]).
//!
//! Linux's rule (net/ipv4/tcp_output.c `tcp_cwnd_validate`, include/net/tcp.h
//! `tcp_is_cwnd_limited`): after each sending opportunity that sent something
//! or found the window full, the sender notes whether the window was full and
//! the data outstanding. A full window is remembered until everything
//! outstanding at that time is acknowledged; meanwhile only a larger
//! outstanding amount (if the window was not full) replaces the note. The
//! window may grow if it was full, or, in slow start, while cwnd is below
//! twice the most data outstanding, so that slow start can still double a
//! window it just filled.

use crate::cc::Window;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CwndUsage {
    /// The window was full at a send since `until` was noted.
    full: bool,
    /// Segments outstanding (`snd_max - snd_una`) at that note.
    max_outstanding: u64,
    /// The note stands until `snd_una` reaches this segment.
    until: u64,
}

impl CwndUsage {
    /// After a sending opportunity: `full` is whether the data in the network
    /// reached cwnd; `outstanding` is `snd_max - snd_una`.
    pub fn after_send(&mut self, sent: bool, full: bool, snd_una: u64, snd_max: u64) {
        if !sent && !full {
            return;
        }
        let outstanding = snd_max - snd_una;
        if snd_una >= self.until || full || (!self.full && outstanding > self.max_outstanding) {
            *self = Self { full, max_outstanding: outstanding, until: snd_max };
        }
    }

    pub fn allows_growth(&self, w: &Window) -> bool {
        self.full || (w.in_slow_start() && w.cwnd < 2.0 * self.max_outstanding as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(cwnd: f64, ssthresh: f64) -> Window {
        Window { cwnd, ssthresh }
    }

    #[test]
    fn a_full_window_allows_growth_until_its_data_is_acknowledged() {
        let mut u = CwndUsage::default();
        u.after_send(true, true, 0, 10);
        let ca = window(10.0, 5.0);
        assert!(u.allows_growth(&ca));
        // Not full later, 6 outstanding: the full note stands until segment 10 is acknowledged.
        u.after_send(true, false, 4, 10);
        assert!(u.allows_growth(&ca));
        u.after_send(true, false, 10, 16);
        assert!(!u.allows_growth(&ca), "congestion avoidance with 6 of 10 in use");
    }

    #[test]
    fn slow_start_grows_while_cwnd_is_below_twice_the_most_outstanding() {
        let mut u = CwndUsage::default();
        u.after_send(true, false, 0, 6);
        assert!(u.allows_growth(&window(11.0, 1e9)), "11 < 2 x 6");
        assert!(!u.allows_growth(&window(12.0, 1e9)), "12 = 2 x 6");
        // A larger outstanding amount raises the bound even before the note expires.
        u.after_send(true, false, 2, 9);
        assert!(u.allows_growth(&window(13.0, 1e9)), "13 < 2 x 7");
        // A smaller one does not lower it until the noted data is acknowledged.
        u.after_send(true, false, 5, 8);
        assert!(u.allows_growth(&window(13.0, 1e9)));
        u.after_send(true, false, 9, 12);
        assert!(!u.allows_growth(&window(7.0, 1e9)), "7 > 2 x 3 once segment 9 is acknowledged");
    }

    #[test]
    fn an_opportunity_that_sent_nothing_into_a_window_with_room_changes_nothing() {
        let mut u = CwndUsage::default();
        u.after_send(true, true, 0, 4);
        u.after_send(false, false, 4, 4);
        assert!(u.allows_growth(&window(4.0, 2.0)), "the note of a full window stands");
    }
}
