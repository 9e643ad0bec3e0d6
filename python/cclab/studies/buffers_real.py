"""Study `buffers-real`: seed paper 004's testbed run over real sockets, beside the simulator.

Seed paper 004 measured RTBA on a testbed: an FTP server on lwIP, a NIST Net router setting
bandwidth, delay and loss, a 300 KB DropTail queue, and clients. This study runs its experiments
with cclab's real-network TCP: ``cclab send --protocol tcp`` is the server, a sending host whose
connections each have their send-buffer policy and share the host's memory cap exactly as the
simulator's host shares it; ``cclab recv --protocol tcp`` is the clients; ``cclab emulate`` is
the router (rate, delay, the 300 KB queue), all on 127.0.0.1 through the Python bindings. The
simulator runs the same paths with the same segment sizes (``buffers.py``'s testbed with the
real encapsulation's 1412-byte payload and 88 bytes of headers), and the report puts the two side
by side:

- Fig. 3: one 10 MB transfer at 50 Mbit/s and 1 ms RTT with each policy (no cap);
- Fig. 4: two connections at 20 Mbit/s and 10 ms, the second 3 s later, under a 128 KB cap;
- several connections: four, a few seconds apart, under the same cap with RTBA, and the host's
  allocations over time, real against simulated.

Real runs are cached one record each under ``OUT/cache/real/`` (see :mod:`cclab.studies.real`).
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cclab.studies import real
from cclab.studies.base import Study, StudyContext
from cclab.studies.buffers import CONVERGED_WITHIN, FIG4_START, LARGE_WINDOW, converged_at
from cclab.studies.buffers import STUDY as BUFFERS
from cclab.studies.report import Column, document, figure, opening, section, table, value
from cclab.sweep import derive_seed

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

    from cclab.result import Result

#: The real TCP's full packet: 1500 bytes, of which 28 of IPv4 and UDP and 60 of cclab's segment header.
PACKET = 1500
HEADER = 88
PAYLOAD = PACKET - HEADER
#: Fig. 3's receive window: the largest without window scaling, 64,240 bytes, in whole segments.
FIG3_WINDOW = 64_240 // PAYLOAD
FIG3_RATE, FIG3_ONE_WAY_MS = "50Mbps", 0.5
FIG3_BYTES = 10_000_000
FIG4_RATE, FIG4_ONE_WAY_MS = "20Mbps", 5.0
QUEUE = "300KB"
CAP = "128KB"
CAP_BYTES = 128_000


@dataclass(frozen=True)
class Policy:
    label: str
    slug: str
    name: str
    params: tuple[tuple[str, str], ...] = ()
    #: A fixed buffer's size: it lets out this many bytes of whole segments per round trip.
    fixed_bytes: int | None = None

    def scenario(self) -> dict[str, Any]:
        return {"policy": self.name, **dict(self.params)}


FIG3_POLICIES = [
    Policy("fixed 2 segments (lwIP)", "fixed2", "fixed", (("size", f"{2 * PAYLOAD}B"),), 2 * PAYLOAD),
    Policy("fixed 8 KB", "fixed8k", "fixed", (("size", "8KB"),), 8_000),
    Policy("fixed 64 KB", "fixed64k", "fixed", (("size", "64KB"),), 64_000),
    Policy("ATBT", "atbt", "atbt"),
    Policy("RTBA", "rtba", "rtba"),
]
ATBT, RTBA = FIG3_POLICIES[3], FIG3_POLICIES[4]


@dataclass(frozen=True)
class Plan:
    fig3_policies: list[Policy]
    fig3_bytes: int
    fig4_policies: list[Policy]
    fig4_duration_s: float
    several: int
    several_stagger_s: float
    several_duration_s: float
    sim_replications: int
    quiet: real.Quiet


FULL = Plan(FIG3_POLICIES, FIG3_BYTES, [ATBT, RTBA], 20.0, 4, 2.0, 16.0, 5, real.Quiet())
QUICK = Plan([FIG3_POLICIES[0], RTBA], 2_000_000, [RTBA], 5.0, 3, 1.0, 4.0, 1, real.IMPATIENT)


class BuffersRealStudy(Study):
    name = "buffers-real"
    title = "Send-buffer allocation over real sockets through the emulator, beside the simulator"
    paper = ("seed paper 004 (004_b4b31cd2ad849c5f.txt): RTBA on an lwIP FTP server behind a NIST Net router "
             "with a 300 KB DropTail queue")  # fmt: skip
    replications = 3
    quick_replications = 1
    #: The real runs need this machine's sockets and minutes of quiet: CI renders the report from them.
    replayed_in_ci = True

    def run(self, ctx: StudyContext) -> None:
        import polars as pl

        plan = QUICK if ctx.quick else FULL
        base = BUFFERS.scenario("buffers.toml").to_dict()
        seed = int(base["run"]["seed"])
        sim_reps = range(plan.sim_replications)
        reps = range(ctx.replications)

        # The simulator first: seconds, and a wrong scenario shows before minutes of real runs.
        fig3_sim = ctx.runs("sim_fig3", [(self._fig3_scenario(base, p, plan), seed) for p in plan.fig3_policies])
        fig4_keys = [(p, r) for p in plan.fig4_policies for r in sim_reps]
        fig4_sim = ctx.runs("sim_fig4", [(self._many_scenario(base, p, 2, FIG4_START, plan.fig4_duration_s),
                                          derive_seed(seed, r)) for p, r in fig4_keys])  # fmt: skip
        several_sim = ctx.runs("sim_several", [(self._many_scenario(base, RTBA, plan.several, plan.several_stagger_s,
                                                                    plan.several_duration_s), derive_seed(seed, r))
                                               for r in sim_reps])  # fmt: skip

        points = [(f"fig3-{p.slug}-r{r}", self._settings("fig3", p, 1, 0.0, plan, r, seed))
                  for r in reps for p in plan.fig3_policies]  # fmt: skip
        points += [(f"fig4-{p.slug}-r{r}", self._settings("fig4", p, 2, FIG4_START, plan, r, seed))
                   for r in reps for p in plan.fig4_policies]  # fmt: skip
        points += [(f"several-rtba-r{r}", self._settings("several", RTBA, plan.several, plan.several_stagger_s, plan,
                                                          r, seed)) for r in reps]  # fmt: skip
        records = dict(zip([n for n, _ in points], real.run_all(ctx, points, real_run, plan.quiet, self.name),
                           strict=True))  # fmt: skip

        fig3 = pl.DataFrame([self._fig3_row(p, records, fig3_sim[i], reps, plan.fig3_bytes)
                             for i, p in enumerate(plan.fig3_policies)])  # fmt: skip
        fig4 = pl.DataFrame([self._many_row(p, [records[f"fig4-{p.slug}-r{r}"] for r in reps],
                                            [res for (q, _), res in zip(fig4_keys, fig4_sim, strict=True) if q == p],
                                            FIG4_START) for p in plan.fig4_policies])  # fmt: skip
        several = pl.DataFrame([self._many_row(RTBA, [records[f"several-rtba-r{r}"] for r in reps], several_sim,
                                               plan.several_stagger_s)])  # fmt: skip
        ctx.table(fig3, "fig3")
        ctx.table(fig4, "fig4")
        ctx.table(several, "several")
        ctx.table(pl.DataFrame(allocation_rows(records)), "real_allocations")
        figures = {
            "fig4": ctx.figure(self._allocation_figure(
                [(p.label, records[f"fig4-{p.slug}-r0"], next(res for (q, r), res in zip(fig4_keys, fig4_sim,
                                                                                         strict=True) if q == p))
                 for p in plan.fig4_policies], "Fig. 4: two connections, 20 Mbit/s, 10 ms, cap 128 KB"),
                "fig4_allocations"),
            "several": ctx.figure(self._allocation_figure(
                [("RTBA", records["several-rtba-r0"], several_sim[0])],
                f"{plan.several} connections {plan.several_stagger_s:g} s apart, RTBA, 20 Mbit/s, 10 ms, cap 128 KB"),
                "several_allocations"),
        }  # fmt: skip
        ctx.report(self._report(ctx, plan, list(records.values()), fig3, fig4, several, figures))

    # ----------------------------------------------------------------- scenarios
    @staticmethod
    def _wire(flow_keys: dict[str, Any]) -> dict[str, Any]:
        """The real encapsulation's sizes, so that the simulator's packets are the emulator's."""
        return {"mss": PAYLOAD, "header": HEADER, **flow_keys}

    def _fig3_scenario(self, base: dict[str, Any], policy: Policy, plan: Plan) -> dict[str, Any]:
        d = copy.deepcopy(base)
        d["name"] = "buffers-real-fig3"
        d["run"]["duration"] = "30s"
        app = {"kind": "transfer", "size": f"{plan.fig3_bytes}B"}
        d["flows"] = [BUFFERS._flow(base, "transfer", "client", policy.scenario(),
                                    **self._wire({"max_window": FIG3_WINDOW, "app": app}))]  # fmt: skip
        return d

    def _many_scenario(self, base: dict[str, Any], policy: Policy, n: int, stagger_s: float,
                       duration_s: float) -> dict[str, Any]:  # fmt: skip
        """``n`` bulk connections from the server, connection i starting i x stagger_s (drawn within 100 ms,
        so that replications differ), 10 ms RTT at 20 Mbit/s, the host capped."""
        d = BUFFERS._with_clients(base, FIG4_RATE, [2 * FIG4_ONE_WAY_MS] * n)
        d["name"] = "buffers-real-many"
        d["run"].update(duration=f"{duration_s:g}s")
        d["run"].pop("warmup", None)
        d["flows"] = [
            BUFFERS._flow(base, f"flow{i + 1}", f"c{i}", policy.scenario(),
                          **self._wire({"app": {"kind": "bulk"}, "max_window": LARGE_WINDOW,
                                        "start": f"{i * stagger_s:g}s..{i * stagger_s + 0.1:g}s"}))
            for i in range(n)
        ]  # fmt: skip
        d["topology"]["hosts"] = [{"node": "server", "memory": CAP}]
        d["observe"] = [{"flows": ["*"], "metrics": ["send_buffer"], "every": "100ms"}]
        return d

    @staticmethod
    def _settings(kind: str, policy: Policy, n: int, stagger_s: float, plan: Plan, rep: int,
                  seed: int) -> dict[str, Any]:  # fmt: skip
        """Everything that decides a real run; a cached record is reused only if it ran with these."""
        fig3 = kind == "fig3"
        duration = None if fig3 else (plan.fig4_duration_s if kind == "fig4" else plan.several_duration_s)
        return {"format": 1, "experiment": kind, "policy": policy.name, "params": [list(p) for p in policy.params],
                "cap": None if fig3 else CAP, "connections": n, "stagger_s": stagger_s,
                "bytes": plan.fig3_bytes if fig3 else None, "duration_s": duration,
                "rate": FIG3_RATE if fig3 else FIG4_RATE,
                "delay": f"{FIG3_ONE_WAY_MS if fig3 else FIG4_ONE_WAY_MS:g}ms", "queue": QUEUE,
                "window": FIG3_WINDOW if fig3 else LARGE_WINDOW, "mss": PACKET, "replication": rep,
                "seed": derive_seed(seed, rep)}  # fmt: skip

    # ----------------------------------------------------------------- rows
    @staticmethod
    def _fig3_row(policy: Policy, records: dict[str, dict[str, Any]], sim: Result, reps: range,
                  size: int) -> dict[str, Any]:  # fmt: skip
        real_s = [completion_s(records[f"fig3-{policy.slug}-r{r}"], 0) for r in reps]
        sim_s = float(sim.flows["completion_s"][0])
        mean = statistics.fmean(real_s)
        # A fixed buffer below the window lets out the same whole segments every round trip, so the
        # transfer takes a known number of round trips and the difference per round trip is the path's.
        per_round = None
        if policy.fixed_bytes is not None and policy.fixed_bytes // PAYLOAD < FIG3_WINDOW:
            rounds = math.ceil(size / (policy.fixed_bytes // PAYLOAD * PAYLOAD))
            per_round = (mean - sim_s) / rounds * 1e6
        return {"policy": policy.label, "real_s_mean": mean, "real_s_min": min(real_s), "real_s_max": max(real_s),
                "sim_s": sim_s, "ratio": mean / sim_s,
                "real_mbps": size * 8 / mean / 1e6 if mean > 0 else math.nan,
                "sim_mbps": size * 8 / sim_s / 1e6,
                "retransmits": statistics.fmean(records[f"fig3-{policy.slug}-r{r}"]["sender"]["progress"]["retransmits"]
                                                for r in reps), "extra_per_round_us": per_round}  # fmt: skip

    @staticmethod
    def _many_row(policy: Policy, records: list[dict[str, Any]], sims: list[Result],
                  stagger_s: float) -> dict[str, Any]:  # fmt: skip
        """Mean allocations and goodputs once every connection runs, the limits' largest sum, and when the
        first two allocations converge, real and simulated (means over replications)."""
        import polars as pl

        n = len(records[0]["sender"]["connections"])
        last_start = (n - 1) * stagger_s + 1.0
        real_alloc, real_sum, real_conv, real_good = [], [], [], []
        for rec in records:
            frame = pl.DataFrame(rec["sender"]["allocations"])
            wide = frame.pivot(on="connection", index="at_s", values="limit").sort("at_s").fill_null(0)
            cols = [c for c in wide.columns if c != "at_s"]
            real_sum.append(max(sum(row[c] for c in cols) for row in wide.iter_rows(named=True)))
            late = wide.filter(pl.col("at_s") >= last_start)
            real_alloc.append(statistics.fmean(float(late[c].mean()) for c in cols) / 1e3)  # type: ignore[arg-type]
            real_conv.append(_convergence(wide["at_s"].to_list(), wide[cols[0]].to_list(), wide[cols[1]].to_list(),
                                          stagger_s, 2))  # fmt: skip
            # From the first opening to the last acknowledgment: a connection that the deadline closes
            # first delivers what it had written.
            conns = rec["sender"]["connections"]
            span = max(c["finished_s"] for c in conns) - min(c["started_s"] for c in conns)
            real_good.append(sum(c["content_bytes"] for c in conns) * 8 / 1e6 / span)
        sim_alloc, sim_sum, sim_conv, sim_good = [], [], [], []
        for res in sims:
            wide = BUFFERS._series(res, "send_buffer")
            cols = [f"flow{i + 1}" for i in range(n)]
            sim_sum.append(float(wide.select(pl.sum_horizontal(cols)).max().item()))
            late = wide.filter(pl.col("time_s") >= last_start)
            sim_alloc.append(statistics.fmean(float(late[c].mean()) for c in cols) / 1e3)  # type: ignore[arg-type]
            sim_conv.append(_convergence(wide["time_s"].to_list(), wide["flow1"].to_list(), wide["flow2"].to_list(),
                                         stagger_s, 10))  # fmt: skip
            sim_good.append(float(res.flows["bytes_delivered"].sum()) * 8 / 1e6 / float(res.config["run"]["duration"]))
        return {"policy": policy.label, "connections": n,
                "real_alloc_kb": statistics.fmean(real_alloc), "sim_alloc_kb": statistics.fmean(sim_alloc),
                "real_max_sum_kb": max(real_sum) / 1e3, "sim_max_sum_kb": max(sim_sum) / 1e3,
                "real_converge_s": _mean_or_nan(real_conv), "sim_converge_s": _mean_or_nan(sim_conv),
                "real_unconverged": sum(c is None for c in real_conv),
                "sim_unconverged": sum(c is None for c in sim_conv),
                "real_goodput_mbps": statistics.fmean(real_good), "sim_goodput_mbps": statistics.fmean(sim_good),
                "real_retransmits": statistics.fmean(r["sender"]["progress"]["retransmits"] for r in records),
                "sim_retransmits": statistics.fmean(float(res.flows["retransmits"].sum()) for res in sims)}  # fmt: skip

    # ----------------------------------------------------------------- figures
    @staticmethod
    def _allocation_figure(panels: list[tuple[str, dict[str, Any], Result]], title: str) -> Figure:
        import matplotlib.pyplot as plt
        import polars as pl

        fig, axes = plt.subplots(len(panels), 1, figsize=(9, 3.2 * len(panels)), squeeze=False, sharex=True)
        for ax, (label, record, sim) in zip(axes[:, 0], panels, strict=True):
            frame = pl.DataFrame(record["sender"]["allocations"])
            wide = BUFFERS._series(sim, "send_buffer")
            for i in sorted(set(frame["connection"].to_list())):
                mine = frame.filter(pl.col("connection") == i).sort("at_s")
                ax.step(mine["at_s"], mine["limit"] / 1e3, where="post", color=f"C{i}", lw=1.4,
                        label=f"connection {i + 1}, real")  # fmt: skip
                ax.step(wide["time_s"], wide[f"flow{i + 1}"] / 1e3, where="post", color=f"C{i}", lw=0.9, ls="--",
                        label=f"connection {i + 1}, simulated")  # fmt: skip
            ax.axhline(CAP_BYTES / 1e3, color="k", lw=0.8, ls=":", label="cap")
            ax.set(title=label, ylabel="send buffer (KB)")
            ax.legend(fontsize=7, ncol=2)
        axes[-1, 0].set_xlabel("time (s)")
        fig.suptitle(f"{title}: the host's limits, real (solid, every 0.5 s) and simulated (dashed)", fontsize=10)
        fig.tight_layout()
        return fig

    # ----------------------------------------------------------------- report
    def _report(self, ctx: StudyContext, plan: Plan, records: list[dict[str, Any]], fig3: pl.DataFrame,
                fig4: pl.DataFrame, several: pl.DataFrame, figures: dict[str, str]) -> str:  # fmt: skip
        return document(
            opening(self, _generated(ctx, plan)),
            section("Setup", SETUP),
            section("The machine during the real runs", real.machine_text(records, ctx.replications)),
            _fig3_section(fig3),
            section("Fig. 4 and several connections: what to compare", MANY_TEXT),
            section("Fig. 4: two connections, the second 3 s later, under a 128 KB cap",
                    _many_table(fig4), figure("Fig. 4", figures["fig4"]), _many_text(fig4)),
            section(f"Several connections from one host: {plan.several} under RTBA and the 128 KB cap",
                    _many_table(several), figure("several", figures["several"]), _many_text(several)),
        )  # fmt: skip


def _generated(ctx: StudyContext, plan: Plan) -> str:
    return (f"Generated by `{ctx.command}` with {ctx.replications} replications per point (real runs); the simulator "
            f"runs {plan.sim_replications} seeds per point of Fig. 4 and of the several connections (Fig. 3 has no "
            "random element and runs once). Tables in `tables/`; the real runs are cached in `cache/real/`, one JSON "
            "record each, with the host's every allocation.")  # fmt: skip


def _fig3_section(fig3: pl.DataFrame) -> list[str]:
    import polars as pl

    columns = [
        value("policy", "policy"),
        Column("real (s)", lambda r: f"{r['real_s_mean']:.3f} ({r['real_s_min']:.3f}-{r['real_s_max']:.3f})"),
        value("simulated (s)", "sim_s", ".3f"),
        value("real / simulated", "ratio", ".2f"),
        value("real (Mbit/s)", "real_mbps", ".1f"),
        value("simulated (Mbit/s)", "sim_mbps", ".1f"),
        value("real retransmissions", "retransmits", ".0f"),
        Column("real - simulated per round trip (µs)",
               lambda r: "" if r["extra_per_round_us"] is None else format(r["extra_per_round_us"], ".0f")),
    ]  # fmt: skip
    return section(
        "Fig. 3: one 10 MB transfer at 50 Mbit/s and 1 ms RTT",
        "Completion time of the transfer from its connection's opening (real: mean, and the range over "
        "replications), and the throughput that makes:",
        table(fig3, columns),
        FIG3_TEXT.format(
            extra=_range_text(fig3["extra_per_round_us"].drop_nulls().to_list(), "µs"),
            small=_range_text(fig3.filter(pl.col("extra_per_round_us").is_not_null())["ratio"].to_list(), "", 2),
            ratio=_range_text(fig3.filter(pl.col("extra_per_round_us").is_null())["ratio"].to_list(), "", 2),
        ),
    )


def _many_table(frame: pl.DataFrame) -> str:
    """Fig. 4's or the several connections' table: real against simulated."""

    def converged(r: dict[str, Any]) -> str:
        never = r["real_unconverged"] or r["sim_unconverged"]
        counts = f" ({r['real_unconverged']} real, {r['sim_unconverged']} simulated never)" if never else ""
        return f"{r['real_converge_s']:.1f} / {r['sim_converge_s']:.1f}{counts}"

    def both(key: str, spec: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: f"{format(r[f'real_{key}'], spec)} / {format(r[f'sim_{key}'], spec)}"

    return table(frame, [
        value("policy", "policy"),
        value("connections", "connections"),
        Column("mean allocation once all run, real / sim (KB)", both("alloc_kb", ".1f")),
        Column("largest sum of limits (KB)", both("max_sum_kb", ".1f")),
        Column("allocations of 1 and 2 converge after (s)", converged),
        Column("aggregate goodput (Mbit/s)", both("goodput_mbps", ".2f")),
        Column("retransmissions", both("retransmits", ".0f")),
    ])  # fmt: skip


SETUP = f"""\
The paper's testbed is an FTP server on lwIP, a NIST Net router and a router with a 300 KB DropTail
queue. Here the server is `cclab send --protocol tcp` (the simulator's TCP sender, Reno with NewReno
recovery, each connection with its send-buffer policy, the host sharing its memory cap every 0.5 s and
as each connection opens, exactly as the simulated host does), the clients are one `cclab recv
--protocol tcp` taking every connection, and the routers are `cclab emulate` (rate, a {QUEUE} DropTail
queue, delay; no random loss). TCP travels in cclab's own UDP encapsulation: {PAYLOAD} bytes of payload
in a 1500-byte packet (28 bytes of IPv4 and UDP, 60 of segment header). The simulator runs
`buffers.py`'s testbed with the same payload and header sizes, so both put the same packets on the
same rate; every flow grows cwnd only while it is used (`cwnd_growth = "cwnd_limited"`,
`--cwnd-growth cwnd_limited`), as in the `buffers` study. Fig. 3's receive window is {FIG3_WINDOW}
segments (64,240 bytes, no window scaling); Fig. 4's and the several connections' {LARGE_WINDOW}
segments. The real connections open with a handshake (two round trips); times are counted from each
connection's opening, as the simulated flow's from its start."""

FIG3_TEXT = """\
The simulated path is exactly 1 ms long. The real one is longer by what the machine adds: each datagram
crosses two sockets in each direction, and the emulator and both endpoints wake from `ppoll` 30-80 µs
after they asked to on this virtual machine. A fixed buffer smaller than the window lets out the same
whole segments every round trip, so the transfer takes a known number of round trips, and the
difference per round trip measures what the machine adds to each: {extra} here. That is why the
small fixed buffers take {small} times as long as simulated. Buffers large enough for the path (64
KB, ATBT, RTBA) are limited by the rate and the 64 KB receive window instead, and there the real and
simulated times agree (ratios {ratio}): the emulator's rate is exact (docs/realnet.md), and the real
sender's window, grown only while used, is the simulated one's. No run retransmitted: nothing but the
300 KB queue could drop, and the window never fills it."""

MANY_TEXT = """\
Both hosts turn the connections' desires into limits with the same code (`share::connection_limits`):
each connection is first guaranteed two segments, then RTBA shares the rest in proportion to the
expected rates and ATBT max-min fairly. The real host decides every 0.5 s from its start and as each
connection opens; the simulated one every 0.5 s and at each start (drawn within 100 ms of the nominal
one). Convergence is when the first two connections' one-second mean limits (two real decisions, ten
simulated samples) stay within 20 % of each other, counted from the second connection's start; it
cannot be under 1 s. The aggregate goodput counts content bytes from the first opening to the last
acknowledgment (real) or over the run (simulated); the path carries at most 20 x 1412 / 1500 = 18.83
Mbit/s of payload."""


def _range_text(values: list[float], unit: str, digits: int = 0) -> str:
    if not values:
        return "none"
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    sep = " " if unit else ""
    return f"{low}{sep}{unit}" if low == high else f"{low}-{high}{sep}{unit}"


def _many_text(table: pl.DataFrame) -> str:
    """What the table of several connections says, in words, from its numbers."""
    parts = []
    for r in table.iter_rows(named=True):
        alloc = abs(r["real_alloc_kb"] / r["sim_alloc_kb"] - 1) * 100
        good = abs(r["real_goodput_mbps"] / r["sim_goodput_mbps"] - 1) * 100
        parts.append(
            f"With {r['policy']} and {r['connections']} connections the real host's mean allocation once all run "
            f"is within {alloc:.1f} % of the simulated host's, its limits never sum above the cap "
            f"({r['real_max_sum_kb']:.1f} KB at most), the first two allocations converge "
            f"{r['real_converge_s']:.1f} s after the second connection starts against {r['sim_converge_s']:.1f} s "
            f"simulated, and the aggregate goodput is within {good:.1f} % of the simulated one."
        )
    return " ".join(parts) + (
        " The real allocations converge a few tenths of a second sooner only because the real host also decides "
        "when a connection opens, and because the one-second means over two real decisions move in larger steps "
        "than those over ten simulated samples. A connection that opens gets the two-segment floor until RTBA "
        "has measured its rate (its first RTT sample), then its proportional share; the other connections' "
        "limits shrink as each joins, on both hosts within one 0.5 s period of each other."
    )


def _convergence(times: list[float], a: list[float], b: list[float], start: float, per_second: int) -> float | None:
    """When two allocation series' one-second means (``per_second`` samples) converge, from ``start``."""

    def mean(xs: list[float], i: int) -> float:
        window = xs[max(0, i - per_second + 1) : i + 1]
        return sum(window) / len(window)

    keep = [i for i, t in enumerate(times) if t >= start + 1.0]
    at = converged_at([times[i] for i in keep], [mean(a, i) for i in keep], [mean(b, i) for i in keep],
                      CONVERGED_WITHIN)  # fmt: skip
    return None if at is None else at - start


def _mean_or_nan(xs: list[float | None]) -> float:
    known = [x for x in xs if x is not None]
    return statistics.fmean(known) if known else math.nan


def completion_s(record: dict[str, Any], connection: int) -> float:
    """A transfer's time from its connection's opening to its last acknowledgment."""
    c = record["sender"]["connections"][connection]
    return float(c["finished_s"] - c["started_s"])


def allocation_rows(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every real host decision, with the run it came from."""
    return [{"run": name, **a} for name, rec in records.items() for a in rec["sender"]["allocations"]]


def real_run(settings: dict[str, Any]) -> dict[str, Any]:
    """The clients, the router and the server of one real run on 127.0.0.1 (see the module's text)."""
    from cclab import _core

    before = real.snapshot()
    receiver = emulator = sender = None
    failure = None
    summaries: dict[str, Any] = {}
    try:
        receiver = _core.Transfer.recv("127.0.0.1:0", protocol="tcp", connections=settings["connections"],
                                       window=settings["window"], mss=settings["mss"], timeout_s=10.0)  # fmt: skip
        emulator = _core.Emulator("127.0.0.1:0", receiver.local_addr(), rate=settings["rate"],
                                  delay=settings["delay"], queue=settings["queue"], seed=settings["seed"])  # fmt: skip
        bounded = settings["bytes"] is not None
        sender = _core.Transfer.send(
            emulator.local_addr(), protocol="tcp", mss=settings["mss"],
            bytes=f"{settings['bytes']}B" if bounded else None,
            duration_s=60.0 if bounded else settings["duration_s"],
            connections=settings["connections"], stagger_s=settings["stagger_s"] or None,
            send_buffer=settings["policy"], buffer_params=[tuple(p) for p in settings["params"]],
            memory_cap=settings["cap"], cwnd_growth="cwnd_limited",
        )  # fmt: skip
        for name, transfer in (("sender", sender), ("receiver", receiver)):
            try:
                summaries[name] = transfer.join()
            except _core.TransferFailed as e:
                failure = f"{name}: {e}"
                receiver.stop()
    except BaseException:
        real.stop_all(sender, receiver, emulator)
        raise
    stats = emulator.stop()
    after = real.snapshot()
    if failure is None and not summaries["sender"]["complete"]:
        failure = "sender: incomplete"
    return {"settings": settings, "build_id": _core.build_id(), **real.around(before, after),
            "sender": summaries.get("sender"), "receiver": summaries.get("receiver"), "emulator": stats,
            "failure": failure}  # fmt: skip


STUDY = BuffersRealStudy()
