//! Opening a TCP connection carried in UDP, sans IO: the simulator's TCP
//! endpoints start connected, so the real mode adds a set-up of its own, in the
//! shape of UDT 4's (two round trips, a SYN cookie, no state on the listener
//! until the caller proves its address):
//!
//! 1. The caller sends SYN with cookie 0, its connection number, the payload
//!    bytes per segment it would send and its options (SACK, timestamps, ECN),
//!    and repeats it every [`RETRY_INTERVAL`] until answered.
//! 2. The listener answers COOKIE with a cookie keyed on the caller's address and
//!    connection number ([`crate::cookie`]), and keeps nothing.
//! 3. The caller sends the SYN again with that cookie, at once.
//! 4. The listener checks the cookie (this or the previous minute) and, if it is
//!    good, accepts: the payload per segment is the smaller of the two, and it
//!    answers ACCEPT with it and the receive window it advertises. A repeated
//!    SYN of an accepted connection (its ACCEPT was lost) is answered again.
//! 5. The caller is connected at ACCEPT, and every datagram it sends after
//!    carries the cookie, which the listener checks.
//!
//! A caller with no answer within [`CONNECT_TIMEOUT`] gives up; a RESET ends it at once.

use super::codec::{Datagram, Message, SynOptions};
use crate::cookie::CookieJar;
use cclab_wire::time::millis;
use cclab_wire::{Time, NEVER};
use std::net::SocketAddr;

/// The caller repeats its SYN this often (UDT 4's 250 ms).
pub const RETRY_INTERVAL: Time = millis(250);
/// How long a caller tries before giving up (3 s, as UDT 4 and `cclab send` over UDT).
pub const CONNECT_TIMEOUT: Time = millis(3000);

/// What both ends agreed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Agreed {
    pub cookie: u32,
    /// Payload bytes per full segment.
    pub mss: u32,
    /// The receive window the listener advertises, in segments.
    pub window_segments: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallerState {
    Connecting,
    Connected(Agreed),
    Reset,
    TimedOut,
}

/// The calling side of one connection.
pub struct Caller {
    connection: u32,
    mss: u32,
    options: SynOptions,
    started: Time,
    /// The cookie once the listener gave it.
    cookie: u32,
    /// When the SYN was last sent; `None`: send it at the next poll.
    last_sent: Option<Time>,
    state: CallerState,
}

impl Caller {
    pub fn new(now: Time, connection: u32, mss: u32, options: SynOptions) -> Self {
        Self {
            connection,
            mss,
            options,
            started: now,
            cookie: 0,
            last_sent: None,
            state: CallerState::Connecting,
        }
    }

    pub fn connection(&self) -> u32 {
        self.connection
    }

    pub fn state(&self) -> CallerState {
        self.state
    }

    /// The SYN to send now, if one is due; gives up at the timeout.
    pub fn poll(&mut self, now: Time) -> Option<Datagram> {
        if self.state != CallerState::Connecting {
            return None;
        }
        if now >= self.started + CONNECT_TIMEOUT {
            self.state = CallerState::TimedOut;
            return None;
        }
        if self.last_sent.is_some_and(|t| now < t + RETRY_INTERVAL) {
            return None;
        }
        self.last_sent = Some(now);
        let message = Message::Syn { mss: self.mss, options: self.options };
        Some(Datagram { connection: self.connection, cookie: self.cookie, message })
    }

    pub fn next_wakeup(&self) -> Time {
        match (self.state, self.last_sent) {
            (CallerState::Connecting, Some(t)) => (t + RETRY_INTERVAL).min(self.started + CONNECT_TIMEOUT),
            (CallerState::Connecting, None) => self.started,
            _ => NEVER,
        }
    }

    /// The listener's answer (the driver hands over only datagrams of this connection).
    pub fn on_datagram(&mut self, datagram: &Datagram) {
        if self.state != CallerState::Connecting || datagram.connection != self.connection {
            return;
        }
        match datagram.message {
            Message::Cookie if datagram.cookie != 0 => {
                self.cookie = datagram.cookie;
                self.last_sent = None; // at once, with the cookie
            }
            Message::Accept { mss, window_segments }
                if self.cookie != 0 && datagram.cookie == self.cookie =>
            {
                let mss = mss.min(self.mss);
                self.state = CallerState::Connected(Agreed { cookie: self.cookie, mss, window_segments });
            }
            Message::Reset => self.state = CallerState::Reset,
            _ => {}
        }
    }
}

/// What the listener does with a SYN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Send this; keep nothing.
    Reply(Datagram),
    /// A new connection: answer with `reply`, and run it with these terms and options.
    Accept { reply: Datagram, agreed: Agreed, options: SynOptions },
    /// Not a SYN, or a stale or forged cookie: ignore it (and count it).
    Ignore,
}

/// The listening side: stateless until a caller echoes its cookie.
pub struct Listener {
    cookies: CookieJar,
    mss: u32,
    window_segments: u32,
}

impl Listener {
    /// `mss`: the most payload per segment it takes; `window_segments`: the window it advertises.
    pub fn new(secret: u64, mss: u32, window_segments: u32) -> Self {
        Self { cookies: CookieJar::new(secret), mss, window_segments }
    }

    /// A datagram from `from`, of no connection the driver knows.
    pub fn on_datagram(&self, now: Time, from: SocketAddr, datagram: &Datagram) -> Verdict {
        let Message::Syn { mss, options } = datagram.message else {
            return Verdict::Ignore;
        };
        let connection = datagram.connection;
        let tag = u64::from(connection);
        if datagram.cookie == 0 {
            let cookie = self.cookies.issue(now, from, tag);
            return Verdict::Reply(Datagram { connection, cookie, message: Message::Cookie });
        }
        if !self.cookies.is_fresh(now, from, tag, datagram.cookie) || mss == 0 {
            return Verdict::Ignore;
        }
        let agreed =
            Agreed { cookie: datagram.cookie, mss: mss.min(self.mss), window_segments: self.window_segments };
        Verdict::Accept { reply: accept(connection, &agreed), agreed, options }
    }
}

/// The ACCEPT that tells a caller the agreed terms (again, if its SYN comes again).
pub fn accept(connection: u32, agreed: &Agreed) -> Datagram {
    let message = Message::Accept { mss: agreed.mss, window_segments: agreed.window_segments };
    Datagram { connection, cookie: agreed.cookie, message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cookie::COOKIE_PERIOD;

    const OPTIONS: SynOptions = SynOptions { sack: true, timestamps: true, ecn: false };

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn two_round_trips_connect_with_the_smaller_segment() {
        let client = addr("10.0.0.2:5000");
        let listener = Listener::new(7, 1400, 4096);
        let mut caller = Caller::new(0, 77, 1412, OPTIONS);
        let syn = caller.poll(0).unwrap();
        assert_eq!(syn.cookie, 0);
        let Verdict::Reply(cookie) = listener.on_datagram(10, client, &syn) else { panic!() };
        assert_eq!(cookie.message, Message::Cookie);
        caller.on_datagram(&cookie);
        let again = caller.poll(20).expect("the SYN goes again at once, with the cookie");
        assert_eq!(again.cookie, cookie.cookie);
        let Verdict::Accept { reply, agreed, options } = listener.on_datagram(30, client, &again) else {
            panic!()
        };
        assert_eq!((agreed.mss, agreed.window_segments, options), (1400, 4096, OPTIONS));
        caller.on_datagram(&reply);
        assert_eq!(caller.state(), CallerState::Connected(agreed));
        assert_eq!(caller.poll(40), None);
    }

    #[test]
    fn the_syn_repeats_until_the_timeout_and_a_reset_ends_it() {
        let mut caller = Caller::new(0, 1, 1412, OPTIONS);
        let mut sent = Vec::new();
        let mut now = 0;
        while caller.state() == CallerState::Connecting {
            if caller.poll(now).is_some() {
                sent.push(now / millis(1));
            }
            now = caller.next_wakeup();
        }
        assert_eq!(sent, [0, 250, 500, 750, 1000, 1250, 1500, 1750, 2000, 2250, 2500, 2750]);
        assert_eq!(caller.state(), CallerState::TimedOut);
        let mut caller = Caller::new(0, 1, 1412, OPTIONS);
        caller.on_datagram(&Datagram { connection: 1, cookie: 0, message: Message::Reset });
        assert_eq!(caller.state(), CallerState::Reset);
    }

    #[test]
    fn forged_stale_or_misdirected_cookies_are_ignored() {
        let client = addr("10.0.0.2:5000");
        let listener = Listener::new(7, 1400, 4096);
        let syn = |cookie, connection| Datagram {
            connection,
            cookie,
            message: Message::Syn { mss: 1412, options: OPTIONS },
        };
        let t = COOKIE_PERIOD + 1;
        let Verdict::Reply(c) = listener.on_datagram(t, client, &syn(0, 9)) else { panic!() };
        assert_eq!(listener.on_datagram(t, client, &syn(c.cookie ^ 1, 9)), Verdict::Ignore, "forged");
        assert_eq!(
            listener.on_datagram(t, client, &syn(c.cookie, 10)),
            Verdict::Ignore,
            "another connection"
        );
        assert_eq!(
            listener.on_datagram(t, addr("10.0.0.3:5000"), &syn(c.cookie, 9)),
            Verdict::Ignore,
            "elsewhere"
        );
        assert_eq!(
            listener.on_datagram(t + 2 * COOKIE_PERIOD, client, &syn(c.cookie, 9)),
            Verdict::Ignore,
            "stale"
        );
        assert!(matches!(
            listener.on_datagram(t + COOKIE_PERIOD, client, &syn(c.cookie, 9)),
            Verdict::Accept { .. }
        ));
        let close = Datagram { connection: 9, cookie: c.cookie, message: Message::Close };
        assert_eq!(listener.on_datagram(t, client, &close), Verdict::Ignore, "not a SYN");
    }
}
