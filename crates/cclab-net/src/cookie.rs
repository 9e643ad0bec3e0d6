//! SYN cookies (Bernstein; RFC 4987 §3.6): a listener answers a connection
//! request with a value derived from the caller's address, a tag the request
//! carries and the current period, under a secret only it knows, and keeps no
//! state. A caller that echoes a cookie of this or the previous period proves
//! it receives at its address, and only then does the listener keep anything.

use cclab_wire::random::SplitMix64;
use cclab_wire::time::millis;
use cclab_wire::Time;
use std::net::{IpAddr, SocketAddr};

/// How long a cookie is issued for; it is accepted for one more period, as UDT 4 accepts the previous minute's.
pub const COOKIE_PERIOD: Time = millis(60_000);

/// Issues and checks cookies under one secret.
#[derive(Clone, Copy, Debug)]
pub struct CookieJar {
    secret: u64,
}

impl CookieJar {
    /// `secret` keys the cookies; the driver draws it from the operating system's randomness.
    pub fn new(secret: u64) -> Self {
        Self { secret }
    }

    fn of(&self, from: SocketAddr, tag: u64, period: u64) -> u32 {
        let mut h = SplitMix64::new(self.secret).next_u64();
        let ip = match from.ip() {
            IpAddr::V4(v4) => u128::from(v4.to_bits()),
            IpAddr::V6(v6) => v6.to_bits(),
        };
        for word in [(ip >> 64) as u64, ip as u64, u64::from(from.port()), tag, period] {
            h = SplitMix64::new(h ^ word).next_u64();
        }
        (h >> 32) as u32
    }

    /// The cookie for a caller at `from` whose request carries `tag`, at `now`.
    pub fn issue(&self, now: Time, from: SocketAddr, tag: u64) -> u32 {
        self.of(from, tag, now / COOKIE_PERIOD)
    }

    /// Whether `cookie` was issued to `from` and `tag` in this period or the previous one.
    pub fn is_fresh(&self, now: Time, from: SocketAddr, tag: u64, cookie: u32) -> bool {
        let period = now / COOKIE_PERIOD;
        cookie == self.of(from, tag, period) || (period > 0 && cookie == self.of(from, tag, period - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_is_fresh_for_its_period_and_the_next_only_and_for_its_caller_only() {
        let jar = CookieJar::new(42);
        let alice: SocketAddr = "10.0.0.1:4000".parse().unwrap();
        let bob: SocketAddr = "10.0.0.1:4001".parse().unwrap();
        let t = COOKIE_PERIOD * 5 + 7;
        let c = jar.issue(t, alice, 9);
        assert!(jar.is_fresh(t, alice, 9, c));
        assert!(jar.is_fresh(t + COOKIE_PERIOD, alice, 9, c), "the previous period's cookie is accepted");
        assert!(!jar.is_fresh(t + 2 * COOKIE_PERIOD, alice, 9, c), "two periods on it is stale");
        assert!(!jar.is_fresh(t, bob, 9, c), "another port");
        assert!(!jar.is_fresh(t, alice, 10, c), "another tag");
        assert!(!CookieJar::new(43).is_fresh(t, alice, 9, c), "another secret");
    }
}
