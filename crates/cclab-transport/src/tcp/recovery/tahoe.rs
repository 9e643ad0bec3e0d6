//! TCP Tahoe (Jacobson 1988; RFC 5681 without fast recovery).
//!
//! On the DupThresh-th duplicate ACK: ssthresh from congestion control
//! (`max(FlightSize/2, 2)` for Reno), cwnd = 1 segment, and go back to `snd_una`
//! (retransmit it and everything after it in slow start). As in ns-2's Tahoe with
//! its default `bug_fix_` (and RFC 6582's `recover` test), duplicate ACKs that do
//! not cover more than the data sent before the last fast retransmit or timeout
//! do not trigger another one: go-back-N's own duplicates would otherwise cause
//! one fast retransmit per lost segment.

use super::{
    limited_transmit_allowance, next_in_window, reaches_dupthresh, set_ssthresh_on_loss, AckInfo,
    LossRecovery, Recover, Transmission, Verdict,
};
use crate::cc::CongestionControl;
use crate::tcp::sender::SenderCore;

#[derive(Debug, Default)]
pub struct Tahoe {
    recover: Recover,
}

impl LossRecovery for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }

    fn on_ack(&mut self, core: &mut SenderCore, cc: &mut dyn CongestionControl, ack: &AckInfo) -> Verdict {
        let mut verdict = Verdict::open(ack);
        if !reaches_dupthresh(core, ack) || !self.recover.covered_by(ack.ack_seg) {
            return verdict;
        }
        set_ssthresh_on_loss(core, cc, ack.now);
        core.cc.cwnd = 1.0;
        self.recover.set(core.snd_max);
        core.snd_nxt = core.snd_una;
        verdict.entered_recovery = true;
        verdict
    }

    fn on_timeout(&mut self, core: &mut SenderCore) {
        self.recover.set(core.snd_max);
    }

    fn next_segment(&mut self, core: &SenderCore) -> Option<Transmission> {
        next_in_window(core, limited_transmit_allowance(core), false)
    }

    fn in_recovery(&self) -> bool {
        false
    }

    fn in_loss_episode(&self, core: &SenderCore) -> bool {
        !self.recover.reached_by(core.snd_una)
    }
}
