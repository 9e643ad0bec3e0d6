"""Argument rules shared by the command line and the Python API, so that
``cclab sweep --seed -5`` and ``cclab.sweep(base_seed=-5)`` fail alike."""

from __future__ import annotations

import numbers
from collections.abc import Callable

#: Seeds are unsigned 64-bit integers.
SEEDS = (0, 2**64)
#: Counts (replications, jobs, repeats) are at least 1 and below 2^31.
COUNTS = (1, 2**31)


def _bound(n: int) -> str:
    """2^64 rather than 18446744073709551616."""
    return f"2^{n.bit_length() - 1}" if n > 1024 and n & (n - 1) == 0 else str(n)


def range_problem(n: int, low: int, high: int) -> str | None:
    """Why ``n`` is outside ``[low, high)``, or None."""
    return None if low <= n < high else f"{n} is outside [{_bound(low)}, {_bound(high)})"


def whole_number(value: object, name: str, bounds: tuple[int, int], error: Callable[[str], Exception]) -> int:
    """``value`` as an int in ``[low, high)``; else ``error("NAME: ...")``. Booleans,
    floats and strings are not whole numbers, even when they look like one."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error(f"{name}: {value!r} is not a whole number")
    n = int(value)
    problem = range_problem(n, *bounds)
    if problem is not None:
        raise error(f"{name}: {problem}")
    return n


def limit_text(memory_limit: object) -> str | None:
    """A memory limit as the simulator reads it: a size (``"16GB"``), a number of
    bytes, ``"unlimited"``, or None (``CCLAB_MEMORY_LIMIT``, else the default)."""
    from cclab import _core

    if memory_limit is None or isinstance(memory_limit, str):
        return memory_limit
    if isinstance(memory_limit, numbers.Integral) and not isinstance(memory_limit, bool):
        return f"{int(memory_limit)}B"
    raise _core.ScenarioError(
        f'memory_limit: expected a size like "16GB", a number of bytes or "unlimited", not {memory_limit!r}',
        "memory_limit",
    )
