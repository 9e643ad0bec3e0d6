//! A constant-bit-rate UDP source, as ns-2's `Application/Traffic/CBR` over a
//! UDP agent: packets of a fixed size on the wire, evenly spaced so the wire
//! rate is exactly the configured rate, from `start` until `stop`. With on/off
//! periods the source sends for `on`, is silent for `off`, and repeats, each
//! on-period starting afresh at its first packet (ns-2's
//! `Application/Traffic/Exponential` with constant periods).
//!
//! Send times are computed from the packet's index within its on-period, in
//! integer nanoseconds, so rounding never accumulates into a rate error.

use super::UDP_IP_HEADER_BYTES;
use cclab_wire::time::NANOS_PER_SEC;
use cclab_wire::{
    BaseCounts, Counters, Endpoint, Header, MetricDesc, Metrics, Outbox, Packet, Time, UdpHeader, NEVER,
};

/// What a UDP source publishes: its offered load so far (a rate is the
/// difference between two samples over their interval).
pub const METRICS: &[MetricDesc] = &[
    MetricDesc { name: "packets_sent", unit: "packets", meaning: "datagrams sent so far" },
    MetricDesc { name: "bytes_sent", unit: "bytes", meaning: "wire bytes sent so far, headers included" },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbrConfig {
    /// Wire bit rate while on.
    pub rate_bps: u64,
    /// Bytes on the wire per packet, headers included.
    pub packet_bytes: u32,
    pub start: Time,
    pub stop: Option<Time>,
    /// On and off periods; without them the source is always on.
    pub on_off: Option<(Time, Time)>,
}

impl CbrConfig {
    /// Time from the start of an on-period to its `k`-th packet.
    fn offset(&self, k: u64) -> Time {
        let bits = self.packet_bytes as u128 * 8 * k as u128;
        (bits * NANOS_PER_SEC as u128 / self.rate_bps.max(1) as u128) as Time
    }
}

pub struct CbrSource {
    cfg: CbrConfig,
    /// Start of the current on-period and the index of its next packet.
    period_start: Time,
    index: u64,
    next_send: Time,
    seq: u64,
    counters: BaseCounts,
}

impl CbrSource {
    pub fn new(cfg: CbrConfig) -> Self {
        let mut source = Self {
            cfg,
            period_start: cfg.start,
            index: 0,
            next_send: cfg.start,
            seq: 0,
            counters: BaseCounts::default(),
        };
        source.next_send = source.schedule();
        source
    }

    /// The send time of packet `index` of the current period, moving to the
    /// next on-period when this one is over; NEVER after `stop`.
    fn schedule(&mut self) -> Time {
        loop {
            let at = self.period_start + self.cfg.offset(self.index);
            if let Some((on, off)) = self.cfg.on_off {
                if at >= self.period_start + on {
                    self.period_start += on + off;
                    self.index = 0;
                    continue;
                }
            }
            return if self.cfg.stop.is_some_and(|stop| at >= stop) { NEVER } else { at };
        }
    }

    pub fn packets_sent(&self) -> u64 {
        self.seq
    }
}

impl Endpoint for CbrSource {
    fn on_packet(&mut self, _now: Time, _packet: &Packet, _out: &mut Outbox) {
        self.counters.packets_received += 1;
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        while self.next_send <= now {
            let payload = self.cfg.packet_bytes.saturating_sub(UDP_IP_HEADER_BYTES);
            let header = UdpHeader { seq: self.seq, sent_at: self.next_send, payload };
            out.send(Packet::new(Header::Udp(header), self.cfg.packet_bytes));
            self.seq += 1;
            self.counters.packets_sent += 1;
            self.counters.bytes_sent += self.cfg.packet_bytes as u64;
            self.index += 1;
            self.next_send = self.schedule();
        }
    }

    fn next_wakeup(&self) -> Time {
        self.next_send
    }

    fn counters(&self) -> Counters {
        self.counters.counters()
    }

    fn is_closed(&self) -> bool {
        self.next_send == NEVER
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("packets_sent", self.counters.packets_sent as f64);
        out.put("bytes_sent", self.counters.bytes_sent as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::{millis, secs};

    /// Send times of every packet the source emits before `until`.
    fn send_times(cfg: CbrConfig, until: Time) -> Vec<Time> {
        let mut s = CbrSource::new(cfg);
        let mut times = Vec::new();
        while s.next_wakeup() < until {
            let now = s.next_wakeup();
            let mut out = Outbox::default();
            s.on_timer(now, &mut out);
            times.extend(out.packets.iter().filter_map(|p| p.udp()).map(|h| h.sent_at));
        }
        times
    }

    fn cbr(rate_bps: u64) -> CbrConfig {
        CbrConfig { rate_bps, packet_bytes: 1000, start: millis(5), stop: None, on_off: None }
    }

    #[test]
    fn packets_are_evenly_spaced_at_the_wire_rate() {
        // 8 Mbit/s of 1000-byte packets: one per millisecond, from the start.
        let times = send_times(cbr(8_000_000), millis(15));
        assert_eq!(times, (5..15).map(millis).collect::<Vec<_>>());
    }

    #[test]
    fn the_rate_does_not_drift_when_the_gap_is_not_a_whole_nanosecond() {
        // 3 Mbit/s: 2.666... ms per packet; after 3000 packets exactly 8 s have passed.
        let times = send_times(CbrConfig { start: 0, ..cbr(3_000_000) }, secs(8) + 1);
        assert_eq!(times.len(), 3001);
        assert_eq!(times[3000], secs(8));
    }

    #[test]
    fn on_off_periods_restart_each_burst_and_stop_ends_the_source() {
        let cfg =
            CbrConfig { on_off: Some((millis(3), millis(2))), stop: Some(millis(15)), ..cbr(8_000_000) };
        let times = send_times(cfg, secs(1));
        // On 5-8 ms, off 8-10, on 10-13, off 13-15, stop at 15.
        assert_eq!(times, [5, 6, 7, 10, 11, 12].map(millis));
        let mut s = CbrSource::new(cfg);
        s.on_timer(secs(1), &mut Outbox::default());
        assert!(s.is_closed());
        assert_eq!(s.packets_sent(), 6);
    }

    #[test]
    fn wire_size_includes_the_udp_and_ip_headers() {
        let mut s = CbrSource::new(cbr(8_000_000));
        let mut out = Outbox::default();
        s.on_timer(millis(5), &mut out);
        assert_eq!(out.packets[0].wire_bytes, 1000);
        assert_eq!(out.packets[0].udp().map(|h| h.payload), Some(972));
    }
}
