"""Type stubs for the compiled simulator module."""

from typing import Any

# Defined in Python, so that they print their message rather than their args.
from cclab._errors import RunCancelled as RunCancelled
from cclab._errors import ScenarioError as ScenarioError

__version__: str

class CancelToken:
    """A request to stop runs; ``cancel()`` from any thread or a signal handler."""

    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...
    @property
    def progress(self) -> tuple[float, float] | None:
        """``(simulated_s, end_s)`` of the run holding this token, as it last reported; None before it starts."""

DEFAULT_MEMORY_LIMIT: int
RUN_TIME_LIMIT_S: float

#: A column as it crosses from the core: name, Arrow type ("f64", "i64", "bool" or "str"),
#: rows, and Arrow's buffers: validity bitmap (None: no nulls), offsets (strings only), values.
ColumnBuffers = tuple[str, str, int, bytes | None, bytes | None, bytes]

def run_toml(
    text: str,
    name: str,
    seed: int | None = None,
    memory_limit: str | None = None,
    cancel: CancelToken | None = None,
    allow_long: bool = False,
) -> tuple[str, list[tuple[str, list[ColumnBuffers]]]]:
    """Run scenario TOML text; returns ``(header, tables)``: the summary's scalars, connection
    totals, series descriptions and trace as JSON, and the tables (flows, links, transfers,
    metrics, flow_series, link_series) as column buffers. Releases the GIL; raises
    RunCancelled within milliseconds once ``cancel`` is cancelled; refuses a run
    estimated above RUN_TIME_LIMIT_S of CPU unless ``allow_long``.

    ``memory_limit`` (a size such as "16GB", or "unlimited"; default
    ``CCLAB_MEMORY_LIMIT``, else 4 GB) refuses a scenario whose estimate is above it."""

def validate_toml(text: str, name: str, memory_limit: str | None = None, allow_long: bool = True) -> str:
    """Check scenario TOML text without running it; returns the resolved scenario as JSON.
    With ``allow_long=False`` also refuses a run above the run-time limit, as a run does."""

def parse_toml(text: str, name: str) -> str:
    """Scenario TOML text parsed and resolved as JSON, as ``validate_toml`` returns it, but
    without building it: for a scenario that has just run (errors only a build finds pass)."""

def estimate_run_time(text: str, name: str, allow_long: bool = False) -> str:
    """The CPU a run needs as JSON (packet_hops, flow_instances, transfers, cpu_s,
    limit_s); ScenarioError above the limit unless ``allow_long``."""

def estimate_memory(text: str, name: str) -> str:
    """The memory a run needs, as JSON: ``bytes`` and ``parts`` (``key``, ``what``, ``bytes``)."""

def memory_limit_bytes(memory_limit: str | None = None) -> int | None:
    """The limit in bytes (None: unlimited) that ``memory_limit``, else ``CCLAB_MEMORY_LIMIT``,
    else the default sets; ScenarioError if it is not a size or "unlimited"."""

def resolved_toml(text: str, name: str, memory_limit: str | None = None, allow_long: bool = True) -> str:
    """Check scenario TOML text; returns the resolved scenario as scenario TOML that ``run_toml`` accepts."""

def algorithms() -> str:
    """Every algorithm a scenario can name, with parameters and sources, as JSON."""

def quantity(text: str) -> tuple[float, str]:
    """A value written with a unit as a scenario writes it ("20Mbps", "10ms", "64KB", "50/s",
    "500pkts", "25%bdp") as its number in the base unit (s, bit/s, B, /s, packets, BDP) and
    its kind ("duration", "rate", "size", "frequency", "packets", "bdp"); ValueError saying
    why if it is not a non-negative number with a known unit."""

def table_columns() -> dict[str, list[tuple[str, str]]]:
    """The columns of the tables a result holds as columns: the wide time-series views
    ``"flows"`` and ``"links"`` and the completion-time table ``"transfers"``: each column's
    name and its Rust element type (``"f64"``, ``"u32"``, ``"u64"``, ``"String"``,
    ``"Option<f64>"``), in order."""

def build_id() -> str:
    """Hex content hash of the simulator sources this module was built from."""

def build_info() -> dict[str, Any]:
    """``build_id``, ``files`` (how many were hashed), ``git_revision`` (or None),
    ``git_dirty`` (whether the hashed sources differed from it; None without git),
    ``version``, ``profile`` (Cargo profile) and ``rustc``."""

class Emulator:
    """``cclab emulate``'s link emulator: relays UDP datagrams from clients at ``listen`` to
    ``forward`` and back, each direction through a path with a rate, a DropTail queue, a
    propagation delay and Bernoulli loss; the reverse settings default to the forward ones.
    Runs in background threads from construction until :meth:`stop`. ValueError names a bad
    option (``--rate: ...``); OSError reports an address that cannot be bound."""

    def __init__(
        self,
        listen: str,
        forward: str,
        rate: str | None = None,
        delay: str | None = None,
        loss: float | None = None,
        queue: str | None = None,
        reverse_rate: str | None = None,
        reverse_delay: str | None = None,
        reverse_loss: float | None = None,
        reverse_queue: str | None = None,
        seed: int = 1,
        max_clients: int = 64,
    ) -> None: ...
    def local_addr(self) -> str:
        """The address clients send to."""
    def stats(self) -> dict[str, Any]:
        """``forward`` and ``reverse`` counts (offered, delivered, dropped_queue_full, lost,
        send_errors, bytes, max_queue_bytes, mean_queueing_s), ``clients``, ``refused_client_datagrams``."""
    def stop(self) -> dict[str, Any]:
        """Stops relaying; returns the final :meth:`stats`."""
