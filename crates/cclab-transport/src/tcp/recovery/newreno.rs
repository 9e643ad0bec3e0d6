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
//!   (option 1, the default) or ssthresh (option 2); recovery ends (step 5). Here
//!   "ssthresh" is the window congestion control reduced to (ssthresh itself for Reno).
//! - Partial ACK: retransmit the first unacknowledged segment, deflate cwnd by the
//!   amount acknowledged, add back one segment if at least one was acknowledged,
//!   stay in recovery; restart the timer on the first partial ACK only
//!   ("Impatient" variant, RFC 6582 §4).
//! - Timeout: `recover = HighData`, recovery ends.

use super::{
    fast_recovery_entry, fast_recovery_next_segment, AckInfo, DupAcks, LossRecovery, Outcome, Recover,
    RecoveryBuilder, RecoveryDescriptor, Transmission,
};
use crate::tcp::sender::SenderState;
use cclab_wire::{Descriptor, ParamDefault, ParamError, ParamType, Parameter, Params, Role};

pub const DESCRIPTOR: RecoveryDescriptor = Descriptor {
    name: "newreno",
    role: Role::LossRecovery,
    summary: "fast recovery that stays until `recover` is acknowledged, retransmitting on partial ACKs",
    source: "RFC 6582 §3.2 (Impatient timer, §4)",
    parameters: &[Parameter {
        name: "full_ack",
        ty: ParamType::Choice(&["flight", "ssthresh"]),
        unit: "",
        min: 0.0,
        max: 0.0,
        default: ParamDefault::Value("flight"),
        meaning:
            "cwnd on the full ACK: min(ssthresh, max(FlightSize, 1) + 1) (RFC 6582 option 1) or ssthresh \
                  (option 2)",
    }],
    metrics: super::METRICS,
    build: RecoveryBuilder { build, uses_sack: false },
};

fn build(params: &Params) -> Result<Box<dyn LossRecovery>, ParamError> {
    let full_ack = match params.choice("full_ack")? {
        "ssthresh" => FullAckWindow::Ssthresh,
        "flight" => FullAckWindow::FlightPlusOne,
        _ => {
            return Err(ParamError {
                name: "full_ack".into(),
                problem: "is not a choice the descriptor lists",
            })
        }
    };
    Ok(Box::new(NewReno { full_ack, ..NewReno::default() }))
}

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
    dupacks: DupAcks,
    /// The window after the reduction (ssthresh under Reno congestion control).
    reduced: f64,
}

impl LossRecovery for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, s: &SenderState, ack: &AckInfo) -> Outcome {
        if !self.in_recovery {
            // Step 2: only a loss in data sent after the last recovery or timeout.
            if self.dupacks.reaches_threshold(s, ack) && self.recover.covered_by(ack.ack_seg) {
                return Outcome::loss(false);
            }
            return Outcome::open(ack);
        }
        if ack.newly_acked == 0 {
            return self.dupacks.inflate(s, ack);
        }
        if self.recover.reached_by(ack.ack_seg) {
            let cwnd = match self.full_ack {
                FullAckWindow::FlightPlusOne => self.reduced.min(s.flight_size().max(1) as f64 + 1.0),
                FullAckWindow::Ssthresh => self.reduced,
            };
            self.dupacks = DupAcks::default();
            self.in_recovery = false;
            return Outcome { cwnd: Some(cwnd), exited: true, restart_timer: true, ..Outcome::default() };
        }
        // Partial ACK: deflate by what was acknowledged, add back one segment.
        let cwnd = (s.window.cwnd - ack.newly_acked as f64 + 1.0).max(1.0);
        let first_partial = self.partial_acks == 0;
        self.partial_acks += 1;
        Outcome {
            cwnd: Some(cwnd),
            retransmit: Some(s.snd_una),
            restart_timer: first_partial,
            ..Outcome::default()
        }
    }

    fn enter(&mut self, s: &SenderState, window: f64) -> Outcome {
        self.recover.set(s.snd_max);
        self.in_recovery = true;
        self.partial_acks = 0;
        self.reduced = window;
        fast_recovery_entry(s, window)
    }

    fn on_rto(&mut self, s: &SenderState) -> Outcome {
        self.recover.set(s.snd_max);
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

    fn in_loss_episode(&self, s: &SenderState) -> bool {
        !self.recover.reached_by(s.snd_una)
    }
}
