"""How much of the gap between our Table 2 HSTCP efficiency and seed 000's is
HSTCP's response function or the ssthresh basis? Run by hand, not in CI:

    python crosscheck/pacing_hstcp/sensitivity.py > crosscheck/pacing_hstcp/result.txt

At 20 and 100 Mbit/s (where our HSTCP is 3.3 and 3.5 points above the paper's)
the study's Table 2 scenario is run with the two high-speed flows as the study
runs them (RFC 3649's table at Low_Window 31, FlightSize basis), with ns-2's
continuous response (`response = "ns2"`, what the seed's ns-2 used), with the
cwnd basis (ns-2 reduces from its window), with both, and with Standard TCP
(Reno) as a control: 20 replications each, the study's seeds, so the
differences are paired.
"""

from __future__ import annotations

import statistics
from typing import Any

import cclab
import polars as pl
from cclab.studies.pacing import FORWARD, PAPER_TABLE2, STUDY

REPLICATIONS = 20
HIGH_SPEED_FLOWS = (0, 1)
VARIANTS: dict[str, dict[str, Any]] = {
    "as the study (table, FlightSize)": {},
    "ns-2 response": {"cc_params": {"low_window": 31, "response": "ns2"}},
    "cwnd basis": {"ssthresh_basis": "cwnd"},
    "ns-2 response and cwnd basis": {"cc_params": {"low_window": 31, "response": "ns2"}, "ssthresh_basis": "cwnd"},
    "Standard TCP (reno) instead": {"cc": "reno", "cc_params": {}},
}


def main() -> None:
    base = STUDY.scenario("pacing.toml")
    print(f"cclab {cclab.__version__}, build {cclab._core.build_id()[:12]}; {REPLICATIONS} replications per row")
    print("efficiency: the forward bottleneck's busy fraction over 100-200 s, mean ± 95 % CI half-width")
    for speed in ("20Mbps", "100Mbps"):
        print(f"\n{speed} (paper HSTCP {PAPER_TABLE2[speed]['HSTCP']:.2f}):")
        for label, settings in VARIANTS.items():
            overrides: dict[str, Any] = {"topology.bottleneck.rate": speed}
            for i in HIGH_SPEED_FLOWS:
                overrides |= {f"flows[{i}].{key}": value for key, value in settings.items()}
            result = cclab.sweep(base.with_(**overrides), replications=REPLICATIONS)
            links = result.links.filter(pl.col("name") == FORWARD)
            efficiency = [u * 100 for u in links["utilization"].to_list()]
            high_speed = result.flows.filter(pl.col("name").is_in(["hs1", "hs2"]))
            share = high_speed["goodput_bps"].sum() / REPLICATIONS / float(speed.removesuffix("Mbps")) / 1e4
            half_width = 2.093 * statistics.stdev(efficiency) / REPLICATIONS**0.5
            print(f"  {label:36s} {statistics.mean(efficiency):6.2f} ± {half_width:.2f}   "
                  f"high-speed goodput {share:5.1f} % of the link")  # fmt: skip


if __name__ == "__main__":
    main()
