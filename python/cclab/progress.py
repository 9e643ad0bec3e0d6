"""A progress line for long work: shown on a terminal, silent when piped.

Counts (runs of a sweep) draw as ``3/8 runs``; anything else (the simulated
seconds of one run) through ``describe``. With ``delay_s``, nothing is drawn
until the work has taken that long, so quick work prints nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class Progress:
    def __init__(self, total: float, done: float = 0, label: str = "runs", stream: TextIO | None = None,
                 enabled: bool | None = None, describe: Callable[[float, float], str] | None = None,
                 delay_s: float = 0.0) -> None:  # fmt: skip
        self.total = total
        self.done = done
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.describe = describe or (lambda done, total: f"{done:g}/{total:g} {label}")
        self.delay_s = delay_s
        self._start = time.monotonic()
        self._resumed = done
        self._drawn = False
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

    def _draw(self) -> None:
        if not self.enabled or self.total == 0:
            return
        if not self._drawn and time.monotonic() - self._start < self.delay_s:
            return
        self._drawn = True
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = time.monotonic() - self._start
        fresh = self.done - self._resumed
        if fresh > 0 and self.done < self.total:
            eta = f", ETA {elapsed / fresh * (self.total - self.done):.0f} s"
        else:
            eta = ""
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r[{bar}] {self.describe(self.done, self.total)}{eta}   ")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._drawn and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()
