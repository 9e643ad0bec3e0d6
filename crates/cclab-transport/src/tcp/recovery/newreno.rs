//! NewReno fast recovery, RFC 6582 §3.2.
//!
//! - `recover` holds the highest segment sent when recovery starts (kept here as
//!   the exclusive end, `snd_max`). On the DupThresh-th duplicate ACK, fast
//!   retransmit starts only if the cumulative ACK covers more than `recover`
//!   (step 2: `ack_number - 1 > recover`), which stops repeated fast retransmits
//!   after a timeout. Before the first loss there is no `recover`, so a loss of
//!   the very first segment can still be repaired by fast retransmit (as ns-2's
//!   `bugfix_ss_` allows).
//! - Entering: `recover = HighData`, ssthresh from congestion control, retransmit
//!   the first unacknowledged segment, cwnd = ssthresh + 3 (steps 2-3).
//! - Each further duplicate ACK: cwnd += 1 (step 4).
//! - Full ACK (acknowledges `recover`): cwnd = `min(ssthresh, max(FlightSize, 1) + 1)`
//!   (option 1, the default) or ssthresh (option 2); recovery ends (step 5).
//! - Partial ACK: retransmit the first unacknowledged segment, deflate cwnd by the
//!   amount acknowledged, add back one segment if at least one was acknowledged,
//!   stay in recovery; restart the timer on the first partial ACK only
//!   ("Impatient" variant, RFC 6582 §4).
//! - Timeout: `recover = HighData`, recovery ends.

use super::{
    enter_fast_recovery, fast_recovery_next_segment, inflate_on_duplicate, reaches_dupthresh, AckInfo,
    LossRecovery, Recover, Transmission, Verdict,
};
use crate::cc::CongestionControl;
use crate::tcp::sender::SenderCore;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FullAckWindow {
    /// RFC 6582 option (1): `min(ssthresh, max(FlightSize, SMSS) + SMSS)`, avoids a burst.
    #[default]
    FlightPlusOne,
    /// RFC 6582 option (2): `ssthresh`.
    Ssthresh,
}

#[derive(Debug, Default)]
pub struct NewReno {
    in_recovery: bool,
    recover: Recover,
    partial_acks: u32,
    full_ack: FullAckWindow,
}

impl NewReno {
    pub fn with_full_ack(full_ack: FullAckWindow) -> Self {
        Self { full_ack, ..Self::default() }
    }
}

impl LossRecovery for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, core: &mut SenderCore, cc: &mut dyn CongestionControl, ack: &AckInfo) -> Verdict {
        if self.in_recovery {
            if ack.newly_acked > 0 {
                if self.recover.reached_by(ack.ack_seg) {
                    core.cc.cwnd = match self.full_ack {
                        FullAckWindow::FlightPlusOne => {
                            core.cc.ssthresh.min(core.flight_size().max(1) as f64 + 1.0)
                        }
                        FullAckWindow::Ssthresh => core.cc.ssthresh,
                    };
                    core.dupacks = 0;
                    self.in_recovery = false;
                    cc.on_recovery_exit(&mut core.cc, ack.now);
                    return Verdict::recovery(true);
                }
                core.force_retransmit = Some(core.snd_una);
                core.cc.cwnd -= ack.newly_acked as f64;
                core.cc.cwnd += 1.0;
                core.cc.cwnd = core.cc.cwnd.max(1.0);
                let first_partial = self.partial_acks == 0;
                self.partial_acks += 1;
                return Verdict::recovery(first_partial);
            }
            inflate_on_duplicate(core, ack);
            return Verdict::recovery(false);
        }
        // Step 2: only a loss in data sent after the last recovery or timeout.
        if !reaches_dupthresh(core, ack) || !self.recover.covered_by(ack.ack_seg) {
            return Verdict::open(ack);
        }
        self.recover.set(core.snd_max);
        enter_fast_recovery(core, cc, ack.now);
        self.in_recovery = true;
        self.partial_acks = 0;
        Verdict::entered()
    }

    fn on_timeout(&mut self, core: &mut SenderCore) {
        self.recover.set(core.snd_max);
        self.in_recovery = false;
    }

    fn next_segment(&mut self, core: &SenderCore) -> Option<Transmission> {
        fast_recovery_next_segment(core, self.in_recovery)
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn in_loss_episode(&self, core: &SenderCore) -> bool {
        !self.recover.reached_by(core.snd_una)
    }
}
