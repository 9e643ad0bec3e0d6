"""Type stubs for the compiled simulator module."""

from typing import Any

__version__: str

class ScenarioError(ValueError):
    """A scenario problem. ``args`` is ``(message, key_path)``."""

class RunCancelled(KeyboardInterrupt):
    """A run stopped by its CancelToken (Ctrl-C). ``args`` is ``(message, simulated_seconds_reached)``."""

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

def run_toml(
    text: str,
    name: str,
    seed: int | None = None,
    memory_limit: str | None = None,
    cancel: CancelToken | None = None,
) -> str:
    """Run scenario TOML text; returns the JSON summary. Releases the GIL; raises
    RunCancelled within milliseconds once ``cancel`` is cancelled.

    ``memory_limit`` (a size such as "16GB", or "unlimited"; default
    ``CCLAB_MEMORY_LIMIT``, else 4 GB) refuses a scenario whose estimate is above it."""

def validate_toml(text: str, name: str, memory_limit: str | None = None) -> str:
    """Check scenario TOML text without running it; returns the resolved scenario as JSON."""

def estimate_memory(text: str, name: str) -> str:
    """The memory a run needs, as JSON: ``bytes`` and ``parts`` (``key``, ``what``, ``bytes``)."""

def memory_limit_bytes(memory_limit: str | None = None) -> int | None:
    """The limit in bytes (None: unlimited) that ``memory_limit``, else ``CCLAB_MEMORY_LIMIT``,
    else the default sets; ScenarioError if it is not a size or "unlimited"."""

def resolved_toml(text: str, name: str, memory_limit: str | None = None) -> str:
    """Check scenario TOML text; returns the resolved scenario as scenario TOML that ``run_toml`` accepts."""

def algorithms() -> str:
    """Every algorithm a scenario can name, with parameters and sources, as JSON."""

def build_id() -> str:
    """Hex content hash of the simulator sources this module was built from."""

def build_info() -> dict[str, Any]:
    """``build_id``, ``files`` (how many were hashed), ``git_revision`` (or None),
    ``git_dirty`` (whether the hashed sources differed from it; None without git),
    ``version``, ``profile`` (Cargo profile) and ``rustc``."""
