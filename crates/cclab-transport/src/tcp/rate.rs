//! Delivery-rate estimation, after draft-cheng-iccrg-delivery-rate-estimation
//! (Cheng, Cardwell, Hassas Yeganeh, Jacobson) and Linux `net/ipv4/tcp_rate.c`.
//!
//! Each transmission records a snapshot of the connection's delivery state
//! ([`TxSnapshot`]: bytes delivered so far, when the last delivery happened,
//! when the current flight began, whether the application was limiting). When
//! an ACK delivers segments (cumulatively or by SACK), the newest of them
//! defines the sample: the bytes delivered since its transmission, over the
//! longer of the send interval and the ACK interval, so that neither ACK
//! compression nor bursts inflate the rate (draft §3.3). Samples over an
//! interval shorter than the minimum RTT are discarded, as the draft and Linux
//! do. The same state yields packet-timed round trips (a round starts when a
//! segment sent after the previous round's start is delivered), which BBR counts.
//!
//! A segment is delivered once: SACKing it consumes its snapshot, so its
//! later cumulative acknowledgment is not counted again.

use cclab_wire::Time;

/// Delivery state when a segment was (re)transmitted: the draft's `P.*` fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxSnapshot {
    /// Bytes delivered when the segment was sent.
    pub delivered: u64,
    /// When those bytes had been delivered.
    pub delivered_time: Time,
    /// Send time of the first segment of the flight this one belongs to.
    pub first_sent_time: Time,
    pub sent_time: Time,
    /// The application had nothing more to send at the time.
    pub app_limited: bool,
    /// Not yet delivered (SACKed or acknowledged).
    pub pending: bool,
    /// Segments the connection had marked lost when the segment was sent (the
    /// draft's `P.lost`, Linux `tx.lost`).
    pub lost: u64,
    /// Segments in flight once the segment was sent, itself included (the
    /// draft's `P.tx_in_flight`, Linux `tx.in_flight`); 32 bits, as Linux keeps it.
    pub in_flight: u32,
    /// A retransmission of a segment not yet delivered (Linux
    /// `TCPCB_SACKED_RETRANS`): counted in flight until delivered or sent again.
    pub retransmitted: bool,
}

impl TxSnapshot {
    /// A segment sent without delivery-rate tracking (nothing to deliver).
    pub const NONE: TxSnapshot = TxSnapshot {
        delivered: 0,
        delivered_time: 0,
        first_sent_time: 0,
        sent_time: 0,
        app_limited: false,
        pending: false,
        lost: 0,
        in_flight: 0,
        retransmitted: false,
    };
}

/// One delivery-rate sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over the interval.
    pub delivered: u64,
    pub interval: Time,
    /// Bytes delivered before the newest segment this ACK delivered was sent.
    pub prior_delivered: u64,
    /// The sample may understate the path's rate: the application was not sending enough.
    pub app_limited: bool,
    /// Segments marked lost between the newest delivered segment's
    /// transmission and this ACK (the draft's `RS.lost`, Linux `rs->lost`).
    pub lost: u64,
    /// Segments in flight when that segment was sent, itself included (`RS.tx_in_flight`).
    pub tx_in_flight: u64,
}

impl RateSample {
    pub fn bytes_per_second(&self) -> f64 {
        self.delivered as f64 / cclab_wire::time::to_secs_f64(self.interval)
    }
}

/// The newest delivered segment seen while processing one ACK.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    prior_delivered: u64,
    sent_time: Time,
    send_elapsed: Time,
    ack_elapsed: Time,
    app_limited: bool,
    lost: u64,
    in_flight: u32,
}

/// The connection's delivery state: the draft's `C.*` fields.
#[derive(Clone, Debug)]
pub struct DeliveryRate {
    /// Rate samples and round trips are measured; otherwise only deliveries are counted.
    sampling: bool,
    delivered: u64,
    /// Segments delivered so far, each transmission at most once.
    delivered_segments: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Non-zero while application-limited: the `delivered` count at which the bubble is gone.
    app_limited_until: u64,
    next_round_delivered: u64,
    rounds: u64,
    /// Segments marked lost so far (the draft's `C.lost`, Linux `tp->lost`).
    lost: u64,
    /// Retransmissions sent and not yet delivered (Linux `retrans_out`), while sampling.
    retrans_out: u64,
    candidate: Option<Candidate>,
}

impl Default for DeliveryRate {
    fn default() -> Self {
        Self::new(true)
    }
}

impl DeliveryRate {
    /// A sampler that measures rate samples and round trips if `sampling`;
    /// without, it only counts what is delivered (each transmission once).
    pub fn new(sampling: bool) -> Self {
        Self {
            sampling,
            delivered: 0,
            delivered_segments: 0,
            delivered_time: 0,
            first_sent_time: 0,
            app_limited_until: 0,
            next_round_delivered: 0,
            rounds: 0,
            lost: 0,
            retrans_out: 0,
            candidate: None,
        }
    }

    /// Measures rate samples and round trips from now on.
    pub fn start_sampling(&mut self) {
        self.sampling = true;
    }

    /// Bytes delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Segments delivered so far: a transmission counts once, when it is
    /// first SACKed or acknowledged.
    pub fn delivered_segments(&self) -> u64 {
        self.delivered_segments
    }

    /// Packet-timed round trips completed.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Rate samples and round trips are measured.
    pub fn sampling(&self) -> bool {
        self.sampling
    }

    /// Segments marked lost so far.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// The sender marked `segments` more segments lost.
    pub fn on_lost(&mut self, segments: u64) {
        self.lost += segments;
    }

    /// Segments whose latest transmission is a retransmission not yet
    /// delivered; a retransmission lost again counts until the segment is
    /// sent again or acknowledged.
    pub fn retrans_out(&self) -> u64 {
        self.retrans_out
    }

    /// The segment that `old` describes is being sent again: a retransmission
    /// it held stops counting (the new transmission counts if it is one).
    pub fn on_replaced(&mut self, old: &TxSnapshot) {
        if old.pending && old.retransmitted {
            self.retrans_out = self.retrans_out.saturating_sub(1);
        }
    }

    /// A segment is being (re)transmitted; `flight_empty` if nothing else is
    /// outstanding; `in_flight` segments are in flight with it.
    pub fn on_send(
        &mut self,
        now: Time,
        flight_empty: bool,
        in_flight: u64,
        retransmission: bool,
    ) -> TxSnapshot {
        if flight_empty {
            // A new flight starts: neither its send nor its ACK interval may
            // reach back into the idle time before it.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        if !self.sampling {
            // Counting what is delivered needs only the pending flag; a
            // scoreboard keeps no snapshot ring for a sender that sends no more.
            return TxSnapshot { pending: true, ..TxSnapshot::NONE };
        }
        self.retrans_out += u64::from(retransmission);
        TxSnapshot {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            app_limited: self.app_limited_until != 0,
            pending: true,
            lost: self.lost,
            in_flight: in_flight.min(u32::MAX as u64) as u32,
            retransmitted: retransmission,
        }
    }

    /// A segment of `bytes` was delivered (draft `UpdateRateSample`); nothing
    /// if this transmission of it had been delivered before.
    pub fn on_delivered(&mut self, now: Time, tx: &mut TxSnapshot, bytes: u64) {
        if !tx.pending {
            return;
        }
        tx.pending = false;
        if tx.retransmitted {
            self.retrans_out = self.retrans_out.saturating_sub(1);
        }
        self.delivered += bytes;
        self.delivered_segments += 1;
        self.delivered_time = now;
        if !self.sampling {
            return;
        }
        let newer =
            self.candidate.is_none_or(|c| tx.sent_time > c.sent_time || tx.delivered > c.prior_delivered);
        if newer {
            self.candidate = Some(Candidate {
                prior_delivered: tx.delivered,
                sent_time: tx.sent_time,
                send_elapsed: tx.sent_time.saturating_sub(tx.first_sent_time),
                ack_elapsed: now.saturating_sub(tx.delivered_time),
                app_limited: tx.app_limited,
                lost: tx.lost,
                in_flight: tx.in_flight,
            });
            self.first_sent_time = tx.sent_time;
        }
    }

    /// Ends the processing of one ACK (draft `GenerateRateSample`): the sample,
    /// if this ACK delivered anything over an interval of at least `min_rtt`,
    /// and whether a new round trip starts.
    pub fn finish_ack(&mut self, min_rtt: Time) -> (Option<RateSample>, bool) {
        if !self.sampling {
            return (None, false);
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let Some(c) = self.candidate.take() else { return (None, false) };
        let round_start = c.prior_delivered >= self.next_round_delivered;
        if round_start {
            self.next_round_delivered = self.delivered;
            self.rounds += 1;
        }
        let interval = c.send_elapsed.max(c.ack_elapsed);
        let delivered = self.delivered - c.prior_delivered;
        if interval == 0 || interval < min_rtt {
            return (None, round_start);
        }
        (
            Some(RateSample {
                delivered,
                interval,
                prior_delivered: c.prior_delivered,
                app_limited: c.app_limited,
                lost: self.lost.saturating_sub(c.lost),
                tx_in_flight: c.in_flight as u64,
            }),
            round_start,
        )
    }

    /// The application has nothing more to send while the window has room
    /// (draft `CheckIfApplicationLimited`): samples until the bytes now in
    /// flight are delivered are marked application-limited.
    pub fn on_app_limited(&mut self, in_flight_bytes: u64) {
        self.app_limited_until = (self.delivered + in_flight_bytes).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::millis;

    const SEG: u64 = 1000;

    #[test]
    fn a_paced_flight_delivers_at_its_ack_rate() {
        // Ten segments sent 1 ms apart into an empty pipe; ACKs return 1 ms apart
        // after 50 ms: 1000 B/ms = 1 MB/s.
        let mut r = DeliveryRate::default();
        let mut sent: Vec<TxSnapshot> = (0..10).map(|i| r.on_send(millis(i), i == 0, 1, false)).collect();
        let mut last = None;
        for (i, tx) in sent.iter_mut().enumerate() {
            r.on_delivered(millis(50 + i as u64), tx, SEG);
            last = r.finish_ack(millis(40)).0.or(last);
        }
        let s = last.unwrap_or(RateSample {
            delivered: 0,
            interval: 1,
            prior_delivered: 0,
            app_limited: false,
            lost: 0,
            tx_in_flight: 0,
        });
        // The last ACK: 10 segments since segment 0's delivery state (delivered 0 at t = 0),
        // send interval 9 ms, ACK interval 59 ms: the longer one wins.
        assert_eq!(s.delivered, 10 * SEG);
        assert_eq!(s.interval, millis(59));
    }

    #[test]
    fn the_sample_takes_the_longer_of_the_send_and_ack_intervals() {
        // Five segments leave together at t = 0 and are ACKed 2 ms apart from t = 100 ms.
        let mut r = DeliveryRate::default();
        let mut first: Vec<TxSnapshot> = (0..5).map(|i| r.on_send(0, i == 0, 1, false)).collect();
        for (i, tx) in first.iter_mut().enumerate() {
            r.on_delivered(millis(100 + 2 * i as u64), tx, SEG);
            r.finish_ack(0);
        }
        // A segment sent at 108 ms carries that state: delivered at 108 ms, and a
        // flight whose newest delivered segment was sent at 0.
        let mut next = r.on_send(millis(108), false, 1, false);
        r.on_delivered(millis(208), &mut next, SEG);
        let (s, _) = r.finish_ack(millis(50));
        let s = s.unwrap_or(RateSample {
            delivered: 0,
            interval: 1,
            prior_delivered: 0,
            app_limited: false,
            lost: 0,
            tx_in_flight: 0,
        });
        assert_eq!(s.delivered, SEG);
        // Send interval 108 - 0 ms beats the ACK interval 208 - 108 ms (draft §3.3).
        assert_eq!(s.interval, millis(108));
    }

    #[test]
    fn a_sacked_segment_is_not_counted_again_when_cumulatively_acked() {
        let mut r = DeliveryRate::default();
        let mut tx = r.on_send(0, true, 1, false);
        r.on_delivered(millis(10), &mut tx, SEG);
        r.finish_ack(0);
        r.on_delivered(millis(20), &mut tx, SEG);
        assert_eq!(r.delivered(), SEG);
        assert_eq!(r.finish_ack(0), (None, false), "nothing newly delivered");
    }

    #[test]
    fn samples_shorter_than_the_minimum_rtt_are_discarded() {
        let mut r = DeliveryRate::default();
        let mut tx = r.on_send(0, true, 1, false);
        r.on_delivered(millis(5), &mut tx, SEG);
        let (sample, round_start) = r.finish_ack(millis(10));
        assert!(sample.is_none());
        assert!(round_start, "the round still advances");
    }

    #[test]
    fn rounds_advance_once_per_flight() {
        let mut r = DeliveryRate::default();
        let mut a: Vec<TxSnapshot> = (0..3).map(|i| r.on_send(0, i == 0, 1, false)).collect();
        let mut starts = Vec::new();
        for tx in a.iter_mut() {
            r.on_delivered(millis(100), tx, SEG);
            starts.push(r.finish_ack(0).1);
        }
        // Segments sent after the first delivery belong to the next round.
        let mut b = r.on_send(millis(100), false, 1, false);
        r.on_delivered(millis(200), &mut b, SEG);
        starts.push(r.finish_ack(0).1);
        assert_eq!(starts, [true, false, false, true]);
        assert_eq!(r.rounds(), 2);
    }

    #[test]
    fn a_sample_counts_the_losses_marked_since_its_segment_left_and_the_flight_it_left_with() {
        // Draft §2.3 RS.lost and RS.tx_in_flight: two segments marked lost before
        // segment b was sent do not count; one marked after does.
        let mut r = DeliveryRate::default();
        r.on_lost(2);
        let mut a = r.on_send(0, true, 7, false);
        let mut b = r.on_send(millis(1), false, 8, false);
        r.on_lost(1);
        r.on_delivered(millis(50), &mut a, SEG);
        r.on_delivered(millis(51), &mut b, SEG);
        let (s, _) = r.finish_ack(0);
        assert_eq!(s.map(|s| (s.lost, s.tx_in_flight)), Some((1, 8)), "the newest delivered segment, b");
        assert_eq!(r.lost(), 3);
    }

    #[test]
    fn retransmissions_count_in_flight_until_delivered_or_sent_again() {
        let mut r = DeliveryRate::default();
        let mut a = r.on_send(0, true, 1, true);
        let b = r.on_send(0, false, 2, true);
        assert_eq!(r.retrans_out(), 2);
        r.on_delivered(millis(50), &mut a, SEG);
        assert_eq!(r.retrans_out(), 1);
        r.on_delivered(millis(51), &mut a, SEG);
        assert_eq!(r.retrans_out(), 1, "delivered once");
        // b is lost and sent again: one retransmission in flight, not two.
        r.on_replaced(&b);
        let mut b = r.on_send(millis(60), false, 1, true);
        assert_eq!(r.retrans_out(), 1);
        r.on_delivered(millis(100), &mut b, SEG);
        let mut c = r.on_send(millis(60), false, 1, false);
        r.on_delivered(millis(100), &mut c, SEG);
        assert_eq!(r.retrans_out(), 0, "new data is not a retransmission");
    }

    #[test]
    fn app_limited_marks_samples_until_the_bubble_is_delivered() {
        let mut r = DeliveryRate::default();
        let mut a = r.on_send(0, true, 1, false);
        r.on_app_limited(SEG);
        let mut b = r.on_send(millis(1), false, 1, false);
        assert!(!a.app_limited && b.app_limited);
        r.on_delivered(millis(50), &mut a, SEG);
        r.finish_ack(0);
        r.on_delivered(millis(51), &mut b, SEG);
        let (s, _) = r.finish_ack(0);
        assert!(s.is_some_and(|s| s.app_limited));
        // Delivered (2000 B) now exceeds the mark (0 + 1000 B in flight): the bubble is gone.
        let c = r.on_send(millis(52), true, 1, false);
        assert!(!c.app_limited);
    }
}
