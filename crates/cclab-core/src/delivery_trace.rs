//! A packet-delivery trace in Mahimahi's format, replayed as `mm-link`
//! replays it (Netravali et al., "Mahimahi: Accurate Record-and-Replay for
//! HTTP", USENIX ATC 2015; `src/frontend/link_queue.cc` of
//! github.com/ravinet/mahimahi, read at 18915b6):
//!
//! - one line per delivery opportunity, the millisecond at which up to
//!   [`OPPORTUNITY_BYTES`] (1504, Mahimahi's `PACKET_SIZE`) may leave; the
//!   times are nondecreasing (a repeated time is several opportunities then),
//!   no line is empty, and the last time is above zero;
//! - the trace repeats for ever with the last time as its period
//!   (`base_timestamp_ += schedule_.back()` at each wrap);
//! - the bytes of one opportunity go to the packets at the head of the queue
//!   in turn: a packet may finish in it and the rest go to the next packet, or
//!   it may need later opportunities; bytes nobody uses are lost;
//! - a packet uses only opportunities after its arrival (`rationalize(now)`
//!   spends those up to now before the packet joins the queue).

use cclab_wire::Time;

/// Bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u64 = 1504;

const NANOS_PER_MS: u64 = 1_000_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    /// Distinct opportunity times within a period, in milliseconds in
    /// `(0, period]`, increasing, and how many opportunities each carries.
    /// A line at 0 is kept as one at the period: in every later cycle the
    /// two are the same instant, and at time 0 itself nothing can have
    /// arrived before it to use it.
    times_ms: Vec<u64>,
    counts: Vec<u32>,
    period_ms: u64,
    /// Lines read (opportunities per period).
    opportunities: u64,
}

/// What is wrong with a trace, with its 1-based line number where there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceError {
    Empty,
    EmptyLine(usize),
    NotANumber(usize, String),
    Decreasing(usize),
    ZeroLength,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Empty => write!(f, "has no delivery opportunities"),
            TraceError::EmptyLine(n) => write!(f, "line {n} is empty"),
            TraceError::NotANumber(n, text) => {
                write!(f, "line {n} is not a whole number of milliseconds: \"{text}\"")
            }
            TraceError::Decreasing(n) => write!(f, "line {n} goes back in time (times must not decrease)"),
            TraceError::ZeroLength => write!(f, "lasts no time (its last opportunity is at 0 ms)"),
        }
    }
}

impl DeliveryTrace {
    /// Reads a trace: one millisecond time per line. A final newline is
    /// allowed; any other empty line is refused, as Mahimahi refuses it.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        if text.is_empty() {
            return Err(TraceError::Empty);
        }
        let (mut times_ms, mut counts): (Vec<u64>, Vec<u32>) = (Vec::new(), Vec::new());
        let mut opportunities = 0;
        for (i, line) in text.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let n = i + 1;
            if line.trim().is_empty() {
                return Err(TraceError::EmptyLine(n));
            }
            let ms: u64 = line.trim().parse().map_err(|_| TraceError::NotANumber(n, line.to_string()))?;
            match times_ms.last() {
                Some(&last) if ms < last => return Err(TraceError::Decreasing(n)),
                Some(&last) if ms == last => {
                    if let Some(c) = counts.last_mut() {
                        *c += 1;
                    }
                }
                _ => {
                    times_ms.push(ms);
                    counts.push(1);
                }
            }
            opportunities += 1;
        }
        let period_ms = *times_ms.last().ok_or(TraceError::Empty)?;
        if period_ms == 0 {
            return Err(TraceError::ZeroLength);
        }
        if times_ms[0] == 0 {
            let at_zero = counts.remove(0);
            times_ms.remove(0);
            if let Some(c) = counts.last_mut() {
                *c += at_zero;
            }
        }
        Ok(Self { times_ms, counts, period_ms, opportunities })
    }

    /// A trace of these millisecond times (tests and scripts).
    pub fn from_opportunities(times_ms: &[u64]) -> Result<Self, TraceError> {
        let text: String = times_ms.iter().map(|t| format!("{t}\n")).collect();
        Self::parse(&text)
    }

    pub fn period(&self) -> Time {
        self.period_ms * NANOS_PER_MS
    }

    /// The mean rate the trace offers, in bit/s.
    pub fn mean_rate_bps(&self) -> f64 {
        (self.opportunities * OPPORTUNITY_BYTES * 8) as f64 / (self.period_ms as f64 / 1000.0)
    }

    /// The rate of its busiest millisecond, in bit/s.
    pub fn peak_rate_bps(&self) -> u64 {
        self.counts.iter().max().map_or(0, |&c| c as u64 * OPPORTUNITY_BYTES * 8 * 1000)
    }

    /// The first opportunity strictly after `t`: its time and the bytes it
    /// carries (all opportunities of that millisecond together).
    pub fn next_after(&self, t: Time) -> (Time, u64) {
        let period = self.period();
        let (cycle, offset) = (t / period, t % period);
        // The last time is the period, after any offset within one.
        let i = self.times_ms.partition_point(|&ms| ms * NANOS_PER_MS <= offset);
        let time = cycle.saturating_mul(period).saturating_add(self.times_ms[i] * NANOS_PER_MS);
        (time, self.counts[i] as u64 * OPPORTUNITY_BYTES)
    }

    /// Opportunities at times up to and including `t`, from time 0 on.
    fn count_through(&self, t: Time) -> u64 {
        let period = self.period();
        let (cycle, offset) = (t / period, t % period);
        let i = self.times_ms.partition_point(|&ms| ms * NANOS_PER_MS <= offset);
        cycle * self.opportunities + self.counts[..i].iter().map(|&c| c as u64).sum::<u64>()
    }

    /// Bytes the trace offers at times in `[a, b)`.
    pub fn capacity_bytes(&self, a: Time, b: Time) -> f64 {
        if b <= a || b == 0 {
            return 0.0;
        }
        let before = |t: Time| if t == 0 { 0 } else { self.count_through(t - 1) };
        ((before(b) - before(a)) * OPPORTUNITY_BYTES) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::{micros, millis};

    #[test]
    fn lines_are_milliseconds_and_repeated_times_add_opportunities() {
        let t = DeliveryTrace::parse("1\n1\n3\n4\n").expect("valid");
        assert_eq!(t.period(), millis(4));
        assert_eq!(t.next_after(0), (millis(1), 2 * OPPORTUNITY_BYTES));
        assert_eq!(t.next_after(millis(1)), (millis(3), OPPORTUNITY_BYTES));
        assert_eq!(t.next_after(millis(3) - 1), (millis(3), OPPORTUNITY_BYTES));
        // Second cycle: 5, 5, 7, 8 ms.
        assert_eq!(t.next_after(millis(4)), (millis(5), 2 * OPPORTUNITY_BYTES));
        assert_eq!(t.next_after(millis(8) + micros(1)), (millis(9), 2 * OPPORTUNITY_BYTES));
        // Four lines per 4 ms: 1504 bytes per ms, 12.032 Mbit/s.
        assert!((t.mean_rate_bps() - 12_032_000.0).abs() < 1e-6);
    }

    /// A trace starting at 0: its first line of the next cycle falls on the
    /// last line's time, and both are opportunities then.
    #[test]
    fn a_trace_from_zero_wraps_onto_its_last_time() {
        let t = DeliveryTrace::parse("0\n2").expect("valid");
        assert_eq!(t.next_after(0), (millis(2), 2 * OPPORTUNITY_BYTES));
        assert_eq!(t.next_after(millis(2)), (millis(4), 2 * OPPORTUNITY_BYTES));
        // At 2, 4, 6, 8 ms two each (time 0 itself is not counted).
        assert!((t.capacity_bytes(0, millis(10)) - 8.0 * OPPORTUNITY_BYTES as f64).abs() < 1e-9);
    }

    #[test]
    fn capacity_counts_the_opportunities_in_the_interval() {
        let t = DeliveryTrace::parse("1\n1\n3\n4").expect("valid");
        // [0, 4 ms): 1, 1, 3; [4 ms, 8 ms): 4, 5, 5, 7.
        assert_eq!(t.capacity_bytes(0, millis(4)), 3.0 * OPPORTUNITY_BYTES as f64);
        assert_eq!(t.capacity_bytes(millis(4), millis(8)), 4.0 * OPPORTUNITY_BYTES as f64);
        // 100 periods end with an opportunity at 400 ms itself.
        assert_eq!(t.capacity_bytes(0, millis(400)), 399.0 * OPPORTUNITY_BYTES as f64);
        assert_eq!(t.capacity_bytes(0, millis(400) + 1), 400.0 * OPPORTUNITY_BYTES as f64);
    }

    #[test]
    fn malformed_traces_are_refused_with_the_line() {
        assert_eq!(DeliveryTrace::parse(""), Err(TraceError::Empty));
        assert_eq!(DeliveryTrace::parse("1\n\n2\n"), Err(TraceError::EmptyLine(2)));
        assert_eq!(DeliveryTrace::parse("1\n2x\n"), Err(TraceError::NotANumber(2, "2x".into())));
        assert_eq!(DeliveryTrace::parse("5\n3\n"), Err(TraceError::Decreasing(2)));
        assert_eq!(DeliveryTrace::parse("-1\n"), Err(TraceError::NotANumber(1, "-1".into())));
        assert_eq!(DeliveryTrace::parse("0\n0\n"), Err(TraceError::ZeroLength));
        assert!(DeliveryTrace::parse("1\r\n2\r\n").is_ok());
    }
}
