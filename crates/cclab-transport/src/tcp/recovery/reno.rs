//! Reno fast retransmit and fast recovery, RFC 5681 §3.2.
//!
//! 1-3. On the DupThresh-th duplicate ACK: ssthresh from congestion control
//!      (eq. 4: `max(FlightSize/2, 2)`), retransmit the first unacknowledged
//!      segment, cwnd = the reduced window (ssthresh for Reno) + 3, for the
//!      segments that left the network.
//! 4-5. Each further duplicate ACK inflates cwnd by one segment; send if allowed.
//! 6.   The first ACK of new data deflates cwnd to the reduced window and ends
//!      recovery, even when it is a partial ACK (which is why Reno often needs a
//!      timeout when several segments of one window are lost).

use super::{
    fast_recovery_entry, fast_recovery_next_segment, AckInfo, DupAcks, LossRecovery, Outcome,
    RecoveryBuilder, RecoveryDescriptor, Transmission,
};
use crate::tcp::sender::SenderState;
use cclab_wire::{Descriptor, ParamError, Params, Role};

pub const DESCRIPTOR: RecoveryDescriptor = Descriptor {
    name: "reno",
    role: Role::LossRecovery,
    summary: "fast retransmit and fast recovery with window inflation; any new ACK ends recovery",
    source: "RFC 5681 §3.2",
    parameters: &[],
    metrics: super::METRICS,
    build: RecoveryBuilder { build, uses_sack: false },
};

fn build(_: &Params) -> Result<Box<dyn LossRecovery>, ParamError> {
    Ok(Box::new(Reno::default()))
}

#[derive(Debug, Default)]
pub struct Reno {
    in_recovery: bool,
    dupacks: DupAcks,
    /// The window after the reduction: where deflation returns to.
    reduced: f64,
}

impl LossRecovery for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, s: &SenderState, ack: &AckInfo) -> Outcome {
        if !self.in_recovery {
            if self.dupacks.reaches_threshold(s, ack) {
                return Outcome::loss(false);
            }
            return Outcome::open(ack);
        }
        if ack.newly_acked == 0 {
            return self.dupacks.inflate(s, ack);
        }
        self.in_recovery = false;
        self.dupacks = DupAcks::default();
        Outcome { cwnd: Some(self.reduced), exited: true, restart_timer: true, ..Outcome::default() }
    }

    fn enter(&mut self, s: &SenderState, window: f64) -> Outcome {
        self.in_recovery = true;
        self.reduced = window;
        fast_recovery_entry(s, window)
    }

    fn on_rto(&mut self, _s: &SenderState) -> Outcome {
        self.in_recovery = false;
        self.dupacks = DupAcks::default();
        Outcome::default()
    }

    fn next_segment(&mut self, s: &SenderState) -> Option<Transmission> {
        fast_recovery_next_segment(s, self.in_recovery, self.dupacks)
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// Reno keeps no `recover`: its episode is its fast recovery.
    fn in_loss_episode(&self, _s: &SenderState) -> bool {
        self.in_recovery
    }
}
