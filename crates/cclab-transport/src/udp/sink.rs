//! A UDP sink: counts packets and payload received, packets lost (sequence
//! numbers skipped: links are FIFO, so a gap is a loss, never a reordering),
//! and the one-way delay of each packet from its send time.

use cclab_wire::{Counters, Endpoint, Measure, Outbox, Packet, Time, NEVER};

#[derive(Default)]
pub struct UdpSink {
    next_expected: u64,
    lost: u64,
    delay_sum: Time,
    counters: Counters,
}

impl UdpSink {
    pub fn new() -> Self {
        Self::default()
    }

    /// Packets lost so far: those skipped by a later arrival.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

impl Endpoint for UdpSink {
    fn on_packet(&mut self, now: Time, packet: &Packet, _out: &mut Outbox) {
        let Some(h) = packet.udp() else { return };
        self.counters.packets_received += 1;
        self.counters.bytes_delivered += h.payload as u64;
        self.delay_sum += now.saturating_sub(h.sent_at);
        if h.seq >= self.next_expected {
            self.lost += h.seq - self.next_expected;
            self.next_expected = h.seq + 1;
        }
    }

    fn on_timer(&mut self, _now: Time, _out: &mut Outbox) {}

    fn next_wakeup(&self) -> Time {
        NEVER
    }

    fn counters(&self) -> Counters {
        let mut c = self.counters;
        c.extra.set("packets_lost", Measure::Count(self.lost));
        c.extra
            .set("delay_mean_s", Measure::MeanSeconds { sum: self.delay_sum, samples: c.packets_received });
        c
    }

    /// A sink has nothing to do on its own; it closes with its source.
    fn is_closed(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::{Header, UdpHeader};

    fn datagram(seq: u64, sent_at: Time) -> Packet {
        Packet::new(Header::Udp(UdpHeader { seq, sent_at, payload: 972 }), 1000)
    }

    #[test]
    fn gaps_count_as_losses_and_delay_is_averaged() {
        let mut sink = UdpSink::new();
        for (seq, sent, now) in [(0, 0, 10), (1, 5, 15), (4, 20, 50)] {
            sink.on_packet(now, &datagram(seq, sent), &mut Outbox::default());
        }
        let c = sink.counters();
        assert_eq!(c.packets_received, 3);
        assert_eq!(c.bytes_delivered, 3 * 972);
        assert_eq!(c.extra.count("packets_lost"), 2, "2 and 3 are missing");
        assert_eq!(c.extra.get("delay_mean_s"), Some(Measure::MeanSeconds { sum: 50, samples: 3 }));
    }
}
