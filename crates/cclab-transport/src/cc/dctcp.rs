//! Data Center TCP: RFC 8257 §3.3-§3.5 (Bensley et al., October 2017), after
//! Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; constants as
//! Linux `net/ipv4/tcp_dctcp.c` (torvalds/linux v6.6).
//!
//! The sender estimates the fraction of its bytes that met congestion and
//! scales its window reduction by it:
//!
//! - Per ACK, the bytes newly acknowledged are added to `bytes_acked`, and
//!   the marked ones to `bytes_marked` (§3.3 steps 1-3): with RFC 3168
//!   feedback all of an ACK's bytes when it carries ECN-Echo; with AccECN
//!   the CE-marked payload bytes the receiver's count rose by, against the
//!   bytes newly delivered (cumulatively or by SACK), as Linux pairs
//!   `delivered_ce` with `delivered`.
//! - When the ACK covers the observation window's end (`snd_una >=
//!   window_end`, step 4), M = bytes_marked / bytes_acked (step 5), alpha =
//!   (1 - g) alpha + g M (step 6, g = 1/16 by default), the next window ends
//!   at SND.NXT (step 7) and the counts restart (step 8).
//! - An ACK that echoes a mark cuts the window once per window of data, as
//!   RFC 3168 (the sender enforces that): cwnd = ssthresh = cwnd (1 - alpha /
//!   2) (step 9), at least 2 segments (Linux `dctcp_ssthresh`).
//! - A loss is answered as standard TCP (§3.5): Reno's halving, and one
//!   segment after a timeout.
//! - The window grows as Reno's (slow start, then one segment per RTT, §3.4),
//!   not on ACKs that echo a mark (RFC 3168 §6.1.2, as every ECN flow here).
//!
//! alpha starts at 1 (`alpha_init`), as §3.3 initialises it and Linux's
//! `dctcp_alpha_on_init` does: the first marks halve the window, as classic
//! ECN would, until alpha has been measured.
//!
//! Where this departs from its sources, and why:
//! - Step 4 of §3.3 stops while the ACK is at or below `window_end`, so a
//!   window closes only when an ACK passes it; Linux (`!before(snd_una,
//!   next_seq)`) and ns-3's `TcpDctcp` close it when the ACK reaches it, and
//!   that is followed here (a difference of one segment's ACK per window).
//! - Linux and ns-3 count packets delivered, not bytes; with equal-size
//!   segments the fraction is the same.
//! - Linux reduces the window to ssthresh over the next round trip by
//!   proportional rate reduction; here it is set at once, as every reduction
//!   in this sender is.
//! - RFC 8257 §3.2's receiver rule (an immediate ACK when the CE state
//!   changes, so that delayed ACKs echo marks exactly) is not modelled: with
//!   classic feedback a delayed ACK over one marked and one unmarked segment
//!   counts both as marked. AccECN (the default for `cc = "dctcp"`) counts
//!   marked bytes exactly whatever the ACK pattern.

use super::reno::Reno;
use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, Response,
    Window,
};
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role,
};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "dctcp",
    role: Role::CongestionControl,
    summary:
        "Reno whose response to ECN marks is cwnd x (1 - alpha/2), alpha the EWMA of the marked fraction",
    source: "RFC 8257 §3.3-§3.5; Linux net/ipv4/tcp_dctcp.c (g = 1/16, alpha starts at 1)",
    parameters: &[
        Parameter {
            name: "g",
            ty: ParamType::Number,
            unit: "",
            min: 1e-6,
            max: 1.0,
            default: ParamDefault::Value("0.0625"),
            meaning: "the EWMA gain of alpha per observation window (1/16: the DCTCP paper, Linux)",
        },
        Parameter {
            name: "alpha_init",
            ty: ParamType::Number,
            unit: "",
            min: 0.0,
            max: 1.0,
            default: ParamDefault::Value("1"),
            meaning: "alpha before the first window is measured (RFC 8257 §3.3 and Linux: 1)",
        },
    ],
    metrics: &[
        MetricDesc { name: "alpha", unit: "", meaning: "the estimated fraction of bytes marked (EWMA)" },
        MetricDesc {
            name: "marked_fraction",
            unit: "",
            meaning: "M, the fraction marked in the last complete observation window",
        },
    ],
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Required },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Dctcp::new(p.number("g")?, p.number("alpha_init")?)))
}

#[derive(Debug)]
pub struct Dctcp {
    g: f64,
    alpha: f64,
    /// The observation window ends when SND.UNA reaches this segment.
    window_end: u64,
    bytes_acked: u64,
    bytes_marked: u64,
    /// M of the last complete window (a metric).
    marked_fraction: f64,
}

impl Dctcp {
    pub fn new(g: f64, alpha_init: f64) -> Self {
        Self { g, alpha: alpha_init, window_end: 0, bytes_acked: 0, bytes_marked: 0, marked_fraction: 0.0 }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// §3.3 steps 1-8 for one ACK.
    fn observe(&mut self, ack: &AckSample) {
        let mss = u64::from(ack.mss);
        let (acked, marked) = match ack.ce_bytes {
            Some(ce) => (ack.delivered * mss, ce),
            None => {
                let acked = ack.acked * mss;
                (acked, if ack.ece { acked } else { 0 })
            }
        };
        self.bytes_acked += acked;
        self.bytes_marked += marked;
        if ack.snd_una < self.window_end || self.bytes_acked == 0 {
            return;
        }
        // AccECN counts marked bytes by arrival, delivered ones by first
        // acknowledgment, so within one window they may differ a little.
        let m = (self.bytes_marked as f64 / self.bytes_acked as f64).min(1.0);
        self.alpha = (1.0 - self.g) * self.alpha + self.g * m;
        self.marked_fraction = m;
        self.window_end = ack.snd_max;
        self.bytes_acked = 0;
        self.bytes_marked = 0;
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.observe(ack);
        Reno.on_ack(w, ack);
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        if event.kind != EventKind::Mark {
            return Reno.on_congestion(w, event);
        }
        let cwnd = (w.cwnd * (1.0 - self.alpha / 2.0)).max(2.0);
        Response::Reduce { ssthresh: cwnd, cwnd }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("alpha", self.alpha);
        out.put("marked_fraction", self.marked_fraction);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{ack_of, ca, event};

    const G: f64 = 1.0 / 16.0;

    /// An ACK of `acked` 1000-byte segments, `marked` of them echoed as CE
    /// (AccECN), after which SND.UNA and SND.NXT are `una` and `nxt`.
    fn accurate(acked: u64, marked: u64, una: u64, nxt: u64) -> AckSample {
        let mut a = ack_of(acked);
        a.delivered = acked;
        a.ce_bytes = Some(marked * 1000);
        a.ece = marked > 0;
        (a.snd_una, a.snd_max) = (una, nxt);
        a
    }

    fn classic(acked: u64, ece: bool, una: u64, nxt: u64) -> AckSample {
        let mut a = ack_of(acked);
        a.ece = ece;
        (a.snd_una, a.snd_max) = (una, nxt);
        a
    }

    #[test]
    fn the_descriptor_defaults_are_linuxs_g_and_rfc_8257s_initial_alpha() {
        let d = &DESCRIPTOR.parameters;
        assert_eq!(d[0].default, ParamDefault::Value("0.0625"), "g = 1/16");
        assert_eq!(d[1].default, ParamDefault::Value("1"));
        assert_eq!(DESCRIPTOR.build.ecn, EcnUse::Required);
    }

    /// Steps 4-8: alpha moves once per observation window, by g toward M.
    #[test]
    fn alpha_is_updated_once_per_window_by_the_marked_fraction() {
        let mut d = Dctcp::new(G, 1.0);
        let mut w = ca(10.0);
        // The first window ends at SND.NXT = 0: the first ACK closes it.
        d.on_ack(&mut w, &accurate(4, 1, 4, 14));
        assert!((d.alpha() - ((1.0 - G) + G * 0.25)).abs() < 1e-12);
        let after_first = d.alpha();
        // Within the next window (ends at 14) alpha does not move.
        d.on_ack(&mut w, &accurate(5, 5, 9, 19));
        assert_eq!(d.alpha(), after_first);
        // The ACK reaching 14 closes it: M = (5 + 0) / (5 + 5).
        d.on_ack(&mut w, &accurate(5, 0, 14, 24));
        assert!((d.alpha() - ((1.0 - G) * after_first + G * 0.5)).abs() < 1e-12);
        assert_eq!(d.window_end, 24, "step 7: the next window ends at SND.NXT");
    }

    #[test]
    fn alpha_decays_geometrically_without_marks() {
        let mut d = Dctcp::new(G, 1.0);
        let mut w = ca(10.0);
        for round in 1..=20u64 {
            d.on_ack(&mut w, &accurate(10, 0, round * 10, round * 10 + 10));
        }
        assert!((d.alpha() - (1.0 - G).powi(20)).abs() < 1e-12);
    }

    #[test]
    fn with_every_byte_marked_alpha_stays_at_one_and_the_cut_is_a_half() {
        let mut d = Dctcp::new(G, 1.0);
        let mut w = ca(10.0);
        for round in 1..=5u64 {
            d.on_ack(&mut w, &accurate(10, 10, round * 10, round * 10 + 10));
        }
        assert!((d.alpha() - 1.0).abs() < 1e-12);
        let r = d.on_congestion(&ca(40.0), &event(EventKind::Mark, 40.0));
        assert_eq!(r, Response::Reduce { ssthresh: 20.0, cwnd: 20.0 });
    }

    /// Step 9: cwnd x (1 - alpha / 2), at least 2 segments (Linux dctcp_ssthresh).
    #[test]
    fn a_mark_cuts_the_window_by_alpha_over_two() {
        let mut d = Dctcp::new(G, 0.2);
        let r = d.on_congestion(&ca(100.0), &event(EventKind::Mark, 60.0));
        assert_eq!(r, Response::Reduce { ssthresh: 90.0, cwnd: 90.0 }, "from cwnd, not the flight");
        let mut d = Dctcp::new(G, 1.0);
        assert_eq!(
            d.on_congestion(&ca(3.0), &event(EventKind::Mark, 3.0)),
            Response::Reduce { ssthresh: 2.0, cwnd: 2.0 }
        );
    }

    /// §3.5: a loss halves the window as standard TCP, whatever alpha is.
    #[test]
    fn a_loss_or_timeout_is_answered_as_reno() {
        let mut d = Dctcp::new(G, 0.1);
        let loss = d.on_congestion(&ca(40.0), &event(EventKind::FastRetransmit, 40.0));
        assert_eq!(loss, Response::Reduce { ssthresh: 20.0, cwnd: 20.0 });
        let timeout = d.on_congestion(&ca(40.0), &event(EventKind::Timeout, 40.0));
        assert_eq!(timeout, Response::Reduce { ssthresh: 20.0, cwnd: 1.0 });
    }

    /// Steps 1-3 with RFC 3168 feedback: an ACK carrying ECN-Echo counts all
    /// the bytes it acknowledges as marked; SACKed bytes are not counted.
    #[test]
    fn classic_feedback_counts_the_bytes_of_echoing_acks() {
        let mut d = Dctcp::new(G, 0.0);
        let mut w = ca(10.0);
        d.window_end = 10;
        d.on_ack(&mut w, &classic(2, true, 2, 12));
        let mut sacked_only = classic(0, true, 2, 12);
        sacked_only.sacked = 3;
        sacked_only.delivered = 3;
        d.on_ack(&mut w, &sacked_only);
        d.on_ack(&mut w, &classic(6, false, 8, 12));
        assert_eq!((d.bytes_acked, d.bytes_marked), (8000, 2000));
        d.on_ack(&mut w, &classic(2, false, 10, 12));
        assert!((d.alpha() - G * 0.2).abs() < 1e-12, "M = 2000 / 10000");
    }

    #[test]
    fn the_window_grows_as_renos_but_not_on_marked_acks() {
        let mut d = Dctcp::new(G, 0.0);
        let mut w = Window { cwnd: 4.0, ssthresh: 100.0 };
        d.on_ack(&mut w, &accurate(1, 0, 1, 5));
        assert_eq!(w.cwnd, 5.0, "slow start");
        d.on_ack(&mut w, &accurate(1, 1, 2, 6));
        assert_eq!(w.cwnd, 5.0);
        let mut w = ca(10.0);
        d.on_ack(&mut w, &accurate(1, 0, 3, 13));
        assert!((w.cwnd - 10.1).abs() < 1e-12, "congestion avoidance");
    }
}
