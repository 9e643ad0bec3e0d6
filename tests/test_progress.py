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
    slow.close()
    assert seen.getvalue().startswith("\r[##....") and "1.5 of 20 simulated s, ETA " in seen.getvalue()
    assert seen.getvalue().endswith("\n"), "an unfinished line is ended"
    assert seen.getvalue().count("\n") == 1, "and only once"


def test_the_token_reports_progress_to_the_library(tmp_path: Path) -> None:
    token = cclab.CancelToken()
    assert token.progress is None
    cclab.run(scenario_file(tmp_path, "3s"), cancel=token)
    assert token.progress == (3.0, 3.0)


# --- In a Jupyter kernel (issue 48): a bar in the cell's output, redrawn in place ------------


class Displayed:
    """Records what Progress shows in a notebook, as IPython's display would."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, str], str, bool]] = []

    def __call__(self, bundle: dict[str, str], display_id: str, update: bool) -> None:
        self.calls.append((bundle, display_id, update))


def in_a_kernel(monkeypatch) -> Displayed:
    import cclab.progress

    shown = Displayed()
    monkeypatch.setattr(cclab.progress, "kernel_running", lambda: True)
    monkeypatch.setattr(cclab.progress, "notebook_display", shown)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a kernel's stderr is no terminal
    return shown


def test_kernel_running_tells_a_kernel_from_a_terminal_ipython(monkeypatch) -> None:
    import types

    from cclab.progress import kernel_running

    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert not kernel_running()
    fake = types.ModuleType("IPython")
    monkeypatch.setitem(sys.modules, "IPython", fake)
    shells = {"kernel": types.SimpleNamespace(kernel=object()), "terminal": types.SimpleNamespace(), "none": None}
    seen = {}
    for name, shell in shells.items():
        fake.get_ipython = lambda shell=shell: shell  # type: ignore[attr-defined]
        seen[name] = kernel_running()
    assert seen == {"kernel": True, "terminal": False, "none": False}


def test_in_a_kernel_the_bar_is_shown_once_and_updated_in_place(monkeypatch) -> None:
    import html.parser

    import cclab.progress

    shown = in_a_kernel(monkeypatch)
    monkeypatch.setattr(cclab.progress, "NOTEBOOK_REDRAW_S", 0.0)
    bar = Progress(4, done=1)  # resumed: one run was cached
    assert bar.enabled
    for _ in range(3):
        bar.advance()
    bar.close()
    assert sys.stderr.getvalue() == ""
    assert [update for _, _, update in shown.calls] == [False, True, True, True]
    assert len({display_id for _, display_id, _ in shown.calls}) == 1
    htmls = [bundle["text/html"] for bundle, _, _ in shown.calls]
    assert "1/4 runs" in htmls[0] and "ETA" not in htmls[0], "no ETA before a run of this session has finished"
    assert "2/4 runs, ETA " in htmls[1] and 'value="0.5000"' in htmls[1]
    assert "4/4 runs" in htmls[-1] and "ETA" not in htmls[-1] and 'value="1.0000"' in htmls[-1]
    assert shown.calls[-1][0]["text/plain"].startswith("[" + "#" * 30 + "] 4/4 runs")
    parser = html.parser.HTMLParser()
    parser.feed(htmls[-1])
    parser.close()


def test_in_a_kernel_text_is_escaped_and_redraws_are_rationed(monkeypatch) -> None:
    import cclab.progress

    shown = in_a_kernel(monkeypatch)
    monkeypatch.setattr(cclab.progress, "NOTEBOOK_REDRAW_S", 3600.0)  # however slow the machine
    bar = Progress(1000, describe=lambda done, total: f"{done:g} <of> {total:g} & more")
    for _ in range(500):
        bar.advance()
    # Hundreds of quick runs within NOTEBOOK_REDRAW_S: one message, not one each.
    assert len(shown.calls) == 1
    bar.close()
    # Closing shows the state reached, which the rationing held back.
    assert len(shown.calls) == 2 and "500 &lt;of&gt; 1000 &amp; more" in shown.calls[-1][0]["text/html"]
    for _ in range(500):
        bar.advance()
    assert "1000 &lt;of&gt; 1000" in shown.calls[-1][0]["text/html"], "the end is always shown"


def test_in_a_kernel_quick_or_disabled_work_shows_nothing(monkeypatch) -> None:
    shown = in_a_kernel(monkeypatch)
    quick = Progress(0, delay_s=60, describe=lambda done, total: f"{done} of {total}")
    quick.update(1.5, 20)
    quick.close()
    off = Progress(4, enabled=False)
    off.advance(4)
    off.close()
    assert shown.calls == []
    # A stream given is written to as before, kernel or not.
    stream = io.StringIO()
    Progress(4, stream=stream, enabled=True).advance(4)
    assert shown.calls == [] and stream.getvalue().endswith("4/4 runs   \n")


def test_outside_a_kernel_nothing_is_drawn_when_stderr_is_not_a_terminal(monkeypatch) -> None:
    import cclab.progress

    shown = Displayed()
    monkeypatch.setattr(cclab.progress, "kernel_running", lambda: False)
    monkeypatch.setattr(cclab.progress, "notebook_display", shown)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    bar = Progress(4)
    bar.advance(4)
    assert not bar.enabled and shown.calls == [] and sys.stderr.getvalue() == ""


def test_a_run_shown_ends_its_line_at_the_end_and_a_quick_one_shows_nothing(tmp_path: Path, monkeypatch) -> None:
    import cclab.api

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    scenario = scenario_file(tmp_path, "3s")
    monkeypatch.setattr(sys, "stderr", Terminal())
    cclab.run(scenario, progress=True)
    assert sys.stderr.getvalue() == "", "a run quicker than the delay draws nothing"
    monkeypatch.setattr(cclab.api, "RUN_PROGRESS_DELAY_S", 0.0)
    cclab.run(scenario, progress=True)
    # Not the last poll's state (the run may have ended before any): the end, as the last line.
    assert sys.stderr.getvalue().endswith("\r[" + "#" * 30 + "] 3.0 of 3 simulated s   \n"), sys.stderr.getvalue()
