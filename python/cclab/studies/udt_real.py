"""Study `udt-real`: seed paper 002's testbed run over real UDP sockets, beside the simulator.

Seed paper 002 measured its two proposals for UDT (the NAK decrease chosen by
RTT band, and a Vegas-style congestion-prediction flow window) on a testbed:
two Linux hosts on a 1 Gbit/s link, netem adding the RTT and 0.001 % loss,
real UDT transfers. This study runs that experiment on one machine, scaled to
100 Mbit/s (a 2-core machine cannot relay 1 Gbit/s in user space): for each
of the four UDT congestion controls and RTTs of 25, 100 and 200 ms, a
memory-to-memory test of fixed length goes from ``cclab send`` to ``cclab
recv`` through ``cclab emulate`` on 127.0.0.1 (rate, a DropTail queue of one
BDP, RTT/2 of delay each way, Bernoulli loss on the data direction only), and
the simulator runs the same path (``udt_real.toml``). The report puts the two
side by side with the paper's gains.

The real runs use the Python bindings (``cclab._core.Transfer`` and
``cclab._core.Emulator``) in this process rather than three ``cclab``
subprocesses: their threads run in Rust without the interpreter's lock, so
they cost what the commands cost, the summaries arrive as dictionaries (no
output to parse), each side binds port 0 and tells its address before the
next starts (no port races), and Ctrl-C stops all three at once. Real runs
are not deterministic; each finished one is cached under
``OUT/cache/real/`` (with the settings it ran with), so an interrupted
reproduction resumes and keeps what finished, and ``--from-cache`` renders
the report again from them.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cclab.studies import real
from cclab.studies.base import Study, StudyContext, half_width, mean_ci, percent
from cclab.studies.report import Column, document, figure, opening, section, table
from cclab.studies.udt import PAPER_GAINS as UDT_PAPER_GAINS
from cclab.studies.udt import TESTBED_LOSS, paired_gain
from cclab.sweep import aggregate, derive_seed

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

    from cclab.result import Result
    from cclab.scenario import Scenario


@dataclass(frozen=True)
class Variant:
    """One UDT congestion control, as `cclab send --cc` and a scenario's `cc` name it."""

    label: str
    slug: str
    cc: str


NATIVE = Variant("native UDT", "native", "udt")
#: Axis labels.
SHORT = {"native": "native", "banded": "RTT-banded", "prediction": "prediction", "combined": "banded +\nprediction"}
BANDED = Variant("RTT-banded decrease", "banded", "udt_rtt_banded")
#: The prediction's thresholds are the defaults of both, the paper's alpha 1.5 and beta 3.5.
PREDICTION = Variant("prediction (1.5, 3.5)", "prediction", "udt_prediction")
COMBINED = Variant("banded + prediction", "combined", "udt_combined")
VARIANTS = [NATIVE, BANDED, PREDICTION, COMBINED]

#: The paper's testbed gains over native UDT (Mbit/s, at 1 Gbit/s), by our variant and RTT.
PAPER_GAINS = {("prediction" if slug.startswith("prediction") else slug, rtt): gain
               for (slug, rtt), gain in UDT_PAPER_GAINS.items()}  # fmt: skip
PAPER_RATE_MBPS = 1000.0
RATE_MBPS = 100.0
RATE = f"{RATE_MBPS:g}Mbps"
LOSS = TESTBED_LOSS
MSS = 1500
#: Payload of a full packet (1500 bytes less 20 of IP, 8 of UDP and 16 of UDT header).
PAYLOAD_BYTES = 1456
#: The path's capacity in full packets per second (the emulator counts every byte of the 1500).
CAPACITY_PPS = RATE_MBPS * 1e6 / (MSS * 8)
#: How often the real runs' progress is read (the transfers publish theirs every 50 ms).
POLL_S = 0.025
#: A real run that has not ended this long after its test should have is stopped and tried again.
GRACE_S = 30.0
#: The version of a cached real run's record; a record of another version is run again.
RECORD_FORMAT = 2
SERIES_EVERY = "100ms"


@dataclass(frozen=True)
class Plan:
    """What one sitting runs."""

    duration_s: float
    rtts_ms: list[int]
    variants: list[Variant] = field(default_factory=lambda: list(VARIANTS))
    #: Seeds per point in the simulator (the real replications are the study's --replications).
    sim_replications: int = 10
    #: Before each real run, wait up to this long for the other processes to fall quiet (below real.QUIET_PCT).
    quiet_wait_s: float = 300.0
    #: Run again, up to this many times, a real run during which the other processes used more than real.QUIET_PCT.
    redo_disturbed: int = 4


FULL = Plan(30.0, [25, 100, 200])
#: CI's quick run does not wait for quiet: it checks that the pieces fit, not the numbers.
QUICK = Plan(3.0, [25], [NATIVE, COMBINED], sim_replications=2, quiet_wait_s=0.0, redo_disturbed=0)


def bdp_bytes(rtt_ms: float) -> int:
    """One bandwidth-delay product of the path, in bytes: the queue limit of both halves."""
    return round(RATE_MBPS * 1e6 * rtt_ms / 1e3 / 8)


class UdtRealStudy(Study):
    name = "udt-real"
    title = "UDT's testbed over real sockets through the emulator, beside the simulator, at 100 Mbit/s"
    paper = (
        "seed 002_7bb40d060577cf39: an improved UDT, the NAK decrease chosen by RTT band and a "
        "Vegas-style congestion-prediction flow window; its testbed (two Linux hosts on 1 Gbit/s, netem "
        "with RTT 25, 100 and 200 ms and 0.001 % loss, Figs. 9-13)"
    )
    replications = 6
    quick_replications = 1
    #: The real runs need this machine's sockets and minutes of quiet: CI renders the report from them.
    replayed_in_ci = True

    def run(self, ctx: StudyContext) -> None:
        import polars as pl

        plan = QUICK if ctx.quick else FULL
        base = self.scenario("udt_real.toml").with_(**{"run.duration": f"{plan.duration_s:g}s"})
        base_seed = int(base.to_dict()["run"]["seed"])

        # The simulator first: it takes seconds, and a mistake in a scenario shows before minutes of real runs.
        sim_parts = []
        for rtt_ms in plan.rtts_ms:
            sweep = ctx.sweep(f"sim/rtt-{rtt_ms}ms", _path(base, rtt_ms),
                              {"flows[0].cc": [v.cc for v in plan.variants]},
                              replications=plan.sim_replications)  # fmt: skip
            sim_parts.append(_sim_runs(sweep.flows, sweep.links, plan, rtt_ms))
        sim_runs = pl.concat(sim_parts)
        shown = [(v, r) for r in plan.rtts_ms for v in plan.variants]
        jobs = []
        for v, rtt_ms in shown:
            d = _path(base, rtt_ms).with_(**{"flows[0].cc": v.cc}).to_dict()
            d["observe"] = [{"flows": ["udt"], "metrics": ["bytes_delivered", "bandwidth"], "every": SERIES_EVERY}]
            if v in (PREDICTION, COMBINED):
                d["observe"].append({"flows": ["udt"], "metrics": ["cc.window_*"], "every": SERIES_EVERY})
            jobs.append((d, derive_seed(base_seed, 0)))
        sim_series = dict(zip(shown, ctx.runs("sim_series", jobs), strict=True))
        decisions = pl.DataFrame(
            [_decisions(v, rtt, res) for (v, rtt), res in sim_series.items() if v in (PREDICTION, COMBINED)],
            schema={"variant": pl.String, "rtt_ms": pl.Float64, "decreases": pl.Int64, "keeps": pl.Int64,
                    "increases": pl.Int64},
        )  # fmt: skip

        records = run_real(ctx, plan, base_seed)
        real_runs = pl.DataFrame([_real_row(rec) for rec in records])

        table = _comparison(real_runs, sim_runs, plan)
        diagnostics = _diagnostics(real_runs, sim_runs, sim_series, plan)
        ctx.table(real_runs, "real_runs")
        ctx.table(sim_runs, "sim_runs")
        ctx.table(table, "comparison")
        ctx.table(diagnostics, "diagnostics")
        ctx.table(decisions, "sim_prediction_decisions")
        figures = {
            "goodput": ctx.figure(_goodput_figure(table, real_runs, sim_runs, plan), "goodput_real_vs_sim"),
            "gains": ctx.figure(_gain_figure(table, plan), "gains_real_sim_paper"),
            "series": ctx.figure(_series_figure(records, sim_series, plan), "throughput_over_time"),
        }
        ctx.report(self._report(ctx, plan, records, table, diagnostics, decisions, figures))

    def _report(self, ctx: StudyContext, plan: Plan, records: list[dict[str, Any]], table: pl.DataFrame,
                diagnostics: pl.DataFrame, decisions: pl.DataFrame, figures: dict[str, str]) -> str:  # fmt: skip
        return document(
            opening(self, _generated(ctx, plan)),
            section("Setup", _setup(plan)),
            section("The machine during the real runs", _machine(records, ctx.replications, plan)),
            _goodput_section(table, plan, figures),
            _gains_section(table, plan, figures),
            _runs_section(diagnostics, plan, figures),
            section("Discussion", _discussion(plan, table, diagnostics, decisions, records)),
        )


def _generated(ctx: StudyContext, plan: Plan) -> str:
    return (
        f"Generated by `{ctx.command}` with {ctx.replications} replications per point (real runs; the "
        f"simulator runs {plan.sim_replications} seeds per point); ± is the 95 % confidence half-width "
        f"(Student's t). Every run is a {plan.duration_s:g} s memory-to-memory test and its goodput counts "
        "the whole test, start-up included. Tables in `tables/`: `comparison.csv` (real and simulated "
        "goodput, their ratio, the paired gains and the paper's), `diagnostics.csv` (drops, "
        "retransmissions, pacing, capacity estimates, steal time), `real_runs.csv` and `sim_runs.csv` (one row per "
        "run), `sim_prediction_decisions.csv` (the prediction's branches in the simulator, replication 0). "
        "The real runs are cached in `cache/real/`, one JSON record each."
    )


def _goodput_section(comparison: pl.DataFrame, plan: Plan, figures: dict[str, str]) -> list[str]:
    return section(
        "Goodput, real and simulated",
        "Mean goodput (Mbit/s) of each variant alone on the path; the ratio is real over simulated (its "
        "± propagates both half-widths, to first order):",
        _goodput_table(comparison, plan),
        figure("goodput", figures["goodput"]),
    )


def _gains_section(comparison: pl.DataFrame, plan: Plan, figures: dict[str, str]) -> list[str]:
    return section(
        "Gains of the proposals over native UDT",
        "Each gain is the mean over replications of the proposal's goodput minus native UDT's in the same "
        "replication (same loss seed; the real pairs also ran minutes apart on the same machine). The paper "
        f"measured at {PAPER_RATE_MBPS:g} Mbit/s; we compare gains as a share of the link rate, so its "
        f"gains scale by {RATE_MBPS / PAPER_RATE_MBPS:g} to this path:",
        _gain_table(comparison, plan),
        figure("gains", figures["gains"]),
    )


def _runs_section(diagnostics: pl.DataFrame, plan: Plan, figures: dict[str, str]) -> list[str]:
    return section(
        "What happened in the runs",
        "Means per run. Queue: datagrams the emulator's (or simulated link's) DropTail queue refused; "
        "random: those the 0.001 % loss took; host: datagrams the kernel dropped for a full socket buffer "
        "(`RcvbufErrors` in /proc/net/snmp over the run, any socket on the machine); late: how long after "
        "its scheduled time the real sender's median and 99th-percentile packet left; capacity: the "
        "sender's packet-pair estimate of the path's capacity, median over the run after its first second "
        f"(the path carries {CAPACITY_PPS:.0f} full packets per second; simulated: replication 0); steal: "
        "the share of the run's time the hypervisor took from this machine's CPUs (/proc/stat).",
        _diagnostic_table(diagnostics, plan),
        figure("over time", figures["series"]),
    )


# The simulated path -------------------------------------------------------------------------------


def _path(base: Scenario, rtt_ms: int) -> Scenario:
    return base.with_(**{"flows[0].rtt": f"{rtt_ms}ms", "topology.bottleneck.buffer": f"{bdp_bytes(rtt_ms)}B"})


def _sim_runs(flows: pl.DataFrame, links: pl.DataFrame, plan: Plan, rtt_ms: int) -> pl.DataFrame:
    """One row per simulated run: goodput, retransmissions, timeouts, and the forward queue's drops and losses."""
    import polars as pl

    labels = {v.cc: v for v in plan.variants}
    forward = links.filter(pl.col("role") == "bottleneck").select(
        "flows[0].cc", "replication", pl.col("drops").alias("queue_drops"), pl.col("losses").alias("random_losses")
    )
    rows = flows.join(forward, on=["flows[0].cc", "replication"]).sort("replication")
    return rows.select(
        pl.col("flows[0].cc").replace_strict({cc: v.slug for cc, v in labels.items()}).alias("variant"),
        pl.col("flows[0].cc").replace_strict({cc: v.label for cc, v in labels.items()}).alias("label"),
        pl.lit(float(rtt_ms)).alias("rtt_ms"),
        "replication",
        (pl.col("goodput_bps") / 1e6).alias("goodput_mbps"),
        "retransmits", "naks", "timeouts", "queue_drops", "random_losses",
    )  # fmt: skip


def _sim_rate(result: Result, duration_s: float) -> tuple[list[float], list[float]]:
    """Goodput per second (Mbit/s) from the delivered-bytes counter and the run's total at its end."""
    import polars as pl

    s = result.metrics.filter(pl.col("metric") == "bytes_delivered").sort("time_s")
    points = list(zip(s["time_s"].to_list(), s["value"].to_list(), strict=True))
    total = float(result.flows["bytes_delivered"][0])
    return _per_second([(0.0, 0.0), *points, (duration_s, total)], 0.0)


def _sim_capacity(result: Result) -> float:
    """The simulated sender's capacity estimate (packets/s), median after the first second."""
    import polars as pl

    m = result.metrics.filter((pl.col("metric") == "bandwidth") & (pl.col("time_s") > 1.0))["value"]
    return float(m.median()) if m.len() else math.nan  # type: ignore[arg-type]


# The real runs ------------------------------------------------------------------------------------


def _settings(v: Variant, rtt_ms: int, plan: Plan, replication: int, seed: int) -> dict[str, Any]:
    """Everything that decides a real run; a cached record is reused only if it ran with these."""
    return {"format": RECORD_FORMAT, "variant": v.slug, "cc": v.cc, "rtt_ms": rtt_ms, "replication": replication,
            "rate": RATE,
            "delay": f"{rtt_ms / 2:g}ms", "loss": LOSS, "reverse_loss": 0.0, "queue_bytes": bdp_bytes(rtt_ms),
            "duration_s": plan.duration_s, "mss": MSS, "seed": seed}  # fmt: skip


def run_real(ctx: StudyContext, plan: Plan, base_seed: int) -> list[dict[str, Any]]:
    """Every real run of the plan, from the cache where it finished before, else run now (in order:
    replication by replication, so that slow drifts of the machine spread over every variant)."""
    points = [(f"{v.slug}-rtt{rtt_ms}ms-r{r}", _settings(v, rtt_ms, plan, r, derive_seed(base_seed, r)))
              for r in range(ctx.replications) for rtt_ms in plan.rtts_ms for v in plan.variants]  # fmt: skip
    return real.run_all(ctx, points, real_run, real.Quiet(plan.quiet_wait_s, plan.redo_disturbed), "udt-real")


def real_run(settings: dict[str, Any]) -> dict[str, Any]:
    """A receiver, the emulated path and a sender on 127.0.0.1, for one test of ``settings['duration_s']``.

    Returns the record of what happened: the three summaries, the receiver's in-order bytes over time,
    the sender's capacity estimates, and the machine's load and counters around the run. A Ctrl-C
    stops all three and propagates.
    """
    from cclab import _core

    duration, rtt_s = float(settings["duration_s"]), settings["rtt_ms"] / 1e3
    before = real.snapshot()
    wall = time.monotonic()
    receiver = emulator = sender = None
    series: list[list[float]] = []
    capacity: list[list[float]] = []
    failure = None
    summaries: dict[str, Any] = {}
    try:
        receiver = _core.Transfer.recv("127.0.0.1:0", timeout_s=10.0, mss=settings["mss"])
        emulator = _core.Emulator(
            "127.0.0.1:0", receiver.local_addr(), rate=settings["rate"], delay=settings["delay"],
            loss=settings["loss"], queue=f"{settings['queue_bytes']}B", reverse_loss=settings["reverse_loss"],
            seed=settings["seed"],
        )  # fmt: skip
        sender = _core.Transfer.send(emulator.local_addr(), cc=settings["cc"], duration_s=duration,
                                     mss=settings["mss"])  # fmt: skip
        deadline = wall + duration + GRACE_S
        while not receiver.is_finished():
            time.sleep(POLL_S)
            p = receiver.progress()
            if p["connected"] and (not series or p["elapsed_s"] > series[-1][0]):
                series.append([round(p["elapsed_s"], 4), p["bytes"]])
            if not sender.is_finished():
                s = sender.progress()
                if s["connected"] and (not capacity or s["elapsed_s"] > capacity[-1][0]):
                    capacity.append([round(s["elapsed_s"], 4), s["bandwidth"], s["receive_rate"]])
            elif time.monotonic() > deadline or not p["connected"]:
                receiver.stop()  # the sender ended (or never connected) and the receiver waits on: end it
        for name, transfer in (("sender", sender), ("receiver", receiver)):
            try:
                summaries[name] = transfer.join()
            except _core.TransferFailed as e:
                failure = f"{name}: {e}"
    except BaseException:
        real.stop_all(sender, receiver, emulator)
        raise
    stats = emulator.stop()
    after = real.snapshot()
    sender_summary, receiver_summary = summaries.get("sender"), summaries.get("receiver")
    if failure is None and not (sender_summary and sender_summary["progress"]["connected"]):
        failure = "sender: no connection"
    if failure is None and (not series or series[-1][0] < duration + rtt_s / 2):
        failure = f"receiver: its progress ends at {series[-1][0] if series else 0:.2f} s"
    return {
        "settings": settings,
        "build_id": _core.build_id(),
        **real.around(before, after),
        "sender": sender_summary,
        "receiver": receiver_summary,
        "emulator": stats,
        "series": series,
        "capacity": capacity,
        "failure": failure,
    }


# One real run as a row ----------------------------------------------------------------------------


def _interpolate(series: list[list[float]], t: float) -> float:
    """The in-order bytes at time ``t``, linear between the two samples around it."""
    for (t0, b0), (t1, b1) in zip(series, series[1:], strict=False):
        if t0 <= t <= t1:
            return b0 + (b1 - b0) * (t - t0) / (t1 - t0) if t1 > t0 else b1
    return series[-1][1] if t >= series[-1][0] else 0.0


def real_goodput_mbps(record: dict[str, Any]) -> float:
    """Content delivered in order within the test, as the simulator counts a run's goodput.

    The receiver's clock starts when it answers the handshake, half an RTT before the sender's
    test starts; a packet the sender sends at its time t reaches the receiver at the receiver's
    t + RTT, where the simulator delivers it at t + RTT/2. So the simulator's bytes delivered by
    the end of the test are the receiver's by its own duration + RTT/2.
    """
    s = record["settings"]
    return _interpolate(record["series"], s["duration_s"] + s["rtt_ms"] / 2e3) * 8 / s["duration_s"] / 1e6


def _real_row(record: dict[str, Any]) -> dict[str, Any]:
    s, snd, emu = record["settings"], record["sender"]["progress"], record["emulator"]
    cpu, udp, wall = record["cpu"], record["udp"], record["wall_s"]
    v = next(x for x in VARIANTS if x.slug == s["variant"])
    capacity = [b for t, b, _ in record["capacity"] if t > 1.0]
    busy = (cpu["user"] + cpu["nice"] + cpu["system"] + cpu["irq"] + cpu["softirq"]) if cpu else None
    cores = (record["machine"]["cpus"] or 1) * wall
    return {
        "variant": v.slug, "label": v.label, "rtt_ms": float(s["rtt_ms"]), "replication": s["replication"],
        "seed": s["seed"], "started_utc": record["started_utc"],
        "goodput_mbps": real_goodput_mbps(record),
        "retransmits": snd["retransmits"], "naks": snd["naks"], "timeouts": snd["timeouts"],
        "packets_sent": snd["packets_sent"],
        "queue_drops": emu["forward"]["dropped_queue_full"], "random_losses": emu["forward"]["lost"],
        "reverse_drops": emu["reverse"]["dropped_queue_full"] + emu["reverse"]["lost"],
        "host_drops": int(udp["RcvbufErrors"]) if udp else None,
        "max_queue_kb": emu["forward"]["max_queue_bytes"] / 1e3,
        "mean_queueing_ms": emu["forward"]["mean_queueing_s"] * 1e3,
        "late_p50_us": snd["pacing"]["p50_late_us"], "late_p99_us": snd["pacing"]["p99_late_us"],
        "late_max_us": snd["pacing"]["max_late_us"],
        "capacity_median_pps": statistics.median(capacity) if capacity else math.nan,
        "wall_s": wall, "load1_before": record["load_before"][0] if record["load_before"] else None,
        "load1_after": record["load_after"][0] if record["load_after"] else None,
        "own_cpu_pct": record["own_cpu_s"] / wall * 100,
        # /proc/stat samples at the timer tick, and undercounts the many short bursts of a paced sender:
        # it can fall below this process's own CPU time (which is exact), so it shows no "others" here.
        "machine_busy_pct": busy / cores * 100 if cpu else None,
        "cpu_pressure_pct": record["cpu_pressure_s"] / wall * 100 if record["cpu_pressure_s"] is not None else None,
        "others_cpu_pct": record["others_cpu_pct"],
        "disturbed_attempts": len(record.get("disturbed_attempts", [])),
        "nice_pct": cpu["nice"] / cores * 100 if cpu else None,
        "steal_pct": cpu["steal"] / cores * 100 if cpu else None,
        "failed_attempts": len(record.get("failed_attempts", [])),
        "quiet_wait_s": record.get("quiet", {}).get("waited_s"),
        "others_before_pct": record.get("quiet", {}).get("others_pct"),
    }  # fmt: skip


def _per_second(points: list[tuple[float, float]], shift: float) -> tuple[list[float], list[float]]:
    """Rates over each whole second of the test (Mbit/s), from cumulative bytes at times shifted by
    ``shift``, as a step line: the times are 0 and each second's end, the first rate repeated at 0."""
    end = points[-1][0] - shift
    series = [list(p) for p in points]
    times = [float(k) for k in range(int(end + 1e-9) + 1)]
    marks = [_interpolate(series, t + shift) for t in times]
    rates = [(b - a) * 8 / 1e6 for a, b in zip(marks, marks[1:], strict=False)]
    return times, rates[:1] + rates


# Tables ---------------------------------------------------------------------------------------------


def _comparison(real: pl.DataFrame, sim: pl.DataFrame, plan: Plan) -> pl.DataFrame:
    """Per variant and RTT: real and simulated goodput, their ratio, the paired gains and the paper's."""
    import polars as pl

    keys = ["variant", "label", "rtt_ms"]
    parts = []
    for prefix, frame in (("real", real), ("sim", sim)):
        native = frame.filter(pl.col("variant") == NATIVE.slug).drop("variant", "label")
        agg = aggregate(frame, keys, ["goodput_mbps"]).join(
            paired_gain(frame, ["variant", "rtt_ms"], native), on=["variant", "rtt_ms"]
        )
        parts.append(agg.rename({c: f"{prefix}_{c}" for c in agg.columns if c not in keys}))
    table = parts[0].join(parts[1].drop("label"), on=["variant", "rtt_ms"])
    ratio = pl.col("real_goodput_mbps_mean") / pl.col("sim_goodput_mbps_mean")
    relative = ((pl.col("real_goodput_mbps_ci95") / pl.col("real_goodput_mbps_mean")) ** 2
                + (pl.col("sim_goodput_mbps_ci95") / pl.col("sim_goodput_mbps_mean")) ** 2).sqrt()  # fmt: skip
    paper = [PAPER_GAINS.get((v, int(r))) for v, r in zip(table["variant"], table["rtt_ms"], strict=True)]
    return table.with_columns(
        ratio.alias("ratio_mean"),
        (ratio * relative).alias("ratio_ci95"),
        pl.Series("paper_gain_mbps", paper, dtype=pl.Float64),
        (pl.Series("paper_gain_mbps", paper, dtype=pl.Float64) * RATE_MBPS / PAPER_RATE_MBPS).alias(
            "paper_gain_scaled_mbps"
        ),
    ).sort("rtt_ms", pl.col("variant").replace_strict({v.slug: i for i, v in enumerate(VARIANTS)}))


DIAGNOSTICS = ["queue_drops", "random_losses", "retransmits", "timeouts"]
REAL_ONLY = ["host_drops", "late_p50_us", "late_p99_us", "capacity_median_pps", "own_cpu_pct", "others_cpu_pct",
             "cpu_pressure_pct", "steal_pct"]  # fmt: skip


def _diagnostics(real: pl.DataFrame, sim: pl.DataFrame, sim_series: dict[tuple[Variant, int], Result],
                 plan: Plan) -> pl.DataFrame:  # fmt: skip
    import polars as pl

    keys = ["variant", "label", "rtt_ms"]
    r = real.group_by(keys, maintain_order=True).agg(
        *[pl.col(c).mean().alias(f"real_{c}") for c in DIAGNOSTICS + REAL_ONLY]
    )
    s = sim.group_by(["variant", "rtt_ms"], maintain_order=True).agg(
        *[pl.col(c).mean().alias(f"sim_{c}") for c in DIAGNOSTICS]
    )
    capacity = pl.DataFrame(
        [
            {"variant": v.slug, "rtt_ms": float(rtt), "sim_capacity_median_pps": _sim_capacity(res)}
            for (v, rtt), res in sim_series.items()
        ]
    )
    return r.join(s, on=["variant", "rtt_ms"]).join(capacity, on=["variant", "rtt_ms"])


def _rows(table: pl.DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["variant"], int(r["rtt_ms"])): r for r in table.iter_rows(named=True)}


#: A point of the plan: the variant, the RTT (ms) and its row of a table.
Point = tuple[Variant, int, dict[str, Any]]


def _points_by_rtt(frame: pl.DataFrame, plan: Plan, proposals_only: bool = False) -> list[Point]:
    """(variant, RTT, row) for every point of the plan, RTT by RTT; only the proposals' if asked."""
    rows = _rows(frame)
    return [(v, rtt, rows[(v.slug, rtt)]) for rtt in plan.rtts_ms for v in plan.variants
            if not (proposals_only and v is NATIVE)]  # fmt: skip


#: The first two columns of every table of points.
POINT = [Column("variant", lambda p: p[0].label), Column("RTT", lambda p: f"{p[1]} ms")]


def _goodput_table(comparison: pl.DataFrame, plan: Plan) -> str:
    return table(_points_by_rtt(comparison, plan), [
        *POINT,
        Column("real (Mbit/s)", lambda p: mean_ci(p[2], "real_goodput_mbps")),
        Column("simulated (Mbit/s)", lambda p: mean_ci(p[2], "sim_goodput_mbps")),
        Column("real / simulated", lambda p: mean_ci(p[2], "ratio", digits=3)),
    ])  # fmt: skip


def _gain_table(comparison: pl.DataFrame, plan: Plan) -> str:
    scale = RATE_MBPS / PAPER_RATE_MBPS

    def paper(p: Point, scaled: bool) -> str:
        gain = PAPER_GAINS.get((p[0].slug, p[1]))
        return "-" if gain is None else f"+{gain * scale:.1f}" if scaled else f"+{gain:g}"

    return table(_points_by_rtt(comparison, plan, proposals_only=True), [
        Column("proposal", lambda p: p[0].label), POINT[1],
        Column("real gain (Mbit/s)", lambda p: mean_ci(p[2], "real_gain_mbps", digits=2, signed=True)),
        Column("simulated gain (Mbit/s)", lambda p: mean_ci(p[2], "sim_gain_mbps", digits=2, signed=True)),
        Column(f"paper at {PAPER_RATE_MBPS:g} Mbit/s", lambda p: paper(p, scaled=False)),
        Column(f"paper scaled to {RATE_MBPS:g} Mbit/s", lambda p: paper(p, scaled=True)),
    ])  # fmt: skip


def _diagnostic_table(diagnostics: pl.DataFrame, plan: Plan) -> str:
    def pair(c: str) -> Column[Point]:
        label = {"queue_drops": "queue drops", "random_losses": "random", "retransmits": "retransmitted",
                 "timeouts": "timeouts"}[c]  # fmt: skip
        return Column(f"{label} real / sim", lambda p: f"{p[2][f'real_{c}']:.0f} / {p[2][f'sim_{c}']:.0f}")

    def known(key: str, spec: str) -> Callable[[Point], str]:
        return lambda p: "-" if p[2][key] is None else format(p[2][key], spec)

    return table(_points_by_rtt(diagnostics, plan), [
        *POINT,
        *(pair(c) for c in DIAGNOSTICS),
        Column("host drops", known("real_host_drops", ".0f")),
        Column("late p50 / p99 (us)", lambda p: f"{p[2]['real_late_p50_us']:.0f} / {p[2]['real_late_p99_us']:.0f}"),
        Column("capacity real / sim (packets/s)",
               lambda p: f"{p[2]['real_capacity_median_pps']:.0f} / {p[2]['sim_capacity_median_pps']:.0f}"),
        Column("steal (%)", known("real_steal_pct", ".1f")),
    ])  # fmt: skip


# Figures --------------------------------------------------------------------------------------------


def _goodput_figure(table: pl.DataFrame, real: pl.DataFrame, sim: pl.DataFrame, plan: Plan) -> Figure:
    import polars as pl
    from matplotlib.figure import Figure

    rows = _rows(table)
    fig = Figure(figsize=(max(4.0 * len(plan.rtts_ms), 6.0), 4.4), layout="constrained")
    axes = fig.subplots(1, len(plan.rtts_ms), squeeze=False, sharey=True)[0]
    width = 0.38
    for ax, rtt in zip(axes, plan.rtts_ms, strict=True):
        xs = range(len(plan.variants))
        for j, (side, name) in enumerate((("real", "real (emulator, loopback)"), ("sim", "simulated"))):
            cells = [rows[(v.slug, rtt)] for v in plan.variants]
            ax.bar([x + (j - 0.5) * width for x in xs], [c[f"{side}_goodput_mbps_mean"] for c in cells], width,
                   yerr=[half_width(c, f"{side}_goodput_mbps") or 0.0 for c in cells], capsize=3, label=name,
                   color=f"C{j}", alpha=0.9 if side == "real" else 0.6)  # fmt: skip
            runs = real if side == "real" else sim
            for x, v in zip(xs, plan.variants, strict=True):
                each = runs.filter((pl.col("variant") == v.slug) & (pl.col("rtt_ms") == rtt))["goodput_mbps"]
                ax.scatter([x + (j - 0.5) * width] * each.len(), each.to_list(), s=9, color="black", zorder=3,
                           label="one run" if (x, j, ax) == (0, 0, axes[0]) else None)  # fmt: skip
        ax.axhline(RATE_MBPS * PAYLOAD_BYTES / MSS, color="grey", linestyle=":", linewidth=1,
                   label="link rate less headers")  # fmt: skip
        ax.set_xticks(list(xs), [SHORT[v.slug] for v in plan.variants], fontsize="small")
        ax.set_title(f"RTT {rtt} ms, queue {bdp_bytes(rtt) / 1e3:g} KB", fontsize="medium")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("goodput (Mbit/s): mean, 95 % interval, runs")
    axes[0].legend(fontsize="small", loc="lower left")
    fig.suptitle(f"Seed 002's testbed at {RATE_MBPS:g} Mbit/s, loss {percent(LOSS)}, {plan.duration_s:g} s tests:\n"
                 "real sockets through the emulator on loopback, and the simulator")  # fmt: skip
    return fig


def _gain_figure(table: pl.DataFrame, plan: Plan) -> Figure:
    from matplotlib.figure import Figure

    rows = _rows(table)
    proposals = [v for v in plan.variants if v is not NATIVE]
    cells = [(v, rtt) for rtt in plan.rtts_ms for v in proposals]
    fig = Figure(figsize=(max(1.1 * len(cells) + 2.5, 6.0), 4.4), layout="constrained")
    ax = fig.add_subplot()
    width = 0.38
    xs = range(len(cells))
    for j, (side, name) in enumerate((("real", "real"), ("sim", "simulated"))):
        got = [rows[(v.slug, rtt)] for v, rtt in cells]
        ax.bar([x + (j - 0.5) * width for x in xs], [c[f"{side}_gain_mbps_mean"] for c in got], width,
               yerr=[half_width(c, f"{side}_gain_mbps") or 0.0 for c in got], capsize=3, label=name,
               color=f"C{j}", alpha=0.9 if side == "real" else 0.6)  # fmt: skip
    paper = [(x, PAPER_GAINS.get((v.slug, rtt))) for x, (v, rtt) in zip(xs, cells, strict=True)]
    shown = [(x, g * RATE_MBPS / PAPER_RATE_MBPS) for x, g in paper if g is not None]
    if shown:
        ax.scatter([x for x, _ in shown], [g for _, g in shown], marker="D", color="black", zorder=3,
                   label=f"paper's testbed gain x {RATE_MBPS / PAPER_RATE_MBPS:g}")  # fmt: skip
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs), [f"{SHORT[v.slug]}\n{rtt} ms" for v, rtt in cells], fontsize="small")
    ax.set_ylabel("goodput minus native UDT's (Mbit/s), paired")
    ax.set_title(f"Gains over native UDT at {RATE_MBPS:g} Mbit/s: real, simulated, and the paper's scaled to this "
                 "link", fontsize="medium")  # fmt: skip
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def _series_figure(records: list[dict[str, Any]], sim_series: dict[tuple[Variant, int], Result],
                   plan: Plan) -> Figure:  # fmt: skip
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 2.9 * len(plan.rtts_ms) + 0.6), layout="constrained")
    axes = fig.subplots(len(plan.rtts_ms), 2, squeeze=False, sharex=True, sharey=True)
    first = {(rec["settings"]["variant"], rec["settings"]["rtt_ms"]): rec for rec in records
             if rec["settings"]["replication"] == 0}  # fmt: skip
    top = RATE_MBPS * 1.05
    for row, rtt in zip(axes, plan.rtts_ms, strict=True):
        for i, v in enumerate(plan.variants):
            rec = first[(v.slug, rtt)]
            points = [(float(t), float(b)) for t, b in rec["series"]]
            times, rates = _per_second([(0.0, 0.0), *points], rtt / 2e3)
            keep = [k for k, t in enumerate(times) if t <= plan.duration_s]
            row[0].plot([times[k] for k in keep], [rates[k] for k in keep], color=f"C{i}", label=v.label,
                        drawstyle="steps-pre")  # fmt: skip
            top = max(top, *(rates[k] * 1.05 for k in keep))
            times, rates = _sim_rate(sim_series[(v, rtt)], plan.duration_s)
            row[1].plot(times, rates, color=f"C{i}", label=v.label, drawstyle="steps-pre")
            top = max(top, *(r * 1.05 for r in rates))
        for ax, side in zip(row, ("real, replication 0", "simulated, replication 0"), strict=True):
            ax.set_title(f"RTT {rtt} ms, {side}", fontsize="medium")
            ax.axhline(RATE_MBPS * PAYLOAD_BYTES / MSS, color="grey", linestyle=":", linewidth=1)
            ax.grid(True, alpha=0.3)
        row[0].set_ylabel("goodput per second (Mbit/s)")
    for ax in axes[-1]:
        ax.set_xlabel("time since the test started (s)")
    axes[0][0].set_ylim(0, top)  # shared: a second after a stall delivers what the stall held, above the link
    axes[0][0].legend(fontsize="small", loc="lower right")
    fig.suptitle(
        f"Goodput in each second of the test at {RATE_MBPS:g} Mbit/s, loss {percent(LOSS)}, queue one BDP\n"
        "dotted: the link rate less headers; bytes delivered in order, so the second after a stall exceeds it"
    )
    return fig


# Report text ----------------------------------------------------------------------------------------


def _setup(plan: Plan) -> str:
    queues = ", ".join(f"{bdp_bytes(r) / 1e3:g} KB at {r} ms" for r in plan.rtts_ms)
    rtts = ", ".join(f"{r}" for r in plan.rtts_ms)
    return f"""\
The paper's testbed (its Fig. 8) is two Linux hosts joined by 1 Gbit/s, netem adding the RTT and 0.001 %
loss, and real UDT transfers; its Figs. 9-13 plot native UDT against each proposal at RTTs of 25, 100
and 200 ms. Here both halves of the comparison run the same path at {RATE_MBPS:g} Mbit/s, a tenth of the
testbed's rate (relaying 1 Gbit/s in user space is beyond this 2-core machine):

- **Real:** `cclab recv` (the receiver), `cclab emulate` (the path) and `cclab send` (the sender, a
  {plan.duration_s:g} s memory-to-memory test of a test pattern, checked byte by byte by the receiver) on
  127.0.0.1, each on an ephemeral port, through their Python bindings in one process (their threads run
  in Rust, outside the interpreter's lock). The emulator relays each datagram through a {RATE_MBPS:g}
  Mbit/s transmitter that counts 28 bytes of IP and UDP header per datagram (so a full UDT packet is
  1500 bytes on this link, as on the simulated one), a DropTail queue of one BDP in bytes ({queues}),
  RTT/2 of delay each way and Bernoulli loss of {percent(LOSS)} on the data direction only; replication r
  of every variant seeds the loss with the same seed. UDT as `cclab send` and `cclab recv` run it:
  UDT 4.11's defaults (8192-packet buffers, flow-control limit 25600), 1500-byte packets (1456 bytes of
  content), SYN 10 ms.
- **Simulated:** `udt_real.toml`, a dumbbell with the same {RATE_MBPS:g} Mbit/s bottleneck (whose rate
  also counts every byte of a packet), buffer (the same bytes), loss (forward only), RTT ({rtts} ms) and
  UDT settings; access links ten times faster.
- **The variants:** `udt` (native DAIMD, NAK decrease 1.125), `udt_rtt_banded` (1.120 up to 50 ms, 1.125
  to 150 ms, 1.123 above), `udt_prediction` (the congestion-prediction window, alpha 1.5, beta 3.5, the
  paper's choice for Fig. 9) and `udt_combined` (both). The real sender runs exactly the simulated
  sender's congestion-control code (docs/realnet.md).
- **Goodput** is the content delivered in order within the test over its length. The real receiver's
  clock starts half an RTT before the sender's test (when it answers the handshake), so its bytes at its
  own {plan.duration_s:g} s + RTT/2 are those the simulator counts at {plan.duration_s:g} s: sent by the
  test's end less the one-way delay.
- **Scaling the paper:** a gain of G Mbit/s on its 1 Gbit/s testbed is G/10 here (the same share of the
  link). The BDPs in packets are a tenth of the testbed's, so UDT 4.11's default buffers, which the udt
  study enlarges at 1 Gbit/s, bound nothing here (at 200 ms the BDP plus the queue is 3333 packets)."""


def _machine(records: list[dict[str, Any]], replications: int, plan: Plan) -> str:
    m = records[0]["machine"]
    kind = "a virtual machine (the CPU reports a hypervisor)" if m["virtual_machine"] else "a machine"
    starts = sorted(rec["started_utc"] for rec in records)
    walls = sum(rec["wall_s"] for rec in records)
    rows = [_real_row(rec) for rec in records]

    def spread(key: str, digits: int = 0) -> str:
        values = sorted(r[key] for r in rows if r[key] is not None)
        if not values:
            return "not recorded"
        median = statistics.median(values)
        return f"{median:.{digits}f} (median; {values[0]:.{digits}f}-{values[-1]:.{digits}f})"

    builds = sorted({rec["build_id"][:12] for rec in records})
    failed = sum(len(rec.get("failed_attempts", [])) for rec in records)
    disturbed = [x for rec in records for x in rec.get("disturbed_attempts", [])]
    waited = [r["quiet_wait_s"] for r in rows if r["quiet_wait_s"] is not None]
    still = sum(r["others_cpu_pct"] is not None and r["others_cpu_pct"] > real.QUIET_PCT for r in rows)
    quiet = (
        f"Before each run the study waited for the other processes to use less than {real.QUIET_PCT:g} % of the "
        f"CPUs over a second (at most {plan.quiet_wait_s:g} s; {_count(sum(w > 1.5 for w in waited), 'run')} waited, "
        f"{sum(waited) / 60:.1f} minutes in all), and ran again a run during which they used more (at most "
        f"{plan.redo_disturbed} times): {_count(len(disturbed), 'run')} discarded for that"
        + (f" (the others used {min(disturbed):.0f}-{max(disturbed):.0f} % during them)" if disturbed else "")
        + f", and {still} of those kept still had more. "
        if plan.quiet_wait_s > 0
        else ""
    )
    return (
        f"{len(records)} real runs ({replications} per point, {len(plan.variants)} variants x "
        f"{len(plan.rtts_ms)} RTTs, replication by replication) from {starts[0]} to {starts[-1]} (UTC), "
        f"{walls / 60:.1f} minutes of tests and set-up in all, on {kind} with {m['cpus']} CPUs "
        f"({m['cpu_model']}), {m['system']}, Python {m['python']}, build {', '.join(builds)}. {quiet}"
        f"Load average over one minute (as `uptime` prints it) at the start of each run: "
        f"{spread('load1_before', 2)}. During the runs kept, this process (the sender, the receiver and the "
        f"emulator together) used {spread('own_cpu_pct')} % of one CPU and all other tasks (kernel threads "
        f"included; the root control group's CPU time less this process's) {spread('others_cpu_pct', 1)} % "
        f"of all CPUs; some runnable task (ours or another) waited for a CPU {spread('cpu_pressure_pct', 1)} % "
        f"of the time (Linux's CPU pressure), and the hypervisor took {spread('steal_pct', 1)} % as steal "
        f"time (/proc/stat). {failed} attempts failed (a transfer that did not complete) and were run again."
    )


def _discussion(plan: Plan, table: pl.DataFrame, diagnostics: pl.DataFrame, decisions: pl.DataFrame,
                records: list[dict[str, Any]]) -> list[str]:  # fmt: skip
    """Paragraphs comparing real, simulated and the paper's, computed from the tables so they stay true."""
    rows, diag = _rows(table), _rows(diagnostics)
    runs = [_real_row(rec) for rec in records]
    return [
        _agreement_paragraph(plan, rows, diag, runs),
        _steal_paragraph(plan, rows, diag, runs),
        _pacing_paragraph(plan, diag, runs),
        _gains_paragraph(plan, rows),
        _paper_paragraph(plan, rows, diag, decisions),
    ]


def _correlation(runs: list[dict[str, Any]], x: str, y: str, log_x: bool = False) -> float:
    """Pearson's r across the real runs (NaN when it is undefined, e.g. with fewer than three runs)."""
    pairs = [(r[x], r[y]) for r in runs if r[x] is not None and r[y] is not None]
    xs = [math.log(a) if log_x else a for a, _ in pairs]
    ys = [b for _, b in pairs]
    if len(pairs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return math.nan
    return statistics.correlation(xs, ys)


def _points(plan: Plan) -> list[tuple[str, int]]:
    return [(v.slug, rtt) for rtt in plan.rtts_ms for v in plan.variants]


def _agreement_paragraph(plan: Plan, rows: dict[tuple[str, int], dict[str, Any]],
                         diag: dict[tuple[str, int], dict[str, Any]], runs: list[dict[str, Any]]) -> str:  # fmt: skip
    points = _points(plan)
    ratios = [rows[p]["ratio_mean"] for p in points]
    by_rtt = {rtt: statistics.mean(rows[(v.slug, rtt)]["ratio_mean"] for v in plan.variants) for rtt in plan.rtts_ms}
    sds = {side: [rows[p][f"{side}_goodput_mbps_std"] for p in points] for side in ("real", "sim")}
    spread = (
        f"The real runs also spread far more: the standard deviation of a point's real runs is "
        f"{statistics.median(sds['real']):.1f} Mbit/s (median over the points; up to {max(sds['real']):.1f}), "
        f"where the simulator's seeds differ by {statistics.median(sds['sim']):.1f}. "
        if all(x is not None and not math.isnan(x) for side in sds.values() for x in side)
        else ""
    )

    def mean_of(column: str, rtts: list[int] | None = None) -> float:
        chosen = [p for p in points if rtts is None or p[1] in rtts]
        return statistics.mean(diag[p][column] for p in chosen)

    host = [r["host_drops"] for r in runs if r["host_drops"] is not None]
    host_text = (
        "the kernel dropped no datagram for a full socket buffer in any run"
        if host and not any(host)
        else f"the kernel dropped {statistics.mean(host):.1f} datagrams per run for full socket buffers"
        if host
        else "the kernel's socket-buffer drops were not recorded"
    )
    drops = ", ".join(f"{mean_of('real_queue_drops', [r]):.0f} against {mean_of('sim_queue_drops', [r]):.0f} at "
                      f"{r} ms" for r in plan.rtts_ms)  # fmt: skip
    r_drops = _correlation(runs, "queue_drops", "goodput_mbps")
    shortest, others = min(plan.rtts_ms), [r for r in plan.rtts_ms if r != min(plan.rtts_ms)]
    longer = (
        f" At {' and '.join(f'{r}' for r in others)} ms the queue (one BDP) is larger and an overshoot of it "
        f"costs more packets than at {shortest} ms, and more round trips of recovery."
        if others and all(mean_of("real_queue_drops", [r]) > mean_of("real_queue_drops", [shortest]) for r in others)
        else ""
    )
    return (
        f"**Real against simulated.** Real goodput is {min(ratios):.2f}-{max(ratios):.2f} times the simulator's "
        f"at the {len(points)} points; averaged over the variants, "
        + ", ".join(f"{by_rtt[r]:.2f} at {r} ms" for r in plan.rtts_ms)
        + f". {spread}The emulated path behaves as the simulated one: the random losses agree "
        f"({mean_of('real_random_losses'):.1f} and {mean_of('sim_random_losses'):.1f} per run, "
        f"{LOSS:g} of the packets sent) and {host_text}. What differs is how many packets the queue refused: per "
        f"run, real against simulated, {drops}. Across the real runs, goodput falls as those drops rise "
        f"(Pearson's r = {r_drops:.2f}).{longer}"
    )


def _steal_paragraph(plan: Plan, rows: dict[tuple[str, int], dict[str, Any]],
                     diag: dict[tuple[str, int], dict[str, Any]], runs: list[dict[str, Any]]) -> str:  # fmt: skip
    steal = [r["steal_pct"] for r in runs if r["steal_pct"] is not None]
    if not steal:
        return "**Steal time.** Not recorded on this machine (no /proc/stat)."
    median = statistics.median(steal)
    for r in runs:
        r["ratio"] = r["goodput_mbps"] / rows[(r["variant"], int(r["rtt_ms"]))]["sim_goodput_mbps_mean"]
    below = [r["ratio"] for r in runs if r["steal_pct"] is not None and r["steal_pct"] < median]
    above = [r["ratio"] for r in runs if r["steal_pct"] is not None and r["steal_pct"] >= median]
    sim_cap = statistics.median(diag[p]["sim_capacity_median_pps"] for p in _points(plan))
    real_cap = [r["capacity_median_pps"] for r in runs]
    fast = sum(c > 1.5 * CAPACITY_PPS for c in real_cap)
    timeouts = [statistics.mean(diag[p][f"{side}_timeouts"] for p in _points(plan)) for side in ("real", "sim")]
    r_steal = _correlation(runs, "capacity_median_pps", "steal_pct", log_x=True)
    split = (
        f" The real runs with less steal than the median came to {statistics.mean(below):.2f} of the simulator's "
        f"goodput at their point ({min(below):.2f}-{max(below):.2f}), those with more to "
        f"{statistics.mean(above):.2f} ({min(above):.2f}-{max(above):.2f})."
        if below and above
        else ""
    )
    return (
        "**What the real runs' drops follow: the hypervisor.** The machine is a virtual machine whose CPUs the "
        "hypervisor shares with other guests, and the share of the time it took from ours (steal time) varied "
        f"from run to run, {min(steal):.1f}-{max(steal):.1f} % (median {median:.1f} %). Runs with more steal "
        "believed the path faster: across the real runs the logarithm of the sender's capacity estimate "
        f"(median over the run) follows steal time with r = {r_steal:.2f}, the queue's drops follow the estimate "
        f"with r = {_correlation(runs, 'capacity_median_pps', 'queue_drops', log_x=True):.2f}, and goodput falls with "
        f"steal (r = {_correlation(runs, 'steal_pct', 'goodput_mbps'):.2f}); {fast} of the {len(runs)} runs "
        f"estimated more than 1.5 times the path's {CAPACITY_PPS:.0f} packets/s (up to {max(real_cap):.0f}), "
        f"where the simulator's estimate is {sim_cap:.0f}. The mechanism this points to: UDT's receiver measures "
        "the capacity from the arrival gap of packet pairs, timestamped when its thread reads them from the "
        "socket (UDT 4 does the same). While the hypervisor holds a CPU for a few milliseconds, whichever of the "
        "three threads runs there falls behind: the emulator then sends the datagrams that came due meanwhile "
        "back to back, the receiver reads those waiting in its socket microseconds apart, and a pair among them "
        "looks like a link many times faster. DAIMD's increase per SYN grows by a power of ten with the spare "
        "capacity it believes in (the estimate less the current rate), so an estimate ten times too high makes "
        "steps one to two orders of magnitude larger: the sender overshoots the queue soon after each decrease, "
        "loses a burst of packets at each overshoot, and more of its recoveries end in timeouts "
        f"({timeouts[0]:.1f} per real run, {timeouts[1]:.1f} per simulated one).{split} This is the host's "
        "timing, not the emulated link's model (whose delays are right to about 0.1 ms when the host keeps "
        "its CPUs, docs/realnet.md): a UDT receiver on any host that is descheduled for milliseconds meets "
        "it, and the simulator's never is."
    )


def _pacing_paragraph(plan: Plan, diag: dict[tuple[str, int], dict[str, Any]], runs: list[dict[str, Any]]) -> str:
    p50 = [diag[p]["real_late_p50_us"] for p in _points(plan)]
    p99 = [diag[p]["real_late_p99_us"] for p in _points(plan)]
    period = 1e6 / CAPACITY_PPS
    return (
        f"**Pacing.** At {RATE_MBPS:g} Mbit/s UDT spaces full packets {period:.0f} us apart. The real sender's "
        f"median packet left {min(p50):.0f}-{max(p50):.0f} us after its scheduled time and its 99th percentile "
        f"{min(p99):.0f}-{max(p99):.0f} us (means per point). A late packet goes at once and the ones behind it "
        "follow back to back until the schedule is met, so the rate holds but a few packets reach the queue as "
        f"a burst, which a queue of one BDP (at least {bdp_bytes(min(plan.rtts_ms)) / MSS:.0f} packets here) "
        "absorbs. The 99th percentile rises with steal time too (r = "
        f"{_correlation(runs, 'steal_pct', 'late_p99_us'):.2f} across the runs): the sender's thread is held "
        "like the receiver's."
    )


def _gains_paragraph(plan: Plan, rows: dict[tuple[str, int], dict[str, Any]]) -> str:
    cells = [(v.slug, r) for r in plan.rtts_ms for v in plan.variants if v is not NATIVE]
    if not cells:
        return "**Gains.** This plan runs no proposal."
    agree = sum((rows[c]["real_gain_mbps_mean"] > 0) == (rows[c]["sim_gain_mbps_mean"] > 0) for c in cells)
    resolved = {
        side: [c for c in cells if (ci := half_width(rows[c], f"{side}_gain_mbps")) is not None
               and abs(rows[c][f"{side}_gain_mbps_mean"]) > ci]
        for side in ("real", "sim")
    }  # fmt: skip
    names = {v.slug: v.label for v in VARIANTS}

    def listed(side: str) -> str:
        found = resolved[side]
        return (
            "none"
            if not found
            else ", ".join(
                f"{names[slug]} at {rtt} ms ({rows[(slug, rtt)][f'{side}_gain_mbps_mean']:+.2f})" for slug, rtt in found
            )
        )

    sds = [rows[c]["real_gain_mbps_std"] for c in cells]
    need = ""
    if all(x is not None and not math.isnan(x) for x in sds):
        target = 2.0
        pairs = (1.96 * statistics.median(sds) / target) ** 2
        need = (
            f" The real paired differences have a standard deviation of {statistics.median(sds):.1f} Mbit/s "
            f"(median over the points; {min(sds):.1f}-{max(sds):.1f}): the pairs share their loss seed but part "
            "at the first scheduling hiccup, so pairing removes little, and resolving a gain of "
            f"{target:g} Mbit/s (the paper's, scaled) would take about {pairs:.0f} pairs per point."
        )
    banded_100 = rows.get((BANDED.slug, 100))
    aa = (
        f" At 100 ms the RTT-banded decrease is UDT's own 1.125 unless queueing lifts the smoothed RTT above "
        f"150 ms: in the simulator its gain there is {banded_100['sim_gain_mbps_mean']:+.2f} Mbit/s, and on real "
        f"sockets, {mean_ci(banded_100, 'real_gain_mbps', digits=2, signed=True)}, it measures the noise."
        if banded_100 is not None and any(v is BANDED for v in plan.variants)
        else ""
    )
    return (
        f"**Gains.** Of the {len(cells)} proposal and RTT points, real and simulated gains have the same sign at "
        f"{agree}. The 95 % interval excludes zero at {_count(len(resolved['real']), 'real point')} "
        f"({listed('real')}) and {_count(len(resolved['sim']), 'simulated one')} ({listed('sim')}).{need}{aa}"
    )


def _decisions(v: Variant, rtt_ms: int, result: Result) -> dict[str, Any]:
    """How often the simulated prediction decreased, kept and increased the window over the run."""
    import polars as pl

    m = result.metrics
    last = {name: int(m.filter(pl.col("metric") == f"cc.window_{name}").sort("time_s")["value"][-1])
            for name in ("decreases", "keeps", "increases")}  # fmt: skip
    return {"variant": v.slug, "rtt_ms": float(rtt_ms), **last}


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" + ("" if n == 1 else "s")


def _paper_paragraph(plan: Plan, rows: dict[tuple[str, int], dict[str, Any]],
                     diag: dict[tuple[str, int], dict[str, Any]], decisions: pl.DataFrame) -> str:  # fmt: skip
    scale = RATE_MBPS / PAPER_RATE_MBPS
    texts = []
    for (slug, rtt), paper in PAPER_GAINS.items():
        if (slug, rtt) not in rows:
            continue
        row = rows[(slug, rtt)]
        texts.append(f"{row['label']} at {rtt} ms: paper +{paper * scale:.1f} (scaled), simulated "
                     f"{mean_ci(row, 'sim_gain_mbps', digits=2, signed=True)}, real "
                     f"{mean_ci(row, 'real_gain_mbps', digits=2, signed=True)}")  # fmt: skip
    if not texts:
        return "**Against the paper.** None of the paper's testbed points is in this plan."
    banded = [(rows[(BANDED.slug, rtt)]["sim_gain_mbps_mean"] / (paper * scale), rtt)
              for (slug, rtt), paper in PAPER_GAINS.items() if slug == BANDED.slug and (slug, rtt) in rows]  # fmt: skip
    bound = (math.sqrt((1 - 1 / 1.125) / (1 - 1 / 1.120)) - 1) * 100
    share = (
        "; the simulator's banded gains are "
        + " and ".join(f"{x * 100:.0f} % at {rtt} ms" for x, rtt in banded)
        + " of the paper's, scaled"
        if banded
        else ""
    )
    prediction = [(slug, rtt) for slug, rtt in _points(plan) if slug in (PREDICTION.slug, COMBINED.slug) and rtt >= 100]
    costs = ""
    if prediction:
        gains = [rows[p]["sim_gain_mbps_mean"] for p in prediction]
        more = [diag[p]["sim_queue_drops"] - diag[(NATIVE.slug, p[1])]["sim_queue_drops"] for p in prediction]
        chosen = [d for d in decisions.iter_rows(named=True) if d["rtt_ms"] >= 100]
        made = sum(d["decreases"] + d["keeps"] + d["increases"] for d in chosen)
        increased = sum(d["increases"] for d in chosen)
        costs = (
            f" In the simulator the prediction window changes goodput by {min(gains):+.1f} to {max(gains):+.1f} "
            f"Mbit/s at 100 and 200 ms. Its increase branch ({increased} of its {made} decisions in replication 0 "
            "there, `sim_prediction_decisions.csv`) sets the window to "
            "1.1 x receive rate x (RTT + SYN) where native UDT sets receive rate x (RTT + SYN) + 16; native UDT's "
            "window stops the queue short of the buffer once slow start is over, the prediction's lets it fill: "
            f"its runs lose {min(more):+.0f} to {max(more):+.0f} more packets per run to the queue, and each "
            "overflow brings up to five decreases in one congestion period (the period x 1.125^5, 1.8 times "
            "longer) from which the rate takes seconds to regrow. At 1 Gbit/s with 25600-packet buffers the udt "
            "study finds it helping instead."
        )
    return (
        "**Against the paper.** " + "; ".join(texts) + ". The paper's gains (15-26 Mbit/s at 1 Gbit/s, "
        "1.5-2.6 % of its link) are single transfers on its testbed. The banded decrease changes only the cut "
        "at each NAK (1.120 instead of 1.125 up to 50 ms, 0.4 % less per cut; 1.123 above 150 ms): where random "
        f"losses alone set the rate, the square-root model of the udt study bounds its gain to {bound:.1f} %, "
        "and here the queue's overflows, which a gentler cut only brings sooner, set it too"
        f"{share}.{costs} On real sockets on this machine the "
        "host's timing moves a run's goodput by more than any of the proposals does, as it may have moved the "
        "paper's single transfers."
    )


STUDY = UdtRealStudy()
