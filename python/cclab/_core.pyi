"""Type stubs for the compiled simulator module."""

__version__: str

class ScenarioError(ValueError):
    """A scenario problem. ``args`` is ``(message, key_path)``."""

def run_toml(text: str, name: str, seed: int | None = None) -> str:
    """Run scenario TOML text; returns the JSON summary. Releases the GIL."""

def validate_toml(text: str, name: str) -> str:
    """Check scenario TOML text without running it; returns the resolved scenario as JSON."""

def algorithms() -> str:
    """Every algorithm a scenario can name, with parameters and sources, as JSON."""
