"""Study `buffers`: send-buffer allocation on a memory-capped server (fixed, ATBT, RTBA).

Reproduces seed paper 004 (RTBA: each connection's send buffer sized from its
Padhye expected rate, max(R x RTT, 2 x cwnd), and a host's memory shared in
proportion to expected rates; evaluated on an lwIP FTP server behind NIST Net
and a 300 KB DropTail queue): one 10 MB transfer at 50 Mbit/s and 1 ms RTT
under RTBA, fixed buffers of several sizes and ATBT (Fig. 3), two flows at
20 Mbit/s and 10 ms the second starting 3 s later under ATBT and RTBA, with
the time their allocations take to converge (Fig. 4), and the extension a
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

    def _fig4_scenario(self, base: dict[str, Any], policy: str, cap: str, plan: Plan) -> dict[str, Any]:
        d = self._with_clients(base, "20Mbps", [10.0, 10.0])
        d["name"] = "buffers-fig4"
        # Throughput is measured once both flows run.
        d["run"].update(duration=plan.fig4_duration, warmup=f"{FIG4_START + 0.1:g}s")
        # A large receive window: the flows are limited by the network (the 300 KB queue), as the
        # paper's ATBT allocations, which follow cwnd's saw-tooth, suggest. The start times are drawn
        # within 100 ms so that replications differ.
        bulk = {"app": {"kind": "bulk"}, "max_window": LARGE_WINDOW}
        d["flows"] = [
            self._flow(base, "flow1", "c0", {"policy": policy}, start="0s..100ms", **bulk),
            self._flow(base, "flow2", "c1", {"policy": policy}, start=f"{FIG4_START:g}s..{FIG4_START + 0.1:g}s",
                       **bulk),
        ]  # fmt: skip
        if cap != "none":
            d["topology"]["hosts"] = [{"node": "server", "memory": cap}]
        d["observe"] = self._observe("100ms")
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

        ctx.report(self._report(ctx, plan, figures, fig3, fig4, ext))

    @staticmethod
    def _fig4_row(result: Result) -> dict[str, Any]:
        """Each flow's throughput after the second starts, the mean allocations then, and the convergence time."""
        import polars as pl

        alloc = BuffersStudy._series(result, "send_buffer")
        # One-second means (ten 100 ms samples), so that a single sample's swing is not a divergence.
        smooth = alloc.with_columns(pl.col("flow1").rolling_mean(10), pl.col("flow2").rolling_mean(10))
        after = smooth.filter(pl.col("time_s") >= FIG4_START + 1.0).drop_nulls()
        start2 = float(result.flows.filter(pl.col("name") == "flow2")["start_s"][0])
        at = converged_at(after["time_s"].to_list(), after["flow1"].to_list(), after["flow2"].to_list(),
                          CONVERGED_WITHIN)  # fmt: skip
        both = alloc.filter(pl.col("time_s") >= FIG4_START + 1.0)

        def spread(flow: str) -> float:
            """How much an allocation swings: its coefficient of variation (std / mean) once both flows run."""
            return float(both[flow].std()) / float(both[flow].mean())  # type: ignore[arg-type]

        goodput = {r["name"]: r["goodput_bps"] for r in result.flows.iter_rows(named=True)}
        return {"converge_s": None if at is None else at - start2,
                "flow1_kb": float(both["flow1"].mean()) / 1e3, "flow2_kb": float(both["flow2"].mean()) / 1e3,  # type: ignore[arg-type]
                "flow1_mbps": goodput["flow1"] / 1e6, "flow2_mbps": goodput["flow2"] / 1e6,
                "flow1_cv": spread("flow1"), "flow2_cv": spread("flow2"),
                "retransmits": int(result.flows["retransmits"].sum())}  # fmt: skip

    @staticmethod
    def _fig4_summary(reps: pl.DataFrame) -> pl.DataFrame:
        import polars as pl

        metrics = ["flow1_kb", "flow2_kb", "flow1_mbps", "flow2_mbps", "flow1_cv", "flow2_cv"]
        summary = aggregate(reps, ["cap", "policy"], metrics)
        converged = reps.group_by(["cap", "policy"], maintain_order=True).agg(
            pl.col("converge_s").is_not_null().sum().alias("converged"),
            pl.col("converge_s").median().alias("converge_median_s"),
            pl.col("converge_s").max().alias("converge_max_s"),
        )
        return summary.join(converged, on=["cap", "policy"], maintain_order="left")

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
                fig4: pl.DataFrame, ext: pl.DataFrame) -> str:  # fmt: skip
        return document(
            heading(self.title, 1),
            lines(f"Paper: {self.paper}.", _generated(ctx)),
            section("Setup and reconstruction", SETUP, bullets(_choices(plan))),
            _fig3_section(figures, fig3),
            _fig4_section(figures, fig4, self._fig4_text(fig4)),
            _extension_section(figures, plan, ext),
            section("Where we differ from the paper, and why", bullets(_differences(fig4))),
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
        Column("allocations within 20 % after", _converged),
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


def _differences(fig4: pl.DataFrame) -> list[str]:
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
        "paper's order.",
        f"Fig. 4: without a cap, {fig4_converged}, against the paper's 9 or 12 s, but both policies' "
        "allocations follow cwnd; with a cap, the cap decides within a recomputation or two.",
        "The lwIP stack, NIST Net's shaping and the FTP application are modelled by a TCP sender whose "
        "buffer is refilled at once, a rate-limited link and a 300 KB DropTail queue.",
    ]


STUDY = BuffersStudy()
