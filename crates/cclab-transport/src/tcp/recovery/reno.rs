//! Reno fast retransmit and fast recovery, RFC 5681 §3.2.
//!
//! 1-3. On the DupThresh-th duplicate ACK: ssthresh from congestion control
//!      (eq. 4: `max(FlightSize/2, 2)`), retransmit the first unacknowledged
//!      segment, cwnd = ssthresh + 3 (the segments that left the network).
//! 4-5. Each further duplicate ACK inflates cwnd by one segment; send if allowed.
//! 6.   The first ACK of new data deflates cwnd to ssthresh and ends recovery,
//!      even when it is a partial ACK (which is why Reno often needs a timeout
//!      when several segments of one window are lost).

use super::{
    enter_fast_recovery, fast_recovery_next_segment, inflate_on_duplicate, reaches_dupthresh, AckInfo,
    LossRecovery, Transmission, Verdict,
};
use crate::cc::CongestionControl;
use crate::tcp::sender::SenderCore;

#[derive(Debug, Default)]
pub struct Reno {
    in_recovery: bool,
}

impl LossRecovery for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, core: &mut SenderCore, cc: &mut dyn CongestionControl, ack: &AckInfo) -> Verdict {
        if self.in_recovery {
            if ack.newly_acked > 0 {
                core.cc.cwnd = core.cc.ssthresh;
                core.dupacks = 0;
                self.in_recovery = false;
                cc.on_recovery_exit(&mut core.cc, ack.now);
                return Verdict::recovery(true);
            }
            inflate_on_duplicate(core, ack);
            return Verdict::recovery(false);
        }
        if !reaches_dupthresh(core, ack) {
            return Verdict::open(ack);
        }
        enter_fast_recovery(core, cc, ack.now);
        self.in_recovery = true;
        Verdict::entered()
    }

    fn on_timeout(&mut self, _core: &mut SenderCore) {
        self.in_recovery = false;
    }

    fn next_segment(&mut self, core: &SenderCore) -> Option<Transmission> {
        fast_recovery_next_segment(core, self.in_recovery)
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// Reno keeps no `recover`: its episode is its fast recovery.
    fn in_loss_episode(&self, _core: &SenderCore) -> bool {
        self.in_recovery
    }
}
