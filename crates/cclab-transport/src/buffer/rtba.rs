//! Rate-based TCP Buffer Allocation (RTBA): seed paper 004 §3.2.
//!
//! Once per RTT the connection's expected rate comes from the Padhye model,
//! eq. (1) ([`padhye::expected_rate`], packets/s, times the segment size):
//! `R_now` from the loss rate `p`, the smoothed RTT, the RTO, the receiver's
//! window `W_m` (in segments) and `b` packets per ACK. It is smoothed by an
//! EWMA, eq. (2): `R = (1 - w) R + w R_now`, so the buffer does not swing
//! with each estimate; the buffer the rate needs is eq. (3): `S = R x RTT`;
//! and so that slow start, where the rate estimate lags the doubling window,
//! is not held back, the desire is eq. (4): `max(S, 2 x cwnd)`. When a host's
//! cap is short, it is shared in proportion to each connection's `R`
//! (`Sharing::Proportional`, §3.2 and Fig. 1), not max-min as in ATBT, which
//! the seed finds unfair to connections that need large buffers.
//!
//! Decisions where the sources are silent:
//! - **"Every RTT"**: an update when at least one smoothed RTT has passed
//!   since the last one, the first as soon as there is an RTT sample
//!   (`srtt > 0`). Between updates `R`, `p` and `S` are kept, but the
//!   `2 x cwnd` term of eq. (4) is evaluated on every call, so the desire
//!   follows a growing window between updates.
//! - **The first estimate initialises `R`** (`R = R_now`): an EWMA started
//!   from 0 would take many RTTs to reach the rate, under-sizing the buffer
//!   meanwhile.
//! - **Before the first update** the desire is `2 x cwnd`, eq. (4) without
//!   its `S` term.
//! - **`w`**: the paper gives no value; 0.125 (the weight TCP's own SRTT
//!   uses, RFC 6298) by default.
//! - **`b`**: 1, since our receivers acknowledge every segment unless delayed
//!   ACKs are on; set 2 for delayed ACKs.
//! - **`p`**, the loss-event rate, from the sender's counts of loss
//!   indications (fast recoveries plus timeouts) and data packets sent:
//!   `cumulative` (default) divides the totals since the start; `interval`
//!   divides the increments since the previous update, and keeps the
//!   previous `p` when no packet was sent in between. Both are 0 before any
//!   loss, and then the model gives `W_m / RTT`, so `S` is the receiver's
//!   window (`W_m x s / RTT x RTT`).
//! - **`W_m`** is the receiver's window in segments, `rwnd / mss`, not
//!   rounded; an `mss` of 0 counts as 1.
//! - **Share weight before the first update**: one window per RTO,
//!   `max(cwnd, mss) / RTO` (bytes/s; RTO 1 s before any sample, RFC 6298),
//!   a rate the connection surely reaches, rather than 0, which the host
//!   would serve last and might leave a new connection without any buffer to
//!   send the data that would give it an RTT sample.
//! - **`min`**: the desire is never below it (4 KB by default), as ATBT's.
//! - **Whole bytes**: `S` is rounded to the nearest byte in the desire, so
//!   `W_m x s / RTT x RTT` gives back exactly the receiver's window.
//! - **Metrics** are 0 until the first update, like other algorithms' unset
//!   estimates.

use super::{padhye, BufferInputs, SendBufferDescriptor, SendBufferPolicy, Sharing};
use cclab_wire::time::to_secs_f64;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: SendBufferDescriptor = Descriptor {
    name: "rtba",
    role: Role::SendBuffer,
    summary: "desire max(R x RTT, 2 cwnd), R the EWMA of Padhye's expected rate; a host cap is shared in proportion to R",
    source: "seed paper 004 §3.2 eq. (1)-(4) and Fig. 1; Padhye et al., SIGCOMM 1998 (reference §10.2)",
    parameters: &[
        Parameter {
            name: "w",
            ty: ParamType::Number,
            unit: "",
            min: 1e-6,
            max: 1.0,
            default: ParamDefault::Value("0.125"),
            meaning: "EWMA weight of the newest rate estimate, eq. (2) (the paper gives no value)",
        },
        Parameter {
            name: "b",
            ty: ParamType::Number,
            unit: "packets",
            min: 1.0,
            max: 8.0,
            default: ParamDefault::Value("1"),
            meaning: "packets acknowledged per ACK in the model (2 with delayed ACKs)",
        },
        Parameter {
            name: "loss_rate",
            ty: ParamType::Choice(&["cumulative", "interval"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("cumulative"),
            meaning: "p: loss events per packet since the start, or since the previous update",
        },
        super::MIN_BUFFER,
    ],
    metrics: &[
        MetricDesc { name: "expected_rate", unit: "bytes/s", meaning: "R, the smoothed expected rate, eq. (2)" },
        MetricDesc { name: "loss_rate", unit: "", meaning: "p, the loss-event rate of the latest update" },
        MetricDesc { name: "target", unit: "bytes", meaning: "S = R x RTT, eq. (3)" },
    ],
    build,
};

fn build(params: &Params) -> Result<Box<dyn SendBufferPolicy>, ParamError> {
    let loss_rate = match params.choice("loss_rate")? {
        "cumulative" => LossRate::Cumulative,
        "interval" => LossRate::Interval,
        _ => return Err(ParamError { name: "loss_rate".into(), problem: "is not cumulative or interval" }),
    };
    Ok(Box::new(Rtba::new(params.number("w")?, params.number("b")?, loss_rate, params.size("min")?)))
}

/// How `p` is estimated from the sender's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossRate {
    /// Loss events over packets sent, since the start.
    Cumulative,
    /// Loss events over packets sent, since the previous update.
    Interval,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rtba {
    w: f64,
    b: f64,
    loss_rate: LossRate,
    min: u64,
    /// Eq. (2)'s R in bytes/s; `None` before the first update.
    rate: Option<f64>,
    /// `p` of the latest update.
    p: f64,
    /// Eq. (3)'s S in bytes, from the latest update.
    target: f64,
    last_update: Option<Time>,
    /// `(packets_sent, loss_events)` at the latest update.
    counted: (u64, u64),
    /// The share weight until there is a rate: one window per RTO.
    provisional_weight: f64,
}

impl Rtba {
    pub fn new(w: f64, b: f64, loss_rate: LossRate, min: u64) -> Self {
        Self {
            w,
            b,
            loss_rate,
            min,
            rate: None,
            p: 0.0,
            target: 0.0,
            last_update: None,
            counted: (0, 0),
            provisional_weight: 0.0,
        }
    }

    fn due(&self, now: Time, srtt: Time) -> bool {
        srtt > 0 && self.last_update.is_none_or(|last| now.saturating_sub(last) >= srtt)
    }

    fn estimate_loss_rate(&mut self, inputs: &BufferInputs) {
        let (sent, lost) = match self.loss_rate {
            LossRate::Cumulative => (inputs.packets_sent, inputs.loss_events),
            LossRate::Interval => (
                inputs.packets_sent.saturating_sub(self.counted.0),
                inputs.loss_events.saturating_sub(self.counted.1),
            ),
        };
        if sent > 0 {
            self.p = (lost as f64 / sent as f64).min(1.0);
        }
        self.counted = (inputs.packets_sent, inputs.loss_events);
    }

    /// Eq. (1)-(3), once per RTT.
    fn update(&mut self, now: Time, inputs: &BufferInputs) {
        self.estimate_loss_rate(inputs);
        let mss = f64::from(inputs.mss.max(1));
        let srtt = to_secs_f64(inputs.srtt);
        let wm_segments = inputs.rwnd_bytes as f64 / mss;
        let now_rate =
            padhye::expected_rate(self.p, srtt, to_secs_f64(inputs.rto), wm_segments, self.b) * mss;
        let rate = match self.rate {
            None => now_rate,
            Some(rate) => (1.0 - self.w) * rate + self.w * now_rate,
        };
        self.rate = Some(rate);
        self.target = rate * srtt;
        self.last_update = Some(now);
    }
}

impl SendBufferPolicy for Rtba {
    fn name(&self) -> &'static str {
        "rtba"
    }

    fn desire(&mut self, now: Time, inputs: &BufferInputs) -> u64 {
        if self.due(now, inputs.srtt) {
            self.update(now, inputs);
        }
        let rto = if inputs.rto > 0 { to_secs_f64(inputs.rto) } else { 1.0 };
        self.provisional_weight = inputs.cwnd_bytes.max(u64::from(inputs.mss)) as f64 / rto;
        // Eq. (4); before the first update the target is 0, leaving 2 x cwnd.
        (self.target.round() as u64).max(inputs.cwnd_bytes.saturating_mul(2)).max(self.min)
    }

    fn share_weight(&self) -> f64 {
        self.rate.unwrap_or(self.provisional_weight)
    }

    fn sharing(&self) -> Sharing {
        Sharing::Proportional
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("expected_rate", self.rate.unwrap_or(0.0));
        out.put("loss_rate", self.p);
        out.put("target", self.target);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::defaults;
    use cclab_wire::time::{millis, secs};
    use cclab_wire::MetricLog;

    const MSS: u32 = 1000;

    /// RTT 100 ms, RTO 1 s, a receiver window of 1,000 segments, cwnd 10 segments.
    fn inputs(packets_sent: u64, loss_events: u64) -> BufferInputs {
        BufferInputs {
            mss: MSS,
            cwnd_bytes: 10_000,
            srtt: millis(100),
            rto: secs(1),
            rwnd_bytes: 1_000_000,
            packets_sent,
            loss_events,
        }
    }

    fn rtba(w: f64, loss_rate: LossRate) -> Rtba {
        Rtba::new(w, 1.0, loss_rate, 4000)
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs().max(1.0)
    }

    /// Eq. (1) at p = 1e-2, b = 1, RTT 0.1 s, T0 1 s: 99.92 pkt/s (reference table).
    fn model_rate(p: f64) -> f64 {
        padhye::expected_rate(p, 0.1, 1.0, 1000.0, 1.0) * f64::from(MSS)
    }

    #[test]
    fn first_update_initialises_the_rate_then_eq_2_smooths_it() {
        let mut r = rtba(0.25, LossRate::Interval);
        // p = 1/100 over the first 100 packets.
        r.desire(millis(100), &inputs(100, 1));
        let first = model_rate(0.01);
        assert!(close(r.share_weight(), first));
        // Next RTT: 0 losses in 100 packets: R_now = W_m / RTT = 1,000 x 1,000 B / 0.1 s = 1e7 B/s.
        r.desire(millis(200), &inputs(200, 1));
        let second = 0.75 * first + 0.25 * 1e7;
        assert!(close(r.share_weight(), second), "{} vs {second}", r.share_weight());
        // Then p = 4/100: R = 0.75 R + 0.25 R_now(0.04).
        r.desire(millis(300), &inputs(300, 5));
        let third = 0.75 * second + 0.25 * model_rate(0.04);
        assert!(close(r.share_weight(), third));
        // Eq. (3): S = R x RTT.
        assert!(close(r.target, third * 0.1));
    }

    #[test]
    fn updates_once_per_rtt() {
        let mut r = rtba(0.5, LossRate::Cumulative);
        // No RTT sample: no update, and the desire is 2 x cwnd.
        let unsampled = BufferInputs { srtt: 0, ..inputs(10, 0) };
        assert_eq!(r.desire(millis(50), &unsampled), 20_000);
        assert_eq!(r.rate, None);
        // The first sample updates at once.
        r.desire(millis(60), &inputs(100, 1));
        assert_eq!(r.last_update, Some(millis(60)));
        let after_first = r.rate;
        // Less than one srtt later: the estimate is kept though p changed.
        r.desire(millis(159), &inputs(200, 20));
        assert_eq!((r.rate, r.last_update), (after_first, Some(millis(60))));
        // One srtt later: an update.
        r.desire(millis(160), &inputs(200, 20));
        assert_eq!(r.last_update, Some(millis(160)));
        assert_ne!(r.rate, after_first);
        assert!(close(r.p, 0.1));
    }

    #[test]
    fn desire_is_the_larger_of_the_target_and_twice_cwnd() {
        let mut r = rtba(1.0, LossRate::Cumulative);
        // p = 1e-2: S = 99,920 B/s x 0.1 s = 9,992 B, below 2 x cwnd = 20,000.
        assert_eq!(r.desire(millis(100), &inputs(100, 1)), 20_000);
        assert!(close(r.target, model_rate(0.01) * 0.1));
        assert!((r.target - 9_992.0).abs() < 10.0);
        // The cwnd term is live between updates: 2 x 40,000.
        let grown = BufferInputs { cwnd_bytes: 40_000, ..inputs(150, 1) };
        assert_eq!(r.desire(millis(150), &grown), 80_000);
        // No loss at the next update: S = the receiver's window, 1,000,000 B, above 2 x cwnd.
        assert_eq!(r.desire(millis(200), &inputs(100_000, 0)), 1_000_000);
        // The floor.
        let tiny = BufferInputs { cwnd_bytes: 1000, rwnd_bytes: 10_000, ..inputs(0, 0) };
        assert_eq!(rtba(1.0, LossRate::Cumulative).desire(millis(100), &tiny), 10_000);
        let tinier = BufferInputs { rwnd_bytes: 1000, ..tiny };
        assert_eq!(rtba(1.0, LossRate::Cumulative).desire(millis(100), &tinier), 4_000);
    }

    #[test]
    fn without_loss_the_target_is_the_receiver_window() {
        // p = 0: R = W_m x s / RTT, S = R x RTT = rwnd (up to float rounding).
        for rwnd in [65_535, 1_000_000, 12_345_678] {
            let mut r = rtba(0.125, LossRate::Cumulative);
            let lossless = BufferInputs { rwnd_bytes: rwnd, ..inputs(500, 0) };
            r.desire(millis(100), &lossless);
            assert!(close(r.target, rwnd as f64), "{rwnd}: {}", r.target);
        }
    }

    #[test]
    fn loss_rate_estimators() {
        // Cumulative: totals since the start.
        let mut c = rtba(1.0, LossRate::Cumulative);
        c.desire(millis(100), &inputs(100, 2));
        assert!(close(c.p, 0.02));
        c.desire(millis(200), &inputs(400, 2));
        assert!(close(c.p, 0.005));
        // Interval: the increments since the previous update.
        let mut i = rtba(1.0, LossRate::Interval);
        i.desire(millis(100), &inputs(100, 2));
        assert!(close(i.p, 0.02));
        i.desire(millis(200), &inputs(400, 5));
        assert!(close(i.p, 0.01)); // 3 / 300
                                   // Nothing sent in the interval: the previous p is kept.
        i.desire(millis(300), &inputs(400, 5));
        assert!(close(i.p, 0.01));
        // More loss indications than packets (timeouts with nothing new sent): at most 1.
        i.desire(millis(400), &inputs(401, 8));
        assert_eq!(i.p, 1.0);
        // Before any packet, p is 0 with either estimator.
        let mut idle = rtba(1.0, LossRate::Cumulative);
        idle.desire(millis(100), &inputs(0, 0));
        assert_eq!(idle.p, 0.0);
    }

    #[test]
    fn share_weight_is_the_rate_or_a_window_per_rto() {
        let mut r = rtba(1.0, LossRate::Cumulative);
        assert_eq!(r.sharing(), Sharing::Proportional);
        // Before a sample: 10,000 B per 1 s RTO.
        r.desire(0, &BufferInputs { srtt: 0, ..inputs(0, 0) });
        assert_eq!(r.share_weight(), 10_000.0);
        r.desire(millis(100), &inputs(100, 1));
        assert!(close(r.share_weight(), model_rate(0.01)));
    }

    #[test]
    fn publishes_its_descriptor_metrics() {
        let mut r = rtba(1.0, LossRate::Cumulative);
        r.desire(millis(100), &inputs(100, 1));
        let mut log = MetricLog::default();
        r.metrics(&mut Metrics::new(&mut log));
        let names: Vec<&str> = log.0.iter().map(|(n, _)| n.as_str()).collect();
        let listed: Vec<&str> = DESCRIPTOR.metrics.iter().map(|m| m.name).collect();
        assert_eq!(names, listed);
        assert_eq!(log.get("loss_rate"), Some(0.01));
        assert!(close(log.get("expected_rate").unwrap_or(0.0), model_rate(0.01)));
    }

    #[test]
    fn builds_at_its_defaults() {
        let mut r = defaults::send_buffer_policy("rtba").expect("rtba builds at its defaults");
        assert_eq!(r.desire(0, &BufferInputs { srtt: 0, ..inputs(0, 0) }), 20_000);
        assert_eq!(r.sharing(), Sharing::Proportional);
    }
}
