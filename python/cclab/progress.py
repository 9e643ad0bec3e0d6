"""A progress line for long work: shown on a terminal, silent when piped."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, done: int = 0, label: str = "runs", stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:  # fmt: skip
        self.total = total
        self.done = done
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._start = time.monotonic()
        self._resumed = done
        self._draw()

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def _draw(self) -> None:
        if not self.enabled or self.total == 0:
            return
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = time.monotonic() - self._start
        fresh = self.done - self._resumed
        if fresh > 0 and self.done < self.total:
            eta = f", ETA {elapsed / fresh * (self.total - self.done):.0f} s"
        else:
            eta = ""
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} {self.label}{eta}   ")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()
