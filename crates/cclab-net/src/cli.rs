//! `cclab send`'s and `cclab recv`'s options as the command line gives them
//! (`None`: not given), checked and completed with their defaults into the
//! spec of a UDT or a TCP sender or receiver. The one place these flags are
//! checked, so that a binding only converts its values; each error is one line
//! naming the offending flag.

use crate::content::Source;
use crate::driver::{Handle, Summary};
use crate::emulator::{parse_addr, EmulatorError};
use crate::error::{invalid, TransferError};
use crate::stream::Framing;
use crate::tcp::send::{BufferSpec, CwndGrowth, Named, TcpSendSpec};
use cclab_transport::registry;
use cclab_wire::time::millis;
use cclab_wire::{units, Time};
use std::path::PathBuf;

/// `--raw` is for plain UDT 4 applications; nothing else speaks cclab's TCP in UDP.
pub const RAW_ONLY_WITH_UDT: &str = "only with --protocol udt (it is for plain UDT 4 applications)";

/// How often a host with a send-buffer policy shares its memory unless `--share-every` says.
const SHARE_EVERY: Time = millis(500);

/// `cclab send`'s flags. The fields from `recovery` on are TCP's.
#[derive(Clone, Debug, Default)]
pub struct SendOptions {
    pub to: String,
    pub path: Option<PathBuf>,
    pub bytes: Option<String>,
    pub protocol: String,
    pub cc: Option<String>,
    pub cc_params: Vec<(String, String)>,
    pub duration_s: Option<f64>,
    /// The largest packet, IP and UDP headers included.
    pub mss: u32,
    pub raw: bool,
    pub recovery: Option<String>,
    pub recovery_params: Vec<(String, String)>,
    pub pacing: Option<String>,
    pub pacing_params: Vec<(String, String)>,
    pub send_buffer: Option<String>,
    pub buffer_params: Vec<(String, String)>,
    pub memory_cap: Option<String>,
    pub share_every_s: Option<f64>,
    pub connections: Option<u32>,
    pub stagger_s: Option<f64>,
    pub cwnd_growth: Option<String>,
}

/// A checked `cclab send`: the sender of one protocol, ready to start.
#[derive(Clone, Debug)]
pub enum SenderSpec {
    Udt(crate::udt::send::SendSpec),
    Tcp(TcpSendSpec),
}

impl SenderSpec {
    /// Opens the content and the socket, and starts the sender's thread.
    pub fn start(self) -> Result<Handle<Summary>, TransferError> {
        match self {
            SenderSpec::Udt(spec) => crate::udt::send::start(spec),
            SenderSpec::Tcp(spec) => crate::tcp::send::start(spec),
        }
    }
}

impl SendOptions {
    /// Checks the flags in the order the command line reports them and fills
    /// in what was not given.
    pub fn spec(mut self) -> Result<SenderSpec, TransferError> {
        let source = match (self.path.take(), self.bytes.take()) {
            (Some(p), None) => Source::File(p),
            (None, Some(n)) => Source::Bytes(units::size(&n).map_err(|e| invalid("--bytes", e))?),
            (None, None) => Source::Unbounded,
            (Some(_), Some(_)) => return Err(invalid("--bytes", "give a file or --bytes, not both")),
        };
        let to = parse_addr("--to", &self.to).map_err(option_error)?;
        let duration = self.duration_s.map(|s| seconds("--duration", s)).transpose()?;
        match self.protocol.as_str() {
            "udt" => self.udt(to, source, duration).map(SenderSpec::Udt),
            "tcp" => self.tcp(to, source, duration).map(SenderSpec::Tcp),
            other => Err(invalid("--protocol", format!("\"{other}\" is not udt or tcp"))),
        }
    }

    fn udt(
        self,
        to: std::net::SocketAddr,
        source: Source,
        duration: Option<Time>,
    ) -> Result<crate::udt::send::SendSpec, TransferError> {
        let tcp_only = [
            ("--recovery", self.recovery.is_some() || !self.recovery_params.is_empty()),
            ("--pacing", self.pacing.is_some() || !self.pacing_params.is_empty()),
            ("--send-buffer", self.send_buffer.is_some() || !self.buffer_params.is_empty()),
            ("--memory-cap", self.memory_cap.is_some()),
            ("--share-every", self.share_every_s.is_some()),
            ("--connections", self.connections.is_some()),
            ("--stagger", self.stagger_s.is_some()),
            ("--cwnd-growth", self.cwnd_growth.is_some()),
        ];
        if let Some((option, _)) = tcp_only.iter().find(|(_, given)| *given) {
            return Err(invalid(option, "only with --protocol tcp"));
        }
        Ok(crate::udt::send::SendSpec {
            to,
            source,
            cc: self.cc.unwrap_or_else(|| registry::DEFAULT_UDT_CONGESTION_CONTROL.into()),
            cc_params: self.cc_params,
            duration,
            tuning: crate::udt::Tuning { mss: self.mss, ..Default::default() },
            framing: framing(self.raw),
        })
    }

    fn tcp(
        self,
        to: std::net::SocketAddr,
        source: Source,
        duration: Option<Time>,
    ) -> Result<TcpSendSpec, TransferError> {
        if self.raw {
            return Err(invalid("--raw", RAW_ONLY_WITH_UDT));
        }
        let memory_cap =
            self.memory_cap.map(|c| units::size(&c).map_err(|e| invalid("--memory-cap", e))).transpose()?;
        let share_every = self.share_every_s.map(|s| seconds("--share-every", s)).transpose()?;
        let send_buffer = match self.send_buffer {
            Some(policy) => Some(BufferSpec {
                policy: Named { name: policy, params: self.buffer_params },
                memory_cap,
                share_every: share_every.unwrap_or(SHARE_EVERY),
            }),
            None if memory_cap.is_some() || share_every.is_some() || !self.buffer_params.is_empty() => {
                return Err(invalid(
                    "--send-buffer",
                    "--memory-cap, --share-every and --buffer-param need a send-buffer policy",
                ))
            }
            None => None,
        };
        let mss = crate::tcp::payload_of(self.mss)?;
        let cwnd_growth = match self.cwnd_growth {
            None => CwndGrowth::Always,
            Some(name) => CwndGrowth::from_name(&name).ok_or_else(|| {
                invalid(
                    "--cwnd-growth",
                    format!("\"{name}\" is not one of: {}", CwndGrowth::NAMES.join(", ")),
                )
            })?,
        };
        let stagger = match self.stagger_s {
            Some(0.0) | None => 0,
            Some(s) => seconds("--stagger", s)?,
        };
        let defaults = TcpSendSpec::new(to, source);
        let named = |name: Option<String>, default: Named, params| Named {
            name: name.unwrap_or(default.name),
            params,
        };
        Ok(TcpSendSpec {
            cwnd_growth,
            connections: self.connections.unwrap_or(defaults.connections),
            stagger,
            cc: named(self.cc, defaults.cc, self.cc_params),
            recovery: named(self.recovery, defaults.recovery, self.recovery_params),
            pacing: named(self.pacing, defaults.pacing, self.pacing_params),
            send_buffer,
            duration,
            mss,
            ..defaults
        })
    }
}

/// `cclab recv`'s flags. The fields from `connections` on are TCP's.
#[derive(Clone, Debug, Default)]
pub struct RecvOptions {
    pub listen: String,
    pub out: Option<PathBuf>,
    pub timeout_s: f64,
    /// The largest packet this side accepts, IP and UDP headers included.
    pub mss: u32,
    pub protocol: String,
    pub raw: bool,
    pub connections: Option<u32>,
    pub window: Option<u32>,
    pub delayed_ack: bool,
}

/// A checked `cclab recv`: the receiver of one protocol, ready to start.
#[derive(Clone, Debug)]
pub enum ReceiverSpec {
    Udt(crate::udt::recv::RecvSpec),
    Tcp(crate::tcp::recv::TcpRecvSpec),
}

impl ReceiverSpec {
    /// Creates the output file, binds the socket, and starts listening.
    pub fn start(self) -> Result<Handle<Summary>, TransferError> {
        match self {
            ReceiverSpec::Udt(spec) => crate::udt::recv::start(spec),
            ReceiverSpec::Tcp(spec) => crate::tcp::recv::start(spec),
        }
    }
}

impl RecvOptions {
    /// Checks the flags in the order the command line reports them and fills
    /// in what was not given.
    pub fn spec(self) -> Result<ReceiverSpec, TransferError> {
        let listen = parse_addr("--listen", &self.listen).map_err(option_error)?;
        let idle_timeout = seconds("--timeout", self.timeout_s)?;
        match self.protocol.as_str() {
            "udt" => {
                let tcp_only = [
                    ("--connections", self.connections.is_some()),
                    ("--window", self.window.is_some()),
                    ("--delayed-ack", self.delayed_ack),
                ];
                if let Some((option, _)) = tcp_only.iter().find(|(_, given)| *given) {
                    return Err(invalid(option, "only with --protocol tcp"));
                }
                Ok(ReceiverSpec::Udt(crate::udt::recv::RecvSpec {
                    listen,
                    out: self.out,
                    idle_timeout,
                    tuning: crate::udt::Tuning { mss: self.mss, ..Default::default() },
                    framing: framing(self.raw),
                }))
            }
            "tcp" => {
                if self.raw {
                    return Err(invalid("--raw", RAW_ONLY_WITH_UDT));
                }
                let mss = crate::tcp::payload_of(self.mss)?;
                let defaults = crate::tcp::recv::TcpRecvSpec::new(listen);
                Ok(ReceiverSpec::Tcp(crate::tcp::recv::TcpRecvSpec {
                    out: self.out,
                    idle_timeout,
                    mss,
                    window_segments: self.window.unwrap_or(defaults.window_segments),
                    connections: self.connections.unwrap_or(defaults.connections),
                    delayed_ack: self.delayed_ack,
                    ..defaults
                }))
            }
            other => Err(invalid("--protocol", format!("\"{other}\" is not udt or tcp"))),
        }
    }
}

/// A number of seconds given for `option`: positive and finite.
pub fn seconds(option: &str, s: f64) -> Result<Time, TransferError> {
    if !(s.is_finite() && s > 0.0 && s < 1e9) {
        return Err(invalid(option, format!("{s} is not a positive number of seconds")));
    }
    Ok((s * 1e9) as Time)
}

/// The stream's framing: `--raw` sends or takes the content alone.
pub fn framing(raw: bool) -> Framing {
    if raw {
        Framing::Raw
    } else {
        Framing::Framed
    }
}

/// An address option's error, as the transfer's.
fn option_error(e: EmulatorError) -> TransferError {
    match e {
        EmulatorError::Invalid { option, message } => TransferError::Invalid { option, message },
        other => invalid("--to", other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(protocol: &str) -> SendOptions {
        SendOptions {
            to: "127.0.0.1:9000".into(),
            bytes: Some("1MB".into()),
            protocol: protocol.into(),
            mss: 1500,
            ..SendOptions::default()
        }
    }

    #[test]
    fn a_send_that_names_no_algorithm_gets_the_registry_defaults() {
        let Ok(SenderSpec::Tcp(tcp)) = send("tcp").spec() else { panic!("a valid TCP send") };
        assert_eq!(tcp.cc.name, registry::DEFAULT_CONGESTION_CONTROL);
        assert_eq!(tcp.recovery.name, registry::DEFAULT_LOSS_RECOVERY);
        assert_eq!(tcp.pacing.name, registry::DEFAULT_PACING);
        assert_eq!((tcp.connections, tcp.stagger, tcp.send_buffer), (1, 0, None));
        let Ok(SenderSpec::Udt(udt)) = send("udt").spec() else { panic!("a valid UDT send") };
        assert_eq!(udt.cc, registry::DEFAULT_UDT_CONGESTION_CONTROL);
    }

    #[test]
    fn a_flag_of_the_other_protocol_is_named_in_one_line() {
        let tcp_flag = SendOptions { stagger_s: Some(1.0), ..send("udt") }.spec();
        assert_eq!(
            tcp_flag.map(|_| ()).map_err(|e| e.to_string()),
            Err("--stagger: only with --protocol tcp".into())
        );
        let raw = SendOptions { raw: true, ..send("tcp") }.spec();
        assert_eq!(
            raw.map(|_| ()).map_err(|e| e.to_string()),
            Err("--raw: only with --protocol udt (it is for plain UDT 4 applications)".into())
        );
        let receiver = RecvOptions {
            listen: "127.0.0.1:0".into(),
            timeout_s: 1.0,
            protocol: "udt".into(),
            delayed_ack: true,
            ..RecvOptions::default()
        };
        assert_eq!(
            receiver.spec().map(|_| ()).map_err(|e| e.to_string()),
            Err("--delayed-ack: only with --protocol tcp".into())
        );
    }
}
