"""Study `buffers`: send-buffer allocation on a memory-capped server (fixed, ATBT, RTBA).

Reproduces seed paper 004 (RTBA: each connection's send buffer sized from its
Padhye expected rate, max(R x RTT, 2 x cwnd), and a host's memory shared in
proportion to expected rates; evaluated on an lwIP FTP server behind NIST Net
and a 300 KB DropTail queue): one 10 MB transfer at 50 Mbit/s and 1 ms RTT
under RTBA, fixed buffers of several sizes and ATBT (Fig. 3), two flows at
20 Mbit/s and 10 ms the second starting 3 s later under ATBT and RTBA, with
the time their allocations take to converge and how much they swing, by our
measures and by the paper's (Fig. 4), runs that change one policy parameter at a
time to show why RTBA converges sooner and swings more than ATBT here (its
allocation is eq. 4's 2 x cwnd term; ATBT's band holds through halvings), and the extension a
reader asks for: 8, 32 and 128 flows of mixed RTTs under one memory cap,
with aggregate throughput, Jain's index and memory used for each policy. The
testbed is ``buffers.toml``; the report lists what the paper does not give.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cclab.studies.base import Study, StudyContext, jain, mean_ci, seconds
from cclab.studies.report import (
    Claim,
    Column,
    bullets,
    claim_table,
    document,
    estimate,
    figure,
    heading,
    lines,
    section,
    table,
    value,
)
from cclab.sweep import aggregate, derive_seed

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

    from cclab.result import Result

MSS = 1460
#: lwIP's default send buffer (TCP_SND_BUF = 2 x TCP_MSS in its opt.h): the embedded stack's "small" buffer.
LWIP_DEFAULT = f"{2 * MSS}B"
#: Fig. 3's fixed buffers: lwIP's default, small ones, Linux's 64 KB of the paper's era and the paper's 320 KB.
FIG3_FIXED = [LWIP_DEFAULT, f"{4 * MSS}B", "8KB", "16KB", "64KB", "320KB"]
TRANSFER_BYTES = 10_000_000
#: Fig. 3's sensitivity runs: Windows XP's default receive window (12 segments, 17,520 bytes), and cwnd
#: growing on every ACK as in RFC 5681, ns-2 and ns-3.
SMALL_WINDOW = 12
#: Fig. 4 and the extension: a window-scaled receiver's 747 KB (512 segments), above one flow's share of
#: the 300 KB queue and the path, so that the network and the memory, not the receiver, limit the flows.
LARGE_WINDOW = 512
#: Fig. 4: the second flow's start, the memory caps compared (none: each connection has its desire).
FIG4_START = 3.0
FIG4_CAPS = ["none", "128KB"]
#: Two allocations have converged when their one-second means stay within this fraction of the larger.
CONVERGED_WITHIN = 0.2
#: The paper's "large and frequent changes" (§2.2: the allocation "shrinks sharply" at a duplicate ACK or a
#: timeout), counted: a fall of more than this fraction from one 100 ms sample to the next.
SHARP_FALL = 0.25
#: Why RTBA swings more and converges sooner here: Fig. 4 without a cap, on the same seeds, one policy
#: parameter changed at a time. Without a cap no buffer binds, so every variant carries the same flows.
CAUSE_VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("ATBT, band 2-4 x cwnd (default)", {"policy": "atbt"}),
    ("ATBT, band 2-2 x cwnd (no band)", {"policy": "atbt", "high": 2}),
    ("ATBT, band 2-8 x cwnd", {"policy": "atbt", "high": 8}),
    ("RTBA, w = 0.125 (default)", {"policy": "rtba"}),
    ("RTBA, w = 1 (no smoothing)", {"policy": "rtba", "w": 1.0}),
    ("RTBA, w = 0.02", {"policy": "rtba", "w": 0.02}),
    ("RTBA, p over each update interval", {"policy": "rtba", "loss_rate": "interval"}),
]
#: The extension: flows, their RTTs spread evenly over this range, the server's memory cap.
EXT_FLOWS = [8, 32, 128]
EXT_RTT_MS = (10.0, 200.0)
EXT_CAP = "512KB"
EXT_CAP_TEXT = "512 KB"
EXT_RATE = "50Mbps"
EXT_RATE_TEXT = "50 Mbit/s"
POLICY_NAMES = {"fixed": "fixed 64 KB", "atbt": "ATBT", "rtba": "RTBA"}

#: What the paper reports (its text; the figures carry few numbers).
PAPER_FIG3 = {
    "rtba_rate": 'about 49 ("49KB/s" in the text; 50 Mbit/s is the link)',
    "rtba_mean_buffer": "about 20 KB",
    "gain_over_small": "up to 136 %",
    "memory_vs_320": "16 % less than 320 KB at about the same throughput",
}
PAPER_FIG4_CONVERGENCE = (
    '"about 12 s later" (약 12초 후: 12 s after flow 2 starts, or at t = 12 s, 9 s after it; the text allows both)'
)


@dataclass(frozen=True)
class Plan:
    """What one sitting runs; the quick plan shortens Fig. 4 and the extension and drops 128 flows."""

    fig4_duration: str
    ext_duration: str
    ext_warmup: str
    ext_flows: list[int]


FULL = Plan("30s", "40s", "10s", EXT_FLOWS)
QUICK = Plan("12s", "12s", "4s", EXT_FLOWS[:2])


def converged_at(times: list[float], a: list[float], b: list[float], within: float) -> float | None:
    """The first time from which a and b stay within `within` of the larger to the end; None if they never do."""
    since = None
    for t, x, y in zip(times, a, b, strict=True):
        close = abs(x - y) <= within * max(x, y) if max(x, y) > 0 else True
        since = (since if since is not None else t) if close else None
    return since


def first_within(times: list[float], a: list[float], b: list[float], within: float) -> float | None:
    """The first time at which a and b are within `within` of the larger; None if they never are."""
    for t, x, y in zip(times, a, b, strict=True):
        if abs(x - y) <= within * max(x, y):
            return t
    return None


def sharp_falls(values: list[float], fraction: float) -> int:
    """How many times the series falls by more than `fraction` of its value from one sample to the next."""
    return sum(1 for x, y in zip(values, values[1:], strict=False) if x > 0 and y < (1 - fraction) * x)


def share_at_least(a: list[float], b: list[float]) -> float:
    """The fraction of samples in which a is at least b (NaN for no samples)."""
    pairs = list(zip(a, b, strict=True))
    return sum(1 for x, y in pairs if x >= y) / len(pairs) if pairs else float("nan")


class BuffersStudy(Study):
    name = "buffers"
    title = "Send-buffer allocation under a memory cap: fixed, ATBT and RTBA"
    paper = ("seed paper 004 (004_b4b31cd2ad849c5f.txt): RTBA, rate-based TCP send-buffer allocation for "
             "embedded servers (lwIP server, NIST Net router, 300 KB DropTail queue)")  # fmt: skip
    replications = 10
    quick_replications = 1

    # ----------------------------------------------------------------- scenarios
    def _base(self) -> dict[str, Any]:
        return self.scenario("buffers.toml").to_dict()

    @staticmethod
    def _with_clients(base: dict[str, Any], rate: str, rtts_ms: list[float]) -> dict[str, Any]:
        """The testbed with one client per RTT: R1 -> R2 carries the rate; each client's link the rest of its RTT."""
        d = copy.deepcopy(base)
        lan = d["topology"]["links"][0]
        bottleneck = dict(d["topology"]["links"][1], rate=rate, delay="0.01ms")
        clients = [f"c{i}" for i in range(len(rtts_ms))]
        # One-way: the server's LAN hop and the bottleneck, 0.01 ms each; the client's link adds the rest.
        links = [lan, bottleneck] + [
            {"from": "r2", "to": c, "rate": lan["rate"], "delay": f"{rtt / 2 - 0.02:.4f}ms", "buffer": "unlimited"}
            for c, rtt in zip(clients, rtts_ms, strict=True)
        ]
        d["topology"].update(nodes=["server", "r1", "r2", *clients], links=links)
        return d

    @staticmethod
    def _flow(base: dict[str, Any], name: str, to: str, policy: dict[str, Any], **keys: Any) -> dict[str, Any]:
        flow = dict(copy.deepcopy(base["flows"][0]), name=name, to=to, send_buffer=policy)
        flow.update(keys)
        return flow

    @staticmethod
    def _observe(every: str) -> list[dict[str, Any]]:
        return [{"flows": ["*"], "metrics": ["send_buffer", "send_buffer_used", "cwnd"], "every": every}]

    def _fig3_scenario(self, base: dict[str, Any], policy: dict[str, Any], **flow_keys: Any) -> dict[str, Any]:
        d = copy.deepcopy(base)
        d["name"] = "buffers-fig3"
        d["flows"] = [self._flow(base, "transfer", "client", policy, **flow_keys)]
        d["observe"] = self._observe("10ms")
        return d

    def _fig4_scenario(self, base: dict[str, Any], policy: str, cap: str, plan: Plan,
                       params: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        d = self._with_clients(base, "20Mbps", [10.0, 10.0])
        d["name"] = "buffers-fig4"
        # Throughput is measured once both flows run.
        d["run"].update(duration=plan.fig4_duration, warmup=f"{FIG4_START + 0.1:g}s")
        # A large receive window: the flows are limited by the network (the 300 KB queue), as the
        # paper's ATBT allocations, which follow cwnd's saw-tooth, suggest. The start times are drawn
        # within 100 ms so that replications differ.
        bulk = {"app": {"kind": "bulk"}, "max_window": LARGE_WINDOW}
        sb = params if params is not None else {"policy": policy}
        d["flows"] = [
            self._flow(base, "flow1", "c0", sb, start="0s..100ms", **bulk),
            self._flow(base, "flow2", "c1", sb, start=f"{FIG4_START:g}s..{FIG4_START + 0.1:g}s", **bulk),
        ]
        if cap != "none":
            d["topology"]["hosts"] = [{"node": "server", "memory": cap}]
        d["observe"] = self._observe("100ms")
        if params is not None and params["policy"] == "rtba":
            # Eq. 3's S beside the allocation and cwnd: which term of eq. 4 sets the buffer.
            d["observe"][0]["metrics"] += ["send_buffer.target", "send_buffer.loss_rate"]
        return d

    def _ext_scenario(
        self, base: dict[str, Any], n: int, policy: str, plan: Plan, capped: bool = True
    ) -> dict[str, Any]:
        low, high = EXT_RTT_MS
        rtts = [low + (high - low) * i / (n - 1) for i in range(n)]
        d = self._with_clients(base, EXT_RATE, rtts)
        d["name"] = f"buffers-ext-{n}"
        d["run"].update(duration=plan.ext_duration, warmup=plan.ext_warmup)
        params = {"policy": policy, **({"size": "64KB"} if policy == "fixed" else {})}
        d["flows"] = [
            self._flow(base, f"f{i}", f"c{i}", params, start="0s..1s", app={"kind": "bulk"}, max_window=LARGE_WINDOW)
            for i in range(n)
        ]
        if capped:
            d["topology"]["hosts"] = [{"node": "server", "memory": EXT_CAP}]
        d["observe"] = self._observe("500ms")
        return d

    # ----------------------------------------------------------------- measures
    @staticmethod
    def _series(result: Result, metric: str) -> pl.DataFrame:
        """One column per flow of `metric` against time."""
        import polars as pl

        m = result.metrics.filter(pl.col("metric") == metric)
        return m.pivot(on="component", index="time_s", values="value").sort("time_s").fill_null(0.0)

    @staticmethod
    def _transfer_row(result: Result) -> dict[str, Any]:
        """Fig. 3's measures of one transfer: its throughput, and its buffer while it lasted."""
        import polars as pl

        flow = result.flows.row(0, named=True)
        done = float(flow["completion_s"])
        # From the first sample after the start (the one at 0 precedes it) to the end of the transfer.
        during = result.metrics.filter((pl.col("time_s") > 0) & (pl.col("time_s") <= done))

        def mean(metric: str) -> float:
            return float(during.filter(pl.col("metric") == metric)["value"].mean())  # type: ignore[arg-type]

        def peak(metric: str) -> float:
            return float(during.filter(pl.col("metric") == metric)["value"].max())  # type: ignore[arg-type]

        return {"completion_s": done, "throughput_mbps": TRANSFER_BYTES * 8 / done / 1e6,
                "buffer_mean_kb": mean("send_buffer") / 1e3, "buffer_max_kb": peak("send_buffer") / 1e3,
                "used_mean_kb": mean("send_buffer_used") / 1e3, "cwnd_max": peak("cwnd"),
                "retransmits": int(flow["retransmits"])}  # fmt: skip

    # ----------------------------------------------------------------- run
    def run(self, ctx: StudyContext) -> None:
        import polars as pl

        plan = QUICK if ctx.quick else FULL
        base = self._base()
        base_seed = int(base["run"]["seed"])
        figures: dict[str, str] = {}

        # Fig. 3: deterministic (no random loss or start), so one run per configuration.
        fig3_cases: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
            (f"fixed {size}", "64 KB", {"policy": "fixed", "size": size}, {}) for size in FIG3_FIXED
        ]
        fig3_cases += [(name, "64 KB", {"policy": name.lower()}, {}) for name in ("ATBT", "RTBA")]
        fig3_cases += [(name, "17.5 KB", {"policy": name.lower()}, {"max_window": SMALL_WINDOW})
                       for name in ("ATBT", "RTBA")]  # fmt: skip
        fig3_cases += [(f"{name}, cwnd grows on every ACK", "64 KB", {"policy": name.lower()},
                        {"cwnd_growth": "always"}) for name in ("ATBT", "RTBA")]  # fmt: skip
        jobs = [(self._fig3_scenario(base, policy, **keys), base_seed) for _, _, policy, keys in fig3_cases]
        fig3_runs = ctx.runs("fig3_runs", jobs)
        fig3 = pl.DataFrame([{"policy": label, "receive_window": window, **self._transfer_row(r)}
                             for (label, window, _, _), r in zip(fig3_cases, fig3_runs, strict=True)])  # fmt: skip
        ctx.table(fig3, "fig3")
        # The 64 KB receive window's runs: the sensitivity runs reuse the policies' labels.
        by_label = {c[0]: r for c, r in zip(fig3_cases, fig3_runs, strict=True) if c[1] == "64 KB"}
        figures["fig3"] = ctx.figure(self._fig3(by_label), "fig3_buffer_over_time")
        figures["fig3_rates"] = ctx.figure(self._fig3_rates(fig3), "fig3_throughput_by_buffer")

        # Fig. 4: two flows, the second 3 s later, without and with a memory cap.
        keys4 = [(cap, policy, rep) for cap in FIG4_CAPS for policy in ("atbt", "rtba")
                 for rep in range(ctx.replications)]  # fmt: skip
        fig4_runs = ctx.runs("fig4_runs", [(self._fig4_scenario(base, policy, cap, plan),
                                            derive_seed(base_seed, rep)) for cap, policy, rep in keys4])  # fmt: skip
        rows = []
        for (cap, policy, rep), r in zip(keys4, fig4_runs, strict=True):
            rows.append({"cap": cap, "policy": policy.upper(), "replication": rep, **self._fig4_row(r)})
        fig4_reps = pl.DataFrame(rows)
        ctx.table(fig4_reps, "fig4_runs")
        fig4 = self._fig4_summary(fig4_reps)
        ctx.table(fig4, "fig4")
        first = {(cap, policy): r for (cap, policy, rep), r in zip(keys4, fig4_runs, strict=True) if rep == 0}
        figures["fig4"] = ctx.figure(self._fig4(first), "fig4_two_flows")

        # Why RTBA swings more and converges sooner: one parameter changed at a time, on Fig. 4's seeds.
        keys_cause = [(label, rep) for label, _ in CAUSE_VARIANTS for rep in range(ctx.replications)]
        params = dict(CAUSE_VARIANTS)
        jobs_cause = [(self._fig4_scenario(base, "", "none", plan, params[label]), derive_seed(base_seed, rep))
                      for label, rep in keys_cause]  # fmt: skip
        cause_runs = ctx.runs("fig4_cause_runs", jobs_cause)
        cause_reps = pl.DataFrame([{"variant": label, "replication": rep, **self._cause_row(r)}
                                   for (label, rep), r in zip(keys_cause, cause_runs, strict=True)])  # fmt: skip
        ctx.table(cause_reps, "fig4_cause_runs")
        cause = self._cause_summary(cause_reps)
        ctx.table(cause, "fig4_cause")
        traced = {label: r for (label, rep), r in zip(keys_cause, cause_runs, strict=True) if rep == 0}
        figures["cause"] = ctx.figure(self._cause_figure(traced), "fig4_cause_trace")

        # Extension: many flows of mixed RTTs under one cap.
        keys_ext = [(n, policy, rep) for n in plan.ext_flows for policy in POLICY_NAMES
                    for rep in range(ctx.replications)]  # fmt: skip
        ext_runs = ctx.runs("extension_runs", [(self._ext_scenario(base, n, policy, plan), derive_seed(base_seed, rep))
                                               for n, policy, rep in keys_ext])  # fmt: skip
        warmup = seconds(plan.ext_warmup)
        ext_reps = pl.DataFrame([{"flows": n, "policy": POLICY_NAMES[policy], "replication": rep,
                                  **self._ext_row(r, warmup)}
                                 for (n, policy, rep), r in zip(keys_ext, ext_runs, strict=True)])  # fmt: skip
        ctx.table(ext_reps, "extension_runs")
        metrics = ["aggregate_mbps", "jain", "allocated_kb", "used_kb", "starved"]
        # What each policy would take without the cap: one run per point (the memory it shows is the point).
        keys_free = [(n, policy) for n in plan.ext_flows for policy in POLICY_NAMES]
        free_runs = ctx.runs("extension_uncapped_runs", [(self._ext_scenario(base, n, policy, plan, capped=False),
                                                          base_seed) for n, policy in keys_free])  # fmt: skip
        uncapped = pl.DataFrame([{"flows": n, "policy": POLICY_NAMES[policy], "uncapped_kb": row["allocated_kb"],
                                  "uncapped_mbps": row["aggregate_mbps"], "uncapped_jain": row["jain"]}
                                 for (n, policy), r in zip(keys_free, free_runs, strict=True)
                                 for row in [self._ext_row(r, warmup)]])  # fmt: skip
        ext = aggregate(ext_reps, ["flows", "policy"], metrics).join(
            uncapped, on=["flows", "policy"], maintain_order="left"
        )
        ctx.table(ext, "extension")
        figures["extension"] = ctx.figure(self._ext_figure(ext), "extension_many_flows")

        ctx.report(self._report(ctx, plan, figures, fig3, fig4, cause, ext))

    @staticmethod
    def _start2(result: Result) -> float:
        import polars as pl

        return float(result.flows.filter(pl.col("name") == "flow2")["start_s"][0])

    @staticmethod
    def _allocation_measures(alloc: pl.DataFrame, start2: float) -> dict[str, Any]:
        """Two flows' allocations (columns flow1, flow2 against time_s) once both run: their means, how much
        they swing, by our definition and the paper's, and when they converge, by ours and the paper's."""
        import polars as pl

        # One-second means (ten 100 ms samples), so that a single sample's swing is not a divergence.
        smooth = alloc.with_columns(pl.col("flow1").rolling_mean(10), pl.col("flow2").rolling_mean(10))
        after = smooth.filter(pl.col("time_s") >= FIG4_START + 1.0).drop_nulls()
        columns = after["time_s"].to_list(), after["flow1"].to_list(), after["flow2"].to_list()
        at, first = converged_at(*columns, CONVERGED_WITHIN), first_within(*columns, CONVERGED_WITHIN)
        both = alloc.filter(pl.col("time_s") >= FIG4_START + 1.0)

        def spread(flow: str) -> float:
            """How much an allocation swings: its coefficient of variation (std / mean) once both flows run."""
            return float(both[flow].std()) / float(both[flow].mean())  # type: ignore[arg-type]

        return {"converge_s": None if at is None else at - start2,
                "first_within_s": None if first is None else first - start2,
                "flow1_kb": float(both["flow1"].mean()) / 1e3, "flow2_kb": float(both["flow2"].mean()) / 1e3,  # type: ignore[arg-type]
                "flow1_cv": spread("flow1"), "flow2_cv": spread("flow2"),
                "flow1_falls": sharp_falls(both["flow1"].to_list(), SHARP_FALL),
                "flow2_falls": sharp_falls(both["flow2"].to_list(), SHARP_FALL)}  # fmt: skip

    @staticmethod
    def _fig4_row(result: Result) -> dict[str, Any]:
        """Each flow's throughput after the second starts, the mean allocations then, how they swing and when
        they converge."""
        goodput = {r["name"]: r["goodput_bps"] for r in result.flows.iter_rows(named=True)}
        measures = BuffersStudy._allocation_measures(BuffersStudy._series(result, "send_buffer"),
                                                     BuffersStudy._start2(result))  # fmt: skip
        return {**measures, "flow1_mbps": goodput["flow1"] / 1e6, "flow2_mbps": goodput["flow2"] / 1e6,
                "retransmits": int(result.flows["retransmits"].sum())}  # fmt: skip

    @staticmethod
    def _cause_row(result: Result) -> dict[str, Any]:
        """Fig. 4's measures of one cause run and, under RTBA, which term of eq. 4 sets the buffer: the share of
        samples (once both flows run) in which 2 x cwnd is at least S, and eq. 3's S measured as an allocation."""
        import polars as pl

        row = BuffersStudy._fig4_row(result)
        term: dict[str, Any] = {"flow1_cwnd_term": None, "flow2_cwnd_term": None, "flow1_rate_ratio": None,
                                "rate_converge_s": None, "rate_flow1_cv": None, "rate_flow2_cv": None,
                                "loss_ratio_end": None}  # fmt: skip
        target = BuffersStudy._series(result, "send_buffer.target")
        if target.height:
            cwnd = BuffersStudy._series(result, "cwnd").filter(pl.col("time_s") >= FIG4_START + 1.0)
            s = target.filter(pl.col("time_s") >= FIG4_START + 1.0)
            for flow in ("flow1", "flow2"):
                # cwnd is in segments of buffers.toml's MSS.
                twice = [2 * c * MSS for c in cwnd[flow].to_list()]
                term[f"{flow}_cwnd_term"] = share_at_least(twice, s[flow].to_list())
                if flow == "flow1":
                    ratios = sorted(x / y for x, y in zip(s[flow].to_list(), twice, strict=True) if y > 0)
                    term["flow1_rate_ratio"] = ratios[len(ratios) // 2] if ratios else None
            rate = BuffersStudy._allocation_measures(target, BuffersStudy._start2(result))
            # p since the start, at the last sample: flow 2's over flow 1's.
            last = BuffersStudy._series(result, "send_buffer.loss_rate").row(-1, named=True)
            term["loss_ratio_end"] = last["flow2"] / last["flow1"] if last["flow1"] > 0 else None
            term.update(rate_converge_s=rate["converge_s"], rate_flow1_cv=rate["flow1_cv"],
                        rate_flow2_cv=rate["flow2_cv"])  # fmt: skip
        return {**row, **term}

    @staticmethod
    def _converged_counts(reps: pl.DataFrame, by: list[str]) -> pl.DataFrame:
        import polars as pl

        return reps.group_by(by, maintain_order=True).agg(
            pl.col("converge_s").is_not_null().sum().alias("converged"),
            pl.col("converge_s").median().alias("converge_median_s"),
            pl.col("converge_s").max().alias("converge_max_s"),
            pl.col("first_within_s").median().alias("first_within_median_s"),
        )

    @staticmethod
    def _fig4_summary(reps: pl.DataFrame) -> pl.DataFrame:
        metrics = ["flow1_kb", "flow2_kb", "flow1_mbps", "flow2_mbps", "flow1_cv", "flow2_cv", "flow1_falls",
                   "flow2_falls"]  # fmt: skip
        summary = aggregate(reps, ["cap", "policy"], metrics)
        converged = BuffersStudy._converged_counts(reps, ["cap", "policy"])
        return summary.join(converged, on=["cap", "policy"], maintain_order="left")

    @staticmethod
    def _cause_summary(reps: pl.DataFrame) -> pl.DataFrame:
        import polars as pl

        metrics = ["flow1_kb", "flow1_cv", "flow2_cv", "flow1_falls", "flow2_falls", "flow1_mbps", "flow2_mbps"]
        summary = aggregate(reps, ["variant"], metrics)
        extra = reps.group_by("variant", maintain_order=True).agg(
            pl.col("flow1_cwnd_term").mean(), pl.col("flow2_cwnd_term").mean(), pl.col("flow1_rate_ratio").median(),
            pl.col("rate_converge_s").is_not_null().sum().alias("rate_converged"),
            pl.col("rate_flow1_cv").mean(), pl.col("rate_flow2_cv").mean(), pl.col("loss_ratio_end").mean(),
        )  # fmt: skip
        converged = BuffersStudy._converged_counts(reps, ["variant"])
        return summary.join(converged, on="variant", maintain_order="left").join(
            extra, on="variant", maintain_order="left"
        )

    @staticmethod
    def _ext_row(result: Result, warmup: float) -> dict[str, Any]:
        import polars as pl

        goodputs = result.flows["goodput_bps"].to_list()
        m = result.metrics.filter(pl.col("time_s") >= warmup)
        # The host's memory at each sample: the sum over its connections.
        totals = m.group_by(["time_s", "metric"]).agg(pl.col("value").sum())

        def mean_total(metric: str) -> float:
            return float(totals.filter(pl.col("metric") == metric)["value"].mean()) / 1e3  # type: ignore[arg-type]

        return {"aggregate_mbps": sum(goodputs) / 1e6, "jain": jain(goodputs),
                "allocated_kb": mean_total("send_buffer"), "used_kb": mean_total("send_buffer_used"),
                # A connection whose buffer holds less than one segment can send nothing new.
                "starved": sum(1 for g in goodputs if g < 1e3)}  # fmt: skip

    # ----------------------------------------------------------------- figures
    def _fig3(self, runs: dict[str, Result]) -> Figure:
        import matplotlib.pyplot as plt
        import polars as pl

        fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
        # RTBA last and dashed: on this path its allocation is ATBT's (see the report).
        for label, color, style in (("fixed 320KB", "C2", "-"), ("fixed 64KB", "C3", "-"), ("ATBT", "C1", "-"),
                                    ("RTBA", "C0", "--")):  # fmt: skip
            r = runs[label]
            done = float(r.flows["completion_s"][0])
            m = r.metrics.filter(pl.col("time_s") <= done)
            alloc = m.filter(pl.col("metric") == "send_buffer")
            used = m.filter(pl.col("metric") == "send_buffer_used")
            top.plot(alloc["time_s"], alloc["value"] / 1e3, color=color, ls=style, lw=1.4,
                     label=f"{label} (done at {done:.2f} s)")  # fmt: skip
            bottom.plot(used["time_s"], used["value"] / 1e3, color=color, ls=style, lw=1.2, label=label)
        top.set(ylabel="send buffer allocated (KB)", ylim=(0, None),
                title="Fig. 3: one 10 MB transfer, 50 Mbit/s, 1 ms RTT, 64 KB receive window")  # fmt: skip
        bottom.set(xlabel="time (s)", ylabel="bytes held (KB)", ylim=(0, None))
        top.legend(fontsize=8)
        bottom.legend(fontsize=8)
        fig.tight_layout()
        return fig

    @staticmethod
    def _fig3_rates(fig3: pl.DataFrame) -> Figure:
        import matplotlib.pyplot as plt
        import polars as pl

        fig, ax = plt.subplots(figsize=(8, 4.5))
        fixed = fig3.filter(pl.col("policy").str.starts_with("fixed"))
        ax.plot(fixed["buffer_mean_kb"], fixed["throughput_mbps"], "o-", color="C2", label="fixed buffer")
        for label, color in (("RTBA", "C0"), ("ATBT", "C1")):
            row = fig3.filter((pl.col("policy") == label) & (pl.col("receive_window") == "64 KB"))
            ax.plot(
                row["buffer_mean_kb"],
                row["throughput_mbps"],
                "s",
                ms=9,
                color=color,
                label=f"{label} (mean allocation)",
            )
        ax.axhline(50, color="k", ls="--", lw=1, label="link 50 Mbit/s")
        ax.set(xscale="log", xlabel="send buffer, mean over the transfer (KB)", ylabel="throughput of 10 MB (Mbit/s)",
               ylim=(0, 55), title="Fig. 3: throughput against the send buffer")  # fmt: skip
        ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
        return fig

    def _fig4(self, runs: dict[tuple[str, str], Result]) -> Figure:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(len(FIG4_CAPS), 2, figsize=(10, 6.5), sharex=True, squeeze=False)
        for row, cap in enumerate(FIG4_CAPS):
            for col, policy in enumerate(("atbt", "rtba")):
                ax = axes[row][col]
                alloc = self._series(runs[(cap, policy)], "send_buffer")
                for flow, color in (("flow1", "C0"), ("flow2", "C3")):
                    ax.plot(alloc["time_s"], alloc[flow] / 1e3, color=color, lw=1.0, label=flow)
                cap_text = "no cap" if cap == "none" else f"cap {cap}"
                ax.set(title=f"{policy.upper()}, {cap_text}", ylabel="allocated (KB)" if col == 0 else None)
                ax.set_yscale("log")
                ax.axvline(FIG4_START, color="grey", ls=":", lw=1)
                if row == len(FIG4_CAPS) - 1:
                    ax.set_xlabel("time (s)")
                ax.legend(fontsize=8)
        fig.suptitle("Fig. 4: two flows, 20 Mbit/s, 10 ms; flow 2 starts at 3 s (replication 0)")
        fig.tight_layout()
        return fig

    def _cause_figure(self, runs: dict[str, Result]) -> Figure:
        """One replication's allocations with eq. 4's two terms: where RTBA's swings come from."""
        import matplotlib.pyplot as plt

        rtba, atbt = runs[CAUSE_VARIANTS[3][0]], runs[CAUSE_VARIANTS[0][0]]
        alloc, target = self._series(rtba, "send_buffer"), self._series(rtba, "send_buffer.target")
        cwnd, banded = self._series(rtba, "cwnd"), self._series(atbt, "send_buffer")
        fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
        for ax, flow in zip(axes, ("flow1", "flow2"), strict=True):
            ax.plot(banded["time_s"], banded[flow] / 1e3, color="C1", lw=1.4, label="ATBT allocation (2-4 x cwnd)")
            ax.plot(alloc["time_s"], alloc[flow] / 1e3, color="C0", lw=1.4, label="RTBA allocation, max(S, 2 x cwnd)")
            ax.plot(cwnd["time_s"], cwnd[flow] * 2 * MSS / 1e3, color="k", ls=":", lw=1.0, label="2 x cwnd")
            ax.plot(target["time_s"], target[flow] / 1e3, color="C2", ls="--", lw=1.2, label="S = R x RTT (eq. 3)")
            ax.axvline(FIG4_START, color="grey", ls=":", lw=1)
            ax.set(yscale="log", ylabel=f"{flow}: KB", title=f"{flow} (replication 0, no cap)")
            ax.legend(fontsize=8, loc="lower right")
        axes[-1].set_xlabel("time (s)")
        fig.suptitle("Fig. 4's two flows: RTBA's allocation is its 2 x cwnd term; ATBT's band holds through halvings")
        fig.tight_layout()
        return fig

    @staticmethod
    def _ext_figure(ext: pl.DataFrame) -> Figure:
        import matplotlib.pyplot as plt
        import polars as pl

        fig, axes = plt.subplots(1, 3, figsize=(12, 4))
        for (metric, label), ax in zip((("aggregate_mbps", "aggregate goodput (Mbit/s)"), ("jain", "Jain's index"),
                                        ("used_kb", "memory held (KB)")), axes, strict=True):  # fmt: skip
            # Fixed and ATBT share equally and coincide: distinct markers and line styles keep both visible.
            for i, (policy, style) in enumerate(zip(POLICY_NAMES.values(), ("o-", "s--", "^-"), strict=True)):
                rows = ext.filter(pl.col("policy") == policy).sort("flows")
                ax.errorbar(rows["flows"], rows[f"{metric}_mean"], yerr=rows[f"{metric}_ci95"].fill_nan(0),
                            fmt=style, capsize=3, color=f"C{i}", label=policy)  # fmt: skip
            ax.set(xscale="log", xlabel="flows", ylabel=label)
            ax.set_xticks(EXT_FLOWS, [str(n) for n in EXT_FLOWS])
        axes[0].axhline(50, color="k", ls="--", lw=1)
        axes[2].axhline(512, color="k", ls="--", lw=1, label=f"cap {EXT_CAP_TEXT}")
        axes[2].set_ylim(0, 600)
        axes[2].legend(fontsize=8)
        fig.suptitle(
            f"Extension: flows of RTT 10-200 ms from one server with {EXT_CAP_TEXT} of send buffers, {EXT_RATE_TEXT}"
        )
        fig.tight_layout()
        return fig

    @staticmethod
    def _fig4_text(fig4: pl.DataFrame) -> str:
        """What Fig. 4's table says, in words; every comparison is made on the table's numbers."""
        import polars as pl

        def row(cap: str, policy: str) -> dict[str, Any]:
            return fig4.filter((pl.col("cap") == cap) & (pl.col("policy") == policy)).row(0, named=True)

        free_a, free_r = row("none", "ATBT"), row("none", "RTBA")
        cap_a, cap_r = row(FIG4_CAPS[1], "ATBT"), row(FIG4_CAPS[1], "RTBA")
        rates = ("flow1_mbps_mean", "flow2_mbps_mean")
        same = all(abs(free_a[m] - free_r[m]) <= 0.02 * max(free_a[m], free_r[m]) for m in rates)
        alike = "are the same under either policy" if same else "still differ between the policies (see the table)"
        text = [
            "Without a cap the buffers never bind (each is at least twice cwnd), so the policies leave the network "
            f"alone: the flows' throughputs {alike} (flow 1 {free_a['flow1_mbps_mean']:.1f}, flow 2 "
            f"{free_a['flow2_mbps_mean']:.1f} Mbit/s under ATBT once both run), and the allocations follow the "
            "windows."
        ]

        def when(r: dict[str, Any]) -> str:
            if r["converged"] == 0:
                return "never come within 20 % of each other"
            return f"come within 20 % of each other {r['converge_median_s']:.1f} s after flow 2 starts (median)"

        text.append(f"Under RTBA they {when(free_r)}; under ATBT they {when(free_a)}.")
        for flow in ("flow1", "flow2"):
            a, r = free_a[f"{flow}_cv_mean"], free_r[f"{flow}_cv_mean"]
            steadier = "steadier than" if r < 0.9 * a else "no steadier than" if r <= 1.1 * a else "less steady than"
            text.append(f"Flow {flow[-1]}'s RTBA allocation is {steadier} its ATBT allocation (swing {r:.2f} "
                        f"against {a:.2f}).")  # fmt: skip
        text.append(
            "RTBA's 2 x cwnd term is ATBT's lower edge, so RTBA swings with cwnd too wherever that term "
            "exceeds R x RTT; ATBT's band of 2 to 4 x cwnd lets cwnd move without moving the buffer."
        )
        within = max(cap_a["converge_max_s"], cap_r["converge_max_s"])
        text.append(f"With a {FIG4_CAPS[1].replace('KB', ' KB')} cap, both desires exceed the cap soon after flow 2 "
                    "starts, and ATBT's max-min share and RTBA's share in proportion to expected rates (equal here: "
                    f"same RTT, same receive window) give flow 1 {cap_a['flow1_kb_mean']:.0f} and "
                    f"{cap_r['flow1_kb_mean']:.0f} KB, flow 2 {cap_a['flow2_kb_mean']:.0f} and "
                    f"{cap_r['flow2_kb_mean']:.0f} KB, equal within {within:.1f} s of flow 2's start. There the cap, "
                    "not eq. 2's slowly smoothed rate, sets the allocations, so the paper's gradual convergence "
                    "cannot appear.")  # fmt: skip
        return " ".join(text)

    def _report(self, ctx: StudyContext, plan: Plan, figures: dict[str, str], fig3: pl.DataFrame,
                fig4: pl.DataFrame, cause: pl.DataFrame, ext: pl.DataFrame) -> str:  # fmt: skip
        return document(
            heading(self.title, 1),
            lines(f"Paper: {self.paper}.", _generated(ctx)),
            _verdict_section(fig3, fig4, cause),
            section("Setup and reconstruction", SETUP, bullets(_choices(plan))),
            _fig3_section(figures, fig3),
            _inconsistency_section(fig3),
            _fig4_section(figures, fig4, self._fig4_text(fig4)),
            _definitions_section(fig4, cause),
            _cause_section(figures, cause),
            _extension_section(figures, plan, ext),
            section("Where we differ from the paper, and why", bullets(_differences(fig4, cause))),
        )


def _generated(ctx: StudyContext) -> str:
    quick = " (the quick plan: shorter runs, no 128 flows)" if ctx.quick else ""
    return (f"Generated by `{ctx.command}` with {ctx.replications} replications per point of Fig. 4 and the "
            f"extension{quick}; ± is the 95 % confidence half-width across replications. Fig. 3 has no random "
            "element, so each of its configurations is one run.")  # fmt: skip


SETUP = (
    "The paper's testbed (its Fig. 2) is an FTP server on lwIP, router R1 running NIST Net (bandwidth, "
    "delay, loss), router R2 with a 300 KB DropTail queue, and clients. We simulate it as a graph "
    "(`python/cclab/studies/buffers.toml`): server -> R1 -> R2 -> client, with the paper's rate, the "
    "delay and the 300 KB queue on R1 -> R2 and 1 Gbit/s LAN links around it. What the paper does not "
    "give, and what we chose:"
)


def _choices(plan: Plan) -> list[str]:
    """What the paper does not give, and what we chose."""
    return [
        "**Receive window.** Not given. Fig. 3 uses 44 segments of 1460 bytes (64,240 bytes, the largest "
        "window without window scaling) and, as a sensitivity run, Windows XP's default 17,520 bytes. Fig. 4 "
        f"and the extension use {LARGE_WINDOW} segments ({LARGE_WINDOW * MSS // 1000} KB, a window-scaled "
        "receiver), so that the network and the send buffers, not the receiver, limit the flows.",
        '**When cwnd grows.** Every flow here uses `cwnd_growth = "cwnd_limited"`: cwnd grows only '
        "while the window is in use, as Linux's `tcp_is_cwnd_limited` (in slow start, up to twice the most "
        "data outstanding). With RFC 5681's literal rule (and ns-2's and ns-3's), a flow held back by its "
        "receiver window grows cwnd on every ACK, and ATBT's and RTBA's 2 x cwnd follow it without bound; the "
        "two sensitivity rows of Fig. 3 show the size of that artefact.",
        f"**The small fixed buffer.** Not given. lwIP's default send buffer is two segments "
        f"(`TCP_SND_BUF = 2 * TCP_MSS`; {2 * MSS} bytes with our 1460-byte segments); we run it and 4 "
        "segments, 8 KB, 16 KB, Linux's 64 KB and the paper's 320 KB.",
        "**RTBA.** Eq. 1-4 with the EWMA weight w = 0.125 and b = 1 packet per ACK (the paper gives "
        "neither), the loss rate cumulative (loss events over packets sent since the start), and the Padhye "
        "model's Wm the receive window. **ATBT**: 2 to 4 x cwnd with hysteresis.",
        "**Memory.** Fig. 3 has no cap. Fig. 4 runs without a cap (each flow has its policy's desire, as the "
        "paper's curves appear to be) and with 128 KB for the server. A capped host recomputes its "
        "limits every 500 ms and at each start; each connection first gets two segments (at most its desire), "
        "then the rest is shared max-min (fixed, ATBT) or in proportion to expected rates (RTBA).",
        "**Fig. 4's flows** are bulk transfers starting at a time drawn in [0, 100 ms] and [3 s, 3.1 s], so "
        f"that replications differ; the runs last {plan.fig4_duration}. Allocations have *converged* when "
        "their one-second means stay within 20 % of the larger for the rest of the run; the time is counted "
        "from flow 2's start and cannot be below about 1 s (the first full one-second mean).",
        f"**The extension**: N flows from the server, client i at RTT 10 + 190 i / (N - 1) ms, "
        f"{EXT_RATE_TEXT} with the 300 KB queue, the server capped at {EXT_CAP_TEXT}, bulk transfers starting in "
        f"[0, 1 s], {plan.ext_duration} runs measured after {plan.ext_warmup}. Fixed is 64 KB per "
        "connection.",
    ]


def _fig3_case(fig3: pl.DataFrame, policy: str, window: str = "64 KB") -> dict[str, Any]:
    import polars as pl

    return fig3.filter((pl.col("policy") == policy) & (pl.col("receive_window") == window)).row(0, named=True)


def _fig3_section(figures: dict[str, str], fig3: pl.DataFrame) -> list[str]:
    rtba, small, big = (
        _fig3_case(fig3, "RTBA"),
        _fig3_case(fig3, f"fixed {LWIP_DEFAULT}"),
        _fig3_case(fig3, "fixed 320KB"),
    )
    gain = rtba["throughput_mbps"] / small["throughput_mbps"] - 1
    saving = 1 - rtba["buffer_mean_kb"] / big["buffer_mean_kb"]
    claims = [
        Claim("RTBA's throughput (Mbit/s)", f"{rtba['throughput_mbps']:.1f}", PAPER_FIG3["rtba_rate"]),
        Claim("RTBA's mean buffer", f"{rtba['buffer_mean_kb']:.0f} KB", PAPER_FIG3["rtba_mean_buffer"]),
        Claim(f"RTBA over lwIP's {2 * MSS}-byte buffer", f"+{gain * 100:.0f} %", PAPER_FIG3["gain_over_small"]),
        Claim("RTBA's memory against a fixed 320 KB", f"{saving * 100:.0f} % less, same throughput",
              PAPER_FIG3["memory_vs_320"]),
    ]  # fmt: skip
    return section(
        "Fig. 3: one 10 MB transfer at 50 Mbit/s and 1 ms RTT",
        figure("Fig. 3", figures["fig3"]),
        figure("Fig. 3, throughput", figures["fig3_rates"]),
        table(
            fig3,
            [
                value("policy", "policy"),
                value("receive window", "receive_window"),
                value("10 MB in (s)", "completion_s", ".3f"),
                value("throughput (Mbit/s)", "throughput_mbps", ".1f"),
                value("buffer, mean (KB)", "buffer_mean_kb", ".1f"),
                value("buffer, peak (KB)", "buffer_max_kb", ".1f"),
                value("bytes held, mean (KB)", "used_mean_kb", ".1f"),
                value("peak cwnd (segments)", "cwnd_max", ".0f"),
            ],
        ),  # fmt: skip
        claim_table(claims, {"claim": "", "ours": "ours", "paper": "paper"}),
        _fig3_text(fig3, gain, saving),
    )


def _fig3_text(fig3: pl.DataFrame, gain: float, saving: float) -> str:
    """What Fig. 3's table says, in words, from its numbers."""
    import polars as pl

    rtba, atbt, small = _fig3_case(fig3, "RTBA"), _fig3_case(fig3, "ATBT"), _fig3_case(fig3, f"fixed {LWIP_DEFAULT}")
    fixed_rows = fig3.filter(pl.col("policy").str.starts_with("fixed ") & (pl.col("receive_window") == "64 KB"))
    best = float(fixed_rows["throughput_mbps"].max())  # type: ignore[arg-type]
    saturating = fixed_rows.filter(pl.col("throughput_mbps") >= 0.99 * best)["policy"][0].removeprefix("fixed ")
    top_share = best / 50
    small_window = _fig3_case(fig3, "RTBA", "17.5 KB")
    return (
        "The transfer's throughput is about buffer / RTT while the buffer is below what the path holds "
        "(6.25 KB of bandwidth-delay product at 1 ms, plus the segments' transmission and the ACKs' return): "
        f"lwIP's two segments give {small['throughput_mbps']:.1f} Mbit/s, and from {saturating} on every "
        f"policy delivers the 10 MB in the same time, {top_share * 100:.0f} % of the link (headers take the "
        f"rest). RTBA's gain over the small buffer, +{gain * 100:.0f} %, is of the paper's order (up to "
        "136 %); it depends only on how small the small buffer is. RTBA's mean allocation, "
        f"{rtba['buffer_mean_kb']:.0f} KB, is not the paper's 20 KB: eq. 4 takes the larger of R x RTT and "
        "2 x cwnd, and with no loss on this path (64 KB in flight never fills the 300 KB queue) the flow "
        "never leaves slow start, where cwnd grows to twice the data outstanding, so 2 x cwnd is about four "
        f"receive windows. ATBT's 2 x cwnd gives about the same ({atbt['buffer_mean_kb']:.0f} KB). RTBA "
        f"differs only while the queue builds: its peak, {rtba['buffer_max_kb']:.0f} KB, is R x RTT with R "
        "smoothed from samples taken while the RTT was still 1 ms (Wm / RTT) and multiplied by an RTT that "
        "queueing has since grown about tenfold; that peak is above the fixed 320 KB. On average RTBA holds "
        f"{saving * 100:.0f} % less memory than the fixed 320 KB for the same throughput (the paper: 16 %), "
        "but because 2 x cwnd sized it, not R x RTT, which settles at about one receive window. With a "
        f"17.5 KB receive window both policies allocate about {small_window['buffer_mean_kb']:.0f} "
        "KB. The paper's 20 KB fits a cwnd of about 7 segments, which would need a smaller receive window or "
        "a cwnd held near it; lwIP's cwnd, a 16-bit byte count, stops only at 65,535 bytes. The last two "
        "rows show RFC 5681's rule, where cwnd grows on every ACK: buffers of megabytes for a transfer that "
        "never has more than 64 KB in flight."
    )


def _converged(r: dict[str, Any]) -> str:
    if r["converged"] == 0:
        return f"never (0 of {r['n']})"
    median, most = r["converge_median_s"], r["converge_max_s"]
    return f"{median:.1f} s median, {most:.1f} s at most ({r['converged']} of {r['n']})"


def _seconds(value: float | None) -> str:
    """A median time, or "never" when no run reached it."""
    return "never" if value is None else f"{value:.1f} s"


def _first_within(r: dict[str, Any]) -> str:
    first = r["first_within_median_s"]
    return "never" if first is None else f"{first:.1f} s"


def _fig4_section(figures: dict[str, str], fig4: pl.DataFrame, fig4_text: str) -> list[str]:
    columns = [
        Column("memory cap", lambda r: "none" if r["cap"] == "none" else r["cap"].replace("KB", " KB")),
        value("policy", "policy"),
        estimate("flow 1 allocation (KB)", "flow1_kb"),
        estimate("flow 2 allocation (KB)", "flow2_kb"),
        estimate("flow 1 (Mbit/s)", "flow1_mbps", 2),
        estimate("flow 2 (Mbit/s)", "flow2_mbps", 2),
        Column("swing of flow 1, flow 2 (std / mean)",
               lambda r: f"{mean_ci(r, 'flow1_cv', 2)}, {mean_ci(r, 'flow2_cv', 2)}"),
        Column("sharp falls of flow 1, flow 2 (per run; the paper's sense)",
               lambda r: f"{mean_ci(r, 'flow1_falls', 1)}, {mean_ci(r, 'flow2_falls', 1)}"),
        Column("allocations within 20 % after", _converged),
        Column("first within 20 % after (median; the paper's literal sense)", _first_within),
    ]  # fmt: skip
    return section(
        "Fig. 4: two flows at 20 Mbit/s and 10 ms, the second 3 s later",
        figure("Fig. 4", figures["fig4"]),
        table(fig4, columns),
        f"The paper: under RTBA, flow 1's allocation falls gradually after flow 2 starts and equals flow 2's "
        f"{PAPER_FIG4_CONVERGENCE}; under ATBT both allocations swing with cwnd. {fig4_text}",
    )


def _ext_value(ext: pl.DataFrame, n: int, policy: str, metric: str) -> float:
    import polars as pl

    row = ext.filter((pl.col("flows") == n) & (pl.col("policy") == POLICY_NAMES[policy]))
    return float(row[f"{metric}_mean"][0])


def _extension_section(figures: dict[str, str], plan: Plan, ext: pl.DataFrame) -> list[str]:
    columns = [
        value("flows", "flows"),
        value("policy", "policy"),
        estimate("aggregate goodput (Mbit/s)", "aggregate_mbps"),
        estimate("Jain's index", "jain", 3),
        estimate("memory allocated (KB)", "allocated_kb", 0),
        estimate("memory held (KB)", "used_kb", 0),
        estimate("flows without throughput", "starved", 1),
        Column("without the cap: memory (KB), goodput, Jain",
               lambda r: f"{r['uncapped_kb']:.0f}, {r['uncapped_mbps']:.1f}, {r['uncapped_jain']:.3f}"),
    ]  # fmt: skip
    return section(
        "Extension: many flows of mixed RTTs under one memory cap",
        figure("Extension", figures["extension"]),
        table(ext, columns),
        _extension_text(plan, ext),
    )


def _extension_text(plan: Plan, ext: pl.DataFrame) -> str:
    """What the extension's table says, in words, from its numbers."""
    import polars as pl

    n_high = plan.ext_flows[-1]
    free_lo, free_hi = float(ext["uncapped_kb"].min()), float(ext["uncapped_kb"].max())  # type: ignore[arg-type]
    equal_jains = ext.filter(pl.col("policy") != POLICY_NAMES["rtba"])["jain_mean"]
    jain_lo, jain_hi = float(equal_jains.min()), float(equal_jains.max())  # type: ignore[arg-type]
    equal_share = _ext_value(ext, n_high, "atbt", "aggregate_mbps")
    by_rate = _ext_value(ext, n_high, "rtba", "aggregate_mbps")
    if equal_share < 0.97 * by_rate:
        aggregate_text = (
            f"At {n_high} flows an equal share, {EXT_CAP_TEXT} / {n_high}, is below most flows' bandwidth-delay "
            f"product, so the max-min policies deliver {equal_share:.1f} Mbit/s in all, while RTBA, whose "
            f"extra memory goes to short-RTT flows that turn it into throughput, fills the link "
            f"({by_rate:.1f} Mbit/s): the one case where RTBA's rule buys throughput, at fairness's expense."
        )
    else:
        aggregate_text = f"Up to {n_high} flows the aggregate is the link's whichever policy shares the memory."
    n_low = plan.ext_flows[0]
    jain_rtba, jain_atbt = _ext_value(ext, n_low, "rtba", "jain"), _ext_value(ext, n_low, "atbt", "jain")
    return (
        f"Without the cap the policies would take {free_lo:.0f}-{free_hi:.0f} KB, so every policy allocates all "
        f"of the {EXT_CAP_TEXT} (fixed's 8 x 64 KB is exactly the cap) and the bulk senders hold all they are "
        "given. Max-min shares (fixed 64 KB and ATBT, both capped to "
        "the same equal share) give every connection the same buffer, so each gets about buffer / RTT, and "
        f"the RTT spread of 10-200 ms alone keeps Jain's index at {jain_lo:.2f}-{jain_hi:.2f}. RTBA shares in "
        "proportion to "
        "expected rates, and the Padhye rate of a short-RTT flow is higher, so it gives short-RTT flows more "
        f"memory and they take more of the link: Jain's index {jain_rtba:.2f} against ATBT's {jain_atbt:.2f} "
        f"at {n_low} flows. {aggregate_text} The paper's proportional redistribution is fair to the rates "
        "the model expects, not to the throughput the flows get; with mixed RTTs it compounds TCP's RTT "
        "unfairness."
    )


def _free(fig4: pl.DataFrame) -> dict[str, dict[str, Any]]:
    """Fig. 4's rows without a cap, by policy."""
    import polars as pl

    return {r["policy"]: r for r in fig4.filter(pl.col("cap") == "none").iter_rows(named=True)}


def _cause_case(cause: pl.DataFrame, index: int) -> dict[str, Any]:
    import polars as pl

    return cause.filter(pl.col("variant") == CAUSE_VARIANTS[index][0]).row(0, named=True)


CAUSE_TITLE = "Why RTBA swings more and converges sooner here: one parameter at a time"
DEFINITIONS_TITLE = "Fig. 4: how the paper measures convergence and steadiness, and how we do"
INCONSISTENCY_TITLE = "Fig. 3: the paper's 20 KB against its own 16 % less than 320 KB"


def _verdict_section(fig3: pl.DataFrame, fig4: pl.DataFrame, cause: pl.DataFrame) -> list[str]:
    """The claims the issue lists and the report's other claims: the paper's, ours, and the verdict."""
    free = _free(fig4)
    a, r = free["ATBT"], free["RTBA"]
    closed, w1, w002 = _cause_case(cause, 1), _cause_case(cause, 4), _cause_case(cause, 5)
    rtba, small, big = (_fig3_case(fig3, "RTBA"), _fig3_case(fig3, f"fixed {LWIP_DEFAULT}"),
                        _fig3_case(fig3, "fixed 320KB"))  # fmt: skip
    four = _fig3_case(fig3, f"fixed {4 * MSS}B")
    gain = rtba["throughput_mbps"] / small["throughput_mbps"] - 1
    gain4 = rtba["throughput_mbps"] / four["throughput_mbps"] - 1
    saving = 1 - rtba["buffer_mean_kb"] / big["buffer_mean_kb"]
    cause_ref = f'"{CAUSE_TITLE}"'
    slower = r["converged"] and a["converged"] and r["converge_median_s"] > a["converge_median_s"]
    steadier = r["flow1_cv_mean"] < a["flow1_cv_mean"] and r["flow1_falls_mean"] < a["flow1_falls_mean"]
    claims = [
        Claim(
            "Fig. 4: RTBA's allocations converge more slowly than ATBT's",
            f"RTBA {_seconds(r['converge_median_s'])}, ATBT {_seconds(a['converge_median_s'])} after flow 2 "
            f"starts (median of {r['n']}; one-second means within 20 % to the end of the run)",
            '"about 12 s later" flow 1 is "allocated the same size as flow 2"; RTBA reacts "somewhat more slowly '
            'than ATBT" (§4.2; no number for ATBT)',
            "reproduced"
            if slower
            else "undecided: neither policy's allocations converge within the run"
            if not (r["converged"] or a["converged"])
            else f"differs: cause demonstrated by {cause_ref} (ATBT with its band closed to 2 x cwnd converges in "
            f"{_seconds(closed['converge_median_s'])}, as RTBA; RTBA's 2 x cwnd term is at least S in "
            f"{closed_share(cause) * 100:.0f} % of flow 1's samples)",
        ),  # fmt: skip
        Claim(
            "Fig. 4: RTBA's allocation is steadier than ATBT's",
            f"flow 1's swing (std / mean) {r['flow1_cv_mean']:.2f} against {a['flow1_cv_mean']:.2f}; sharp falls "
            f"(> 25 % in 100 ms) {r['flow1_falls_mean']:.1f} against {a['flow1_falls_mean']:.1f} per run",
            'RTBA\'s changes are "very stable", ATBT\'s "severe" (§4.2, Fig. 4; no number)',
            "reproduced"
            if steadier
            else f"differs: cause demonstrated by {cause_ref} (ATBT with its band closed swings "
            f"{closed['flow1_cv_mean']:.2f}, as RTBA; RTBA with w = 1 or 0.02 swings {w1['flow1_cv_mean']:.2f} or "
            f"{w002['flow1_cv_mean']:.2f})",
        ),  # fmt: skip
        Claim(
            "Fig. 3: RTBA's mean buffer",
            f"{rtba['buffer_mean_kb']:.0f} KB",
            PAPER_FIG3["rtba_mean_buffer"],
            "differs: cause demonstrated by Fig. 3's runs (RTBA's allocation is ATBT's 2 x cwnd, "
            f"{_fig3_case(fig3, 'ATBT')['buffer_mean_kb']:.0f} KB; with a 17.5 KB receive window both are "
            f"{_fig3_case(fig3, 'RTBA', '17.5 KB')['buffer_mean_kb']:.0f} KB); the paper's 20 KB contradicts its "
            f'own 16 % (see "{INCONSISTENCY_TITLE}")',
        ),
        Claim(
            "Fig. 3: the paper's mean buffer and its saving against 320 KB agree with each other",
            f"{rtba['buffer_mean_kb']:.0f} KB is {saving * 100:.0f} % less than 320 KB: consistent with the 16 %, "
            "not with the 20 KB",
            'mean "about 20 KB" (seed line 101) and "16 % less" than 320 KB, about 269 KB (line 106)',
            f'the paper contradicts itself: 20 KB would be 94 % less than 320 KB (see "{INCONSISTENCY_TITLE}")',
        ),
        Claim(
            "Fig. 3: RTBA's memory against a fixed 320 KB",
            f"{saving * 100:.0f} % less, same throughput",
            PAPER_FIG3["memory_vs_320"],
            ("reproduced" if abs(saving - 0.16) <= 0.05 else "differs") + " (by eq. 4's 2 x cwnd, not by R x RTT)",
        ),
        Claim(
            "Fig. 3: RTBA's throughput (Mbit/s)",
            f"{rtba['throughput_mbps']:.1f}",
            PAPER_FIG3["rtba_rate"],
            "reproduced" if abs(rtba["throughput_mbps"] - 49) <= 0.05 * 49 else "differs",
        ),
        Claim(
            "Fig. 3: RTBA over a small buffer",
            f"+{gain * 100:.0f} % over lwIP's {2 * MSS}-byte buffer",
            PAPER_FIG3["gain_over_small"],
            "reproduced"
            if abs(gain - 1.36) <= 0.2
            else f"differs: cause demonstrated by Fig. 3's fixed rows (the gain is set by the small buffer, which the "
            f"paper does not give: +{gain4 * 100:.0f} % over {4 * MSS} bytes)",
        ),  # fmt: skip
    ]
    return section(
        "Verdicts",
        claim_table(claims, {"claim": "claim", "paper": "paper", "ours": "ours", "verdict": "verdict"}),
    )


def closed_share(cause: pl.DataFrame) -> float:
    """The share of flow 1's samples in which RTBA's 2 x cwnd term is at least S (default RTBA, mean over runs)."""
    return float(_cause_case(cause, 3)["flow1_cwnd_term"])


def _inconsistency_section(fig3: pl.DataFrame) -> list[str]:
    rtba, big = _fig3_case(fig3, "RTBA"), _fig3_case(fig3, "fixed 320KB")
    saving = 1 - rtba["buffer_mean_kb"] / big["buffer_mean_kb"]
    return section(
        INCONSISTENCY_TITLE,
        "The paper states both in §4.2, in the text on its Fig. 3 (seed text 004_b4b31cd2ad849c5f.txt, lines 101 "
        "and 106; the converted text has no page numbers, and both sentences stand in §4.2 around Fig. 3). In "
        'translation, line 101: "With RTBA the transfer rate was about 49KB/s on average, close to the maximum '
        "rate obtainable at 50 Mbps and 1 ms. The buffer RTBA allocated was about 20 KB on average, close to the "
        'optimal buffer size, and it changed stably." Line 106, right after the caption of Fig. 3: "RTBA raised '
        "the low transfer rate that too small a buffer gives existing TCP by up to 136 %, and against an "
        'excessive allocation of 320 KB it gave a similar transfer rate with 16 % less buffer."',
        "16 % less than 320 KB is about 269 KB; a mean of 20 KB is 94 % less than 320 KB. The two cannot both "
        "describe the mean of the same run, and the paper does not say which quantity its 16 % compares (a mean, "
        "a peak, memory over time). 20 KB is about three bandwidth-delay products of the path (6.25 KB at "
        '50 Mbit/s and 1 ms), 269 KB about 43. Line 101\'s "49KB/s" is 0.39 Mbit/s, 128 times less '
        "than the 50 Mbit/s it is said to approach; it must mean 49 Mbit/s. Ours: RTBA's mean allocation is "
        f"{rtba['buffer_mean_kb']:.0f} KB, {saving * 100:.0f} % less than 320 KB, which agrees with the paper's "
        "16 % and not with its 20 KB; the section above shows why (eq. 4's 2 x cwnd on a loss-free path).",
    )


def _definitions_section(fig4: pl.DataFrame, cause: pl.DataFrame) -> list[str]:
    free = _free(fig4)
    a, r = free["ATBT"], free["RTBA"]
    closed = _cause_case(cause, 1)
    inf = float("inf")
    first_r, first_a = (x if x is not None else inf for x in (r["first_within_median_s"], a["first_within_median_s"]))
    order = "later than" if first_r > first_a else "no later than"
    return section(
        DEFINITIONS_TITLE,
        "The paper gives no formula for either; both are read off its Fig. 4. Convergence (§4.2, seed lines "
        '108-110), in translation: "The buffer allocated to flow 1 shrinks gradually in response to the bandwidth '
        "taken by flow 2, sent to client B about 3 s later, and about 12 s later it is allocated the same size "
        "as flow 2. It reacts somewhat more slowly than ATBT because the packet losses that the growing traffic "
        'causes show less in the expected rate than in the congestion window." Steadiness (§2.2, seed line 53, '
        'and §4.2): under ATBT "when a packet loss such as duplicate ACKs or a timeout occurs, the allocated '
        'buffer shrinks sharply", so "the allocated buffer changes by large amounts, frequently"; in Fig. 4 '
        '"both flows\' allocations change severely", while "RTBA\'s allocations change very stably".',
        "Our convergence time, from flow 2's start until the one-second means stay within 20 % of each other "
        'to the end of the run, is the paper\'s "allocated the same size" for allocations that stay together. '
        'Read literally, "the same size" is the first time the two meet; the table above adds it (first '
        f"within 20 %): RTBA's first meeting comes {_seconds(r['first_within_median_s'])} after flow 2 starts, "
        f"{order} ATBT's {_seconds(a['first_within_median_s'])} (median). Neither is flow 1's gradual fall: under "
        "ATBT flow 2's allocation, 2 x cwnd in slow start, rises through flow 1's within flow 2's first second; "
        "under RTBA flow 2's allocation starts at S = its receive window (no loss yet, so eq. 1 gives Wm / RTT, "
        "747 KB) and first meets flow 1's on its way down after flow 2's first losses (the trace below, "
        "replication 0). ATBT with its band closed to 2 x cwnd, which differs from RTBA only in having no S "
        f"term, first meets after {_seconds(closed['first_within_median_s'])}, as ATBT does.",
        "Our swing, the standard deviation over the mean of the 100 ms samples once both flows run, also counts "
        "a slow trend, such as the gradual fall the paper calls stable. The paper's sense, counted, is the "
        f"number of sharp falls: 100 ms steps in which an allocation falls by more than {SHARP_FALL * 100:.0f} %. "
        f"By it too RTBA's flow 1 swings more: {r['flow1_falls_mean']:.1f} sharp falls per run against ATBT's "
        f"{a['flow1_falls_mean']:.1f} (flow 2: {r['flow2_falls_mean']:.1f} against {a['flow2_falls_mean']:.1f}). "
        "So the difference from the paper is not in how the numbers are defined.",
    )


def _cause_section(figures: dict[str, str], cause: pl.DataFrame) -> list[str]:
    def share(r: dict[str, Any]) -> str:
        if r["flow1_cwnd_term"] is None:
            return "-"
        return f"{r['flow1_cwnd_term'] * 100:.0f} %, {r['flow2_cwnd_term'] * 100:.0f} %"

    def rate_term(r: dict[str, Any]) -> str:
        if r["rate_flow1_cv"] is None:
            return "-"
        return (f"{r['rate_flow1_cv']:.2f}, {r['rate_flow2_cv']:.2f}; within 20 % to the end in "
                f"{r['rate_converged']} of {r['n']}")  # fmt: skip

    columns = [
        value("Fig. 4 without a cap, same seeds", "variant"),
        estimate("flow 1 allocation (KB)", "flow1_kb", 0),
        Column("swing of flow 1, flow 2 (std / mean)",
               lambda r: f"{mean_ci(r, 'flow1_cv', 2)}, {mean_ci(r, 'flow2_cv', 2)}"),
        Column("sharp falls of flow 1, flow 2 (per run)",
               lambda r: f"{mean_ci(r, 'flow1_falls', 1)}, {mean_ci(r, 'flow2_falls', 1)}"),
        Column("allocations within 20 % after", _converged),
        Column("first within 20 % after (median)", _first_within),
        Column("samples with 2 x cwnd >= S (flow 1, flow 2)", share),
        Column("S alone: swing of flow 1, flow 2", rate_term),
    ]  # fmt: skip
    return section(
        CAUSE_TITLE,
        figure("Fig. 4, one replication's terms", figures["cause"]),
        table(cause, columns),
        _cause_text(cause),
    )


def _cause_text(cause: pl.DataFrame) -> str:
    """What the cause runs show, in words, from their numbers."""
    atbt, closed, wide, rtba, w1, w002, interval = (_cause_case(cause, i) for i in range(len(CAUSE_VARIANTS)))

    def conv(r: dict[str, Any]) -> str:
        if r["converged"] == 0:
            return f"never converge within the run (0 of {r['n']})"
        return f"converge {r['converge_median_s']:.1f} s after flow 2 starts"

    rates = [(r["flow1_mbps_mean"], r["flow2_mbps_mean"]) for r in cause.iter_rows(named=True)]
    if all(abs(x - rates[0][0]) <= 1e-9 and abs(y - rates[0][1]) <= 1e-9 for x, y in rates):
        same = (f"so every variant, on Fig. 4's seeds, carries the same two flows (flow 1 {rates[0][0]:.2f} and flow "
                f"2 {rates[0][1]:.2f} Mbit/s in every variant, the mean over the runs) and differs only in how it "
                "turns them into allocations.")  # fmt: skip
    else:
        same = "yet the variants' flows differ (see fig4_cause.csv): the comparison below is not of allocations alone."
    return " ".join([
        "The policy computes eq. 1-4 as printed (crates/cclab-transport/src/buffer/rtba.rs and padhye.rs, whose "
        "tests pin eq. 1 to Padhye's reference values, eq. 2's EWMA, eq. 3 and eq. 4's maximum); we found no "
        "defect against the paper's formulas, so the difference lies in what eq. 4 does on this path.",
        f"Without a cap no buffer binds (each is at least twice cwnd), {same}",
        f"Under RTBA, eq. 4's 2 x cwnd term is at least eq. 3's S = R x RTT in {rtba['flow1_cwnd_term'] * 100:.0f} % "
        f"of flow 1's samples and {rtba['flow2_cwnd_term'] * 100:.0f} % of flow 2's once both run: S, with R "
        "Padhye's rate for the loss rate since the start, is about the mean window the model expects, "
        f"{rtba['flow1_rate_ratio']:.2f} of 2 x cwnd for flow 1 (median), so RTBA's allocation is 2 x cwnd: "
        "ATBT's lower edge without ATBT's band.",
        "Closing ATBT's band to 2-2 x cwnd, so that its desire is exactly 2 x cwnd, gives RTBA's numbers: flow 1 "
        f"swings {closed['flow1_cv_mean']:.2f} (RTBA {rtba['flow1_cv_mean']:.2f}), falls sharply "
        f"{closed['flow1_falls_mean']:.1f} times per run (RTBA {rtba['flow1_falls_mean']:.1f}), and the "
        f"allocations {conv(closed)} (RTBA: {_seconds(rtba['converge_median_s'])}).",
        f"Widening it to 2-8 x cwnd makes ATBT steadier still (flow 1 swings {wide['flow1_cv_mean']:.2f}, "
        f"{wide['flow1_falls_mean']:.1f} sharp falls) and its allocations {conv(wide)}. The band is what makes "
        "ATBT steady and slow here: a Reno halving takes cwnd to half, and 4 x (cwnd / 2) is the 2 x cwnd the "
        "desire already had, so the desire holds at twice the peak window through every fast recovery and falls "
        "only after a timeout or a second halving; flow 1's allocation then stays above flow 2's longer.",
        "RTBA's smoothing does not change it: with w = 1 (no EWMA) the allocations "
        f"{conv(w1)} and flow 1 swings {w1['flow1_cv_mean']:.2f}; with w = 0.02 they {conv(w002)} and flow 1 "
        f"swings {w002['flow1_cv_mean']:.2f}: the rate of the loss-free start, where S is the 747 KB receive "
        f"window, then decays so slowly that S sets flow 1's buffer in {(1 - w002['flow1_cwnd_term']) * 100:.0f} % "
        "of its samples, a higher level and one more step down.",
        "When S does bind (p over each update interval, 0 in most RTTs, so that S is about the receive window), "
        f"RTBA's allocations sit near the receive window: flow 1 holds {interval['flow1_kb_mean']:.0f} KB and "
        f"swings {interval['flow1_cv_mean']:.2f}, and the allocations {conv(interval)}, because both flows have the "
        "same receive window, not because their rates did.",
        f"S itself swings {rtba['rate_flow1_cv']:.2f} (flow 1) and the two flows' S stay within 20 % to the end "
        f"in {rtba['rate_converged']} of {rtba['n']} runs: the rate term does react more slowly than cwnd, as "
        "the paper reasons, since p counts loss events since the start and flow 2's start-up losses stay in it "
        f"(at the end of the run flow 2's p is still {rtba['loss_ratio_end']:.1f} times flow 1's, the mean over "
        "the runs), but eq. 4's 2 x cwnd hides it. The paper's text asks for the 2 x cwnd term for slow start "
        '(§3.2, seed line 81: "in this phase [slow start] a buffer of about twice the congestion window is '
        'given", and it calls eq. 4 "the initial buffer size"), while eq. 4 as printed applies it always; '
        "we implement eq. 4 as printed. A variant that "
        "applies it in slow start only needs a change to the Rust policy and was not run here; with S about "
        f"{rtba['flow1_rate_ratio'] * 2:.1f} x cwnd it would cap the windows, changing the flows, not only "
        "the allocations.",
    ])  # fmt: skip


def _differences(fig4: pl.DataFrame, cause: pl.DataFrame) -> list[str]:
    import polars as pl

    free = {r["policy"]: r for r in fig4.filter(pl.col("cap") == "none").iter_rows(named=True)}
    fig4_converged = ", ".join(
        f"{policy}'s allocations converge {r['converge_median_s']:.0f} s after flow 2 starts (median)"
        if r["converged"] else f"{policy}'s allocations do not converge" for policy, r in free.items()
    )  # fmt: skip
    return [
        "RTBA's buffer in Fig. 3 is set by eq. 4's 2 x cwnd, not by R x RTT, on a loss-free path: the "
        "paper's 20 KB needs a cwnd of about 7 segments, which our flow (and any TCP whose cwnd tracks a "
        "64 KB receive window) exceeds. The throughput gain and the memory saving against 320 KB are of the "
        "paper's order. The paper's own 20 KB disagrees with its 16 % less than 320 KB (about 269 KB): see "
        f'"{INCONSISTENCY_TITLE}".',
        f"Fig. 4: without a cap, {fig4_converged}, against the paper's 9 or 12 s, but both policies' "
        "allocations follow cwnd; with a cap, the cap decides within a recomputation or two. RTBA converges "
        "sooner and swings more than ATBT, against the paper, because its allocation is eq. 4's 2 x cwnd term "
        f"(at least S in {closed_share(cause) * 100:.0f} % of flow 1's samples), while ATBT's 2-4 x cwnd band "
        f'holds through every halving: see "{CAUSE_TITLE}".',
        "The lwIP stack, NIST Net's shaping and the FTP application are modelled by a TCP sender whose "
        "buffer is refilled at once, a rate-limited link and a 300 KB DropTail queue.",
    ]


STUDY = BuffersStudy()
