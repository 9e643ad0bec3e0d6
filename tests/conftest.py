import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def cclab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the installed command line as a user would, capturing its output."""
    return subprocess.run([sys.executable, "-m", "cclab", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture
def dumbbell() -> Path:
    return EXAMPLES / "dumbbell.toml"
