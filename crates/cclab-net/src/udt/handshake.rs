//! UDT 4's client-server handshake, sans IO, as UDT 4.11 implements it
//! (`src/core.cpp`: `CUDT::connect(const sockaddr*)` and
//! `CUDT::connect(const CPacket&)` on the caller's side, `CUDT::listen(sockaddr*,
//! CPacket&)` and `CUDT::connect(const sockaddr*, CHandShake*)` on the
//! listener's):
//!
//! 1. The caller sends a handshake with request type 1, cookie 0, its socket
//!    ID, a random initial sequence number (ISN), its MSS and flow window, to
//!    destination socket 0. It repeats it at most every 250 ms until answered.
//! 2. The listener answers a type-1 request with the same handshake carrying a
//!    SYN cookie derived from the caller's address and the current minute, and
//!    keeps no state: a flood of requests costs it nothing.
//! 3. The caller sends the handshake again with request type -1 and that cookie,
//!    at once.
//! 4. The listener checks the cookie against the current and the previous
//!    minute and ignores the request if neither matches. It rejects a
//!    different version or socket type (request type 1002). Otherwise it
//!    accepts: MSS is the smaller of the two; it keeps the caller's flow window
//!    and answers with its own; it takes the caller's ISN as its own and
//!    echoes it; it answers with request type -1, its new socket ID and the
//!    caller's IP address.
//! 5. The caller refuses a response whose ISN is not its own (UDT 4's
//!    "security check") and otherwise is connected.
//!
//! UDT 4's cookie is the MD5 of "host:port:minute", which anyone can compute.
//! Here it is a keyed hash of the same inputs under a secret the listener's
//! driver draws, so a caller must have received the cookie to echo it.
//! The cookie stays private to the listener, so this changes nothing on the wire.

use crate::cookie::CookieJar;
use cclab_wire::packet::{UdtControl, UdtHeader};
use cclab_wire::time::millis;
use cclab_wire::Time;
use std::net::{IpAddr, SocketAddr};

/// UDT 4's protocol version (`CUDT::m_iVersion`).
pub const VERSION: u32 = 4;
/// `UDT_STREAM` (`UDTSockType`): a byte stream, as file transfer uses.
pub const STREAM: u32 = 1;
/// Request types (`CHandShake::m_iReqType`).
pub const REQUEST: i32 = 1;
pub const RESPONSE: i32 = -1;
pub const REJECTED: i32 = 1002;
/// The caller repeats its request at most this often (`CUDT::connect`: 250 000 µs).
pub const RETRY_INTERVAL: Time = millis(250);
/// How long a caller tries before giving up (UDT 4.11's connection timeout, 3 s).
pub const CONNECT_TIMEOUT: Time = millis(3000);

/// What one side offers in its handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Maximum packet size including IP and UDP headers (UDT's MSS, 1500 by default).
    pub mss: u32,
    /// Maximum flow window, in packets (UDT's `m_iFlightFlagSize`, 25 600 by default).
    pub flow_window: u32,
}

/// The connection both sides agreed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Agreed {
    pub peer_socket: u32,
    /// The initial sequence number of both directions (the caller's).
    pub isn: u32,
    pub mss: u32,
    /// The peer's flow window: at most this many packets unacknowledged towards it.
    pub peer_flow_window: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallerState {
    Connecting,
    Connected(Agreed),
    /// The listener answered with request type 1002 (version or socket type mismatch).
    Rejected,
    /// The listener's response did not echo our ISN.
    IsnMismatch {
        sent: u32,
        got: u32,
    },
    TimedOut,
}

/// The connecting side.
pub struct Caller {
    socket: u32,
    isn: u32,
    offer: Offer,
    server_ip: [u32; 4],
    request: i32,
    cookie: u32,
    last_sent: Option<Time>,
    deadline: Time,
    state: CallerState,
}

/// UDT 4 stores an IPv4 address as `sin_addr.s_addr` read as a host integer and
/// sends it as the first word; on a little-endian host the octets appear reversed.
pub fn ip_words(ip: IpAddr) -> [u32; 4] {
    match ip {
        IpAddr::V4(v4) => [u32::from_le_bytes(v4.octets()), 0, 0, 0],
        IpAddr::V6(v6) => {
            let o = v6.octets();
            std::array::from_fn(|i| u32::from_le_bytes([o[4 * i], o[4 * i + 1], o[4 * i + 2], o[4 * i + 3]]))
        }
    }
}

fn handshake(isn: u32, offer: Offer, request: i32, socket: u32, cookie: u32, ip: [u32; 4]) -> UdtControl {
    UdtControl::Handshake {
        version: VERSION,
        socket_type: STREAM,
        initial_seq: isn,
        mss: offer.mss,
        flow_window: offer.flow_window,
        request,
        socket_id: socket,
        cookie,
        peer_ip: ip,
    }
}

impl Caller {
    /// A caller with socket ID `socket` and initial sequence number `isn` (31 bits, drawn by the driver).
    pub fn new(now: Time, socket: u32, isn: u32, offer: Offer, server: SocketAddr) -> Self {
        Self {
            socket,
            isn: isn & 0x7FFF_FFFF,
            offer,
            server_ip: ip_words(server.ip()),
            request: REQUEST,
            cookie: 0,
            last_sent: None,
            deadline: now + CONNECT_TIMEOUT,
            state: CallerState::Connecting,
        }
    }

    pub fn state(&self) -> CallerState {
        self.state
    }

    /// The request to send now, if one is due (the first at once, then every
    /// [`RETRY_INTERVAL`], and at once after a cookie arrives); gives up at the deadline.
    pub fn poll(&mut self, now: Time) -> Option<UdtHeader> {
        if self.state != CallerState::Connecting {
            return None;
        }
        if now >= self.deadline {
            self.state = CallerState::TimedOut;
            return None;
        }
        if self.last_sent.is_some_and(|at| now < at + RETRY_INTERVAL) {
            return None;
        }
        self.last_sent = Some(now);
        let body = handshake(self.isn, self.offer, self.request, self.socket, self.cookie, self.server_ip);
        Some(UdtHeader::Control { timestamp_us: 0, dst_socket: 0, body })
    }

    /// When [`Caller::poll`] next has something to do.
    pub fn next_wakeup(&self) -> Time {
        match (self.state, self.last_sent) {
            (CallerState::Connecting, Some(at)) => (at + RETRY_INTERVAL).min(self.deadline),
            (CallerState::Connecting, None) => 0,
            _ => Time::MAX,
        }
    }

    /// A packet from the listener. Anything but a handshake addressed to this socket is ignored.
    pub fn on_packet(&mut self, header: &UdtHeader) {
        if self.state != CallerState::Connecting {
            return;
        }
        let UdtHeader::Control {
            dst_socket,
            body: UdtControl::Handshake { initial_seq, mss, flow_window, request, socket_id, cookie, .. },
            ..
        } = *header
        else {
            return;
        };
        if dst_socket != self.socket {
            return;
        }
        match request {
            REQUEST => {
                // The cookie: ask again at once, with it.
                self.request = RESPONSE;
                self.cookie = cookie;
                self.last_sent = None;
            }
            REJECTED => self.state = CallerState::Rejected,
            _ if initial_seq != self.isn => {
                self.state = CallerState::IsnMismatch { sent: self.isn, got: initial_seq };
            }
            _ => {
                self.state = CallerState::Connected(Agreed {
                    peer_socket: socket_id,
                    isn: self.isn,
                    mss: mss.min(self.offer.mss),
                    peer_flow_window: flow_window,
                })
            }
        }
    }
}

/// What the listener does with a handshake.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Send this reply; keep nothing (a cookie, or a rejection).
    Reply(UdtHeader),
    /// A new connection: reply with `reply`, and run it with these terms.
    Accept { reply: UdtHeader, agreed: Agreed },
    /// Not a handshake, or a cookie that does not match: ignore it (and count it).
    Ignore,
}

/// The listening side: stateless until a caller proves its address with the cookie.
pub struct Listener {
    cookies: CookieJar,
    offer: Offer,
}

impl Listener {
    /// `secret` keys the cookies; the driver draws it from the operating system's randomness.
    pub fn new(secret: u64, offer: Offer) -> Self {
        Self { cookies: CookieJar::new(secret), offer }
    }

    /// A handshake from `from` at `now`; `new_socket` is the ID an accepted connection gets.
    pub fn on_handshake(&self, now: Time, from: SocketAddr, header: &UdtHeader, new_socket: u32) -> Verdict {
        let UdtHeader::Control {
            body:
                UdtControl::Handshake {
                    version,
                    socket_type,
                    initial_seq,
                    mss,
                    flow_window,
                    request,
                    socket_id,
                    cookie,
                    peer_ip: _,
                },
            ..
        } = *header
        else {
            return Verdict::Ignore;
        };
        let reply = |body| UdtHeader::Control { timestamp_us: 0, dst_socket: socket_id, body };
        let theirs = Offer { mss, flow_window };
        if request == REQUEST {
            let body = handshake(
                initial_seq,
                theirs,
                REQUEST,
                socket_id,
                self.cookies.issue(now, from, 0),
                ip_words(from.ip()),
            );
            return Verdict::Reply(reply(body));
        }
        if !self.cookies.is_fresh(now, from, 0, cookie) {
            return Verdict::Ignore;
        }
        if version != VERSION || socket_type != STREAM {
            let mut body = handshake(initial_seq, theirs, REJECTED, socket_id, cookie, ip_words(from.ip()));
            if let UdtControl::Handshake { version: v, socket_type: t, .. } = &mut body {
                (*v, *t) = (version, socket_type);
            }
            return Verdict::Reply(reply(body));
        }
        let agreed_mss = mss.min(self.offer.mss);
        let ours = Offer { mss: agreed_mss, flow_window: self.offer.flow_window };
        Verdict::Accept {
            reply: reply(handshake(initial_seq, ours, RESPONSE, new_socket, cookie, ip_words(from.ip()))),
            agreed: Agreed {
                peer_socket: socket_id,
                isn: initial_seq,
                mss: agreed_mss,
                peer_flow_window: flow_window,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::udt_codec;

    const CALLER_OFFER: Offer = Offer { mss: 1500, flow_window: 25_600 };
    const LISTENER_OFFER: Offer = Offer { mss: 1400, flow_window: 8_192 };

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn body(h: &UdtHeader) -> UdtControl {
        match h {
            UdtHeader::Control { body, .. } => *body,
            UdtHeader::Data { .. } => panic!("a data packet"),
        }
    }

    /// Every header crosses the wire as UDT 4 bytes and back.
    fn wire(h: UdtHeader) -> UdtHeader {
        let mut bytes = Vec::new();
        udt_codec::encode(&h, &mut bytes).unwrap();
        udt_codec::decode(&bytes).unwrap().0
    }

    #[test]
    fn the_first_request_is_type_1_with_no_cookie_to_socket_0() {
        let mut c = Caller::new(0, 77, 0xFFFF_FFFF, CALLER_OFFER, addr("10.0.0.2:9000"));
        let first = c.poll(0).unwrap();
        let UdtHeader::Control { dst_socket, .. } = first else { panic!() };
        assert_eq!(dst_socket, 0);
        assert_eq!(
            body(&first),
            handshake(0x7FFF_FFFF, CALLER_OFFER, 1, 77, 0, [u32::from_le_bytes([10, 0, 0, 2]), 0, 0, 0])
        );
    }

    #[test]
    fn the_caller_repeats_every_250_ms_and_gives_up_after_3_s() {
        let mut c = Caller::new(0, 1, 5, CALLER_OFFER, addr("127.0.0.1:1"));
        let mut sent = Vec::new();
        let mut now = 0;
        loop {
            if c.poll(now).is_some() {
                sent.push(now);
            }
            if c.state() != CallerState::Connecting {
                break;
            }
            now = c.next_wakeup().max(now + 1);
        }
        assert_eq!(sent, (0..12).map(|i| i * RETRY_INTERVAL).collect::<Vec<_>>());
        assert_eq!(c.state(), CallerState::TimedOut);
        assert_eq!(now, CONNECT_TIMEOUT);
    }

    #[test]
    fn the_full_exchange_connects_with_the_smaller_mss_and_the_callers_isn() {
        let server = addr("127.0.0.1:9000");
        let client = addr("127.0.0.1:40000");
        let listener = Listener::new(0xC0FFEE, LISTENER_OFFER);
        let mut c = Caller::new(0, 77, 123_456, CALLER_OFFER, server);
        let request = wire(c.poll(0).unwrap());
        let Verdict::Reply(cookie_reply) = listener.on_handshake(1000, client, &request, 500) else {
            panic!()
        };
        let UdtControl::Handshake { request: r, cookie, .. } = body(&cookie_reply) else { panic!() };
        assert_eq!(r, REQUEST, "the cookie comes back in a type-1 handshake");
        c.on_packet(&wire(cookie_reply));
        let second = wire(c.poll(2000).expect("sent at once, not 250 ms later"));
        let UdtControl::Handshake { request: r2, cookie: echoed, .. } = body(&second) else { panic!() };
        assert_eq!((r2, echoed), (RESPONSE, cookie));
        let Verdict::Accept { reply, agreed } = listener.on_handshake(3000, client, &second, 500) else {
            panic!()
        };
        assert_eq!(agreed, Agreed { peer_socket: 77, isn: 123_456, mss: 1400, peer_flow_window: 25_600 });
        let UdtHeader::Control { dst_socket, .. } = reply else { panic!() };
        assert_eq!(dst_socket, 77);
        assert_eq!(
            body(&reply),
            handshake(
                123_456,
                Offer { mss: 1400, flow_window: 8_192 },
                RESPONSE,
                500,
                cookie,
                ip_words(client.ip())
            )
        );
        c.on_packet(&wire(reply));
        assert_eq!(
            c.state(),
            CallerState::Connected(Agreed {
                peer_socket: 500,
                isn: 123_456,
                mss: 1400,
                peer_flow_window: 8_192
            })
        );
        assert_eq!(c.poll(4000), None, "nothing more to send");
    }

    #[test]
    fn a_wrong_or_stale_cookie_is_ignored_and_last_minutes_is_accepted() {
        let client = addr("192.168.1.5:4000");
        let listener = Listener::new(42, LISTENER_OFFER);
        let ask = |cookie: u32, request: i32| UdtHeader::Control {
            timestamp_us: 0,
            dst_socket: 0,
            body: handshake(9, CALLER_OFFER, request, 3, cookie, [0; 4]),
        };
        let minute = crate::cookie::COOKIE_PERIOD;
        let Verdict::Reply(r) = listener.on_handshake(minute + 5, client, &ask(0, REQUEST), 1) else {
            panic!()
        };
        let UdtControl::Handshake { cookie, .. } = body(&r) else { panic!() };
        assert_eq!(listener.on_handshake(minute + 6, client, &ask(cookie ^ 1, RESPONSE), 1), Verdict::Ignore);
        assert!(
            matches!(
                listener.on_handshake(2 * minute + 1, client, &ask(cookie, RESPONSE), 1),
                Verdict::Accept { .. }
            ),
            "the previous minute's cookie"
        );
        assert_eq!(
            listener.on_handshake(3 * minute, client, &ask(cookie, RESPONSE), 1),
            Verdict::Ignore,
            "two minutes old"
        );
        let elsewhere = addr("192.168.1.5:4001");
        assert_eq!(
            listener.on_handshake(minute + 6, elsewhere, &ask(cookie, RESPONSE), 1),
            Verdict::Ignore,
            "another port's cookie"
        );
        assert_eq!(
            Listener::new(43, LISTENER_OFFER).on_handshake(minute + 6, client, &ask(cookie, RESPONSE), 1),
            Verdict::Ignore,
            "the secret keys the cookie"
        );
    }

    #[test]
    fn another_version_or_socket_type_is_rejected_with_1002_and_the_caller_stops() {
        let server = addr("127.0.0.1:9000");
        let client = addr("127.0.0.1:40000");
        let listener = Listener::new(1, LISTENER_OFFER);
        let mut c = Caller::new(0, 8, 1000, CALLER_OFFER, server);
        let Verdict::Reply(cookie_reply) = listener.on_handshake(0, client, &c.poll(0).unwrap(), 2) else {
            panic!()
        };
        c.on_packet(&cookie_reply);
        let mut second = c.poll(1).unwrap();
        if let UdtHeader::Control { body: UdtControl::Handshake { socket_type, .. }, .. } = &mut second {
            *socket_type = 2; // UDT_DGRAM
        }
        let Verdict::Reply(rejection) = listener.on_handshake(2, client, &second, 2) else { panic!() };
        let UdtControl::Handshake { request, .. } = body(&rejection) else { panic!() };
        assert_eq!(request, REJECTED);
        c.on_packet(&wire(rejection));
        assert_eq!(c.state(), CallerState::Rejected);
        assert_eq!(c.poll(300_000_000), None);
    }

    #[test]
    fn a_response_with_another_isn_fails_the_security_check() {
        let mut c = Caller::new(0, 8, 1000, CALLER_OFFER, addr("127.0.0.1:9000"));
        c.poll(0);
        let forged = UdtHeader::Control {
            timestamp_us: 0,
            dst_socket: 8,
            body: handshake(1001, LISTENER_OFFER, RESPONSE, 9, 0, [0; 4]),
        };
        c.on_packet(&forged);
        assert_eq!(c.state(), CallerState::IsnMismatch { sent: 1000, got: 1001 });
    }

    #[test]
    fn packets_for_another_socket_or_not_handshakes_change_nothing() {
        let mut c = Caller::new(0, 8, 1000, CALLER_OFFER, addr("127.0.0.1:9000"));
        c.poll(0);
        let other = UdtHeader::Control {
            timestamp_us: 0,
            dst_socket: 9,
            body: handshake(1000, LISTENER_OFFER, RESPONSE, 9, 0, [0; 4]),
        };
        c.on_packet(&other);
        c.on_packet(&UdtHeader::Control { timestamp_us: 0, dst_socket: 8, body: UdtControl::KeepAlive });
        c.on_packet(&UdtHeader::Data { seq: 1000, msg: 0, timestamp_us: 0, dst_socket: 8 });
        assert_eq!(c.state(), CallerState::Connecting);
        let listener = Listener::new(1, LISTENER_OFFER);
        let keep_alive = UdtHeader::Control { timestamp_us: 0, dst_socket: 0, body: UdtControl::KeepAlive };
        assert_eq!(listener.on_handshake(0, addr("127.0.0.1:1"), &keep_alive, 1), Verdict::Ignore);
    }
}
