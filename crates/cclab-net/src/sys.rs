//! The few socket and timer facilities the standard library does not offer,
//! from the operating system (Linux, through `libc`): a wait for a readable
//! socket with a nanosecond timeout, socket buffer sizes, the thread's timer
//! slack, and the kernel's arrival time of each datagram. Each is a thin safe
//! wrapper over one system call.
//!
//! Why they matter: UDT paces its packets one period apart, 120 µs at
//! 100 Mbit/s with 1500-byte packets. A thread that waits for its next send
//! with millisecond resolution, or that the kernel wakes up to 50 µs late (the
//! default timer slack), sends in bursts instead. And UDT's receiver measures
//! the link's capacity from the gap between two packets sent back to back:
//! stamped when the program gets round to reading them, that gap is the
//! program's scheduling, off by tens of microseconds either way on a busy
//! machine; stamped by the kernel as each one reaches the socket, it is the
//! gap the network left.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, SystemTime};

/// Waits until `socket` has a datagram to read or `timeout` has passed;
/// true if it is readable. An interrupted wait (a signal) counts as a timeout.
pub fn wait_readable(socket: &UdpSocket, timeout: Duration) -> io::Result<bool> {
    let mut fds = libc::pollfd { fd: socket.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let spec = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `fds` and `spec` are valid for the call's duration; the signal mask pointer may be null.
    let ready = unsafe { libc::ppoll(&mut fds, 1, &spec, std::ptr::null()) };
    if ready < 0 {
        let error = io::Error::last_os_error();
        return if error.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(error) };
    }
    Ok(ready > 0 && fds.revents & libc::POLLIN != 0)
}

/// Asks for receive and send buffers of `bytes` each; the kernel may grant less
/// (at most `net.core.rmem_max` and `wmem_max`). Returns what it granted for receiving.
pub fn set_socket_buffers(socket: &UdpSocket, bytes: usize) -> io::Result<usize> {
    let value = bytes.min(i32::MAX as usize) as libc::c_int;
    for option in [libc::SO_RCVBUF, libc::SO_SNDBUF] {
        set_int_option(socket, option, value)?;
    }
    get_int_option(socket, libc::SO_RCVBUF)
}

fn set_int_option(socket: &UdpSocket, option: libc::c_int, value: libc::c_int) -> io::Result<()> {
    let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` outlives the call and `size` is its size.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&value as *const libc::c_int).cast(),
            size,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn get_int_option(socket: &UdpSocket, option: libc::c_int) -> io::Result<usize> {
    let mut value: libc::c_int = 0;
    let mut size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `size` are valid for writing and `size` is `value`'s size.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut size,
        )
    };
    if rc == 0 {
        Ok(value.max(0) as usize)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Asks the kernel to stamp each datagram with the (wall-clock) time it reached
/// the socket, for [`recv_stamped`].
pub fn stamp_arrivals(socket: &UdpSocket) -> io::Result<()> {
    set_int_option(socket, libc::SO_TIMESTAMPNS, 1)
}

/// One datagram read by [`recv_stamped`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamped {
    /// Bytes placed in the buffer (a longer datagram is truncated, as `recv_from` does).
    pub len: usize,
    pub from: SocketAddr,
    /// When the kernel queued it on the socket; `None` unless [`stamp_arrivals`] was set.
    pub arrived: Option<SystemTime>,
}

/// `recv_from` that also returns the kernel's arrival stamp. Errors are
/// `recv_from`'s (`WouldBlock` on a non-blocking socket with nothing waiting).
pub fn recv_stamped(socket: &UdpSocket, buf: &mut [u8]) -> io::Result<Stamped> {
    // SAFETY: all-zero bytes are a valid `sockaddr_storage` and `msghdr`.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // Room for one `SCM_TIMESTAMPNS` message, aligned as `cmsghdr` requires.
    let mut control = [0u64; 8];
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = (&mut addr as *mut libc::sockaddr_storage).cast();
    msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: every pointer in `msg` refers to a live buffer of the length stated beside it.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let from = socket_addr(&addr).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, "a datagram from an unknown address family")
    })?;
    let mut arrived = None;
    // SAFETY: the kernel filled `msg_control` up to `msg_controllen` with well-formed
    // control messages; the CMSG_* functions walk them within that length.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS {
                let stamp: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                arrived = Some(
                    SystemTime::UNIX_EPOCH
                        + Duration::new(
                            stamp.tv_sec.max(0) as u64,
                            stamp.tv_nsec.clamp(0, 999_999_999) as u32,
                        ),
                );
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok(Stamped { len: (n as usize).min(buf.len()), from, arrived })
}

fn socket_addr(addr: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match libc::c_int::from(addr.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a `sockaddr_in`, which it is large enough for.
            let v4: libc::sockaddr_in =
                unsafe { std::ptr::read((addr as *const libc::sockaddr_storage).cast()) };
            let ip = Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr));
            Some(SocketAddrV4::new(ip, u16::from_be(v4.sin_port)).into())
        }
        libc::AF_INET6 => {
            // SAFETY: as above, for `sockaddr_in6`.
            let v6: libc::sockaddr_in6 =
                unsafe { std::ptr::read((addr as *const libc::sockaddr_storage).cast()) };
            let ip = Ipv6Addr::from(v6.sin6_addr.s6_addr);
            Some(SocketAddrV6::new(ip, u16::from_be(v6.sin6_port), v6.sin6_flowinfo, v6.sin6_scope_id).into())
        }
        _ => None,
    }
}

/// Lets the kernel wake this thread as close to its timeouts as it can
/// (a slack of 1 ns instead of the default 50 µs); a no-op where unsupported.
pub fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn waits_for_a_datagram_or_the_timeout() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let started = Instant::now();
        assert!(!wait_readable(&a, Duration::from_millis(5)).unwrap());
        assert!(started.elapsed() >= Duration::from_millis(5));
        b.send_to(b"x", a.local_addr().unwrap()).unwrap();
        assert!(wait_readable(&a, Duration::from_secs(5)).unwrap());
    }

    #[test]
    fn the_kernel_stamps_a_datagram_when_it_arrives_not_when_it_is_read() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        stamp_arrivals(&a).unwrap();
        a.set_nonblocking(true).unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(recv_stamped(&a, &mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        // Linux turns arrival stamping on for the first socket that asks from a
        // deferred work item (`net_enable_timestamp`); a datagram that arrives
        // before that has run is stamped when it is read. So the first few may
        // be, but one within a second must be stamped at its arrival.
        let mut lags = Vec::new();
        for _ in 0..30 {
            let before = SystemTime::now();
            b.send_to(b"hello", a.local_addr().unwrap()).unwrap();
            std::thread::sleep(Duration::from_millis(30));
            let got = recv_stamped(&a, &mut buf).unwrap();
            let read_at = SystemTime::now();
            assert_eq!((got.len, got.from, &buf[..5]), (5, b.local_addr().unwrap(), &b"hello"[..]));
            let arrived = got.arrived.expect("a stamp");
            assert!(
                arrived >= before - Duration::from_millis(1),
                "{arrived:?} before the send at {before:?}"
            );
            let lag = read_at.duration_since(arrived).unwrap_or_default();
            if lag >= Duration::from_millis(25) {
                return;
            }
            lags.push(lag);
        }
        panic!("every datagram stamped at its read, not its arrival: {lags:?}");
    }

    #[test]
    fn without_stamping_a_datagram_has_no_stamp_and_ipv6_senders_are_named() {
        let Ok(a) = UdpSocket::bind("[::1]:0") else { return }; // no IPv6 loopback on this machine
        let b = UdpSocket::bind("[::1]:0").unwrap();
        b.send_to(b"x", a.local_addr().unwrap()).unwrap();
        let mut buf = [0u8; 4];
        let got = recv_stamped(&a, &mut buf).unwrap();
        assert_eq!((got.len, got.from, got.arrived), (1, b.local_addr().unwrap(), None));
    }

    #[test]
    fn socket_buffers_grow_up_to_the_system_limit() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let before = get_int_option(&a, libc::SO_RCVBUF).unwrap();
        let granted = set_socket_buffers(&a, 4 << 20).unwrap();
        assert!(granted >= before.min(4 << 20), "{granted} < {before}");
    }
}
