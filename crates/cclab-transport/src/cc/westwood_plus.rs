//! TCP Westwood+: Grieco and Mascolo, ACM CCR 34(2), 2004, and Linux
//! `net/ipv4/tcp_westwood.c` (torvalds/linux e5451c8f8330). Westwood's
//! response (cc/westwood.rs: Reno increase, ssthresh from BWE x RTTmin)
//! over the per-round-trip estimator [`crate::estimate::westwood_plus`]:
//! one sample per interval of at least max(RTT, 50 ms), two cascaded 7/8
//! filters. `response = "linux"` is the kernel's rule (halve at the loss,
//! cwnd = ssthresh = BWE x RTTmin when recovery ends).

use super::westwood::{BweResponse, METRICS, RESPONSE};
use super::{CcBuilder, CcDescriptor, CongestionControl, EcnUse};
use cclab_wire::{Descriptor, ParamError, Params, Role};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "westwood_plus",
    role: Role::CongestionControl,
    summary: "Westwood with one bandwidth sample per RTT (>= 50 ms) through two 7/8 filters",
    source: "Grieco and Mascolo, ACM CCR 34(2) 2004; Linux net/ipv4/tcp_westwood.c (commit e5451c8f8330)",
    parameters: &[RESPONSE],
    metrics: METRICS,
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    BweResponse::build("westwood_plus", p)
}

#[cfg(test)]
mod tests {
    use crate::cc::{AckSample, Window};
    use crate::registry::defaults;
    use cclab_wire::time::millis;

    /// Built by name, it estimates per round trip: 10 ACKs 1 ms apart per
    /// 100 ms (100 000 B/s) give bw_rttmin = 100 000 x 0.1 / 1000 = 10
    /// segments within 10 %.
    #[test]
    fn it_runs_the_per_rtt_estimator() {
        let mut cc = defaults::congestion_control("westwood_plus").unwrap();
        let mut w = Window { cwnd: 10.0, ssthresh: 5.0 };
        for r in 0..50u64 {
            for i in 0..10u64 {
                let mut a = AckSample::new(r * millis(100) + i * millis(1), 1000);
                a.acked = 1;
                a.rtt = Some(millis(100));
                a.min_rtt = millis(100);
                cc.on_ack(&mut w, &a);
            }
        }
        let mut log = cclab_wire::MetricLog::default();
        cc.metrics(&mut cclab_wire::Metrics::new(&mut log));
        let segments = log.get("bw_rttmin").unwrap();
        assert!((segments / 10.0 - 1.0).abs() < 0.1, "{segments}");
    }
}
