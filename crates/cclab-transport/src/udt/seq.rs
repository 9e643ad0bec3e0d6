//! UDT's 31-bit sequence numbers (UDT 4.11 `src/common.h`, `CSeqNo`): the
//! endpoints count packets from 0 in 64 bits and meet the wire's wrapping
//! numbers only here, so no comparison elsewhere has to think about wrap-around.

/// The largest sequence number; numbers wrap to 0 after it (`CSeqNo::m_iMaxSeqNo`).
pub const MAX_SEQ: u32 = 0x7FFF_FFFF;
/// Two numbers closer than this compare directly (`CSeqNo::m_iSeqNoTH`).
const THRESHOLD: i64 = 0x3FFF_FFFF;

/// The numbering of one direction of a connection: packet `n` (counted from
/// 0) travels as `(isn + n) mod 2^31`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqSpace {
    pub isn: u32,
}

impl SeqSpace {
    pub fn new(isn: u32) -> Self {
        Self { isn: isn & MAX_SEQ }
    }

    /// The wire number of packet `n`.
    pub fn wire(&self, n: u64) -> u32 {
        ((self.isn as u64 + n) & MAX_SEQ as u64) as u32
    }

    /// The packet count a wire number means, read as the one nearest to
    /// `near` (as `CSeqNo::seqoff` does); `None` if that lies before packet 0.
    pub fn unwrap(&self, wire: u32, near: u64) -> Option<u64> {
        let offset = seqoff(self.wire(near), wire & MAX_SEQ);
        u64::try_from(near as i64 + offset).ok()
    }
}

/// Signed distance from `a` to `b` on the 31-bit circle (`CSeqNo::seqoff`).
pub fn seqoff(a: u32, b: u32) -> i64 {
    let (a, b) = (a as i64, b as i64);
    if (a - b).abs() < THRESHOLD {
        b - a
    } else if a < b {
        b - a - MAX_SEQ as i64 - 1
    } else {
        b - a + MAX_SEQ as i64 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_wrap_at_two_to_the_31() {
        let s = SeqSpace::new(MAX_SEQ - 1);
        assert_eq!(s.wire(0), MAX_SEQ - 1);
        assert_eq!(s.wire(1), MAX_SEQ);
        assert_eq!(s.wire(2), 0);
        assert_eq!(s.unwrap(0, 1), Some(2));
        assert_eq!(s.unwrap(MAX_SEQ, 5), Some(1));
    }

    #[test]
    fn seqoff_is_signed_across_the_wrap() {
        assert_eq!(seqoff(5, 9), 4);
        assert_eq!(seqoff(9, 5), -4);
        assert_eq!(seqoff(MAX_SEQ, 0), 1);
        assert_eq!(seqoff(0, MAX_SEQ), -1);
    }

    #[test]
    fn a_number_before_the_first_packet_is_refused() {
        let s = SeqSpace::new(100);
        assert_eq!(s.unwrap(99, 0), None);
        assert_eq!(s.unwrap(100, 0), Some(0));
    }
}
