"""Long runs show how far they have got (issue 8, item 5): on a terminal, the
simulated time reached; nothing for short runs or when stderr is not a terminal."""

import io
import os
import pty
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

import cclab
from cclab.progress import Progress
from conftest import ctrl_c_as_on_a_terminal
from test_lifecycle import scenario_file, wait_until

#: The progress line: a bar, then "T of END simulated s".
PROGRESS = re.compile(r"\[[#.]{30}\] (\d+\.\d) of 86400 simulated s")


def read_all(fd: int, quiet_s: float = 10) -> str:
    out = b""
    while select.select([fd], [], [], quiet_s)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed (Linux reports EIO)
            break
        if not chunk:
            break
        out += chunk
    return out.decode()


def test_a_long_run_on_a_terminal_shows_the_simulated_time_reached(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    # A day of simulated time: far more than the 3 s of CPU the test waits for, however fast the run.
    proc = subprocess.Popen([sys.executable, "-m", "cclab", "run", str(scenario_file(tmp_path, "24h"))],
                            stdin=secondary, stdout=secondary, stderr=secondary, start_new_session=True,
                            preexec_fn=ctrl_c_as_on_a_terminal)  # fmt: skip
    os.close(secondary)
    seen = bytearray()

    def progress_shown_twice() -> bool:
        # The terminal is read while waiting: a full pty buffer would block the progress line's writer.
        while select.select([primary], [], [], 0)[0]:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen.extend(chunk)
        return proc.poll() is not None or len(PROGRESS.findall(seen.decode(errors="replace"))) >= 2

    try:
        # The line appears after a second of running and is redrawn as the run goes on.
        wait_until(progress_shown_twice, 120, "the progress line has been drawn twice")
        os.killpg(proc.pid, signal.SIGINT)
        screen = seen.decode() + read_all(primary)
        assert proc.wait(timeout=30) == 130, screen
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(primary)
    reached = [float(t) for t in PROGRESS.findall(screen)]
    assert len(reached) >= 2, screen
    assert reached == sorted(reached) and 0 < reached[-1] < 86400, reached
    # The line is redrawn in place and ended before the interruption is reported.
    assert "\r\ncclab: interrupted: run cancelled at " in screen, screen


def test_no_progress_line_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "cclab", "run", str(scenario_file(tmp_path, "20s"))],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_nothing_is_drawn_before_the_delay() -> None:
    def bar(delay_s: float) -> tuple[Progress, io.StringIO]:
        stream = io.StringIO()
        return Progress(0, stream=stream, enabled=True, delay_s=delay_s,
                        describe=lambda done, total: f"{done:.1f} of {total:g} simulated s"), stream  # fmt: skip

    quick, seen = bar(delay_s=60)
    quick.update(1.5, 20)
    quick.close()
    assert seen.getvalue() == ""
    slow, seen = bar(delay_s=0)
    slow.update(1.5, 20)
    slow.close()
    assert seen.getvalue().startswith("\r[##....") and "1.5 of 20 simulated s, ETA " in seen.getvalue()
    assert seen.getvalue().endswith("\n"), "an unfinished line is ended"


def test_the_token_reports_progress_to_the_library(tmp_path: Path) -> None:
    token = cclab.CancelToken()
    assert token.progress is None
    cclab.run(scenario_file(tmp_path, "3s"), cancel=token)
    assert token.progress == (3.0, 3.0)
