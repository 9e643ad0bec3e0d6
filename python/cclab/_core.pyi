"""Type stubs for the compiled simulator module."""

from typing import Any

__version__: str

class ScenarioError(ValueError):
    """A scenario problem. ``args`` is ``(message, key_path)``."""

def run_toml(text: str, name: str, seed: int | None = None) -> str:
    """Run scenario TOML text; returns the JSON summary. Releases the GIL."""

def validate_toml(text: str, name: str) -> str:
    """Check scenario TOML text without running it; returns the resolved scenario as JSON."""

def resolved_toml(text: str, name: str) -> str:
    """Check scenario TOML text; returns the resolved scenario as scenario TOML that ``run_toml`` accepts."""

def algorithms() -> str:
    """Every algorithm a scenario can name, with parameters and sources, as JSON."""

def build_id() -> str:
    """Hex content hash of the simulator sources this module was built from."""

def build_info() -> dict[str, Any]:
    """``build_id``, ``files`` (how many were hashed), ``git_revision`` (or None),
    ``git_dirty`` (whether the hashed sources differed from it; None without git),
    ``version``, ``profile`` (Cargo profile) and ``rustc``."""
