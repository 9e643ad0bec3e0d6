"""A progress line for long work: on a terminal or in a Jupyter notebook, silent when piped.

Counts (runs of a sweep) draw as ``3/8 runs``; anything else (the simulated
seconds of one run) through ``describe``. With ``delay_s``, nothing is drawn
until the work has taken that long, so quick work prints nothing.

In a Jupyter (IPython) kernel the line is a progress bar in the running cell's
output, redrawn in place: a kernel's stderr is no terminal, yet someone reads
what the cell shows.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from html import escape
from typing import TextIO

#: Least time between two redraws in a notebook: each goes to the browser as a
#: message, and a sweep of quick runs advances hundreds of times a second.
NOTEBOOK_REDRAW_S = 0.2
#: Characters of the bar drawn on a terminal.
WIDTH = 30


def kernel_running() -> bool:
    """Whether this process is an IPython kernel (Jupyter, nbclient), whose output
    goes to a notebook. IPython is consulted only if something loaded it already,
    as every kernel has: the command line does not pay for importing it."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    # A kernel's shell has the kernel it serves; the terminal IPython's has none.
    return shell is not None and getattr(shell, "kernel", None) is not None


def notebook_display(bundle: dict[str, str], display_id: str, update: bool) -> None:
    """Shows ``bundle`` (MIME type -> data) in the running cell's output, or with
    ``update`` replaces what was shown under ``display_id``."""
    from IPython.display import display

    display(bundle, raw=True, display_id=display_id, update=update)


class Progress:
    def __init__(self, total: float, done: float = 0, label: str = "runs", stream: TextIO | None = None,
                 enabled: bool | None = None, describe: Callable[[float, float], str] | None = None,
                 delay_s: float = 0.0) -> None:  # fmt: skip
        self.total = total
        self.done = done
        self.label = label
        # A stream given is written to as a terminal, kernel or not.
        self.notebook = stream is None and kernel_running()
        self.stream = stream or sys.stderr
        self.enabled = (self.notebook or self.stream.isatty()) if enabled is None else enabled
        self.describe = describe or (lambda done, total: f"{done:g}/{total:g} {label}")
        self.delay_s = delay_s
        self._start = time.monotonic()
        self._resumed = done
        self._drawn = False
        self._display_id = uuid.uuid4().hex
        self._last_redraw = 0.0
        self._pending = False  # a notebook state not drawn yet, held back by NOTEBOOK_REDRAW_S
        self._draw()

    def advance(self, n: float = 1) -> None:
        self.done += n
        self._draw()

    def update(self, done: float, total: float | None = None) -> None:
        """Sets how much is done (and the total, if it is known only now)."""
        if total is not None:
            self.total = total
        self.done = done
        self._draw()

    def _draw(self, flush: bool = False) -> None:
        if not self.enabled or self.total == 0:
            return
        now = time.monotonic()
        if not self._drawn and now - self._start < self.delay_s:
            return
        finished = self.done >= self.total
        if self.notebook and self._drawn and not (finished or flush) and now - self._last_redraw < NOTEBOOK_REDRAW_S:
            self._pending = True
            return
        first = not self._drawn
        self._drawn, self._pending, self._last_redraw = True, False, now
        filled = int(WIDTH * self.done / self.total)
        fresh = self.done - self._resumed
        if fresh > 0 and not finished:
            eta = f", ETA {(now - self._start) / fresh * (self.total - self.done):.0f} s"
        else:
            eta = ""
        line = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.describe(self.done, self.total)}{eta}"
        if self.notebook:
            fraction = min(max(self.done / self.total, 0.0), 1.0)
            html = (f'<div class="cclab-progress"><progress value="{fraction:.4f}" max="1" style="width: 20em">'
                    f"</progress> <span>{escape(self.describe(self.done, self.total) + eta)}</span></div>")  # fmt: skip
            notebook_display({"text/plain": line, "text/html": html}, self._display_id, update=not first)
            return
        self.stream.write(f"\r{line}   ")
        if finished:
            self.stream.write("\n")
        self.stream.flush()

    def close(self) -> None:
        """Ends the line (once: a second call does nothing), so that what is
        printed next, such as an error, starts a line of its own."""
        if not (self.enabled and self._drawn):
            return
        if self.notebook:
            if self._pending:
                self._draw(flush=True)  # the last state, not one up to NOTEBOOK_REDRAW_S older
        elif self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()
        self._drawn = False
