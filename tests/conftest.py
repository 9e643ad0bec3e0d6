import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def cclab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the installed command line as a user would, capturing its output."""
    return subprocess.run([sys.executable, "-m", "cclab", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def ctrl_c_as_on_a_terminal() -> None:
    """A `preexec_fn` for a child a test sends SIGINT: the default handling of Ctrl-C. A shell that
    started the tests in the background passes SIGINT on ignored, and Python then installs no
    handler, so the child would go on as if Ctrl-C had never come."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def dumbbell() -> Path:
    return EXAMPLES / "dumbbell.toml"
