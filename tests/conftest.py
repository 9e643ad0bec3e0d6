import os
import re
import shutil
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


#: What `cargo test` needs for the UDT 4 interoperability tests
#: (crates/cclab-net/build.rs ignores them without it, unless CI is set).
UDT4_HEADER = Path("/usr/include/udt/udt.h")
UDT4_INSTALL = "apt-get install -y g++ libudt-dev"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Says once, at the end of the test command, which tests a missing system
    package kept from running and the line that installs it: the skipped ones
    here, and cargo's ignored UDT 4 interoperability tests before them."""
    needs: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        found = re.search(r"\((apt-get install [^)]+)\)", reason)
        if found:
            needs[found[1]] = needs.get(found[1], 0) + 1
    for install, count in needs.items():
        terminalreporter.write_line(f"{count} tests skipped for a missing system package: `{install}` runs them")
    ci = os.environ.get("CI", "") not in ("", "0", "false")
    if not ci and not (shutil.which("g++") and UDT4_HEADER.exists()):
        terminalreporter.write_line(
            f"cargo ignored the 4 UDT 4 interoperability tests (crates/cclab-net): `{UDT4_INSTALL}` runs them"
        )
