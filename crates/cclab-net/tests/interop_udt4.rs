//! Interoperability with the reference implementation, UDT 4.11 (Debian's
//! `libudt-dev`): a small sender and a small receiver written against that
//! library (`interop/udt4_send.cpp`, `interop/udt4_recv.cpp`) are compiled
//! with `g++`, and a ~3 MB random file goes both ways, over loopback and
//! through the emulator (50 Mbit/s, 10 ms each way, 0.1 % loss, a queue of one
//! bandwidth-delay product):
//!
//! - the reference sender (a UDT caller) to our receiver ([`recv::start`]);
//! - our sender ([`send::start`], a file) to the reference receiver (a UDT listener).
//!
//! Those two speak cclab's framing (a length, the content, a checksum). Two
//! plain programs speak none, as any UDT 4 application: `udt4_plain_send`
//! sends the file with `UDT::sendfile2` and closes, `udt4_plain_recv` writes
//! what `UDT::recv` returns until the sender closes; they are checked against
//! our ends with `--raw` ([`Framing::Raw`]).
//!
//! Each must deliver the file byte for byte and both ends must report success.
//! Without `g++` or UDT 4.11's headers the tests are ignored, with the line
//! that installs them (`apt-get install -y g++ libudt-dev`), unless `CI` is
//! set: then they run and fail saying so (the crate's `build.rs` decides). A case fails, stopping our end
//! and killing the reference program, when its transfer makes no progress for
//! [`STALL`], when one end outlives the other by [`GRACE`], or after
//! [`TIMEOUT`]. The cases run one at a time.

use crate::common;

use cclab_net::content::Source;
use cclab_net::driver::{Handle, Summary};
use cclab_net::emulator::{QueueLimit, IPV4_UDP_HEADER_BYTES};
use cclab_net::stream::Framing;
use cclab_net::udt::recv::{self, RecvSpec};
use cclab_net::udt::send::{self, SendSpec};
use cclab_net::udt::Tuning;
use cclab_net::{Emulator, EmulatorSpec, EmulatorStats, PathSpec};
use cclab_wire::random::SplitMix64;
use cclab_wire::time::{millis, secs};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Each case must finish within this; a hung child is killed, a hung transfer of ours stopped.
const TIMEOUT: Duration = Duration::from_secs(60);
/// A case whose transfer has not moved for this long has failed (UDT 4 would
/// retransmit for ~45 s more before giving up).
const STALL: Duration = Duration::from_secs(15);
/// Once one end has finished, the other must within this (the reference
/// receiver waits up to 3 s for the sender's shutdown).
const GRACE: Duration = Duration::from_secs(6);
/// Not a multiple of the payload (1456 bytes), so the last data packet is short.
const CONTENT_BYTES: usize = 3_141_593;
const INSTALL: &str = "apt-get install -y g++ libudt-dev";
/// Bytes the reference sender hands to each `UDT::send` call (its CHUNK argument;
/// default 65536, 0: the whole stream as one buffer). UDT 4 starts a packet at
/// each call, so this decides where the short packets fall.
const CHUNK_VAR: &str = "CCLAB_UDT4_SEND_CHUNK";

/// The compiled reference programs: cclab's framing (`send`, `recv`) and none (`plain_*`).
struct Programs {
    dir: PathBuf,
    send: PathBuf,
    recv: PathBuf,
    plain_send: PathBuf,
    plain_recv: PathBuf,
}

fn programs() -> &'static Programs {
    static PROGRAMS: OnceLock<Result<Programs, String>> = OnceLock::new();
    match PROGRAMS.get_or_init(build) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn build() -> Result<Programs, String> {
    // Shared by runs: each compiles to a name of its own and renames the result into place.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("interop-udt4");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    match Command::new("g++").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => {
            return Err(format!(
                "g++ is not installed; the UDT 4 interoperability test needs it: `{INSTALL}`"
            ))
        }
    }
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop");
    let compile = |name: &str| -> Result<PathBuf, String> {
        let exe = dir.join(name);
        let tmp = dir.join(format!("{name}.{}", std::process::id()));
        let src = sources.join(format!("{name}.cpp"));
        let out = Command::new("g++")
            .args(["-O2", "-Wall", "-o"])
            .arg(&tmp)
            .arg(&src)
            .args(["-ludt", "-lpthread"])
            .output()
            .map_err(|e| format!("cannot run g++: {e}"))?;
        if out.status.success() {
            std::fs::rename(&tmp, &exe).map_err(|e| format!("{}: {e}", exe.display()))?;
            return Ok(exe);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("udt/udt.h") || stderr.contains("-ludt") {
            Err(format!(
                "UDT 4.11 (headers <udt/udt.h> and libudt) is not installed; the UDT 4 \
                 interoperability test needs it: `{INSTALL}`\n{stderr}"
            ))
        } else {
            Err(format!("g++ failed on {}:\n{stderr}", src.display()))
        }
    };
    Ok(Programs {
        send: compile("udt4_send")?,
        recv: compile("udt4_recv")?,
        plain_send: compile("udt4_plain_send")?,
        plain_recv: compile("udt4_plain_recv")?,
        dir,
    })
}

/// One reference program running, its stdout arriving line by line; killed if dropped.
struct Child {
    name: &'static str,
    child: std::process::Child,
    lines: Receiver<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Child {
    fn spawn(name: &'static str, exe: &Path, args: &[String]) -> Child {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut err = child.stderr.take().expect("piped");
        let stderr = Some(std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        }));
        Child { name, child, lines, stderr }
    }

    /// The next line of its stdout, waiting at most `wait`.
    fn line(&self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    /// Waits for its exit until `deadline`, then kills it; its status (None if killed) and all it printed.
    fn finish(mut self, deadline: Instant) -> (Option<ExitStatus>, String) {
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break None;
                }
            }
        };
        let mut text: String = self.lines.try_iter().map(|l| format!("{}: {l}\n", self.name)).collect();
        if let Some(err) = self.stderr.take().and_then(|h| h.join().ok()) {
            text.extend(err.lines().map(|l| format!("{} (stderr): {l}\n", self.name)));
        }
        (status, text)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// How both ends of a case ended.
struct Outcome<T> {
    /// The reference program's exit status; None if it had to be killed.
    status: Option<ExitStatus>,
    /// Everything the reference program printed.
    printed: String,
    ours: Result<T, String>,
    elapsed: f64,
}

/// Waits for both ends: until both have finished, or our end's byte count has
/// not moved for [`STALL`], or [`TIMEOUT`] has passed; whatever still runs then
/// is stopped (ours) or killed (the reference program).
fn supervise<T>(mut child: Child, ours: Handle<T>, started: Instant) -> Outcome<T> {
    let (mut bytes, mut moved) = (0, Instant::now());
    let mut one_done: Option<Instant> = None;
    let mut failure = None;
    loop {
        let child_done = !matches!(child.child.try_wait(), Ok(None));
        if child_done && ours.is_finished() {
            break;
        }
        let now = Instant::now();
        if child_done || ours.is_finished() {
            one_done.get_or_insert(now);
        }
        let progress = ours.progress();
        if progress.bytes != bytes {
            (bytes, moved) = (progress.bytes, now);
        }
        let total = progress.total.map_or("?".into(), |t| t.to_string());
        let state = format!(
            "our end at {bytes} of {total} content bytes, {}; {} {}",
            if ours.is_finished() { "finished" } else { "running" },
            child.name,
            if child_done { "exited" } else { "running" }
        );
        if one_done.is_some_and(|at| now - at > GRACE) {
            failure = Some(format!("one end finished, the other not within {GRACE:?} ({state})"));
            break;
        }
        if now - moved > STALL {
            failure = Some(format!("no progress for {STALL:?} ({state}); progress: {progress:?}"));
            break;
        }
        if now - started > TIMEOUT {
            failure = Some(format!("not done after {TIMEOUT:?} ({state}); progress: {progress:?}"));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if !ours.is_finished() {
        ours.stop();
    }
    let ours = ours.join().map_err(|e| e.to_string());
    let ours = match failure {
        Some(f) => Err(match ours {
            Ok(_) => f,
            Err(e) => format!("{f}; then: {e}"),
        }),
        None => ours,
    };
    let (status, printed) = child.finish(Instant::now());
    Outcome { status, printed, ours, elapsed: started.elapsed().as_secs_f64() }
}

/// 50 Mbit/s, 10 ms one way, 0.1 % loss, a DropTail queue of one bandwidth-delay product (20 ms RTT).
fn emulated_path() -> PathSpec {
    PathSpec {
        rate_bps: Some(50_000_000),
        delay: millis(10),
        loss: 0.001,
        queue: QueueLimit::Bytes(50_000_000 / 8 * 20 / 1000),
        overhead_bytes: IPV4_UDP_HEADER_BYTES,
    }
}

fn emulator_in_front_of(server: SocketAddr) -> Emulator {
    Emulator::start(EmulatorSpec {
        listen: "127.0.0.1:0".parse().unwrap(),
        forward: server,
        forward_path: emulated_path(),
        reverse_path: emulated_path(),
        seed: 11,
        max_clients: 4,
    })
    .expect("the emulator starts")
}

/// A file of random bytes for case `tag`, and where its copy goes.
fn files(tag: &str) -> (PathBuf, PathBuf, Vec<u8>) {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let mut rng = SplitMix64::new(seed);
    let data: Vec<u8> = (0..CONTENT_BYTES.div_ceil(8)).flat_map(|_| rng.next_u64().to_le_bytes()).collect();
    let data = data[..CONTENT_BYTES].to_vec();
    let dir = &programs().dir;
    let pid = std::process::id();
    let (input, output) = (dir.join(format!("{tag}.{pid}.in")), dir.join(format!("{tag}.{pid}.out")));
    std::fs::write(&input, &data).unwrap();
    let _ = std::fs::remove_file(&output);
    eprintln!("[{tag}] {CONTENT_BYTES} random bytes (SplitMix64 seed {seed:#x})");
    (input, output, data)
}

/// Whether `path` holds exactly `data`, and if not, how it differs.
fn compare(path: &Path, data: &[u8]) -> Result<(), String> {
    let got = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if got == data {
        return Ok(());
    }
    let first = got.iter().zip(data).position(|(a, b)| a != b).unwrap_or(got.len().min(data.len()));
    Err(format!("the copy differs: {} bytes of {}, first difference at byte {first}", got.len(), data.len()))
}

/// One direction of a case, as its failures name the two ends.
struct Case<'a> {
    tag: &'a str,
    ours: &'a str,
    reference: &'a str,
    what: &'a str,
}

impl Case<'_> {
    /// Prints what both ends said, fails with every problem found, and removes the files
    /// of a case that passed (a failed case keeps them, for a look at the copy).
    fn judge(
        &self,
        outcome: Outcome<Summary>,
        stats: Option<EmulatorStats>,
        files: (&Path, &Path),
        data: &[u8],
    ) {
        let Case { tag, ours: our_end, reference, what } = *self;
        let Outcome { status, printed, ours, elapsed } = outcome;
        eprint!("{printed}");
        eprintln!("[{tag}] {elapsed:.2} s; {our_end}: {ours:?}");
        if let Some(stats) = stats {
            eprintln!("[{tag}] emulator: {stats:?}");
        }
        let mut failures = Vec::new();
        match status {
            Some(s) if s.success() => {}
            Some(s) => failures.push(format!("{reference} failed ({s})")),
            None => failures.push(format!("{reference} had to be killed")),
        }
        match &ours {
            Ok(summary) if summary.complete && summary.content_bytes == CONTENT_BYTES as u64 => {}
            Ok(summary) => failures.push(format!(
                "{our_end} ended incomplete ({} of {CONTENT_BYTES} bytes)",
                summary.content_bytes
            )),
            Err(e) => failures.push(format!("{our_end} failed: {e}")),
        }
        if let Err(e) = compare(files.1, data) {
            failures.push(e);
        }
        assert!(failures.is_empty(), "[{tag}] {what}:\n  {}", failures.join("\n  "));
        let _ = (std::fs::remove_file(files.0), std::fs::remove_file(files.1));
    }
}

/// The reference sender (caller) sends the file to our receiver (listener): `udt4_send` with
/// cclab's framing, or with [`Framing::Raw`] `udt4_plain_send`, which sends the file alone.
fn reference_to_ours(tag: &str, emulated: bool, framing: Framing) {
    // One at a time with every real-network test of the binary: both ends, the emulator and the
    // background load share two cores, and so does g++ compiling the reference programs at first use.
    let _one = common::serial();
    let programs = programs();
    let (input, output, data) = files(tag);
    let input_path = input.clone();
    let receiver = recv::start(RecvSpec {
        listen: "127.0.0.1:0".parse().unwrap(),
        out: Some(output.clone()),
        idle_timeout: secs(10),
        tuning: Tuning::default(),
        framing,
    })
    .expect("our receiver starts");
    let emulator = emulated.then(|| emulator_in_front_of(receiver.local_addr));
    let to = emulator.as_ref().map_or(receiver.local_addr, Emulator::local_addr);
    let mut args = vec![to.ip().to_string(), to.port().to_string(), input.display().to_string()];
    let started = Instant::now();
    let child = match framing {
        Framing::Framed => {
            args.extend(std::env::var(CHUNK_VAR).ok());
            Child::spawn("udt4_send", &programs.send, &args)
        }
        Framing::Raw => Child::spawn("udt4_plain_send", &programs.plain_send, &args),
    };
    let outcome = supervise(child, receiver, started);
    let stats = emulator.map(Emulator::stop);
    let case = Case {
        tag,
        ours: "our receiver",
        reference: "the reference sender",
        what: match framing {
            Framing::Framed => "UDT 4.11 sender -> our receiver",
            Framing::Raw => "plain UDT 4.11 sendfile2 -> our receiver --raw",
        },
    };
    case.judge(outcome, stats, (&input_path, &output), &data);
}

/// Our sender (caller) sends the file to the reference receiver (listener): `udt4_recv`, which
/// reads cclab's framing, or with [`Framing::Raw`] `udt4_plain_recv`, which writes what arrives.
fn ours_to_reference(tag: &str, emulated: bool, framing: Framing) {
    // One at a time with every real-network test of the binary: both ends, the emulator and the
    // background load share two cores, and so does g++ compiling the reference programs at first use.
    let _one = common::serial();
    let programs = programs();
    let (input, output, data) = files(tag);
    let input_path = input.clone();
    let args = ["0".into(), output.display().to_string()];
    let child = match framing {
        Framing::Framed => Child::spawn("udt4_recv", &programs.recv, &args),
        Framing::Raw => Child::spawn("udt4_plain_recv", &programs.plain_recv, &args),
    };
    let Some(port) = child.line(Duration::from_secs(10)).and_then(|l| l.trim().parse::<u16>().ok()) else {
        panic!("udt4_recv printed no port:\n{}", child.finish(Instant::now()).1);
    };
    let listener: SocketAddr = ([127, 0, 0, 1], port).into();
    let emulator = emulated.then(|| emulator_in_front_of(listener));
    let to = emulator.as_ref().map_or(listener, Emulator::local_addr);
    let started = Instant::now();
    let sender = send::start(SendSpec {
        to,
        source: Source::File(input),
        cc: "udt".into(),
        cc_params: Vec::new(),
        duration: Some(secs(TIMEOUT.as_secs())),
        tuning: Tuning::default(),
        framing,
    })
    .expect("our sender starts");
    // The reference receiver exits at our shutdown, or 3 s after the content is in.
    let outcome = supervise(child, sender, started);
    let stats = emulator.map(Emulator::stop);
    let case = Case {
        tag,
        ours: "our sender",
        reference: "the reference receiver",
        what: match framing {
            Framing::Framed => "our sender -> UDT 4.11 receiver",
            Framing::Raw => "our sender --raw -> plain UDT 4.11 recv",
        },
    };
    case.judge(outcome, stats, (&input_path, &output), &data);
}

#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn udt4_sender_to_our_receiver_over_loopback() {
    reference_to_ours("udt4-to-ours", false, Framing::Framed);
}

#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn our_sender_to_udt4_receiver_over_loopback() {
    ours_to_reference("ours-to-udt4", false, Framing::Framed);
}

#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn udt4_sender_to_our_receiver_through_the_emulator() {
    reference_to_ours("udt4-to-ours-emulated", true, Framing::Framed);
}

#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn our_sender_to_udt4_receiver_through_the_emulator() {
    ours_to_reference("ours-to-udt4-emulated", true, Framing::Framed);
}

#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn plain_udt4_sendfile_to_our_raw_receiver_over_loopback() {
    reference_to_ours("plain-udt4-to-ours", false, Framing::Raw);
}

#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn our_raw_sender_to_plain_udt4_recv_over_loopback() {
    ours_to_reference("ours-to-plain-udt4", false, Framing::Raw);
}

#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn plain_udt4_sendfile_to_our_raw_receiver_through_the_emulator() {
    reference_to_ours("plain-udt4-to-ours-emulated", true, Framing::Raw);
}

#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn our_raw_sender_to_plain_udt4_recv_through_the_emulator() {
    ours_to_reference("ours-to-plain-udt4-emulated", true, Framing::Raw);
}

/// Without `--raw` our receiver takes a plain stream's first 8 bytes for a length: it must say
/// so, and leave no file behind that looks like a result.
#[test]
#[cfg_attr(udt4_missing, ignore = "needs g++ and UDT 4.11: apt-get install -y g++ libudt-dev")]
fn plain_udt4_sendfile_to_our_framed_receiver_is_refused_with_a_hint_and_no_file() {
    let _one = common::serial();
    let programs = programs();
    let (input, output, _) = files("plain-udt4-to-framed");
    let receiver = recv::start(RecvSpec {
        listen: "127.0.0.1:0".parse().unwrap(),
        out: Some(output.clone()),
        idle_timeout: secs(10),
        tuning: Tuning::default(),
        framing: Framing::Framed,
    })
    .expect("our receiver starts");
    let to = receiver.local_addr;
    let args = [to.ip().to_string(), to.port().to_string(), input.display().to_string()];
    let child = Child::spawn("udt4_plain_send", &programs.plain_send, &args);
    let outcome = supervise(child, receiver, Instant::now());
    eprint!("{}", outcome.printed);
    let error = outcome.ours.err().unwrap_or_default();
    assert!(error.contains("not cclab's framing") && error.contains("--raw"), "{error}");
    assert!(!output.exists(), "no copy without a verified content");
    assert!(!cclab_net::content::part_path(&output).exists(), "and no part file left");
    std::fs::remove_file(input).unwrap();
}
