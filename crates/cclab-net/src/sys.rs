//! The few socket and timer facilities the standard library does not offer,
//! from the operating system (Linux, through `libc`): a wait for a readable
//! socket with a nanosecond timeout, socket buffer sizes, and the thread's
//! timer slack. Each is a thin safe wrapper over one system call.
//!
//! Why they matter: UDT paces its packets one period apart, 120 µs at
//! 100 Mbit/s with 1500-byte packets. A thread that waits for its next send
//! with millisecond resolution, or that the kernel wakes up to 50 µs late (the
//! default timer slack), sends in bursts instead.

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::Duration;

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
    fn socket_buffers_grow_up_to_the_system_limit() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let before = get_int_option(&a, libc::SO_RCVBUF).unwrap();
        let granted = set_socket_buffers(&a, 4 << 20).unwrap();
        assert!(granted >= before.min(4 << 20), "{granted} < {before}");
    }
}
