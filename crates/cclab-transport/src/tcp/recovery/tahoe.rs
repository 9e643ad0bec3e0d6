//! TCP Tahoe (Jacobson 1988; RFC 5681 without fast recovery).
//!
//! On the DupThresh-th duplicate ACK: ssthresh from congestion control
//! (`max(FlightSize/2, 2)` for Reno), cwnd = 1 segment whatever the reduced
//! window (slow start is Tahoe's recovery), and go back to `snd_una`
//! (retransmit it and everything after it in slow start). As in ns-2's Tahoe
//! with its default `bug_fix_` (and RFC 6582's `recover` test), duplicate ACKs
//! that do not cover more than the data sent before the last fast retransmit or
//! timeout do not trigger another one: go-back-N's own duplicates would
//! otherwise cause one fast retransmit per lost segment.

use super::{
    limited_transmit_allowance, next_in_window, AckInfo, DupAcks, LossRecovery, Outcome, Recover,
    RecoveryBuilder, RecoveryDescriptor, Transmission,
};
use crate::tcp::sender::SenderState;
use cclab_wire::{Descriptor, ParamError, Params, Role};

pub const DESCRIPTOR: RecoveryDescriptor = Descriptor {
    name: "tahoe",
    role: Role::LossRecovery,
    summary: "fast retransmit then slow start from cwnd = 1 (go-back-N), no fast recovery",
    source: "Jacobson, SIGCOMM 1988; RFC 5681 without §3.2 fast recovery; ns-2 Tahoe with bug_fix_",
    parameters: &[],
    metrics: super::METRICS,
    build: RecoveryBuilder { build, uses_sack: false },
};

fn build(_: &Params) -> Result<Box<dyn LossRecovery>, ParamError> {
    Ok(Box::new(Tahoe::default()))
}

#[derive(Debug, Default)]
pub struct Tahoe {
    recover: Recover,
    dupacks: DupAcks,
}

impl LossRecovery for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }

    fn on_ack(&mut self, s: &SenderState, ack: &AckInfo) -> Outcome {
        if self.dupacks.reaches_threshold(s, ack) && self.recover.covered_by(ack.ack_seg) {
            return Outcome::loss(ack.newly_acked > 0);
        }
        Outcome::open(ack)
    }

    fn enter(&mut self, s: &SenderState, _window: f64) -> Outcome {
        self.recover.set(s.snd_max);
        Outcome { cwnd: Some(1.0), go_back: true, ..Outcome::default() }
    }

    fn on_rto(&mut self, s: &SenderState) -> Outcome {
        self.recover.set(s.snd_max);
        self.dupacks = DupAcks::default();
        Outcome::default()
    }

    fn next_segment(&mut self, s: &SenderState) -> Option<Transmission> {
        next_in_window(s, limited_transmit_allowance(s, self.dupacks), false)
    }

    fn in_recovery(&self) -> bool {
        false
    }

    fn in_loss_episode(&self, s: &SenderState) -> bool {
        !self.recover.reached_by(s.snd_una)
    }
}
