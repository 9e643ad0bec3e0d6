//! PyO3 bindings: thin wrappers that move strings and buffers across the
//! boundary. All logic lives in cclab-sim; a run's tables cross as Arrow
//! buffers (`cclab_sim::table`), everything else as JSON text.

use cclab_sim::RunError;
use cclab_wire::ParamDefault;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// Large buffers (the packet pool, delay lines, scoreboards) on transparent
/// huge pages: see `cclab_core::huge_pages`.
#[global_allocator]
static ALLOCATOR: cclab_sim::HugePageAlloc = cclab_sim::HugePageAlloc;

// Defined in Python (python/cclab/_errors.py) so that `print(e)` shows the
// message, where an exception made here would print its `(message, key_path)`
// args as a tuple. RunCancelled, like asyncio's CancelledError, is a
// BaseException (a KeyboardInterrupt): a request to stop is not an error, so
// `except Exception` must not swallow it, and `except KeyboardInterrupt`
// catches Ctrl-C however the run was stopped.
pyo3::import_exception!(cclab._errors, ScenarioError);
pyo3::import_exception!(cclab._errors, RunCancelled);

fn to_py(e: cclab_sim::ScenarioError) -> PyErr {
    ScenarioError::new_err((e.to_string(), e.path))
}

/// A request to stop runs: pass it to `run_toml`, call `cancel()` from any
/// thread (or a signal handler), and those runs raise `RunCancelled` within
/// milliseconds. A run also reports through it how far it has got (`progress`).
#[pyclass(frozen, module = "cclab._core")]
struct CancelToken(cclab_sim::CancelToken);

#[pymethods]
impl CancelToken {
    #[new]
    fn new() -> Self {
        Self(cclab_sim::CancelToken::new())
    }

    /// Asks every run given this token to stop. Permanent and idempotent.
    fn cancel(&self) {
        self.0.cancel();
    }

    #[getter]
    fn cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    /// `(simulated_s, end_s)`: how far the run holding this token has got, as
    /// it reported at most 1024 events ago; `None` before it starts.
    #[getter]
    fn progress(&self) -> Option<(f64, f64)> {
        self.0.progress().map(|(reached, end)| (reached as f64 / 1e9, end as f64 / 1e9))
    }

    fn __repr__(&self) -> String {
        format!("CancelToken(cancelled={})", if self.0.is_cancelled() { "True" } else { "False" })
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `memory_limit` as given (a size such as "16GB", or "unlimited"), else `CCLAB_MEMORY_LIMIT`, else 4 GB.
fn limit(memory_limit: Option<&str>) -> Result<cclab_sim::MemoryLimit, cclab_sim::ScenarioError> {
    cclab_sim::MemoryLimit::resolve(memory_limit)
}

/// One column as it crosses to Python: name, Arrow type ("f64", "i64",
/// "bool", "str"), rows, and Arrow's buffers (validity bitmap or None,
/// offsets for strings or None, values).
type ColumnBuffers<'py> = (
    String,
    &'static str,
    usize,
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, PyBytes>>,
    Bound<'py, PyBytes>,
);

fn column_buffers<'py>(py: Python<'py>, c: &cclab_sim::table::Column) -> ColumnBuffers<'py> {
    let bytes = |b: &Vec<u8>| PyBytes::new(py, b);
    (
        c.name.clone(),
        c.kind.name(),
        c.rows,
        c.validity.as_ref().map(bytes),
        c.offsets.as_ref().map(bytes),
        bytes(&c.data),
    )
}

/// Runs scenario text; returns `(header, tables)`: the summary's scalars,
/// connection totals, series descriptions and trace as JSON, and its tables
/// (`flows`, `links`, `transfers`, `metrics`, `flow_series`, `link_series`) as
/// lists of column buffers (see `ColumnBuffers`). Releases the GIL while
/// simulating; refuses a scenario whose memory estimate is above
/// `memory_limit`; raises `RunCancelled` if `cancel` is cancelled first.
#[pyfunction]
#[pyo3(signature = (text, name, seed=None, memory_limit=None, cancel=None, allow_long=false))]
#[allow(clippy::type_complexity)]
fn run_toml<'py>(
    py: Python<'py>,
    text: String,
    name: String,
    seed: Option<u64>,
    memory_limit: Option<String>,
    cancel: Option<&Bound<'_, CancelToken>>,
    allow_long: bool,
) -> PyResult<(String, Vec<(&'static str, Vec<ColumnBuffers<'py>>)>)> {
    let limit = limit(memory_limit.as_deref()).map_err(to_py)?;
    let token = cancel.map(|c| c.get().0.clone()).unwrap_or_default();
    let result = py.detach(move || {
        cclab_sim::run_toml_cancellable(&text, &name, seed, limit, allow_long, &token)
            .map(|r| (serde_json::to_string(&r.header()), r.tables()))
    });
    match result {
        Ok((header, tables)) => {
            let header = header.map_err(|e| PyValueError::new_err(e.to_string()))?;
            let tables = tables
                .iter()
                .map(|(name, t)| (*name, t.columns.iter().map(|c| column_buffers(py, c)).collect()))
                .collect();
            Ok((header, tables))
        }
        Err(RunError::Scenario(e)) => Err(to_py(e)),
        Err(RunError::Cancelled(c)) => {
            Err(RunCancelled::new_err((RunError::Cancelled(c).to_string(), c.at as f64 / 1e9)))
        }
    }
}

/// Validates scenario text without running it; returns the resolved scenario as JSON.
#[pyfunction]
#[pyo3(signature = (text, name, memory_limit=None, allow_long=true))]
fn validate_toml(
    py: Python<'_>,
    text: String,
    name: String,
    memory_limit: Option<String>,
    allow_long: bool,
) -> PyResult<String> {
    let limit = limit(memory_limit.as_deref()).map_err(to_py)?;
    let scenario = py.detach(move || cclab_sim::validate_toml_for_run(&text, &name, limit, allow_long));
    to_json(&scenario.map_err(to_py)?)
}

/// Scenario text parsed, checked key by key and with its defaults resolved,
/// as JSON: what [`validate_toml`] returns, without building the scenario
/// (which that does to find what only a build can, such as an unknown node).
/// For a scenario that has just run, whose build has already said so: at
/// 20 000 flows a second build cost a fifth of the run.
#[pyfunction]
fn parse_toml(text: String, name: String) -> PyResult<String> {
    to_json(&cclab_sim::parse(&text, &name).map_err(to_py)?)
}

/// The memory a run of scenario text needs, as JSON: `bytes` and `parts`
/// (`key`, `what`, `bytes`), estimated without building it.
#[pyfunction]
fn estimate_memory(text: String, name: String) -> PyResult<String> {
    to_json(&cclab_sim::estimate_toml(&text, &name).map_err(to_py)?)
}

/// The CPU a run of scenario text needs, as JSON (`packet_hops`,
/// `flow_instances`, `transfers`, `cpu_s`, `limit_s`), estimated without
/// building it; a ScenarioError above the limit unless `allow_long`.
#[pyfunction]
#[pyo3(signature = (text, name, allow_long=false))]
fn estimate_run_time(text: String, name: String, allow_long: bool) -> PyResult<String> {
    to_json(&cclab_sim::run_time_toml(&text, &name, allow_long).map_err(to_py)?)
}

/// The memory limit in bytes (`None` for "unlimited") that `memory_limit` (a
/// size or "unlimited"), or without it `CCLAB_MEMORY_LIMIT`, or the default sets.
#[pyfunction]
#[pyo3(signature = (memory_limit=None))]
fn memory_limit_bytes(memory_limit: Option<String>) -> PyResult<Option<u64>> {
    match limit(memory_limit.as_deref()).map_err(to_py)? {
        cclab_sim::MemoryLimit::Bytes(b) => Ok(Some(b)),
        cclab_sim::MemoryLimit::Unlimited => Ok(None),
    }
}

/// Validates scenario text; returns the resolved scenario as a scenario file
/// (every default written out) that `run_toml` accepts.
#[pyfunction]
#[pyo3(signature = (text, name, memory_limit=None, allow_long=true))]
fn resolved_toml(
    py: Python<'_>,
    text: String,
    name: String,
    memory_limit: Option<String>,
    allow_long: bool,
) -> PyResult<String> {
    let limit = limit(memory_limit.as_deref()).map_err(to_py)?;
    py.detach(move || cclab_sim::resolved_toml(&text, &name, limit, allow_long)).map_err(to_py)
}

/// Writes the pcap files of a run's trace table (the summary's `trace`, as
/// JSON) into directory `dir`; returns their paths. Releases the GIL.
#[pyfunction]
fn write_pcaps(py: Python<'_>, trace_json: String, dir: String) -> PyResult<Vec<String>> {
    let table: cclab_sim::trace::TraceTable =
        serde_json::from_str(&trace_json).map_err(|e| PyValueError::new_err(format!("trace table: {e}")))?;
    let written = py.detach(move || cclab_sim::pcap::write_all(&table, std::path::Path::new(&dir)));
    match written {
        Ok(paths) => Ok(paths.into_iter().map(|p| p.display().to_string()).collect()),
        Err(cclab_sim::pcap::PcapError::Io(e)) => Err(e.into()),
        Err(e) => Err(PyValueError::new_err(e.to_string())),
    }
}

/// Every algorithm a scenario can name, as JSON: name, role (the scenario
/// key that names it), summary, source, parameters and metrics.
#[pyfunction]
fn algorithms() -> PyResult<String> {
    let list: Vec<serde_json::Value> = cclab_sim::registry::all()
        .iter()
        .map(|a| {
            serde_json::json!({
                "name": a.name,
                "role": a.role.key(),
                "role_title": a.role.title(),
                "summary": a.summary,
                "source": a.source,
                "parameters": a.parameters.iter().map(|p| serde_json::json!({
                    "name": p.name,
                    "type": p.ty.describe(),
                    "unit": p.unit,
                    "range": p.ty.has_range().then(|| p.range_text()),
                    "default": match p.default {
                        ParamDefault::Value(v) => Some(v),
                        ParamDefault::Required | ParamDefault::Absent => None,
                    },
                    "required": p.default == ParamDefault::Required,
                    "meaning": p.meaning,
                })).collect::<Vec<_>>(),
                // What it publishes for time series, without its role's prefix (cc., recovery., pacing.).
                "metrics": a.metrics,
            })
        })
        .collect();
    to_json(&list)
}

/// A value written with a unit ("20Mbps", "10ms", "1bdp") as its number in
/// its base unit and what it measures (`cclab_wire::units::quantity`).
#[pyfunction]
fn quantity(text: &str) -> PyResult<(f64, &'static str)> {
    cclab_wire::units::quantity(text).map_err(PyValueError::new_err)
}

/// The columns of the tables a result holds as columns: the wide time-series
/// views (`flows`, `links`) and the completion-time table (`transfers`), each
/// column as its name and its Rust element type, in order.
#[pyfunction]
fn table_columns() -> std::collections::BTreeMap<&'static str, &'static [(&'static str, &'static str)]> {
    use cclab_sim::results::{FlowSeries, LinkSeries, TransferTable};
    [("flows", FlowSeries::COLUMNS), ("links", LinkSeries::COLUMNS), ("transfers", TransferTable::COLUMNS)]
        .into()
}

/// Content hash of the simulator sources this module was built from (see build.rs).
const BUILD_ID: &str = env!("CCLAB_BUILD_ID");

/// The build identity: a hex content hash of every source file that determines
/// simulator behaviour. Two builds with the same id simulate identically.
#[pyfunction]
fn build_id() -> &'static str {
    BUILD_ID
}

/// The build identity and, for people, where it came from.
#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    // build.rs writes empty strings for "unknown", as env! cannot carry an Option.
    let revision = env!("CCLAB_GIT_REVISION");
    let dirty = match env!("CCLAB_GIT_DIRTY") {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    let info = PyDict::new(py);
    info.set_item("build_id", BUILD_ID)?;
    info.set_item("files", env!("CCLAB_BUILD_FILES").parse::<u32>().unwrap_or(0))?;
    info.set_item("git_revision", (!revision.is_empty()).then_some(revision))?;
    info.set_item("git_dirty", dirty)?;
    info.set_item("version", env!("CARGO_PKG_VERSION"))?;
    info.set_item("profile", env!("CCLAB_PROFILE"))?;
    info.set_item("rustc", env!("CCLAB_RUSTC"))?;
    Ok(info)
}

/// `cclab emulate`'s link emulator, relaying in background threads until `stop()`.
#[pyclass(module = "cclab._core")]
struct Emulator(Option<cclab_net::Emulator>);

fn emulator_error(e: cclab_net::EmulatorError) -> PyErr {
    match e {
        cclab_net::EmulatorError::Invalid { .. } => pyo3::exceptions::PyValueError::new_err(e.to_string()),
        _ => pyo3::exceptions::PyOSError::new_err(e.to_string()),
    }
}

fn direction_args(
    rate: Option<String>,
    delay: Option<String>,
    loss: Option<f64>,
    queue: Option<String>,
) -> cclab_net::DirectionArgs {
    cclab_net::DirectionArgs { rate, delay, loss, queue }
}

fn stats_dict(py: Python<'_>, stats: cclab_net::EmulatorStats) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (name, d) in [("forward", stats.forward), ("reverse", stats.reverse)] {
        let p = d.path;
        let dir = PyDict::new(py);
        dir.set_item("offered", p.offered)?;
        dir.set_item("offered_bytes", p.offered_bytes)?;
        dir.set_item("delivered", p.delivered)?;
        dir.set_item("delivered_bytes", p.delivered_bytes)?;
        dir.set_item("dropped_queue_full", p.dropped_queue_full)?;
        dir.set_item("lost", p.lost)?;
        dir.set_item("send_errors", d.send_errors)?;
        dir.set_item("max_queue_bytes", p.max_waiting_bytes)?;
        let accepted = p.offered - p.dropped_queue_full;
        let mean_wait = if accepted > 0 { p.total_queueing_ns as f64 / accepted as f64 / 1e9 } else { 0.0 };
        dir.set_item("mean_queueing_s", mean_wait)?;
        out.set_item(name, dir)?;
    }
    out.set_item("clients", stats.clients)?;
    out.set_item("refused_client_datagrams", stats.refused_client_datagrams)?;
    Ok(out)
}

#[pymethods]
impl Emulator {
    /// Validates every setting (ValueError naming the option), binds `listen` (OSError) and starts relaying.
    #[new]
    #[pyo3(signature = (listen, forward, rate=None, delay=None, loss=None, queue=None,
                        reverse_rate=None, reverse_delay=None, reverse_loss=None, reverse_queue=None,
                        seed=1, max_clients=64))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        listen: &str,
        forward: &str,
        rate: Option<String>,
        delay: Option<String>,
        loss: Option<f64>,
        queue: Option<String>,
        reverse_rate: Option<String>,
        reverse_delay: Option<String>,
        reverse_loss: Option<f64>,
        reverse_queue: Option<String>,
        seed: u64,
        max_clients: usize,
    ) -> PyResult<Self> {
        let forward_args = direction_args(rate, delay, loss, queue);
        let reverse_args = direction_args(reverse_rate, reverse_delay, reverse_loss, reverse_queue);
        let spec = cclab_net::EmulatorSpec {
            listen: cclab_net::emulator::parse_addr("--listen", listen).map_err(emulator_error)?,
            forward: cclab_net::emulator::parse_addr("--forward", forward).map_err(emulator_error)?,
            forward_path: forward_args
                .parse("--", &cclab_net::DirectionArgs::default())
                .map_err(emulator_error)?,
            reverse_path: reverse_args.parse("--reverse-", &forward_args).map_err(emulator_error)?,
            seed,
            max_clients,
        };
        let emulator = py.detach(|| cclab_net::Emulator::start(spec)).map_err(emulator_error)?;
        Ok(Self(Some(emulator)))
    }

    /// The address clients send to, as "ADDR:PORT".
    fn local_addr(&self) -> PyResult<String> {
        self.0.as_ref().map(|e| e.local_addr().to_string()).ok_or_else(stopped)
    }

    /// Counts so far, per direction: offered, delivered, dropped_queue_full, lost, send_errors, ...
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.0.as_ref().map(cclab_net::Emulator::stats).ok_or_else(stopped)?;
        stats_dict(py, stats)
    }

    /// Stops relaying and returns the final counts.
    fn stop<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let emulator = self.0.take().ok_or_else(stopped)?;
        let stats = py.detach(|| emulator.stop());
        stats_dict(py, stats)
    }
}

fn stopped() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the emulator was stopped")
}

pyo3::create_exception!(_core, TransferFailed, pyo3::exceptions::PyRuntimeError);

/// A transfer of `cclab send` or `cclab recv`, running on its own thread.
#[pyclass(module = "cclab._core")]
struct Transfer(Option<cclab_net::driver::Handle<cclab_net::driver::Summary>>);

fn transfer_error(e: cclab_net::error::TransferError) -> PyErr {
    use cclab_net::error::TransferError as E;
    match e {
        E::Invalid { .. } => pyo3::exceptions::PyValueError::new_err(e.to_string()),
        E::Bind { .. } | E::File { .. } => pyo3::exceptions::PyOSError::new_err(e.to_string()),
        _ => TransferFailed::new_err(e.to_string()),
    }
}

fn progress_dict<'py>(py: Python<'py>, p: &cclab_net::driver::Progress) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("elapsed_s", p.elapsed as f64 / 1e9)?;
    d.set_item("connected", p.connected)?;
    d.set_item("peer", p.peer.map(|a| a.to_string()))?;
    d.set_item("bytes", p.bytes)?;
    d.set_item("total", p.total)?;
    d.set_item("rtt_ms", p.rtt_us as f64 / 1e3)?;
    d.set_item("cwnd", p.cwnd)?;
    d.set_item("period_us", p.period_us)?;
    d.set_item("flow_window", p.flow_window)?;
    d.set_item("receive_rate", p.receive_rate)?;
    d.set_item("bandwidth", p.bandwidth)?;
    d.set_item("packets_sent", p.packets_sent)?;
    d.set_item("packets_received", p.packets_received)?;
    d.set_item("acks", p.acks)?;
    d.set_item("naks", p.naks)?;
    d.set_item("retransmits", p.retransmits)?;
    d.set_item("timeouts", p.timeouts)?;
    d.set_item("malformed", p.malformed)?;
    d.set_item("unexpected", p.unexpected)?;
    d.set_item("lost_in_host", p.lost_in_host)?;
    let pacing = PyDict::new(py);
    pacing.set_item("sends", p.pacing.sends)?;
    pacing.set_item("mean_late_us", p.pacing.mean_us())?;
    pacing.set_item("p50_late_us", p.pacing.quantile_us(0.5))?;
    pacing.set_item("p99_late_us", p.pacing.quantile_us(0.99))?;
    pacing.set_item("max_late_us", p.pacing.max_late_ns as f64 / 1e3)?;
    d.set_item("pacing", pacing)?;
    Ok(d)
}

#[pymethods]
impl Transfer {
    /// `cclab send`: exactly one of `path` and `bytes`, or neither with `duration_s` (an unbounded test).
    /// `protocol` is "udt" or "tcp"; the options from `recovery` on are TCP's (None: not given).
    #[staticmethod]
    #[pyo3(signature = (
        to, path=None, bytes=None, protocol="udt", cc=None, cc_params=Vec::new(), duration_s=None, mss=1500,
        recovery=None, recovery_params=Vec::new(), pacing=None, pacing_params=Vec::new(), send_buffer=None,
        buffer_params=Vec::new(), memory_cap=None, share_every_s=None, connections=None, stagger_s=None,
        cwnd_growth=None, raw=false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn send(
        py: Python<'_>,
        to: &str,
        path: Option<std::path::PathBuf>,
        bytes: Option<String>,
        protocol: &str,
        cc: Option<String>,
        cc_params: Vec<(String, String)>,
        duration_s: Option<f64>,
        mss: u32,
        recovery: Option<String>,
        recovery_params: Vec<(String, String)>,
        pacing: Option<String>,
        pacing_params: Vec<(String, String)>,
        send_buffer: Option<String>,
        buffer_params: Vec<(String, String)>,
        memory_cap: Option<String>,
        share_every_s: Option<f64>,
        connections: Option<u32>,
        stagger_s: Option<f64>,
        cwnd_growth: Option<String>,
        raw: bool,
    ) -> PyResult<Self> {
        let options = cclab_net::cli::SendOptions {
            to: to.to_string(),
            path,
            bytes,
            protocol: protocol.to_string(),
            cc,
            cc_params,
            duration_s,
            mss,
            raw,
            recovery,
            recovery_params,
            pacing,
            pacing_params,
            send_buffer,
            buffer_params,
            memory_cap,
            share_every_s,
            connections,
            stagger_s,
            cwnd_growth,
        };
        let spec = options.spec().map_err(transfer_error)?;
        Ok(Self(Some(py.detach(|| spec.start()).map_err(transfer_error)?)))
    }

    /// `cclab recv`: listens for one transfer (UDT) or `connections` (TCP); writes the content to `out` if given.
    #[staticmethod]
    #[pyo3(signature = (listen, out=None, timeout_s=10.0, mss=1500, protocol="udt", connections=None, window=None, delayed_ack=false, raw=false))]
    #[allow(clippy::too_many_arguments)]
    fn recv(
        py: Python<'_>,
        listen: &str,
        out: Option<std::path::PathBuf>,
        timeout_s: f64,
        mss: u32,
        protocol: &str,
        connections: Option<u32>,
        window: Option<u32>,
        delayed_ack: bool,
        raw: bool,
    ) -> PyResult<Self> {
        let options = cclab_net::cli::RecvOptions {
            listen: listen.to_string(),
            out,
            timeout_s,
            mss,
            protocol: protocol.to_string(),
            raw,
            connections,
            window,
            delayed_ack,
        };
        let spec = options.spec().map_err(transfer_error)?;
        Ok(Self(Some(py.detach(|| spec.start()).map_err(transfer_error)?)))
    }

    /// This side's socket address, as "ADDR:PORT".
    fn local_addr(&self) -> PyResult<String> {
        Ok(self.0.as_ref().ok_or_else(joined)?.local_addr.to_string())
    }

    fn progress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        progress_dict(py, &self.0.as_ref().ok_or_else(joined)?.progress())
    }

    fn is_finished(&self) -> bool {
        self.0.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Asks the transfer to stop; `join()` then returns what it did.
    fn stop(&self) {
        if let Some(h) = &self.0 {
            h.stop();
        }
    }

    /// Waits for the end: the summary (a dict with the last progress under "progress"), or TransferFailed.
    fn join<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let handle = self.0.take().ok_or_else(joined)?;
        let s = py.detach(|| handle.join()).map_err(transfer_error)?;
        let d = PyDict::new(py);
        d.set_item("progress", progress_dict(py, &s.progress)?)?;
        d.set_item("content_bytes", s.content_bytes)?;
        d.set_item("complete", s.complete)?;
        d.set_item("checksum", s.checksum.map(|c| format!("{c:016x}")))?;
        d.set_item("pattern_checked", s.pattern_checked)?;
        let connections = pyo3::types::PyList::empty(py);
        for c in &s.connections {
            let e = PyDict::new(py);
            e.set_item("index", c.index)?;
            e.set_item("started_s", c.started as f64 / 1e9)?;
            e.set_item("finished_s", c.finished.map(|t| t as f64 / 1e9))?;
            e.set_item("content_bytes", c.content_bytes)?;
            e.set_item("retransmits", c.retransmits)?;
            e.set_item("timeouts", c.timeouts)?;
            e.set_item("checksum", c.checksum.map(|c| format!("{c:016x}")))?;
            connections.append(e)?;
        }
        d.set_item("connections", connections)?;
        let allocations = pyo3::types::PyList::empty(py);
        for a in &s.allocations {
            let e = PyDict::new(py);
            e.set_item("at_s", a.at as f64 / 1e9)?;
            e.set_item("connection", a.connection)?;
            e.set_item("desired", a.desired)?;
            e.set_item("limit", a.limit)?;
            e.set_item("buffered", a.buffered)?;
            e.set_item("cwnd_bytes", a.cwnd_bytes)?;
            e.set_item("srtt_ms", a.srtt as f64 / 1e6)?;
            e.set_item("weight", a.weight)?;
            allocations.append(e)?;
        }
        d.set_item("allocations", allocations)?;
        Ok(d)
    }
}

fn joined() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the transfer was already joined")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(parse_toml, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_run_time, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory, m)?)?;
    m.add_function(wrap_pyfunction!(memory_limit_bytes, m)?)?;
    m.add("DEFAULT_MEMORY_LIMIT", cclab_sim::limits::DEFAULT_MEMORY_LIMIT)?;
    m.add("RUN_TIME_LIMIT_S", cclab_sim::limits::RUN_TIME_LIMIT_S)?;
    m.add_function(wrap_pyfunction!(resolved_toml, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(table_columns, m)?)?;
    m.add_function(wrap_pyfunction!(write_pcaps, m)?)?;
    m.add_function(wrap_pyfunction!(build_id, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_class::<CancelToken>()?;
    m.add_class::<Emulator>()?;
    m.add_class::<Transfer>()?;
    m.add("TransferFailed", m.py().get_type::<TransferFailed>())?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("RunCancelled", m.py().get_type::<RunCancelled>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
