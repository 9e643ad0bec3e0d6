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

    /// A segment is being (re)transmitted; `flight_empty` if nothing else is outstanding.
    pub fn on_send(&mut self, now: Time, flight_empty: bool) -> TxSnapshot {
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
        TxSnapshot {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            app_limited: self.app_limited_until != 0,
            pending: true,
        }
    }

    /// A segment of `bytes` was delivered (draft `UpdateRateSample`); nothing
    /// if this transmission of it had been delivered before.
    pub fn on_delivered(&mut self, now: Time, tx: &mut TxSnapshot, bytes: u64) {
        if !tx.pending {
            return;
        }
        tx.pending = false;
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
        let mut sent: Vec<TxSnapshot> = (0..10).map(|i| r.on_send(millis(i), i == 0)).collect();
        let mut last = None;
        for (i, tx) in sent.iter_mut().enumerate() {
            r.on_delivered(millis(50 + i as u64), tx, SEG);
            last = r.finish_ack(millis(40)).0.or(last);
        }
        let s =
            last.unwrap_or(RateSample { delivered: 0, interval: 1, prior_delivered: 0, app_limited: false });
        // The last ACK: 10 segments since segment 0's delivery state (delivered 0 at t = 0),
        // send interval 9 ms, ACK interval 59 ms: the longer one wins.
        assert_eq!(s.delivered, 10 * SEG);
        assert_eq!(s.interval, millis(59));
    }

    #[test]
    fn the_sample_takes_the_longer_of_the_send_and_ack_intervals() {
        // Five segments leave together at t = 0 and are ACKed 2 ms apart from t = 100 ms.
        let mut r = DeliveryRate::default();
        let mut first: Vec<TxSnapshot> = (0..5).map(|i| r.on_send(0, i == 0)).collect();
        for (i, tx) in first.iter_mut().enumerate() {
            r.on_delivered(millis(100 + 2 * i as u64), tx, SEG);
            r.finish_ack(0);
        }
        // A segment sent at 108 ms carries that state: delivered at 108 ms, and a
        // flight whose newest delivered segment was sent at 0.
        let mut next = r.on_send(millis(108), false);
        r.on_delivered(millis(208), &mut next, SEG);
        let (s, _) = r.finish_ack(millis(50));
        let s = s.unwrap_or(RateSample { delivered: 0, interval: 1, prior_delivered: 0, app_limited: false });
        assert_eq!(s.delivered, SEG);
        // Send interval 108 - 0 ms beats the ACK interval 208 - 108 ms (draft §3.3).
        assert_eq!(s.interval, millis(108));
    }

    #[test]
    fn a_sacked_segment_is_not_counted_again_when_cumulatively_acked() {
        let mut r = DeliveryRate::default();
        let mut tx = r.on_send(0, true);
        r.on_delivered(millis(10), &mut tx, SEG);
        r.finish_ack(0);
        r.on_delivered(millis(20), &mut tx, SEG);
        assert_eq!(r.delivered(), SEG);
        assert_eq!(r.finish_ack(0), (None, false), "nothing newly delivered");
    }

    #[test]
    fn samples_shorter_than_the_minimum_rtt_are_discarded() {
        let mut r = DeliveryRate::default();
        let mut tx = r.on_send(0, true);
        r.on_delivered(millis(5), &mut tx, SEG);
        let (sample, round_start) = r.finish_ack(millis(10));
        assert!(sample.is_none());
        assert!(round_start, "the round still advances");
    }

    #[test]
    fn rounds_advance_once_per_flight() {
        let mut r = DeliveryRate::default();
        let mut a: Vec<TxSnapshot> = (0..3).map(|i| r.on_send(0, i == 0)).collect();
        let mut starts = Vec::new();
        for tx in a.iter_mut() {
            r.on_delivered(millis(100), tx, SEG);
            starts.push(r.finish_ack(0).1);
        }
        // Segments sent after the first delivery belong to the next round.
        let mut b = r.on_send(millis(100), false);
        r.on_delivered(millis(200), &mut b, SEG);
        starts.push(r.finish_ack(0).1);
        assert_eq!(starts, [true, false, false, true]);
        assert_eq!(r.rounds(), 2);
    }

    #[test]
    fn app_limited_marks_samples_until_the_bubble_is_delivered() {
        let mut r = DeliveryRate::default();
        let mut a = r.on_send(0, true);
        r.on_app_limited(SEG);
        let mut b = r.on_send(millis(1), false);
        assert!(!a.app_limited && b.app_limited);
        r.on_delivered(millis(50), &mut a, SEG);
        r.finish_ack(0);
        r.on_delivered(millis(51), &mut b, SEG);
        let (s, _) = r.finish_ack(0);
        assert!(s.is_some_and(|s| s.app_limited));
        // Delivered (2000 B) now exceeds the mark (0 + 1000 B in flight): the bubble is gone.
        let c = r.on_send(millis(52), true);
        assert!(!c.app_limited);
    }
}
