"""Ctrl-C while simulations run.

A simulation runs in Rust with the GIL released, and Python runs signal
handlers only in the main thread, between bytecodes: a main thread that called
the simulator itself would not see Ctrl-C until the run ended (hours, for a
long scenario). So the main thread never waits inside the simulator: runs go to
worker threads, the main thread waits for them, and while it does the first
SIGINT cancels the runs' tokens instead of raising KeyboardInterrupt at a random
point. The runs stop within milliseconds and the caller finishes in order
(keeps what finished, removes what did not, reports). A second SIGINT does not
wait for anything: it goes to the handler installed before (Python's raises
KeyboardInterrupt), or, in the ``cclab`` command, ends the process at once.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

#: Longest wait between two looks at the main thread's state; on POSIX a signal
#: interrupts the wait at once, elsewhere it is the delay before Ctrl-C is seen.
WAIT_S = 0.1

#: Exit status after Ctrl-C, as a shell reports a process ended by SIGINT.
EXIT_INTERRUPTED = 130

_exit_on_second = False


def exit_on_second_interrupt() -> None:
    """Makes a second Ctrl-C end the process at once with status 130.

    For the ``cclab`` command: a library must not end its host process, so by
    default the second Ctrl-C raises KeyboardInterrupt instead.
    """
    global _exit_on_second
    _exit_on_second = True


class Interrupt:
    """How many times SIGINT arrived inside :func:`cancel_on_sigint`."""

    def __init__(self) -> None:
        self.count = 0

    def __bool__(self) -> bool:
        return self.count > 0


@contextmanager
def cancel_on_sigint(cancel: Callable[[], None]) -> Iterator[Interrupt]:
    """Inside the block, the first SIGINT calls ``cancel`` and returns; the second
    exits (see :func:`exit_on_second_interrupt`) or goes to the previous handler.

    ``cancel`` runs in a signal handler, between two bytecodes of the main
    thread: it must only set flags (``CancelToken.cancel``, ``Event.set``). Off
    the main thread, or when SIGINT is not handled by Python (ignored, or the
    default action of the operating system), nothing changes.
    """
    state = Interrupt()
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if not callable(previous):
        yield state
        return

    def handler(signum: int, frame: FrameType | None) -> Any:
        state.count += 1
        if state.count == 1:
            cancel()
            return None
        if _exit_on_second:
            sys.stderr.write("cclab: interrupted again; exiting at once\n")
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        return previous(signum, frame)

    signal.signal(signal.SIGINT, handler)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)


def call_interruptibly(
    work: Callable[[], T], cancel: Callable[[], None], while_waiting: Callable[[], None] | None = None
) -> T:
    """``work()``, run on a worker thread while the main thread waits, so that
    the first Ctrl-C calls ``cancel`` (after which ``work`` should end promptly,
    typically raising ``RunCancelled``). Returns its value or raises its exception.
    ``while_waiting`` is called every ``WAIT_S`` while it runs (a progress line).
    Off the main thread it simply calls ``work``."""
    if threading.current_thread() is not threading.main_thread():
        return work()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as e:  # noqa: BLE001 - handed to the main thread as it is
            outcome["error"] = e

    # Not a daemon: a thread inside Rust must not be frozen by interpreter
    # shutdown. It cannot outlive the main thread by long: its run was cancelled.
    worker = threading.Thread(target=target, name="cclab-run")
    with cancel_on_sigint(cancel):
        worker.start()
        while worker.is_alive():
            worker.join(WAIT_S)
            if while_waiting is not None and worker.is_alive():
                while_waiting()
    if "error" in outcome:
        error = outcome.pop("error")
        raise error
    value: T = outcome["value"]
    return value
