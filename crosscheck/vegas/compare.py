"""cclab side of the Vegas cross-check (run by hand, not in CI).

Runs dumbbell.toml (cc = "vegas", variant = "linux", SACK recovery) with one
and with two flows through the Rust example runner, and prints beside the
ns-3 3.44 result saved in ns3_result.json: each flow's goodput from 5 s to
30 s and the ratio to ns-3's; the bottleneck queue from 5 s (mean and range
of the 10 ms samples, packets); the drops before and after 5 s; each flow's
cwnd from 5 s (mean and range) and when it first reached the value it holds
at the end; and cwnd every 0.5 s for the first 3 s. The paper variant
(`variant = "paper"`, 1, 3, 1) is run on the same network for reference.

    python3 crosscheck/vegas/compare.py          # from the repository root
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cclab_runner import run_scenario  # noqa: E402 (a sibling module, found through the path above)

HERE = Path(__file__).parent
SECONDS = 25.0  # 5 s to 30 s
FROM_S = 5.0
EARLY_S = 3.0
EARLY_EVERY_S = 0.5


def ours(flows: int, variant: str = "linux") -> dict:
    """The run in ns3_result.json's shape: bytes from 5 s, drops, cwnd and queue samples."""
    text = (HERE / "dumbbell.toml").read_text().replace("count = 1", f"count = {flows}")
    text = text.replace('variant = "linux"', f'variant = "{variant}"')
    r = run_scenario(text)
    series = r["timeseries"]["series"]
    m = r["timeseries"]["metrics"]
    cwnd: list[list[float]] = [[] for _ in range(flows)]
    queue: list[float] = []
    for t, s, v in zip(m["time_s"], m["series"], m["value"], strict=True):
        if t <= 0:
            continue
        info = series[s]
        if info["metric"] == "cwnd":
            cwnd[info["instance"]].append(v)
        else:
            queue.append(v)
    link = r["links"][0]
    return {
        "bytes_from_5s": [f["goodput_bps"] * SECONDS / 8 for f in r["flows"]],
        "drops_from_5s": link["drops"],
        "cwnd_segments": cwnd,
        "cwnd_every_s": 0.1,
        "queue_packets": queue,
        "queue_every_s": 0.01,
    }


def after(values: list[float], every: float, t0: float) -> list[float]:
    return [v for i, v in enumerate(values) if (i + 1) * every >= t0 - 1e-9]


def spread(values: list[float]) -> str:
    return f"mean {sum(values) / len(values):6.2f}, {min(values):.1f}..{max(values):.1f}"


def settled_at(values: list[float], every: float) -> float:
    """When the series first reached its final value and stayed within one segment of it."""
    final = values[-1]
    for i in range(len(values)):
        if all(abs(v - final) <= 1.0 for v in values[i:]):
            return (i + 1) * every
    return float("nan")


def describe(name: str, run: dict) -> list[str]:
    lines = []
    queue = after(run["queue_packets"], run["queue_every_s"], FROM_S)
    lines.append(f"  {name:<13} queue {spread(queue)} packets; drops from 5 s {run['drops_from_5s']}")
    for i, cwnd in enumerate(run["cwnd_segments"]):
        every = run["cwnd_every_s"]
        steps = range(1, int(EARLY_S / EARLY_EVERY_S) + 1)
        early = " ".join(f"{cwnd[round(k * EARLY_EVERY_S / every) - 1]:.1f}" for k in steps)
        lines.append(
            f"  {name:<13} flow {i} cwnd from 5 s {spread(after(cwnd, every, FROM_S))}, final {cwnd[-1]:.1f} "
            f"(within 1 from {settled_at(cwnd, every):.1f} s); 0.5..3 s: {early}"
        )
    return lines


def main() -> None:
    ns3 = json.loads((HERE / "ns3_result.json").read_text())
    print(f"{'case':<8} {'flow':>4} {'ns-3 Mb/s':>9} {'cclab Mb/s':>10} {'ratio':>6} {'cclab paper Mb/s':>16}")
    details = []
    for ref in ns3["runs"]:
        flows = ref["flows"]
        mine, paper = ours(flows), ours(flows, "paper")
        for i in range(flows):
            theirs = ref["bytes_from_5s"][i] * 8 / SECONDS / 1e6
            ours_ = mine["bytes_from_5s"][i] * 8 / SECONDS / 1e6
            pap = paper["bytes_from_5s"][i] * 8 / SECONDS / 1e6
            case = f"{flows} flow{'s' if flows > 1 else ''}"
            print(f"{case:<8} {i:>4} {theirs:9.2f} {ours_:10.2f} {ours_ / theirs:6.3f} {pap:16.2f}")
        details.append(f"{flows} flow(s): ns-3 drops before 5 s {ref['drops_before_5s']}")
        details += describe("ns-3", ref) + describe("cclab linux", mine) + describe("cclab paper", paper)
    print()
    print("\n".join(details))


if __name__ == "__main__":
    main()
