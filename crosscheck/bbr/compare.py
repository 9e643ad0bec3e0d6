"""cclab side of the BBR cross-check (run by hand, not in CI).

Runs one_flow.toml for each case of ns3_bbr.py (BBR without loss, BBR and
Reno with 1 % random loss on the bottleneck; BBR also with
`rtprop_refresh_on_equal = true`, the older Linux rule ns-3 follows) through the Rust example runner, and
prints beside the ns-3 3.44 result saved in ns3_result.json the goodput from
5 s to 30 s, the ratio to ns-3's, and when cwnd fell to 4 segments (PROBE_RTT,
or a loss for Reno), first time of each burst.

    python3 crosscheck/bbr/compare.py          # from the repository root
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cclab_runner import run_scenario  # noqa: E402 (a sibling module, found through the path above)

HERE = Path(__file__).parent
SECONDS = 25.0  # 5 s to 30 s


def bursts(times: list[float]) -> list[float]:
    """The first time of each run of times less than 1 s apart."""
    starts: list[float] = []
    last = -10.0
    for t in times:
        if t - last > 1.0:
            starts.append(round(t, 2))
        last = t
    return starts


def ours(cc: str, params: str, loss: float) -> tuple[float, list[float]]:
    text = (HERE / "one_flow.toml").read_text()
    text = text.replace('cc = "bbr"', f'cc = "{cc}"').replace("cc_params = {}", f"cc_params = {{ {params} }}")
    text = text.replace("loss = 0.0", f"loss = {loss}")
    r = run_scenario(text)
    goodput = r["flows"][0]["bytes_delivered"] * 8 / SECONDS / 1e6
    m = r["timeseries"]["metrics"]
    cwnd = [(t, v) for t, v in zip(m["time_s"], m["value"], strict=True)]
    low = [t for (t, v), (_, before) in zip(cwnd[1:], cwnd, strict=False) if v <= 4 and before > 4]
    return goodput, bursts(low)


def main() -> None:
    ns3 = json.loads((HERE / "ns3_result.json").read_text())
    theirs = {(r["cc"], r["loss"]): r for r in ns3["runs"]}
    cases = [
        ("ns3::TcpBbr", 0.0, "bbr", ""),
        ("ns3::TcpBbr", 0.0, "bbr", "rtprop_refresh_on_equal = true"),
        ("ns3::TcpBbr", 0.01, "bbr", ""),
        ("ns3::TcpNewReno", 0.01, "reno", ""),
    ]
    print(f"{'case':<52} {'ns-3 Mb/s':>9} {'cclab Mb/s':>10} {'ratio':>6}  cwnd down to 4 at (s): ns-3 | cclab")
    for ns3_cc, loss, cc, params in cases:
        ref = theirs[(ns3_cc, loss)]
        ref_goodput = ref["bytes_from_5s"] * 8 / SECONDS / 1e6
        goodput, low = ours(cc, params, loss)
        label = f"{cc} {params} loss {loss}".replace("  ", " ")
        print(
            f"{label:<52} {ref_goodput:9.2f} {goodput:10.2f} {goodput / ref_goodput:6.3f}  "
            f"{bursts(ref['cwnd_down_to_4_at_s'])} | {low}"
        )


if __name__ == "__main__":
    main()
