"""Writes the two packet-delivery traces in this directory, in Mahimahi's
format (one line per delivery opportunity: the millisecond at which up to
1504 bytes may leave; the file repeats with its last time as the period).

- ``constant-12mbps.trace``: one opportunity every millisecond for one
  second, 1504 bytes/ms, 12.03 Mbit/s.
- ``variable.trace``: 20 s of a made-up cellular-like link. Its rate is a
  mean-reverting random walk in log space, drawn every 100 ms (geometric
  mean 8 Mbit/s, a step's standard deviation 0.35 in log space, pulled back
  towards the mean by a fifth of the distance each step), clamped to
  0.5-40 Mbit/s, with an outage (no opportunity) of 200-600 ms starting in a
  step with probability 1/80. Within each millisecond the rate's bytes are
  added to a credit, and an opportunity is written whenever the credit
  reaches 1504 bytes. The seed is fixed, so the file is reproducible.

Neither is a recorded trace: they are ours, generated here, so that cclab
ships no third party's data. Run ``python3 examples/traces/generate.py`` to
regenerate them byte for byte.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

OPPORTUNITY_BYTES = 1504
HERE = Path(__file__).resolve().parent


def constant(rate_per_ms: int, length_ms: int) -> list[int]:
    """`rate_per_ms` opportunities in each millisecond 1..length_ms."""
    return [ms for ms in range(1, length_ms + 1) for _ in range(rate_per_ms)]


def variable(seed: int = 44, length_ms: int = 20_000) -> list[int]:
    rng = random.Random(seed)
    mean_log = math.log(8e6)
    log_rate = mean_log
    outage_left_ms = 0
    credit = 0.0
    times: list[int] = []
    for ms in range(1, length_ms + 1):
        if ms % 100 == 1:
            log_rate += 0.2 * (mean_log - log_rate) + rng.gauss(0.0, 0.35)
            log_rate = min(max(log_rate, math.log(0.5e6)), math.log(40e6))
            if outage_left_ms == 0 and rng.random() < 1 / 80:
                outage_left_ms = rng.randint(200, 600)
        if outage_left_ms > 0:
            outage_left_ms -= 1
            continue
        credit += math.exp(log_rate) / 8 / 1000
        while credit >= OPPORTUNITY_BYTES:
            credit -= OPPORTUNITY_BYTES
            times.append(ms)
    if not times or times[-1] != length_ms:
        times.append(length_ms)  # the period is the last time: make it the full length
    return times


def write(name: str, times: list[int]) -> None:
    (HERE / name).write_text("".join(f"{t}\n" for t in times))


if __name__ == "__main__":
    write("constant-12mbps.trace", constant(1, 1000))
    write("variable.trace", variable())
