"""Study `recovery`: Tahoe vs NewReno vs SACK on a wired DropTail bottleneck.

SACK runs twice: as RFC 6675 (`sack`) and as ns-2's Sack1 (`sack1`), the SACK
TCP the paper simulated.

Reproduces seed paper 003 (H.-N. Lee, "A Study on Performance Comparison of
TCP Protocols in Wired Network", M.Ed. thesis, Pukyong National University,
2003; ns-2): total data throughput (Fig. 6), ACK throughput on the reverse path
(Fig. 7), per-node fairness (Fig. 8), sequence number against time (Figs.
9-11) and the sequence number reached in 10 s (Table 3), for link speeds of 5,
10, 15 and 20 Mbit/s. The topology is reconstructed in ``recovery.toml``; the
report explains each choice and what the model shows against the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cclab.api import run
from cclab.plot import Intervals, acks_received, segments_sent, sequence, time_sequence
from cclab.plot import sweep as sweep_plot
from cclab.studies.base import Study, StudyContext, jain
from cclab.studies.report import Claim, Column, claim_table, document, figure, opening, section, table, value
from cclab.sweep import SweepResult, aggregate, derive_seed

if TYPE_CHECKING:
    import polars as pl

    from cclab.scenario import Scenario

VARIANTS = ["tahoe", "newreno", "sack", "sack1"]
SPEEDS = ["5Mbps", "10Mbps", "15Mbps", "20Mbps"]
VARIANT_KEY = "flows[*].recovery"
#: The bottleneck r0 -> r1 is the first link in recovery.toml.
BOTTLENECK_KEY = "topology.links[0].rate"
#: The sensitivity sweep runs every link at the swept speed.
ALL_LINKS_KEY = "topology.links[*].rate"
#: The paper's 1000-byte packets carry 960 bytes of payload behind a 40-byte header.
PACKET_PAYLOAD = 960
#: Every link's DropTail limit in recovery.toml (ns-2's default).
BUFFER_PACKETS = 50
FORWARD, REVERSE = "r0->r1", "r1->r0"
GROUP = ["recovery", "speed"]

#: The six FTP flows of recovery.toml, and its run.duration in seconds.
FLOWS, RUN_S = 6, 10.0
#: The flow whose sequence numbers Figs. 9-11 show, and the loss episode they zoom into: the
#: flow's first packet dropped after the start-up phase, from a little before it to
#: EPISODE_SPAN_S later (long enough for a timeout and the slow start after it). The packet
#: trace covers TRACE_SPAN_S from EPISODE_AFTER_S: the run's memory guard estimates a trace
#: from link rates, and a window keeps that estimate (not the trace, which is small) below 4 GB.
SEQUENCE_FLOW = "ftp0"
EPISODE_AFTER_S, EPISODE_BEFORE_S, EPISODE_SPAN_S, TRACE_SPAN_S = 2.0, 0.05, 0.6, 1.5

#: What the paper states (its figures did not survive the text conversion). Its SACK is ns-2's
#: Sack1, so its value is sack1's; RFC 6675 sack is compared against the same number.
PAPER_TABLE3 = {"newreno": 512, "sack": 612, "sack1": 612, "tahoe": 830}
#: The time-sequence figures: the paper's Figs. 9-11, and 10b for the SACK it did not run.
SEQUENCE_FIGURES = (("newreno", "9"), ("sack", "10"), ("sack1", "10b"), ("tahoe", "11"))


def per_run(result: SweepResult, speed_key: str) -> pl.DataFrame:
    """One row per run: totals over the six flows, fairness, and the bottleneck's two directions."""
    import polars as pl

    keys = [*GROUP, "replication"]
    flows = result.flows.drop(VARIANT_KEY).rename({speed_key: "speed"})  # flows carry their own `recovery`
    links = result.links.rename({VARIANT_KEY: "recovery", speed_key: "speed"})
    totals = flows.group_by(keys, maintain_order=True).agg(
        (pl.col("goodput_bps").sum() / 1e6).alias("goodput_mbps"),
        pl.col("retransmits").sum().alias("retransmits"),
        pl.col("timeouts").sum().alias("timeouts"),
        pl.col("goodput_bps").map_batches(lambda s: pl.Series([jain(s.to_list())]), returns_scalar=True)
        .alias("jain"),
        (pl.col("bytes_delivered") / PACKET_PAYLOAD).mean().alias("seq_mean"),
    )  # fmt: skip
    forward = links.filter(pl.col("name") == FORWARD).select(
        *keys,
        (pl.col("throughput_bps") / 1e6).alias("bottleneck_mbps"),
        pl.col("utilization").alias("util"),
        pl.col("drops").alias("bottleneck_drops"),
    )
    reverse = links.filter(pl.col("name") == REVERSE).select(
        *keys, (pl.col("throughput_bps") / 1e6).alias("ack_path_mbps")
    )
    return totals.join(forward, on=keys).join(reverse, on=keys)


#: The paper-style count: a packet trace of the bottleneck's two directions over the whole run.
TRACE_LINKS = [FORWARD, REVERSE]
#: Every link's one-way delay in recovery.toml: ns-2 traces a packet as received (`r`) this long
#: after it left the link's queue.
LINK_DELAY_S = 0.002
#: The paper's three orderings, highest first; its SACK is ns-2's Sack1, and RFC 6675 sack is
#: checked in its place too.
PAPER_ORDERS = {
    "throughput": ("tahoe", "newreno", "sack"),
    "ack": ("tahoe", "newreno", "sack"),
    "table3": ("tahoe", "sack", "newreno"),
}
#: The isolating run for Tahoe's deficit: the top speed with a bottleneck buffer of this size.
LARGE_BUFFER = "100pkts"
BUFFER_KEY = "topology.links[0].buffer"


def trace_counts(trace: pl.DataFrame, duration_s: float, rtt_s: float, flow_id: int = 0) -> dict[str, Any]:
    """What an ns-2 user counts from a trace of the bottleneck (r0 -> r1 data, r1 -> r0 ACKs):
    every packet received at the far end of each direction within the run (ns-2's `r` event: a
    departure plus the link delay), retransmissions and duplicates included; the data packets that
    crossed the bottleneck a second time (the receiver already had them: nothing drops after it);
    the highest packet number of each flow received at r1 (the end of a sequence-number plot); and
    the flows' drops at the bottleneck grouped into loss episodes (drops of one flow less than
    ``rtt_s`` after the episode's first), with how many episodes lost more than one packet."""
    import polars as pl

    received = trace.filter((pl.col("event") == "depart") & (pl.col("time_s") + LINK_DELAY_S < duration_s))
    data = received.filter((pl.col("link") == FORWARD) & (pl.col("kind") == "data"))
    acks = received.filter((pl.col("link") == REVERSE) & (pl.col("kind") == "ack"))
    highest = data.group_by("flow_id").agg(((pl.col("seq") + pl.col("len")) / PACKET_PAYLOAD).max().alias("top"))
    drops = trace.filter((pl.col("event") == "drop") & (pl.col("link") == FORWARD)).sort("flow_id", "time_s")
    episodes = multiple = 0
    for _, times in drops.group_by("flow_id", maintain_order=True).agg(pl.col("time_s")).iter_rows():
        start, size = None, 0
        for t in [*times, None]:
            if t is not None and start is not None and t - start < rtt_s:
                size += 1
                continue
            if start is not None:
                episodes += 1
                multiple += size > 1
            start, size = t, 1
    own = highest.filter(pl.col("flow_id") == flow_id)["top"]
    return {
        "trace_data_packets": data.height,
        "trace_data_mbps": int(data["wire_bytes"].sum()) * 8 / duration_s / 1e6,
        "trace_ack_packets": acks.height,
        "trace_ack_mbps": int(acks["wire_bytes"].sum()) * 8 / duration_s / 1e6,
        "trace_duplicates": data.height - data.select("flow_id", "seq").unique().height,
        "trace_seq_flow": float(own[0]) if len(own) else 0.0,
        "trace_seq_mean": float(highest["top"].mean()) if highest.height else 0.0,  # type: ignore[arg-type]
        "trace_drops": drops.height,
        "loss_episodes": episodes,
        "multi_loss_episodes": multiple,
    }


def paper_order_fraction(runs: pl.DataFrame, metric: str, order: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    """Per speed: in how many replications (seeds) the single runs give ``order`` strictly
    (``metric`` of order[0] > order[1] > ...), and of how many replications."""
    import polars as pl

    wide = runs.filter(pl.col("recovery").is_in(list(order))).pivot(
        on="recovery", index=["speed", "replication"], values=metric
    )
    holds = pl.all_horizontal([pl.col(a) > pl.col(b) for a, b in zip(order, order[1:], strict=False)])
    counts = wide.group_by("speed", maintain_order=True).agg(holds.sum().alias("k"), pl.len().alias("n"))
    return {r["speed"]: (int(r["k"]), int(r["n"])) for r in counts.iter_rows(named=True)}


def traced_runs(ctx: StudyContext, scenario: Scenario, speeds: list[str]) -> pl.DataFrame:
    """The main sweep's runs again (same scenario, same seeds: the same runs), each with a trace of
    the bottleneck's two directions over the whole run, counted by :func:`trace_counts`. Cached
    under OUT/cache/trace_counts with the run's summary (the trace itself replaced by its counts),
    so ``--from-cache`` renders without running; run on threads like ``StudyContext.runs``."""
    from concurrent.futures import ThreadPoolExecutor

    import polars as pl

    from cclab.result import Result, summary_frame
    from cclab.sweep import RunSpec, RunStore, check_replayable, keyed_build, run_key

    resolved = scenario.validate()
    base, duration = resolved["run"]["seed"], float(resolved["run"]["duration"])
    build = keyed_build()
    specs, labels = [], []
    for variant in VARIANTS:
        for speed in speeds:
            # Validated (built) once: with_ would build it a second time.
            traced = scenario._overridden({VARIANT_KEY: variant, BOTTLENECK_KEY: speed,
                                           "trace": [{"links": TRACE_LINKS, "pcap": False}]})  # fmt: skip
            config = traced.validate()
            for r in range(ctx.replications):
                seed = derive_seed(base, r)
                key = run_key(config, seed, build, base)
                point = ((VARIANT_KEY, variant), (BOTTLENECK_KEY, speed))
                specs.append(RunSpec(len(specs), point, r, seed, traced, key, build, base_seed=base))
                labels.append({"recovery": variant, "speed": speed, "replication": r})
    store = RunStore(ctx.out / "cache" / "trace_counts")

    def rtt(speed: str) -> float:
        # The base RTT (six 2 ms hops) and a full bottleneck queue: the longest round trip.
        return 6 * LINK_DELAY_S + BUFFER_PACKETS * (PACKET_PAYLOAD + 40) * 8 / (float(speed.removesuffix("Mbps")) * 1e6)

    def one(spec: RunSpec) -> dict[str, Any]:
        result = run(spec.scenario, seed=spec.seed, allow_long=True)
        summary = {k: v for k, v in result.summary.items() if k != "trace"}
        summary["trace_counts"] = trace_counts(result.trace, duration, rtt(labels[spec.index]["speed"]))
        return summary

    try:
        summaries = {spec.index: store.load(spec.key) for spec in specs if store.has(spec.key)}
        todo = [spec for spec in specs if spec.index not in summaries]
        check_replayable(len(todo), len(specs), store.out)
        with ThreadPoolExecutor(max_workers=ctx.options.jobs or 2) as pool:
            for spec, summary in zip(todo, pool.map(one, todo), strict=True):
                store.save(spec, Result(summary, {}, spec.seed))
                summaries[spec.index] = summary
    finally:
        store.close()
    rows = []
    for spec, label in zip(specs, labels, strict=True):
        summary = summaries[spec.index]
        goodput = float(summary_frame(summary, "flows")["goodput_bps"].sum()) / 1e6
        rows.append({**label, "goodput_mbps": goodput, **summary["trace_counts"]})
    return pl.DataFrame(rows)


def loss_episode(trace: pl.DataFrame, variant: str) -> dict[str, Any]:
    """The window Figs. 9-11 show for one variant, and what its trace says happened in it:
    the flow's packets dropped, its retransmissions, and how long until the cumulative
    ACK passed everything sent before the first drop (the end of loss recovery)."""
    import polars as pl

    data = trace.filter(pl.col("kind") == "data")
    drops = data.filter((pl.col("event") == "drop") & (pl.col("time_s") >= EPISODE_AFTER_S))
    if drops.height == 0:
        raise RuntimeError(f"{variant}: flow {SEQUENCE_FLOW} lost nothing after {EPISODE_AFTER_S} s")
    first = float(drops["time_s"][0])
    start = max(first - EPISODE_BEFORE_S, EPISODE_AFTER_S)
    end = min(start + EPISODE_SPAN_S, EPISODE_AFTER_S + TRACE_SPAN_S)
    sent = segments_sent(trace)
    inside = (pl.col("time_s") >= start) & (pl.col("time_s") <= end)
    outstanding = int(sent.filter(pl.col("time_s") <= first)["end"].max())  # type: ignore[arg-type]
    acks = acks_received(trace)
    recovered = acks.filter((pl.col("time_s") > first) & (pl.col("ack") >= outstanding))
    done = float(recovered["time_s"][0]) if recovered.height else end
    retransmitted = sent.filter(pl.col("retx") & (pl.col("time_s") > first))
    repaired = float(retransmitted["time_s"][0]) if retransmitted.height else None
    during = sent.filter(~pl.col("retx") & (pl.col("time_s") > (repaired or done)) & (pl.col("time_s") < done))
    return {
        "recovery": variant,
        "start_s": start,
        "end_s": end,
        "first_drop_s": first,
        "drops": drops.filter(inside).height,
        "retransmissions": sent.filter(inside & pl.col("retx")).height,
        "new_segments": sent.filter(inside & ~pl.col("retx")).height,
        "retransmitted_after_s": repaired - first if repaired is not None else None,
        "recovered_after_s": done - first if recovered.height else None,
        "new_during_recovery": during.height,
    }


def _ms(value: float | None) -> str:
    return "not in the trace" if value is None else f"{value * 1000:.0f} ms"


def _episode_table(episodes: list[dict[str, Any]]) -> str:
    return table(episodes, [
        value("variant", "recovery"),
        Column("window (s)", lambda e: f"{e['start_s']:.3f}-{e['end_s']:.3f}"),
        value("packets dropped", "drops"),
        value("retransmissions", "retransmissions"),
        value("new segments sent", "new_segments"),
        Column("first drop to its retransmission", lambda e: _ms(e["retransmitted_after_s"])),
        Column("to the end of recovery", lambda e: _ms(e["recovered_after_s"])),
        value("new segments sent in between", "new_during_recovery"),
    ])  # fmt: skip


def _episodes_text(episodes: list[dict[str, Any]], speed: str) -> str:
    def span(key: str) -> str:
        values = [e[key] * 1000 for e in episodes if e[key] is not None]
        return f"{min(values):.0f}-{max(values):.0f}" if values else "(none in the trace)"

    rate_bps = float(speed.removesuffix("Mbps")) * 1e6
    single = all(e["retransmissions"] == 1 for e in episodes)
    first = (
        "In each window the first loss is a single segment dropped at the full bottleneck queue, repaired by "
        "one fast retransmission (a later drop in a window starts the next episode)."
        if single
        else "The windows hold more than one retransmission for some variants (table above)."
    )
    return EPISODES.format(
        first=first,
        retx_range=span("retransmitted_after_s"),
        rec_range=span("recovered_after_s"),
        speed=speed,
        queue_ms=BUFFER_PACKETS * (PACKET_PAYLOAD + 40) * 8 / rate_bps * 1000,
        during=", ".join(f"{e['recovery']} {e['new_during_recovery']}" for e in episodes),
        after=EPISODE_AFTER_S,
    )


METRICS = ["goodput_mbps", "bottleneck_mbps", "util", "ack_path_mbps", "retransmits", "timeouts", "jain",
           "seq_mean", "bottleneck_drops"]  # fmt: skip


def _rows(summary: pl.DataFrame, speed: str) -> dict[str, dict[str, Any]]:
    import polars as pl

    return {r["recovery"]: r for r in summary.filter(pl.col("speed") == speed).iter_rows(named=True)}


def _ranking(summary: pl.DataFrame, metric: str, speed: str, variants: list[str] | None = None) -> str:
    """Variants (all, or those given) from highest to lowest mean; '>' where the 95 % intervals are
    disjoint, '≈' where they overlap."""
    rows = [r for v, r in _rows(summary, speed).items() if variants is None or v in variants]
    rows = sorted(rows, key=lambda r: r[f"{metric}_mean"], reverse=True)
    text = rows[0]["recovery"]
    for a, b in zip(rows, rows[1:], strict=False):
        disjoint = a[f"{metric}_mean"] - a[f"{metric}_ci95"] > b[f"{metric}_mean"] + b[f"{metric}_ci95"]
        text += f" {'>' if disjoint else '≈'} {b['recovery']}"
    return text


def _table(summary: pl.DataFrame, columns: list[tuple[str, str, int]]) -> str:
    """Per variant and speed, each (metric, label, digits) as mean ± 95 % half-width."""

    def plus_minus(metric: str, label: str, digits: int) -> Column[dict[str, Any]]:
        return Column(label, lambda r: f"{r[f'{metric}_mean']:.{digits}f} ± {r[f'{metric}_ci95']:.{digits}f}")

    return table(summary, [value("variant", "recovery"), value("speed", "speed"),
                           *(plus_minus(*c) for c in columns)])  # fmt: skip


class RecoveryStudy(Study):
    name = "recovery"
    title = "Tahoe vs NewReno vs SACK on a wired DropTail bottleneck"
    paper = (
        'seed 003_8606c7d559ea8d14: H.-N. Lee, "A Study On Performance Comparison of TCP Protocols in '
        'Wired Network", M.Ed. thesis, Pukyong National University, 2003 (ns-2)'
    )
    replications = 10
    quick_replications = 2
    replayed_in_ci = True  # 1124 runs, about 5 minutes on 2 cores (2026-11-29)

    def run(self, ctx: StudyContext) -> None:
        import polars as pl

        scenario = self.scenario("recovery.toml")
        speeds = ["5Mbps", "20Mbps"] if ctx.quick else SPEEDS
        main = ctx.sweep("main", scenario, {VARIANT_KEY: VARIANTS, BOTTLENECK_KEY: speeds})
        runs = per_run(main, BOTTLENECK_KEY)
        summary = aggregate(runs, GROUP, METRICS)
        flows = main.flows.drop(VARIANT_KEY).rename({BOTTLENECK_KEY: "speed"})
        per_flow = aggregate(flows.with_columns((pl.col("goodput_bps") / 1e6).alias("goodput_mbps")),
                             [*GROUP, "name"], ["goodput_mbps"])  # fmt: skip
        equal = ctx.sweep("equal_link_speeds", scenario, {VARIANT_KEY: VARIANTS, ALL_LINKS_KEY: speeds})
        equal_summary = aggregate(per_run(equal, ALL_LINKS_KEY), GROUP, METRICS)
        counted = traced_runs(ctx, scenario, speeds)
        keys = [*GROUP, "replication"]
        same = counted.select(*keys, "goodput_mbps").join(runs.select(*keys, "goodput_mbps"), on=keys, suffix="_sweep")
        if (
            not same.filter((pl.col("goodput_mbps") - pl.col("goodput_mbps_sweep")).abs() > 1e-9).is_empty()
            or same.height != runs.height
        ):
            raise RuntimeError("the traced runs are not the main sweep's runs (goodput differs)")
        counted = counted.join(runs.select(*keys, "seq_mean", "timeouts", "retransmits"), on=keys)
        per_data = (pl.col("trace_ack_packets") / pl.col("trace_data_packets")).alias("acks_per_data")
        trace_summary = aggregate(counted.with_columns(per_data), GROUP, TRACE_METRICS)
        buffer_speeds = [speeds[0], speeds[-1]]
        large = ctx.sweep("large_buffer", scenario.with_(**{BUFFER_KEY: LARGE_BUFFER}),
                          {VARIANT_KEY: VARIANTS, BOTTLENECK_KEY: buffer_speeds})  # fmt: skip
        large_summary = aggregate(per_run(large, BOTTLENECK_KEY), GROUP, METRICS)
        ctx.table(runs, "runs")
        ctx.table(summary, "summary")
        ctx.table(counted, "trace_counts")
        ctx.table(trace_summary, "summary_trace_counts")
        ctx.table(large_summary, "summary_large_buffer")
        ctx.table(per_flow, "per_flow")
        ctx.table(equal_summary, "summary_equal_link_speeds")

        def line_plot(metric: str, ylabel: str, title: str, name: str) -> str:
            return ctx.figure(sweep_plot(summary, "speed", metric, by="recovery", ylabel=ylabel, title=title), name)

        figures = {
            "fig6": line_plot("goodput_mbps", "total goodput of the six flows (Mbit/s)",
                              "Fig. 6: total data throughput by TCP version", "fig6_throughput"),
            "fig6b": line_plot("bottleneck_mbps", "data on the bottleneck, retransmissions included (Mbit/s)",
                               "Fig. 6 (wire view): data carried by the bottleneck", "fig6_bottleneck"),
            "fig7": line_plot("ack_path_mbps", "ACK throughput on the reverse path (Mbit/s)",
                              "Fig. 7: ACK throughput by TCP version", "fig7_ack_throughput"),
        }  # fmt: skip
        fair_speed = "10Mbps" if "10Mbps" in speeds else speeds[0]
        figures["fig8"] = ctx.figure(self._fairness_figure(per_flow, fair_speed), "fig8_fairness")
        seq_speed = speeds[0]
        seed = derive_seed(scenario.validate()["run"]["seed"], 0)
        sampled, episodes = [], []
        for variant, number in SEQUENCE_FIGURES:
            traced = scenario.with_(**{VARIANT_KEY: variant, BOTTLENECK_KEY: seq_speed, "run.sample": "20ms",
                                       "trace": [{"flows": [SEQUENCE_FLOW], "from": f"{EPISODE_AFTER_S}s",
                                                  "to": f"{EPISODE_AFTER_S + TRACE_SPAN_S}s"}]})  # fmt: skip
            result = run(traced, seed=seed, allow_long=True)  # planned, like the sweep's runs
            sampled.append(result.timeseries.filter(pl.col("name") == SEQUENCE_FLOW).with_columns(name=pl.lit(variant)))
            episode = loss_episode(result.trace, variant)
            episodes.append(episode)
            title = (f"Fig. {number}: {variant}, flow {SEQUENCE_FLOW} at {seq_speed} (replication 0), "
                     f"its first loss after {EPISODE_AFTER_S:g} s")  # fmt: skip
            fig = time_sequence(result, SEQUENCE_FLOW, episode["start_s"], episode["end_s"], title=title)
            figures[f"fig{number}"] = ctx.figure(fig, f"fig{number}_{variant}_time_sequence")
        overview = sequence(pl.concat(sampled), segment_bytes=PACKET_PAYLOAD,
                            title=f"Sequence number of flow {SEQUENCE_FLOW} over the run at {seq_speed}")  # fmt: skip
        figures["fig9_11_overview"] = ctx.figure(overview, "fig9_11_sequence_overview")
        ctx.table(pl.DataFrame(episodes), "loss_episodes")
        evidence = Evidence(counted, trace_summary, large_summary, buffer_speeds)
        ctx.report(self._report(ctx, summary, equal_summary, figures, speeds, fair_speed, seq_speed, episodes,
                                evidence))  # fmt: skip

    def _fairness_figure(self, per_flow: pl.DataFrame, speed: str) -> Any:
        import polars as pl
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch

        fig = Figure(figsize=(7.0, 4.2), layout="constrained")
        ax = fig.add_subplot()
        rows = per_flow.filter(pl.col("speed") == speed)
        flows = sorted(rows["name"].unique().to_list())
        width = 0.8 / len(VARIANTS)
        # The sweep plots' rule: no bar below n = 3 replications, none below zero.
        intervals = Intervals()
        for i, variant in enumerate(VARIANTS):
            v = rows.filter(pl.col("recovery") == variant).sort("name")
            xs = [flows.index(n) + (i - (len(VARIANTS) - 1) / 2) * width for n in v["name"].to_list()]
            yerr = intervals.bars(v["goodput_mbps_mean"].to_list(), v["goodput_mbps_ci95"].to_list(),
                                  v["n"].to_list(), v["goodput_mbps_std"].to_list())  # fmt: skip
            ax.bar(xs, v["goodput_mbps_mean"], width, yerr=yerr, capsize=2, label=variant)
        ax.set_xticks(range(len(flows)), flows)
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_title(f"Fig. 8: goodput per sender node at {speed}")
        handles, labels = ax.get_legend_handles_labels()
        notes = intervals.notes()
        handles += [Patch(visible=False) for _ in notes]
        # Beside the axes: inside, it would cover the bars of the first flows.
        ax.legend(handles, labels + notes, title="recovery", fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.01, 1.0))  # fmt: skip
        ax.grid(True, axis="y", alpha=0.3)
        return fig

    def _sack1_text(self, summary: pl.DataFrame, speeds: list[str], seq_speed: str,
                    episodes: list[dict[str, Any]]) -> str:  # fmt: skip
        top = speeds[-1]

        def both(metric: str, digits: int) -> str:
            def cell(r: dict[str, Any]) -> str:
                return f"{r[f'{metric}_mean']:.{digits}f} ± {r[f'{metric}_ci95']:.{digits}f}"

            rows = {sp: _rows(summary, sp) for sp in speeds}
            return "; ".join(f"{sp} {cell(rows[sp]['sack'])} against {cell(rows[sp]['sack1'])}" for sp in speeds)

        def changes(metric: str, speed: str) -> str:
            with_sack = _ranking(summary, metric, speed, ["tahoe", "newreno", "sack"])
            with_sack1 = _ranking(summary, metric, speed, ["tahoe", "newreno", "sack1"])
            same = with_sack.replace("sack", "sack1") == with_sack1
            verdict = "the same order as with sack" if same else f"where sack gives {with_sack}"
            return f"{with_sack1}, {verdict}"

        def overlapping(metric: str) -> list[str]:
            """The speeds where sack's and sack1's 95 % intervals overlap."""
            out = []
            for sp in speeds:
                a, b = _rows(summary, sp)["sack"], _rows(summary, sp)["sack1"]
                lo = max(a[f"{metric}_mean"] - a[f"{metric}_ci95"], b[f"{metric}_mean"] - b[f"{metric}_ci95"])
                hi = min(a[f"{metric}_mean"] + a[f"{metric}_ci95"], b[f"{metric}_mean"] + b[f"{metric}_ci95"])
                out += [sp] if lo <= hi else []
            return out

        def where(found: list[str]) -> str:
            return "every speed" if found == speeds else (", ".join(found) or "no speed")

        def paper_order(sack: str) -> bool:
            return _ranking(summary, "goodput_mbps", top, ["tahoe", "newreno", sack]) == f"tahoe > newreno > {sack}"

        gap = max(
            abs(r["retransmits_mean"] / r["bottleneck_drops_mean"] - 1) * 100
            for sp in speeds
            for v, r in _rows(summary, sp).items()
            if v.startswith("sack") and r["bottleneck_drops_mean"] > 0
        )
        reproduced = {v: paper_order(v) for v in ("sack", "sack1")}
        apart = [sp for sp in speeds if sp not in overlapping("bottleneck_drops")]
        more = [sp for sp in speeds
                if _rows(summary, sp)["sack1"]["bottleneck_drops_mean"]
                > _rows(summary, sp)["sack"]["bottleneck_drops_mean"]]  # fmt: skip
        if apart:
            lead = f"Where they differ is the packets they lose (intervals disjoint at {where(apart)})."
        else:
            lead = (f"The packets they lose: `sack1` loses more on average at {where(more)}, but the "
                    "intervals overlap at every speed, so 20 replications do not establish a difference.")  # fmt: skip
        episode = {e["recovery"]: e for e in episodes}

        def ms(variant: str, key: str) -> str:
            return _ms(episode[variant][key])

        return SACK1.format(
            top=top,
            seq_speed=seq_speed,
            goodput_order=changes("goodput_mbps", top),
            seq_order=changes("seq_mean", seq_speed),
            goodput=both("goodput_mbps", 2),
            paper="gives" if reproduced["sack1"] else "does not give",
            paper_sack="gives it too" if reproduced["sack"] else "does not either",
            goodput_overlap=where(overlapping("goodput_mbps")),
            lead=lead,
            timeouts_overlap=where(overlapping("timeouts")),
            gap=gap,
            retransmits=both("retransmits", 0),
            drops=both("bottleneck_drops", 0),
            timeouts=both("timeouts", 1),
            sack_retx=ms("sack", "retransmitted_after_s"),
            sack1_retx=ms("sack1", "retransmitted_after_s"),
            sack_end=ms("sack", "recovered_after_s"),
            sack1_end=ms("sack1", "recovered_after_s"),
        )

    def _report(self, ctx: StudyContext, summary: pl.DataFrame, equal: pl.DataFrame, figures: dict[str, str],
                speeds: list[str], fair_speed: str, seq_speed: str,
                episodes: list[dict[str, Any]], evidence: Evidence) -> str:  # fmt: skip
        top = speeds[-1]
        return document(
            opening(self, _generated(ctx)),
            _verdicts(summary, speeds, seq_speed, evidence),
            section("Setup and reconstruction", SETUP),
            _throughput_section(summary, figures, top),
            _ack_section(summary, figures, top),
            _fairness_section(summary, figures, fair_speed),
            _sequence_section(summary, figures, seq_speed, episodes),
            section("ns-2 Sack1 against RFC 6675 SACK", self._sack1_text(summary, speeds, seq_speed, episodes)),
            _trace_section(evidence, speeds, seq_speed),
            _single_run_section(evidence, speeds, seq_speed),
            _buffer_section(summary, evidence),
            _sensitivity_section(equal),
            section(
                "What the model shows, and why it differs from the paper", _facts(summary, equal, speeds), DIFFERENCES
            ),
        )


def _generated(ctx: StudyContext) -> str:
    return (f"Generated by `{ctx.command}` (the command regenerates this report byte for byte) with "
            f"{ctx.replications} replications per point; ± is the 95 % confidence half-width (Student's t). Tables: "
            "`tables/summary.csv` (per variant and speed), `tables/runs.csv` (per run), `tables/per_flow.csv`, "
            "`tables/summary_equal_link_speeds.csv` (the sensitivity sweep), `tables/trace_counts.csv` and "
            "`tables/summary_trace_counts.csv` (counted from packet traces), `tables/summary_large_buffer.csv` "
            "(the isolating run).")  # fmt: skip


def _throughput_section(summary: pl.DataFrame, figures: dict[str, str], top: str) -> list[str]:
    return section(
        "Total data throughput (paper Fig. 6)",
        "The paper: Tahoe has the highest total throughput and SACK the lowest (Tahoe > NewReno > SACK). "
        "Its figure did not survive, so only this ordering can be compared.",
        f"Ours at {top}: goodput {_ranking(summary, 'goodput_mbps', top)}; data carried by the bottleneck, "
        f"retransmissions included, {_ranking(summary, 'bottleneck_mbps', top)}. (`>`: the 95 % intervals "
        "are disjoint; `≈`: they overlap.)",
        figure("Fig. 6", figures["fig6"]),
        figure("Fig. 6, wire view", figures["fig6b"]),
        _table(
            summary,
            [
                ("goodput_mbps", "goodput Mbit/s", 2),
                ("bottleneck_mbps", "bottleneck Mbit/s", 2),
                ("util", "utilisation", 3),
                ("retransmits", "retransmissions", 0),
                ("timeouts", "timeouts", 1),
            ],
        ),  # fmt: skip
    )


def _ack_section(summary: pl.DataFrame, figures: dict[str, str], top: str) -> list[str]:
    return section(
        "ACK throughput on the reverse path (paper Fig. 7)",
        "The paper: Tahoe sends the most ACKs and SACK the fewest, Tahoe and NewReno being close.",
        f"Ours at {top}: {_ranking(summary, 'ack_path_mbps', top)}.",
        figure("Fig. 7", figures["fig7"]),
        _table(summary, [("ack_path_mbps", "ACK Mbit/s on the reverse path", 3)]),
    )


def _fairness_section(summary: pl.DataFrame, figures: dict[str, str], fair_speed: str) -> list[str]:
    return section(
        "Fairness (paper Fig. 8)",
        'The paper compares the packets handled for each version at "node 6" and finds Tahoe a little '
        "fairer there, with no large difference over all nodes.",
        f"Ours: goodput per sender at {fair_speed}, and Jain's index over the six flows per variant and speed.",
        figure("Fig. 8", figures["fig8"]),
        _table(summary, [("jain", "Jain's index", 3)]),
    )


def _sequence_section(summary: pl.DataFrame, figures: dict[str, str], seq_speed: str,
                      episodes: list[dict[str, Any]]) -> list[str]:  # fmt: skip
    seq = _rows(summary, seq_speed)
    table3 = [Claim(v, paper=str(PAPER_TABLE3[v]),
                    ours=f"{seq[v]['seq_mean_mean']:.0f} ± {seq[v]['seq_mean_ci95']:.0f}")
              for v in ("tahoe", "sack1", "sack", "newreno")]  # fmt: skip
    return section(
        "Sequence numbers (paper Figs. 9-11 and Table 3)",
        "The paper plots the sequence number of one flow against time for each variant over the whole run. "
        f"At that scale (ours: flow {SEQUENCE_FLOW} at {seq_speed}, replication 0, sampled every 20 ms) "
        "the lines show each variant's progress but no single loss or retransmission:",
        figure("Figs. 9-11 overview", figures["fig9_11_overview"]),
        "How each variant recovers is visible only packet by packet. Figs. 9-11 below are time-sequence "
        f"graphs drawn from a packet trace of {SEQUENCE_FLOW}: every segment sent (a bar from its first to "
        "its last byte; a diamond marks a retransmission), the cumulative ACK the sender received (step "
        "line), the SACK blocks of those ACKs, and every packet of the flow dropped (X, with the link). "
        "Each shows the same rule's "
        f"window: the flow's first drop after {EPISODE_AFTER_S:g} s, from {EPISODE_BEFORE_S * 1000:.0f} ms "
        f"before it to {EPISODE_SPAN_S * 1000:.0f} ms later.",
        [figure(f"Fig. {number}", figures[f"fig{number}"]) for number in ("9", "10", "10b", "11")],
        "What the traces record in those windows (`tables/loss_episodes.csv`; recovery ends when the "
        "cumulative ACK passes everything sent before the first drop):",
        _episode_table(episodes),
        _episodes_text(episodes, seq_speed),
        "Table 3 of the paper gives the sequence number reached at the end of the 10 s run; it does not say "
        f"at which speed or for which flow. Its values match a share of a {seq_speed} bottleneck best, so we "
        "compare there, with the mean over the six flows and the replications:",
        claim_table(
            table3,
            {
                "claim": "variant",
                "paper": "paper: sequence number",
                "ours": f"ours at {seq_speed}: highest in-order packet, mean per flow",
            },
        ),  # fmt: skip
        f"Ours at {seq_speed}: {_ranking(summary, 'seq_mean', seq_speed)} (paper: tahoe > sack > newreno, "
        "its sack being ns-2's Sack1).",
    )


TRACE_METRICS = ["trace_data_mbps", "trace_ack_mbps", "acks_per_data", "trace_duplicates", "trace_seq_flow",
                 "trace_seq_mean", "trace_drops", "loss_episodes", "multi_loss_episodes"]  # fmt: skip


@dataclass(frozen=True)
class Evidence:
    """The runs that test the issue's three claims: the main sweep's runs with their trace counts
    (one row per run), their aggregate, and the isolating sweep with a larger bottleneck buffer."""

    traced: pl.DataFrame
    trace_summary: pl.DataFrame
    large: pl.DataFrame
    large_speeds: list[str]


#: The single-run checks: (paper's claim, our measure, metric in the traced-runs table, ordering).
SINGLE_RUN_CHECKS = [
    ("Fig. 6 total throughput", "goodput (new data delivered)", "goodput_mbps", "throughput"),
    ("Fig. 6 total throughput", "data packets received at r1 (trace)", "trace_data_mbps", "throughput"),
    ("Fig. 7 ACK throughput", "ACKs received at r0 (trace)", "trace_ack_mbps", "ack"),
    ("Table 3 sequence number", f"highest packet of {SEQUENCE_FLOW} at r1 (trace)", "trace_seq_flow", "table3"),
    ("Table 3 sequence number", "highest in-order packet, mean per flow", "seq_mean", "table3"),
]


def _order(kind: str, sack: str) -> tuple[str, ...]:
    return tuple(sack if v == "sack" else v for v in PAPER_ORDERS[kind])


def _fraction(traced: pl.DataFrame, metric: str, kind: str, sack: str, speeds: list[str]) -> tuple[int, int]:
    """Single runs giving the paper's order, summed over ``speeds``: (runs that do, runs)."""
    counts = paper_order_fraction(traced, metric, _order(kind, sack))
    return sum(counts[sp][0] for sp in speeds), sum(counts[sp][1] for sp in speeds)


def _span(values: list[float], digits: int) -> str:
    """ "0.80-0.99", or one number when all round to it."""
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return lo if lo == hi else f"{lo}-{hi}"


def _k_of_n(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n * 100:.0f} %)" if n else "none"


def _overlap_all(summary: pl.DataFrame, metric: str, speed: str) -> bool:
    """Whether every variant's 95 % interval overlaps every other's at ``speed``."""
    rows = list(_rows(summary, speed).values())
    lo = max(r[f"{metric}_mean"] - r[f"{metric}_ci95"] for r in rows)
    hi = min(r[f"{metric}_mean"] + r[f"{metric}_ci95"] for r in rows)
    return lo <= hi


def _verdicts(summary: pl.DataFrame, speeds: list[str], seq_speed: str, ev: Evidence) -> list[str]:
    """The verdict table: one row per claim the issue lists, then the report's other claim (fairness)."""
    top, t = speeds[-1], ev.trace_summary
    trio = ["tahoe", "newreno", "sack1"]

    def single(metric: str, kind: str, on: list[str]) -> str:
        k, n = _fraction(ev.traced, metric, kind, "sack1", on)
        return _k_of_n(k, n)

    def paper_mean(frame: pl.DataFrame, metric: str, kind: str, speed: str) -> bool:
        return _ranking(frame, metric, speed, trio) == " > ".join(_order(kind, "sack1"))

    big_speed, low = ev.large_speeds[-1], speeds[0]
    big, small = _rows(ev.large, big_speed), _rows(summary, big_speed)
    gone = "> tahoe" not in _ranking(ev.large, "goodput_mbps", big_speed, trio)
    deficit = (f"with a {LARGE_BUFFER.removesuffix('pkts')}-packet bottleneck buffer at {big_speed} Tahoe's "
               f"utilisation rises from {small['tahoe']['util_mean']:.3f} to {big['tahoe']['util_mean']:.3f} "
               f"(newreno {big['newreno']['util_mean']:.3f}, sack1 {big['sack1']['util_mean']:.3f}) and its "
               "goodput interval overlaps theirs")  # fmt: skip
    lows, lowt = _rows(summary, low), _rows(t, low)
    waste = {v: lowt[v]["trace_duplicates_mean"] * PACKET_PAYLOAD * 8 / RUN_S / 1e6 for v in trio}
    gap = lows["sack1"]["goodput_mbps_mean"] - lows["tahoe"]["goodput_mbps_mean"]
    at_low = (f"; at {low}, where every variant keeps the link as busy, the trace count finds the goodput gap "
              f"in the data sent twice: Tahoe resends {waste['tahoe']:.3f} Mbit/s of packets that had crossed "
              f"the bottleneck, sack1 {waste['sack1']:.3f}, against a goodput gap of {gap:.3f} Mbit/s")  # fmt: skip
    throughput_cause = (
        'differs: cause demonstrated by the large-buffer run (section "Why Tahoe falls behind": '
        + deficit
        + ') and the trace count (section "Counted from a packet trace")'
        + at_low
        + '; single-run noise does not explain it (section "How often one seeded run")'
        if gone
        else "differs: cause not found (the large-buffer run leaves Tahoe behind)"
    )
    if paper_mean(summary, "goodput_mbps", "throughput", top):
        throughput_cause = "reproduced"
    ratio = [r["acks_per_data_mean"] for sp in speeds for r in _rows(t, sp).values()]
    ack_verdict = (
        "reproduced" if paper_mean(t, "trace_ack_mbps", "ack", top) else
        f"differs: cause demonstrated by the trace count: {_span(ratio, 3)} ACKs per data packet "
        "for every variant and speed, so the ACK order is the data order, whose cause is the row above"
    )  # fmt: skip
    seq = _rows(t, seq_speed)
    dup = {v: seq[v]["trace_duplicates_mean"] for v in trio}
    k3, n3 = _fraction(ev.traced, "trace_seq_flow", "table3", "sack1", [seq_speed])
    chance = "about as often as" if abs(k3 / n3 - 1 / 6) < 0.1 else ("more often than" if k3 / n3 > 1 / 6 else
                                                                     "less often than")  # fmt: skip
    in_order = _rows(summary, seq_speed)
    gain = in_order["sack1"]["seq_mean_mean"] - in_order["tahoe"]["seq_mean_mean"]
    table3_verdict = (
        "reproduced" if paper_mean(t, "trace_seq_flow", "table3", seq_speed) else
        f"differs: cause demonstrated by the trace count (sections \"Counted from a packet trace\" and \"How "
        f"often one seeded run\"): {SEQUENCE_FLOW}'s number in one run gives the paper's order in "
        f"{_k_of_n(k3, n3)} at {seq_speed}, {chance} chance (1 in 6); in the mean, Tahoe and NewReno resend "
        f"{dup['tahoe']:.0f} and {dup['newreno']:.0f} packets per run that had crossed the bottleneck before "
        f"(sack1 {dup['sack1']:.0f}), {(dup['tahoe'] - dup['sack1']) / FLOWS:.0f} per flow against sack1's "
        f"{gain:.0f} more in-order packets per flow than Tahoe; the paper's absolute values (below a fair share "
        "at every speed) are not explained"
    )  # fmt: skip
    fairest = [sp for sp in speeds if max(_rows(summary, sp).values(), key=lambda r: r["jain_mean"])["recovery"]
               == "tahoe"]  # fmt: skip
    overlapping = [sp for sp in speeds if _overlap_all(summary, "jain", sp)]
    means = [r["jain_mean"] for sp in speeds for r in _rows(summary, sp).values()]
    claims = [
        Claim("Total throughput (Fig. 6)", paper="Tahoe > NewReno > SACK, one run per speed",
              ours=(f"at {top}: goodput {_ranking(summary, 'goodput_mbps', top, trio)}; data received at r1 "
                    f"(trace, retransmissions included) {_ranking(t, 'trace_data_mbps', top, trio)}; one seeded "
                    f"run gives the paper's order in {single('trace_data_mbps', 'throughput', speeds)} "
                    f"(trace count, all speeds)"),
              verdict=throughput_cause),
        Claim("ACK throughput (Fig. 7)", paper="Tahoe most, SACK fewest, Tahoe close to NewReno",
              ours=(f"at {top}: {_ranking(t, 'trace_ack_mbps', top, trio)} (trace); one seeded run gives the "
                    f"paper's order in {single('trace_ack_mbps', 'ack', speeds)} (all speeds)"),
              verdict=ack_verdict),
        Claim("Sequence number reached (Table 3)", paper="Tahoe 830 > SACK 612 > NewReno 512",
              ours=(f"{SEQUENCE_FLOW} at {seq_speed} (trace): "
                    + ", ".join(f"{v} {seq[v]['trace_seq_flow_mean']:.0f} ± {seq[v]['trace_seq_flow_ci95']:.0f}"
                                for v in ("tahoe", "sack1", "newreno"))
                    + f"; one seeded run gives the paper's order in "
                    f"{single('trace_seq_flow', 'table3', [seq_speed])} at {seq_speed}, "
                    f"{single('trace_seq_flow', 'table3', speeds)} over all speeds"),
              verdict=table3_verdict),
        Claim("Fairness (Fig. 8)", paper="Tahoe a little fairer; no large difference between versions overall",
              ours=(f"Jain's index {_span(means, 2)}; Tahoe's is the highest mean at "
                    f"{', '.join(fairest) or 'no speed'}; all four variants' 95 % intervals overlap at "
                    f"{', '.join(overlapping) or 'no speed'}"),
              verdict=("reproduced" if fairest == speeds else
                       "differs: cause not found (Tahoe is not the fairest at every speed)")),
    ]  # fmt: skip
    return [
        "Verdicts. The paper's SACK is ns-2's Sack1 (`sack1` here). A single-run count says in how many "
        "replications (seeds; every variant runs with the same seeds) the runs give the paper's order "
        "strictly; by chance alone one of the six orders of three variants comes out 1 time in 6 (17 %).",
        claim_table(claims, {"claim": "claim", "paper": "paper", "ours": "ours", "verdict": "verdict"}),
    ]


def _trace_section(ev: Evidence, speeds: list[str], seq_speed: str) -> list[str]:
    t = ev.trace_summary
    shares = [r["multi_loss_episodes_mean"] / r["loss_episodes_mean"] * 100
              for sp in speeds for r in _rows(t, sp).values() if r["loss_episodes_mean"] > 0]  # fmt: skip
    top = speeds[-1]
    columns = [
        ("trace_data_mbps", "data at r1 Mbit/s", 2),
        ("trace_ack_mbps", "ACKs at r0 Mbit/s", 3),
        ("acks_per_data", "ACKs per data packet", 3),
        ("trace_duplicates", "data packets crossing twice", 0),
        ("trace_seq_flow", f"highest packet of {SEQUENCE_FLOW}", 0),
        ("trace_seq_mean", "highest packet, mean per flow", 0),
        ("loss_episodes", "loss episodes", 0),
        ("multi_loss_episodes", "of them with 2+ drops", 1),
    ]
    return section(
        "Counted from a packet trace, as the paper counted (Figs. 6, 7 and Table 3)",
        PAPER_METHOD,
        _table(t, columns),
        f"Ours, counted this way: data at {top} {_ranking(t, 'trace_data_mbps', top)}; ACKs at {top} "
        f"{_ranking(t, 'trace_ack_mbps', top)}; {SEQUENCE_FLOW}'s highest packet at {seq_speed} "
        f"{_ranking(t, 'trace_seq_flow', seq_speed)}; the mean per flow at {seq_speed} "
        f"{_ranking(t, 'trace_seq_mean', seq_speed)}. The traced runs are the main sweep's runs (same scenario "
        f"and seeds; goodput equal in all {ev.traced.height} of them), so these counts and the tables above "
        "describe the same runs. A receiver sends one ACK per data packet it receives, duplicates included, "
        "so the ACK count follows the data count and cannot rank the variants otherwise. Nothing is dropped "
        "after the bottleneck, so a data packet crossing it a second time is one its receiver already had: "
        "Tahoe's go-back-N and NewReno's one-hole-per-round-trip recovery resend such packets, the SACK "
        "variants almost never. Loss episodes with two or more drops of one flow, per run: "
        + "; ".join(
            f"{sp} " + ", ".join(f"{v} {r['multi_loss_episodes_mean']:.1f}" for v, r in _rows(t, sp).items())
            for sp in (speeds[0], top)
        )  # fmt: skip
        + f". Over every variant and speed they are {_span(shares, 0)} % of all loss episodes: most losses "
        "here are single drops in a window, where the schemes differ least.",
    )


PAPER_METHOD = """How the paper measured: section IV names its measures but not how it counted
them. Fig. 6 is the "total throughput" (전체 처리율) of each TCP version,
Fig. 7 the total throughput of ACK packets, and Figs. 9-11 and Table 3 the
"actual throughput" (실제 처리율) read from packet sequence numbers, Table 3
turning a sequence number into bytes at 1000 bytes a packet (512 -> 512,000).
It sets the two against each other (total: Tahoe, NewReno, SACK; by sequence
number: Tahoe, SACK, NewReno), so its total counts packets whatever their
sequence number, retransmissions included, as a count of an ns-2 trace file
does. It names no node, interval or flow for Figs. 6, 7 and Table 3 (Fig. 8
is "node 6"), and reports one run per version and speed. We count as an ns-2
user would from a trace of the bottleneck's two directions (`[[trace]]` on
`r0->r1` and `r1->r0`, the whole 10 s, one traced run per variant, speed and
replication): every data packet received at r1 (ns-2's `r` event: a departure
plus the link's 2 ms), retransmissions included, and every ACK received at r0;
for Table 3 the highest packet number of one flow (ftp0) received at r1 (the
last point of a sequence-number plot), beside the mean over the six flows. A
loss episode is a flow's drops at the bottleneck less than one round trip
(base RTT and a full queue) after the episode's first (`tables/trace_counts.csv`
per run, `tables/summary_trace_counts.csv`).
"""


def _single_run_section(ev: Evidence, speeds: list[str], seq_speed: str) -> list[str]:
    rows = []
    for claim, measure, metric, kind in SINGLE_RUN_CHECKS:
        for sack in ("sack1", "sack"):
            counts = paper_order_fraction(ev.traced, metric, _order(kind, sack))
            k, n = _fraction(ev.traced, metric, kind, sack, speeds)
            per_speed = {sp: f"{counts[sp][0]}/{counts[sp][1]}" for sp in speeds}
            rows.append({"claim": claim, "measure": measure, "order": " > ".join(_order(kind, sack)),
                         **per_speed, "all": _k_of_n(k, n)})  # fmt: skip
    columns = [value("paper's claim", "claim"), value("our measure", "measure"), value("order", "order"),
               *(value(sp, sp) for sp in speeds), value("all speeds", "all")]  # fmt: skip
    return section(
        "How often one seeded run gives the paper's order",
        "The paper ran each version once per speed. Each replication below is such a single run: one seed, "
        "every variant run with it (the same start times), at one speed. A row counts the replications whose "
        "runs give the paper's order strictly, once with ns-2's Sack1 as the paper's SACK and once with "
        "RFC 6675 SACK in its place (`tables/trace_counts.csv` holds every run's numbers).",
        table(rows, columns),
        SINGLE_RUN_TEXT,
    )


SINGLE_RUN_TEXT = """Three variants can come out in six orders, so a measure that only noise
ranked would give the paper's order in about one run in six. A count far
below that means the mean order is consistently another one, and single-run
noise does not explain the paper's order; a count near one in six means the
measure does not rank the variants at all, and any single run's order, the
paper's included, is chance.
"""


def _buffer_section(summary: pl.DataFrame, ev: Evidence) -> list[str]:
    speeds = ev.large_speeds
    rows = []
    for sp in speeds:
        small, large = _rows(summary, sp), _rows(ev.large, sp)
        for v in VARIANTS:
            rows.append({"variant": v, "speed": sp,
                         "g50": f"{small[v]['goodput_mbps_mean']:.2f} ± {small[v]['goodput_mbps_ci95']:.2f}",
                         "u50": f"{small[v]['util_mean']:.3f}",
                         "g100": f"{large[v]['goodput_mbps_mean']:.2f} ± {large[v]['goodput_mbps_ci95']:.2f}",
                         "u100": f"{large[v]['util_mean']:.3f}",
                         "t100": f"{large[v]['timeouts_mean']:.1f}"})  # fmt: skip
    size = LARGE_BUFFER.removesuffix("pkts")
    columns = [value("variant", "variant"), value("speed", "speed"),
               value(f"goodput, {BUFFER_PACKETS} packets", "g50"), value("utilisation", "u50"),
               value(f"goodput, {size} packets", "g100"), value("utilisation", "u100"),
               value(f"timeouts, {size} packets", "t100")]  # fmt: skip
    orders = "; ".join(f"{sp}: {_ranking(ev.large, 'goodput_mbps', sp)}" for sp in speeds)
    return section(
        "Why Tahoe falls behind: the bottleneck buffer",
        "Where the order differs in the mean, Tahoe is behind. After every loss Tahoe restarts from one "
        f"segment; with {BUFFER_PACKETS} packets of buffer the queue can drain while the flows that lost "
        "slow-start back, and the link idles (the utilisation above). The isolating run changes one "
        f"parameter, the bottleneck buffer, to {size} packets (`tables/summary_large_buffer.csv`, the same "
        "seeds): if Tahoe's restarts cost throughput only through an empty queue, its deficit must go.",
        table(rows, columns),
        f"Goodput with {size} packets: {orders}. "
        + (
            "Tahoe does not lead there either: the change removes the idle link that sets Tahoe behind, and "
            "is not a tuning to the paper's order."
            if not any(_ranking(ev.large, "goodput_mbps", sp).startswith("tahoe >") for sp in speeds)
            else "Tahoe leads there: a larger buffer than the paper's default reverses the order."
        ),
    )


def _sensitivity_section(equal: pl.DataFrame) -> list[str]:
    columns = [("goodput_mbps", "goodput Mbit/s", 2), ("jain", "Jain's index", 3), ("timeouts", "timeouts", 1)]
    return section(
        "Sensitivity: every link at the swept speed",
        "The same sweep with the access links as slow as the bottleneck:",
        _table(equal, columns),
    )


def _facts(summary: pl.DataFrame, equal: pl.DataFrame, speeds: list[str]) -> str:
    """What the sweeps show across speeds: FACTS with its numbers."""
    top, low = speeds[-1], speeds[0]
    fewest_retx = {s: min(_rows(summary, s).values(), key=lambda r: r["retransmits_mean"])["recovery"]
                   for s in speeds}  # fmt: skip
    most_timeouts = {s: max(_rows(summary, s).values(), key=lambda r: r["timeouts_mean"])["recovery"]
                     for s in speeds}  # fmt: skip
    spread = {s: (max(r["goodput_mbps_mean"] for r in _rows(summary, s).values())
                  / min(r["goodput_mbps_mean"] for r in _rows(summary, s).values()) - 1) * 100
              for s in speeds}  # fmt: skip
    equal_jain = {v: _rows(equal, low)[v]["jain_mean"] for v in VARIANTS}
    main_jain = {v: _rows(summary, low)[v]["jain_mean"] for v in VARIANTS}
    top_rows = _rows(summary, top)
    return FACTS.format(
        top=top,
        tahoe_util=top_rows["tahoe"]["util_mean"],
        others_util=" and ".join(f"{top_rows[v]['util_mean']:.3f} ({v})" for v in VARIANTS if v != "tahoe"),
        util=summary["util_mean"].min(),
        spread=max(spread.values()),
        fewest=", ".join(f"{s}: {v}" for s, v in fewest_retx.items()),
        most_timeouts=", ".join(f"{s}: {v}" for s, v in most_timeouts.items()),
        low=low,
        equal_jain=", ".join(f"{v} {j:.2f}" for v, j in equal_jain.items()),
        main_jain=", ".join(f"{v} {j:.2f}" for v, j in main_jain.items()),
    )


SETUP = """\
The paper gives: ns-2, window 64, 1000-byte packets, FTP sources, 10 s runs,
DropTail queues, duplex links, a "network speed" of 5, 10, 15 or 20 Mbit/s, a
2 ms entry (휴지시간), senders Tahoe / Sack1 / NewReno and receivers TCPSink0
to TCPSink5. The topology figure (Fig. 5) did not survive. We reconstruct it
(`python/cclab/studies/recovery.toml`) as:

- six FTP senders `s0..s5`, each on its own duplex link to router `r0`;
  router `r1` connects to six sinks `k0..k5` (the six TCPSinks); `r0 -> r1` is
  the bottleneck all six flows share and runs at the swept speed;
- access links at 100 Mbit/s, every link with 2 ms one-way delay (our reading
  of the 2 ms entry), so the base RTT is 12 ms. If the access links ran at the
  bottleneck's speed too, one flow's packets would reach the full bottleneck
  queue exactly once per transmission time and take every freed slot: a
  deterministic lock-out that starves the other flows. A sensitivity sweep at
  the end shows this;
- DropTail queues of 50 packets, ns-2's default `Queue limit_` (the paper does
  not give one);
- all six flows use the same variant in a run and start at random times in
  the first 0.5 s (the paper does not say; random starts let replications
  differ);
- TCP as ns-2 configured it in 2003: receiver window 64 packets, initial
  window 1, no minimum RTO but a 100 ms timer tick, RTT timing without
  timestamps (Karn's algorithm), one ACK per packet (TCPSink), 1000-byte data
  packets on the wire (960 bytes of payload after a 40-byte header, so that
  sequence numbers count the paper's packets) and 40-byte ACKs;
- Tahoe with ns-2's `bug_fix_` (no second fast retransmit for duplicates of
  data sent before the first), NewReno per RFC 6582, and SACK twice: per RFC
  6675 (`sack`), and as ns-2's `Sack1` agent (`sack1`), the older Fall-Floyd
  SACK recovery the paper ran, with its rules read from the ns-2.35 sources
  (`crates/cclab-transport/src/tcp/recovery/sack1.rs`).
"""

FACTS = """\
With six long-lived flows and a window of 64 packets each, the 50-packet
bottleneck queue overflows again and again at every speed, and every variant
keeps the bottleneck busy: utilisation is at least {util:.3f} in every
configuration. Total throughput is therefore bounded by the link, not by the
loss-recovery scheme: the variants' mean goodputs differ by at most
{spread:.1f} % at any speed. Where the 95 % intervals overlap we do not
claim an ordering. Where an ordering appears it is Tahoe's deficit at the
higher speeds: at {top} its bottleneck utilisation is {tahoe_util:.3f} against
{others_util} for the others, because after every fast retransmit Tahoe
restarts from one segment and the link idles while it slow-starts back. What
loss recovery also changes is the cost of losses:
fewest retransmissions per speed ({fewest}); most timeouts per speed
({most_timeouts}). ACK traffic on the reverse path follows the data each
variant delivers, since every receiver sends one ACK per packet.

The sensitivity sweep shows how strongly the reconstruction matters: with
every link at the bottleneck speed, Jain's index at {low} drops to
{equal_jain} (against {main_jain} with 100 Mbit/s access links), because one
flow locks the others out of the bottleneck queue.
"""

EPISODES = """\
{first} With one loss to repair the variants take similar times: {retx_range} ms from the drop to its
retransmission and {rec_range} ms to the end of recovery. Most of that is the
queue: at {speed} a full 50-packet buffer holds {queue_ms:.0f} ms of data, and the
duplicate ACKs that trigger the retransmission come back behind it; how soon
they arrive also depends on how many segments the flow sent after the lost
one in the same flight. What differs is the sending around the
retransmission. New segments sent between the retransmission and the end of
recovery: {during}. Tahoe, which restarts from a window of one segment,
then doubles its bursts each round trip (slow start, the growing bars after
its retransmission in Fig. 11); NewReno and SACK continue from half their
window, and SACK's bars during recovery are the segments its pipe estimate
lets it send as SACK blocks report segments out of the network (Fig. 10;
Fig. 10b for ns-2's Sack1, whose pipe is a counter).
The variants differ most when several segments of one window are lost, as
NewReno then repairs one loss per round trip and SACK several; we show the
first loss after {after:g} s as it came rather than searching the trace for a
more telling episode.
"""

DIFFERENCES = """\
Reasons the paper may have ranked the variants the other way round
(Tahoe > NewReno > SACK):

- it reports one run per variant and speed, without replications; with
  synchronised DropTail losses a single run's ranking depends on start-up phase,
  and our intervals show how large the run-to-run spread is;
- its "throughput" and "ACK throughput" were presumably counted from packet
  traces, where retransmitted and duplicate packets count as well; a variant
  that retransmits more then looks busier without delivering more data. Our
  goodput counts only new in-order data; the "wire view" of Fig. 6 counts
  everything the bottleneck carried;
- ns-2's Sack1 recovery is modelled (`sack1`), but on our sender: the timer
  code, the congestion window arithmetic and the defaults around it are
  reconstructed from the ns-2 sources, not known from the paper;
- the topology (access-link speed, buffer size, start times) is our
  reconstruction, and the sensitivity sweep shows that it decides fairness:
  with lock-out, which flow wins (and hence per-flow sequence numbers such as
  Table 3's) is a matter of phase, not of the recovery algorithm.

The first two reasons are tested above, not only argued: "Counted from a
packet trace" counts throughput as the paper did, "How often one seeded run
gives the paper's order" counts single runs, and "Why Tahoe falls behind"
isolates the mechanism of the one order that holds in the mean; the verdict
table at the top gives the outcome.
"""

SACK1 = """\
The paper's SACK is ns-2's Sack1 (`sack1` here), so its ordering is the one
among Tahoe, NewReno and `sack1`. Goodput at {top}: {goodput_order};
sequence number at {seq_speed}: {seq_order}. At {top}, `sack1` {paper} the
paper's Tahoe > NewReno > SACK in goodput (`sack` {paper_sack}). `sack1` and
`sack` overlap in goodput at {goodput_overlap} (Mbit/s, sack against sack1):
{goodput}.

{lead} Dropped at the bottleneck per run: {drops}; retransmissions per run:
{retransmits}. For both SACK variants retransmissions match drops within
{gap:.1f} %, so neither resends data that had arrived: a difference in
retransmissions is a difference in drops. Its rules differ from RFC 6675
(module header of `sack1.rs`): it enters only on the third duplicate ACK,
counts pipe as the flight less three at entry, one less per ACK and two
less per partial ACK (never recomputed from the scoreboard),
retransmits every hole below the highest SACK before new data, has no rescue
retransmission and forgets SACK information at every cumulative ACK outside
recovery. Which of these, if any, costs packets here we have not traced.
Timeouts per run: {timeouts}; the intervals overlap at
{timeouts_overlap}. In the traced episodes (each variant's own first loss
after 2 s, so not the same loss) `sack`
retransmitted {sack_retx} after the drop and recovered after {sack_end},
`sack1` {sack1_retx} and {sack1_end} (Figs. 10 and 10b).
"""

STUDY = RecoveryStudy()
