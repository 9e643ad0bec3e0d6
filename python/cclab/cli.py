"""The ``cclab`` command.

Every failure the user can cause (a missing file, bad TOML, an unknown key, a
bad argument) is reported as one line on stderr naming the file, key path or
argument, and exits with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from cclab import _core
from cclab.machine import machine_line

if TYPE_CHECKING:
    from cclab.result import Result

EXIT_USAGE = 2
#: As a shell reports a process ended by SIGINT.
EXIT_INTERRUPTED = 130
#: IPv4 and UDP headers inside a UDP source's packet size.
UDP_IP_HEADER_BYTES = 28
#: IP, UDP and UDT headers of a UDT data packet (UDT 4: 28 + 16 bytes).
UDT_HEADERS_BYTES = 44


class UsageError(Exception):
    """A problem with the user's input, reported without a traceback."""


def _fail(message: str) -> NoReturn:
    raise UsageError(message)


def _read_scenario(path: str) -> tuple[str, str]:
    from cclab.scenario import read_scenario_file

    try:
        return read_scenario_file(path), Path(path).stem
    except _core.ScenarioError as e:
        _fail(e.args[0])


def _run(
    path: str,
    text: str,
    name: str,
    seed: int | None,
    memory_limit: str | None,
    progress: bool | None = None,
    allow_long: bool = False,
) -> Result:
    """The run's result; ``progress`` (default: on a terminal) shows the simulated
    time reached on stderr once the run has taken a second. A run estimated to
    take more than an hour of CPU is refused unless ``allow_long``."""
    from cclab.api import run_output
    from cclab.result import Result

    try:
        output = run_output(text, name, seed, memory_limit, progress=progress, allow_long=allow_long)
    except _core.ScenarioError as e:
        _fail(f"{path}: {e.args[0]}")
    return Result.from_core(output, {})


def _whole_number(value: str, bounds: tuple[int, int]) -> int:
    """An argument's whole number; the range rule is the Python API's (cclab._args)."""
    from cclab._args import range_problem

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    problem = range_problem(n, *bounds)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return n


def _seed(value: str) -> int:
    from cclab._args import SEEDS

    return _whole_number(value, SEEDS)


def _positive(value: str) -> int:
    from cclab._args import COUNTS

    return _whole_number(value, COUNTS)


def _seconds(value: str) -> float:
    """--from, --to: a time in seconds, or with a unit (250ms, 1.5s)."""
    from cclab.plot import quantity

    parsed = quantity(value)
    if parsed is not None and parsed[1] == "duration":
        return parsed[0]
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a time (seconds, or e.g. 250ms)") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a time (seconds, or e.g. 250ms)")
    return seconds


def _memory_limit(value: str) -> str:
    """--memory-limit: a size such as 16GB, or unlimited."""
    try:
        _core.memory_limit_bytes(value)
    except _core.ScenarioError as e:
        raise argparse.ArgumentTypeError(e.args[0].removeprefix("memory_limit: ")) from None
    return value


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:9.3f}"


def _ms(seconds: float | None) -> str:
    return "      -" if seconds is None else f"{seconds * 1e3:7.2f}"


def _count(f: dict[str, Any], key: str) -> str:
    value = f.get(key)
    return "-" if value is None else str(value)


def _algorithms(f: dict[str, Any]) -> str:
    """cc/recovery for TCP (with the pacing if any), protocol/cc for UDT, protocol/app otherwise."""
    if f.get("cc") is None:
        return f"{f['protocol']}/{f['app']}"
    if f.get("recovery") is None:
        return f"{f['protocol']}/{f['cc']}"
    paced = "" if f.get("pacing") in (None, "none") else f"+{f['pacing']}"
    return f"{f['cc']}/{f['recovery']}{paced}"


def run_header(result: Result) -> str:
    """The line above `cclab run`'s tables: scenario, seed, simulated and wall time, events."""
    s = result.header
    return (
        f"scenario {s['scenario']}  seed {s['seed']}  simulated {s['sim_time_s']:g} s (statistics over "
        f"{s['warmup_s']:g}-{s['sim_time_s']:g} s)  wall {s['wall_s']:.3f} s  events {s['events']:,}"
    )


#: The titles of `cclab run`'s flows and links tables, padded as printed: a row is
#: its cells joined by spaces (the notebook's HTML strips them).
FLOW_TITLES = (f"{'flow':<16}", f"{'dir':<4}", f"{'cc/recovery':<14}", f"{'goodput Mb/s':>12}",
               f"{'thruput Mb/s':>12}", f"{'retx':>6}", f"{'RTOs':>5}", f"{'rtt ms':>7}", f"{'done s':>7}")  # fmt: skip
LINK_TITLES = (f"{'link':<24}", f"{'role':<19}", f"{'util':>7}", f"{'drops':>7}", f"{'losses':>7}",
               f"{'queue mean/max pkts':>20}", f"{'delay ms':>9}")  # fmt: skip


def flow_cells(f: dict[str, Any]) -> list[str]:
    """A row of `cclab run`'s flows table, each cell padded to its column."""
    done = "      -" if f["completion_s"] is None else f"{f['completion_s']:7.3f}"
    return [f"{f['name'] + '[' + str(f['index']) + ']':<16}", f"{f['direction'][:3]:<4}", f"{_algorithms(f):<14}",
            f"{_mbps(f['goodput_bps']):>12}", f"{_mbps(f['throughput_bps']):>12}", f"{_count(f, 'retransmits'):>6}",
            f"{_count(f, 'timeouts'):>5}", _ms(f.get("rtt_mean_s")), done]  # fmt: skip


def link_cells(link: dict[str, Any]) -> list[str]:
    """A row of `cclab run`'s links table, each cell padded to its column."""
    return [f"{link['name']:<24}", f"{link['role']:<19}", f"{link['utilization'] * 100:6.2f}%",
            f"{link['drops']:>7}", f"{link['losses']:>7}",
            f"{link['queue_mean_pkts']:>11.1f} / {link['queue_max_pkts']:<6}",
            _ms(link.get("queue_delay_mean_s"))]  # fmt: skip


def format_summary(result: Result, all_links: bool = False) -> str:
    """The human-readable table `cclab run` prints (from the result's rows,
    read a few thousand at a time: without polars, whose import would cost
    more than a small run, and without holding 100 000 flows as Python rows)."""
    lines = [run_header(result), "", " ".join(FLOW_TITLES)]
    lost: list[str] = []
    goodputs: dict[str, list[float]] = {}
    sources = False
    for f in result.rows("flows"):
        lines.append(" ".join(flow_cells(f)))
        if f.get("packets_lost") is not None:
            lost.append(f"{f['name']}[{f['index']}] {f['packets_lost']} of {f['packets_sent']} lost")
        add_goodput(goodputs, f)
        sources = sources or f.get("app") in ("arrivals", "web")
    if lost:
        lines.append("UDP packets: " + "; ".join(lost))
    lines += fairness_lines(goodputs)
    completions = result.columns("transfers").get("completion_s", [])
    if sources:
        done = sorted(c for c in completions if c is not None)
        if done:
            median, p99 = done[len(done) // 2], done[min(len(done) - 1, int(0.99 * len(done)))]
            timing = f"completion time median {median:.3f} s, 99th percentile {p99:.3f} s"
        else:
            timing = "none completed"
        lines.append(f"transfers: {len(done):,} of {len(completions):,} completed; {timing}")
    lines += ["", " ".join(LINK_TITLES)]
    hidden = 0
    for link in result.rows("links"):
        if all_links or link["role"] != "access":
            lines.append(" ".join(link_cells(link)))
        else:
            hidden += 1
    if hidden:
        lines.append(f"({hidden} access links not shown; --all-links or --json lists them)")
    return "\n".join(line.rstrip() for line in lines)


def add_goodput(goodputs: dict[str, list[float]], flow: dict[str, Any]) -> None:
    """Adds a long-lived flow's goodput to its group's, for :func:`fairness_lines`."""
    if flow.get("app") in (None, "bulk") and flow.get("goodput_bps") is not None:
        goodputs.setdefault(flow["name"], []).append(flow["goodput_bps"])


def fairness_lines(goodputs: dict[str, list[float]]) -> list[str]:
    """A line per flow group of several long-lived flows (their goodputs by
    group name): how equally they shared, as Jain's index of their goodputs
    (1 when equal), so that two identical flows at unequal rates read as what they are."""
    lines = []
    for name, group in goodputs.items():
        total, squares = sum(group), sum(g * g for g in group)
        if len(group) < 2 or squares == 0:
            continue
        jain = total * total / (len(group) * squares)
        lines.append(
            f"{name}: {len(group)} flows, Jain's fairness index {jain:.2f} (1 = equal shares; "
            "flows that start apart take many round trips to converge)"
        )
    return lines


def _write_run(out: Path, result: Result, text: str, name: str) -> None:
    """`cclab run --out DIR`: the summary, the resolved scenario and Parquet tables."""
    _ensure_writable(out, "--out")
    # The trace goes to its own table and pcap files, not into summary.json.
    with (out / "summary.json").open("w") as summary:
        result.write_json(summary, trace=False)
    # Resolved without a second build: the run has just built it.
    (out / "config.json").write_text(_core.parse_toml(text, name))
    result.flows.write_parquet(out / "flows.parquet")
    result.links.write_parquet(out / "links.parquet")
    result.transfers.write_parquet(out / "transfers.parquet")
    if "series" in result.header:
        result.timeseries.write_parquet(out / "timeseries.parquet")
        result.queues.write_parquet(out / "queues.parquet")
        result.metrics.write_parquet(out / "metrics.parquet")
    if result.header.get("trace"):
        result.trace.write_parquet(out / "trace.parquet")
        try:
            result.write_pcaps(out)
        except (OSError, ValueError) as e:
            _fail(f"--out {out}: cannot write the pcap files ({e})")


def _ensure_writable(out: Path, argument: str) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".cclab-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        _fail(f"{argument} {out}: not writable ({e.strerror or e})")


def cmd_run(args: argparse.Namespace) -> int:
    text, name = _read_scenario(args.file)
    try:
        result = _run(args.file, text, name, args.seed, args.memory_limit, allow_long=args.allow_long)
    except _core.RunCancelled as e:
        written = "; nothing written" if args.out is not None else ""
        print(f"cclab: interrupted: {e.args[0]}{written}", file=sys.stderr)
        return EXIT_INTERRUPTED
    for warning in result.warnings:
        print(f"cclab: warning: {warning}", file=sys.stderr)
    if args.out is not None:
        _write_run(Path(args.out), result, text, name)
    if args.json:
        result.write_json(sys.stdout)
        print()
    else:
        print(format_summary(result, all_links=args.all_links))
        if args.out is not None and result.header.get("trace"):
            trace = result.header["trace"]
            print(f"trace: {len(trace['time_ns'])} packet events in {Path(args.out) / 'trace.parquet'}")
            for c in trace["captures"]:
                print(f"pcap: {Path(args.out) / c['file']} ({len(c['rows'])} packets, at {c['point']})")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from cclab.sweep import fmt_bytes

    text, name = _read_scenario(args.file)
    try:
        # Each form validates (and so builds) the scenario once. The JSON form is a
        # report in base units; --toml is the form `cclab run` reads back.
        # Refused, like a run, above the memory limit and (unless --allow-long) the run-time limit.
        if args.toml:
            print(_core.resolved_toml(text, name, args.memory_limit, args.allow_long), end="")
            return 0
        resolved = json.loads(_core.validate_toml(text, name, args.memory_limit, args.allow_long))
        cpu_s = json.loads(_core.estimate_run_time(text, name, allow_long=True))["cpu_s"]
        memory = 0 if args.json else json.loads(_core.estimate_memory(text, name))["bytes"]
    except _core.ScenarioError as e:
        _fail(f"{args.file}: {e.args[0]}")
    if args.json:
        print(json.dumps(resolved))
    else:
        instances = sum(f["count"] for f in resolved["flows"])
        print(
            f"{args.file}: ok ({resolved['topology']['kind']}, {len(resolved['flows'])} flow groups, "
            f"{instances} flows, {resolved['run']['duration']:g} s; memory about {fmt_bytes(memory)}, "
            f"CPU about {fmt_cpu(cpu_s)})"
        )
    return 0


#: How `cclab algorithms` groups the registry: role key and how a scenario names it.
ROLES = (
    ("protocol", "protocols: protocol = NAME on a flow group"),
    ("cc", "congestion control: cc = NAME, cc_params = { ... }"),
    ("recovery", "loss recovery: recovery = NAME, recovery_params = { ... }"),
    ("pacing", "pacing: pacing = NAME, pacing_params = { ... }"),
    ("queue", "queue disciplines: queue = NAME, queue_params = { ... } on a link"),
    ("app", "traffic sources: app = { kind = NAME, parameters ... }"),
    ("send_buffer", "send-buffer policies: send_buffer = { policy = NAME, parameters ... } on a TCP flow group"),
)


def _parameter_line(p: dict[str, Any]) -> str:
    facts = [p["type"]]
    if p["unit"]:
        facts.append(p["unit"])
    if p["range"]:
        facts.append(f"range {p['range']}")
    facts.append("required" if p["required"] else "optional" if p["default"] is None else f"default {p['default']}")
    return f"{p['name']} ({'; '.join(facts)}): {p['meaning']}"


def cmd_algorithms(args: argparse.Namespace) -> int:
    algos = json.loads(_core.algorithms())
    if args.json:
        print(json.dumps(algos))
        return 0
    for role, title in ROLES:
        print(title)
        for a in (a for a in algos if a["role"] == role):
            print(f"  {a['name']:<10} {a['summary']}")
            print(f"  {'':<10} source: {a['source']}")
            for p in a["parameters"]:
                print(f"  {'':<10} {_parameter_line(p)}")
            if a.get("metrics"):
                # Recorded under the role's prefix (recovery.pipe); a protocol's are the flow's own.
                prefix = f"{role}." if role in ("cc", "recovery", "pacing", "send_buffer") else ""
                names = ", ".join(f"{prefix}{m['name']} ({m['unit']})" for m in a["metrics"])
                print(f"  {'':<10} metrics: {names}")
        print()
    return 0


def _full_payload(group: dict[str, Any]) -> int:
    if group["tcp"]:
        return int(group["tcp"]["mss"])
    if group.get("udt"):
        return int(group["udt"]["mss"]) - UDT_HEADERS_BYTES
    return int(group["app"]["size"]) - UDP_IP_HEADER_BYTES


class _Variant:
    """One variant of a benchmark: its scenario text and the timings of its runs."""

    def __init__(self, text: str, name: str, resolved: dict[str, Any]) -> None:
        self.text, self.name = text, name
        self.duration: float = resolved["run"]["duration"]
        # Payload bytes of a full data packet: a TCP segment, a UDT packet less its
        # IP, UDP and UDT headers, or a UDP datagram less its headers.
        self.payload = {g["name"]: _full_payload(g) for g in resolved["flows"]}
        self.sim_walls: list[float] = []
        self.call_walls: list[float] = []
        self.cpus: list[float] = []
        self.summary: dict[str, Any] = {}
        self.delivered: list[tuple[str, int]] = []

    def run(self, path: str, seed: int | None, memory_limit: str | None, allow_long: bool) -> None:
        # Process CPU time (user + system) counts the Rust simulation too: it runs in
        # this process (on a worker thread, so that Ctrl-C can stop it), and the main
        # thread only waits, so nothing else in the process is busy.
        cpu, wall = time.process_time(), time.perf_counter()
        # No progress line: it would draw while being timed.
        result = _run(path, self.text, self.name, seed, memory_limit, progress=False, allow_long=allow_long)
        self.call_walls.append(time.perf_counter() - wall)
        self.cpus.append(time.process_time() - cpu)
        self.summary = result.header
        self.delivered = [(f["name"], f["bytes_delivered"]) for f in result.rows("flows")]
        self.sim_walls.append(self.summary["wall_s"])

    @property
    def sim(self) -> float:
        return statistics.median(self.sim_walls)

    @property
    def call(self) -> float:
        return statistics.median(self.call_walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)

    @property
    def segments(self) -> float:
        """Full-sized data segments delivered (the summary is the same in every run)."""
        return sum(delivered / self.payload[name] for name, delivered in self.delivered)

    def per_second(self, count: float) -> float:
        return count / self.sim


def _parse_versus(items: list[str]) -> dict[str, Any]:
    pairs = _key_values(items, "--versus", "KEY=VALUE (e.g. flows[0].recovery=newreno)")
    return {key: _grid_value(value) for key, value in pairs.items()}


def _covers(key: str, path: str) -> bool:
    """Whether an error at key path ``path`` lies under the override ``key`` (``[*]`` matching any index)."""
    pattern = re.escape(key).replace(re.escape("[*]"), r"\[\d+\]")
    return re.fullmatch(f"{pattern}(?:[.\\[].*)?", path) is not None


def _versus_variant(path: str, items: list[str], memory_limit: str | None) -> _Variant:
    from cclab.scenario import ScenarioError, load

    overrides = _parse_versus(items)
    try:
        base = load(path, memory_limit)
    except ScenarioError as e:
        _fail(e.args[0])
    try:
        # All at once: overrides that are only valid together (duration and warmup) must be.
        variant = base.with_(**overrides)
        resolved = variant.validate()
    except ScenarioError as e:
        message, where = e.args
        named = [item for item, key in zip(items, overrides, strict=True) if _covers(key, where)]
        _fail(f"--versus {', '.join(named or items)}: {message}")
    return _Variant(variant.to_toml(), variant.name, resolved)


def _load_line(when: str, explain: bool) -> str:
    try:
        load = f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):  # not every platform has a load average
        load = "unknown"
    note = f" (1-minute load average; {os.cpu_count()} cores)" if explain else ""
    return f"{'load ' + when:<17} {load}{note}"


def cmd_bench(args: argparse.Namespace) -> int:
    """Runs a scenario several times (or it and a variant, interleaved) and prints
    times and rates; never asserts a time."""
    text, name = _read_scenario(args.file)
    try:
        base = _Variant(text, name, json.loads(_core.validate_toml(text, name, args.memory_limit)))
    except _core.ScenarioError as e:
        _fail(f"{args.file}: {e.args[0]}")
    other = _versus_variant(args.file, args.versus, args.memory_limit) if args.versus else None
    variants = [base] if other is None else [base, other]

    if other is None:
        print(f"{'scenario':<17} {name} ({base.duration:g} s simulated, {args.repeat} runs)")
    else:
        print(f"{'scenario':<17} {name}, {args.repeat} runs of each variant, interleaved A, B, B, A, A, B, ...")
        print(f"{'A':<17} {args.file} as written")
        print(f"{'B':<17} {' '.join(args.versus)}")
    print(f"{'machine':<17} {machine_line()}")
    print(_load_line("at start", explain=True), flush=True)
    if other is not None:
        print()
    # Interleaved A B B A A B ..., so that a change in the machine's load hits both
    # variants alike and neither always runs first.
    for i in range(args.repeat):
        for v in variants if i % 2 == 0 else variants[::-1]:
            v.run(args.file, args.seed, args.memory_limit, args.allow_long)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if other is None:
        _print_bench(base)
        print(f"{'peak memory':<17} {peak_mb:.1f} MB (whole process, ru_maxrss)")
    else:
        _print_versus(base, other)
        print(f"{'peak memory':<17} {peak_mb:.1f} MB (whole process, both variants, ru_maxrss)")
    print(_load_line("at end", explain=False))
    return 0


def _print_bench(v: _Variant) -> None:
    s = v.summary
    rows = [
        ("simulation wall", f"median {v.sim:.4f} s, best {min(v.sim_walls):.4f} s (build + run, in Rust)"),
        ("call wall", f"median {v.call:.4f} s (including the tables to Python)"),
        ("CPU (user+sys)", f"median {v.cpu:.4f} s, {v.cpu / v.call:.0%} of call wall (less: waited for a core)"),
        ("events", f"{s['events']:,} ({v.per_second(s['events']) / 1e6:.2f} M/s)"),
        ("packet hops", f"{s['packet_hops']:,} ({v.per_second(s['packet_hops']) / 1e6:.2f} M/s)"),
        (
            "data delivered",
            f"{sum(delivered for _, delivered in v.delivered) / 1e6:.1f} MB, {v.segments:,.0f} full segments "
            f"({v.per_second(v.segments) / 1e6:.2f} M/s)",
        ),
        ("speed", f"{s['sim_time_s'] / v.sim:,.0f}x real time"),
    ]
    for label, value in rows:
        print(f"{label:<17} {value}")


def _print_versus(a: _Variant, b: _Variant) -> None:
    def mega(x: float) -> str:
        return f"{x / 1e6:.2f} M/s"

    def ratio(x: float, y: float) -> str:
        return f"{x / y:.3f}" if y else "-"

    rows = [
        ("median per run", "A", "B", "A/B"),
        ("simulated", f"{a.duration:g} s", f"{b.duration:g} s", ""),
        ("simulation wall", f"{a.sim:.4f} s", f"{b.sim:.4f} s", ratio(a.sim, b.sim)),
        ("  best", f"{min(a.sim_walls):.4f} s", f"{min(b.sim_walls):.4f} s", ""),
        ("call wall", f"{a.call:.4f} s", f"{b.call:.4f} s", ratio(a.call, b.call)),
        ("CPU (user+sys)", f"{a.cpu:.4f} s", f"{b.cpu:.4f} s", ratio(a.cpu, b.cpu)),
        ("CPU / call wall", f"{a.cpu / a.call:.0%}", f"{b.cpu / b.call:.0%}", ""),
        ("events", f"{a.summary['events']:,}", f"{b.summary['events']:,}", ""),
        ("events/s", mega(a.per_second(a.summary["events"])), mega(b.per_second(b.summary["events"])),
         ratio(a.per_second(a.summary["events"]), b.per_second(b.summary["events"]))),
        ("packet hops/s", mega(a.per_second(a.summary["packet_hops"])),
         mega(b.per_second(b.summary["packet_hops"])), ""),
        ("segments/s", mega(a.per_second(a.segments)), mega(b.per_second(b.segments)), ""),
        ("speed", f"{a.summary['sim_time_s'] / a.sim:,.0f}x", f"{b.summary['sim_time_s'] / b.sim:,.0f}x", ""),
    ]  # fmt: skip
    for label, x, y, r in rows:
        print(f"{label:<17} {x:>14} {y:>14} {r:>7}".rstrip())
    print("(simulation wall: build + run, measured in Rust; A/B above 1: B takes less time, "
          "or A processes more events/s)")  # fmt: skip


def _grid_value(text: str) -> Any:
    """A grid value: a TOML literal (number, boolean, quoted string) or else a bare string."""
    from cclab.scenario import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _key_values(items: list[str], option: str, form: str) -> dict[str, str]:
    """`KEY=VALUE` arguments of a repeatable option, each key at most once."""
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            _fail(f"{option} {item!r}: write {form}")
        if key in pairs:
            _fail(f"{option} {key}: given twice")
        pairs[key] = value.strip()
    return pairs


def _parse_grid(items: list[str]) -> dict[str, list[Any]]:
    pairs = _key_values(items, "--grid", "KEY=V1,V2,... (e.g. topology.bottleneck.rate=5Mbps,10Mbps)")
    return {key: [_grid_value(v.strip()) for v in values.split(",")] for key, values in pairs.items()}


def _sweep_errors() -> tuple[type[BaseException], ...]:
    from cclab.executors import ExecutorError
    from cclab.sweep import SweepError

    return (SweepError, ExecutorError)


def cmd_sweep(args: argparse.Namespace) -> int:
    from cclab.scenario import ScenarioError, load
    from cclab.sweep import IdenticalReplicationsWarning, SweepInterrupted, sweep

    grid = _parse_grid(args.grid)
    try:
        scenario = load(args.file, args.memory_limit)
        if args.out is not None:
            _ensure_writable(Path(args.out), "--out")
        with warnings.catch_warnings():
            # The sweep's notes are printed once below, as a line of the output.
            warnings.simplefilter("ignore", IdenticalReplicationsWarning)
            result = sweep(scenario, grid=grid, replications=args.replications, jobs=args.jobs,
                           executor=args.executor, out=args.out, base_seed=args.seed,
                           memory_limit=args.memory_limit)  # fmt: skip
    except ScenarioError as e:
        _fail(f"{args.file}: {e.args[0]}" if not e.args[0].startswith(args.file) else e.args[0])
    except _sweep_errors() as e:
        # The Python API's argument names, as the command line spells them.
        message = str(e).replace("base_seed (--seed)", "--seed").replace("jobs (--jobs)", "--jobs")
        _fail(message.replace("memory_limit= (--memory-limit)", "--memory-limit"))
    except SweepInterrupted as e:
        print(f"cclab: {e}", file=sys.stderr)
        return EXIT_INTERRUPTED
    table = result.aggregate(metrics=["goodput_bps", "retransmits", "timeouts", "rtt_mean_s"])
    if args.json:
        print(table.write_json())
        for note in result.notes:  # stdout stays one JSON document
            print(f"cclab: note: {note}", file=sys.stderr)
        return 0
    print(format_sweep(table, list(grid)))
    for note in result.notes:
        print(f"note: {note}")
    if args.out is not None:
        print(f"results: {args.out} (flows.parquet, links.parquet, transfers.parquet, summary.csv, runs/)")
    return 0


def format_sweep(table: Any, grid: list[str]) -> str:
    """The aggregated sweep as a text table: mean and 95 % interval across replications."""
    rows = sweep_rows(table, grid)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def sweep_rows(table: Any, grid: list[str]) -> list[list[str]]:
    """The cells of :func:`format_sweep`'s table, its header first."""

    def mean(r: dict[str, Any], metric: str, fmt: str, scale: float = 1.0) -> str:
        value = r.get(f"{metric}_mean")
        return "-" if value is None else format(value * scale, fmt)

    rows = [[*grid, "flow", "n", "goodput Mb/s", "95% CI", "retx", "RTOs", "rtt ms"]]
    for r in table.iter_rows(named=True):
        ci = r["goodput_bps_ci95"]
        rows.append([
            *(str(r[k]) for k in grid),
            f"{r['name']}[{r['index']}]",
            str(r["n"]),
            f"{r['goodput_bps_mean'] / 1e6:.3f}",
            "-" if ci is None or ci != ci else f"± {ci / 1e6:.3f}",
            mean(r, "retransmits", ".1f"),
            mean(r, "timeouts", ".1f"),
            mean(r, "rtt_mean_s", ".2f", 1e3),
        ])  # fmt: skip
    return rows


def cmd_plot(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from cclab import plot

    folder = Path(args.dir)
    if not folder.is_dir():
        _fail(f"{args.dir}: not a directory of results")
    if args.kind == "sweep":
        figures = _sweep_figures(folder, args)
    else:
        summary_path = folder / "summary.json"
        if not summary_path.is_file():
            _fail(f"{args.dir}: no summary.json here (write one with `cclab run FILE --out DIR`)")
        from cclab.result import Result

        result = Result(summary=json.loads(summary_path.read_text()), config={}, seed=0)
        figures = [(folder, _run_figure(folder, result, args))]
    for where, fig in figures:
        stem = Path(args.output) if args.output else where / f"plot-{args.kind}"
        try:
            written = plot.save(fig, stem)
        except OSError as e:
            option = f"--output {args.output}" if args.output else f"{where}: cannot write plot-{args.kind}.png"
            hint = "" if args.output else "; choose another place with --output PATH"
            _fail(f"{option}: not writable ({e.strerror or e}){hint}")
        for path in written:
            print(path)
    return 0


def _run_figure(folder: Path, result: Any, args: argparse.Namespace) -> Any:
    """The figure of one run directory (`cclab run --out`)."""
    from cclab import plot

    trace = folder / "trace.parquet"
    if args.kind in ("tseq", "panels"):
        if trace.is_file():
            import polars as pl

            # summary.json leaves the trace out; the Result reads it from its table.
            result._cache["trace"] = pl.read_parquet(trace)
        elif args.kind == "tseq":
            _fail(f"{args.dir}: no trace.parquet here (record one with a [[trace]] section in the scenario, "
                  "see docs/scenario.md, and `cclab run FILE --out DIR`)")  # fmt: skip
        window = {"start": getattr(args, "from"), "end": args.to}
        draw = plot.time_sequence if args.kind == "tseq" else plot.panels
        try:
            return draw(result, args.flow, **window)
        except plot.PlotError as e:
            option = {"flow": "--flow", "end": "--to"}.get(e.option, e.option)
            if e.detail.startswith(":"):  # not about an argument: about what the directory holds
                _fail(f"{args.dir}{e.detail}")
            _fail(f"{option}{e.detail}")
    draw = {"goodput": plot.goodput, "cwnd": plot.cwnd, "seq": plot.sequence, "queue": plot.queue,
            "delay": plot.delay}  # fmt: skip
    try:
        return draw[args.kind](result)
    except ValueError as e:
        _fail(f"{args.dir}: {e}")


def _sweep_figures(folder: Path, args: argparse.Namespace) -> list[tuple[Path, Any]]:
    """A figure per sweep in ``folder`` (one for a sweep directory; one per sweep of
    a `reproduce` directory), each with the directory it belongs in."""
    from cclab.sweepdir import SweepDirError, find_sweeps, read_sweep

    sweeps = find_sweeps(folder)
    if not sweeps:
        _fail(f"{args.dir}: no sweep here (write one with `cclab sweep FILE --out DIR`, "
              "`cclab.sweep(..., out=DIR)` or `cclab reproduce STUDY --out DIR`)")  # fmt: skip
    results = []
    for where in sweeps:
        try:
            result = read_sweep(where)
        except SweepDirError as e:
            _fail(str(e))
        for note in result.notes:
            print(f"cclab: note: {note}", file=sys.stderr)
        results.append((where, result))
    if args.x is not None and len(results) > 1:
        # A study's sweeps can vary different keys: plot those that vary --x.
        having = [(w, r) for w, r in results if args.x in r.grid]
        if not having:
            keys = sorted({k for _, r in results for k in r.grid})
            _fail(f"--x {args.x}: not a grid key of any sweep here (grid keys: {', '.join(keys)})")
        results = having
    if args.output and len(results) > 1:
        names = ", ".join(str(w.relative_to(folder)) for w, _ in results)
        _fail(f"--output: {args.dir} holds {len(results)} sweeps ({names}); plot one directory at a time")
    return [(where, _sweep_figure(where, result, args)) for where, result in results]


def _sweep_figure(where: Path, result: Any, args: argparse.Namespace) -> Any:
    from cclab import plot

    if not result.grid:
        _fail(f"{where}: this sweep has no grid keys to plot against")
    x = args.x or result.grid[0]
    if x not in result.grid:
        _fail(f"--x {x}: not a grid key of this sweep (grid keys: {', '.join(result.grid)})")
    by = args.by if args.by is not None else next((k for k in result.grid if k != x), None)
    try:
        return plot.sweep(result, x, args.metric, by=by, link=args.link, role=args.role, per_run=args.per_run)
    except plot.PlotError as e:
        _fail(f"--{e.option.replace('_', '-')}{e.detail}")


def cmd_reproduce(args: argparse.Namespace) -> int:
    from cclab.scenario import ScenarioError
    from cclab.studies import StudyOptions, UnknownStudyError, get_study, reproduce
    from cclab.sweep import SweepInterrupted

    try:
        get_study(args.study)
    except UnknownStudyError as e:
        _fail(str(e))
    out = Path(args.out or Path("out") / args.study)
    _ensure_writable(out, "--out")
    import matplotlib

    matplotlib.use("Agg")
    options = StudyOptions(out=out, replications=args.replications, quick=args.quick, jobs=args.jobs,
                           executor=args.executor, from_cache=args.from_cache)  # fmt: skip
    try:
        ctx = reproduce(args.study, options)
    except _sweep_errors() as e:
        _fail(str(e))
    except ScenarioError as e:
        _fail(e.args[0])
    except SweepInterrupted as e:
        print(f"cclab: {e}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"{args.study}: {ctx.replications} replications; report {out / 'report.md'}, "
          f"{len(ctx.written)} files written")  # fmt: skip
    return 0


class ArgumentParser(argparse.ArgumentParser):
    """Reports a bad argument as every other cclab error: one line on stderr and
    status 2, where argparse would print the usage block first. Subcommands'
    parsers are of the same class (argparse makes them like their parent)."""

    def error(self, message: str) -> NoReturn:
        print(f"cclab: error: {message}; see {self.prog} --help", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="cclab", description="A congestion-control laboratory.")
    parser.add_argument(
        "--version", action="version", version=f"cclab {_core.__version__} (build {_core.build_id()[:12]})"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="run one scenario file")
    run.add_argument("file", help="scenario TOML file")
    run.add_argument("--seed", type=_seed, help="override run.seed")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    run.add_argument("--all-links", action="store_true", help="also list access links")
    run.add_argument("--out", metavar="DIR", help="also write Parquet tables, the summary and the resolved scenario")
    _add_memory_limit(run)
    _add_allow_long(run)
    run.set_defaults(func=cmd_run)

    sweep = sub.add_parser("sweep", help="run a scenario over a grid of values, with replications")
    sweep.add_argument("file", help="scenario TOML file")
    sweep.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="a key path and its values, e.g. topology.bottleneck.rate=5Mbps,10Mbps (repeatable)",
    )
    sweep.add_argument("--replications", type=_positive, default=1, help="runs per grid point (default 1)")
    sweep.add_argument("--jobs", type=_positive, help="parallel runs (default: all cores)")
    sweep.add_argument("--out", metavar="DIR", help="write results there; finished runs are reused")
    sweep.add_argument("--executor", help="local (default), dask (a local Dask cluster) or tcp://HOST:PORT")
    sweep.add_argument("--seed", type=_seed, help="base seed (default: run.seed; or sweep run.seed with --grid)")
    sweep.add_argument("--json", action="store_true", help="print the aggregated table as JSON")
    _add_memory_limit(sweep)
    sweep.set_defaults(func=cmd_sweep)

    plot = sub.add_parser("plot", help="plot results written by `run --out`, `sweep --out` or `reproduce`")
    plot.add_argument("dir", help="a run or sweep output directory, or a `reproduce` directory (every sweep in it)")
    plot.add_argument(
        "--kind", required=True, choices=["goodput", "cwnd", "seq", "queue", "delay", "tseq", "panels", "sweep"]
    )
    plot.add_argument("--x", help="sweep: the grid key on the x axis (default: the first)")
    plot.add_argument(
        "--y", "--metric", dest="metric", default="goodput_bps", help="sweep: the flow or link column to plot"
    )
    plot.add_argument("--by", help="sweep: one line per value of this column (default: another grid key)")
    plot.add_argument(
        "--per-run",
        choices=["flow", "sum", "mean"],
        default="flow",
        help="sweep: each flow its own series (default), or a run's flows (or chosen links) summed or averaged",
    )
    plot.add_argument("--link", metavar="NAME", help="sweep, link metric: this link (e.g. left->right)")
    plot.add_argument(
        "--role",
        help="sweep, link metric: the links with this role (default: bottleneck; access, bottleneck.reverse, link)",
    )
    plot.add_argument("--flow", metavar="NAME", help="tseq, panels: the flow, e.g. bulk[0] (default: the only one)")
    plot.add_argument("--from", type=_seconds, metavar="T", help="tseq, panels: start of the time axis (s)")
    plot.add_argument("--to", type=_seconds, metavar="T", help="tseq, panels: end of the time axis (s)")
    plot.add_argument("--output", metavar="PATH", help="file stem for the PNG and SVG (default: DIR/plot-KIND)")
    plot.set_defaults(func=cmd_plot)

    reproduce = sub.add_parser("reproduce", help="reproduce a seed paper's experiments (report, tables, figures)")
    reproduce.add_argument("study", help="study name (e.g. recovery)")
    reproduce.add_argument("--replications", type=_positive, help="replications per point (default: the study's)")
    reproduce.add_argument("--quick", action="store_true", help="a reduced preset that finishes in minutes")
    reproduce.add_argument("--jobs", type=_positive, help="parallel runs (default: all cores)")
    reproduce.add_argument("--executor", help="local (default), dask or tcp://HOST:PORT")
    reproduce.add_argument("--out", metavar="DIR", help="output directory (default: out/STUDY)")
    reproduce.add_argument(
        "--from-cache",
        action="store_true",
        help="write the report, tables and figures again from the runs under DIR/cache, whichever simulator "
        "build made them; run nothing (a missing run is an error)",
    )
    reproduce.set_defaults(func=cmd_reproduce)

    validate = sub.add_parser("validate", help="check a scenario file without running it")
    validate.add_argument("file", help="scenario TOML file")
    form = validate.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the resolved scenario as JSON (base units)")
    form.add_argument(
        "--toml", action="store_true", help="print the resolved scenario as a scenario file `cclab run` accepts"
    )
    _add_memory_limit(validate)
    _add_allow_long(validate)
    validate.set_defaults(func=cmd_validate)

    algorithms = sub.add_parser("algorithms", help="list the algorithms, their parameters and sources")
    algorithms.add_argument("--json", action="store_true")
    algorithms.set_defaults(func=cmd_algorithms)

    bench = sub.add_parser("bench", help="time a scenario (or two variants): wall, CPU, events/s, memory")
    bench.add_argument("file", help="scenario TOML file")
    bench.add_argument("--repeat", type=_positive, default=5, help="runs to time, of each variant (default 5)")
    bench.add_argument("--seed", type=_seed, help="override run.seed")
    bench.add_argument(
        "--versus",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="also time a variant with this key path set (repeatable), interleaved run by run",
    )
    _add_memory_limit(bench)
    _add_allow_long(bench)
    bench.set_defaults(func=cmd_bench)

    from cclab.realnet import add_emulate_parser, add_transfer_parsers

    add_emulate_parser(sub)
    add_transfer_parsers(sub)
    return parser


def _add_memory_limit(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--memory-limit",
        type=_memory_limit,
        metavar="SIZE",
        help="refuse a scenario estimated to need more memory (e.g. 16GB, or unlimited; "
        "default: CCLAB_MEMORY_LIMIT, else 4GB)",
    )


def _add_allow_long(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--allow-long",
        action="store_true",
        help="run a scenario estimated to need more than an hour of CPU (refused without it)",
    )


def fmt_cpu(seconds: float) -> str:
    """CPU time as `cclab validate` prints it: "0.2 s", "12 min", "1.6 h", "11.6 days"."""
    for unit, scale in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"


def _check_memory_limit_env() -> None:
    """A bad CCLAB_MEMORY_LIMIT is reported once, by name, before any file is read."""
    try:
        _core.memory_limit_bytes(None)
    except _core.ScenarioError as e:
        _fail(e.args[0])


def main(argv: list[str] | None = None) -> int:
    from cclab.interrupt import exit_on_second_interrupt

    parser = build_parser()
    args = parser.parse_args(argv)
    # The first Ctrl-C stops the runs and lets the command report; the second
    # must not wait for anything (a Dask worker that cannot be interrupted).
    exit_on_second_interrupt()
    try:
        if getattr(args, "memory_limit", "") is None:
            _check_memory_limit_env()
        code: int = args.func(args)
        return code
    except UsageError as e:
        print(f"cclab: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("cclab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError:
        print(
            "cclab: error: out of memory although the scenario's estimate was within the memory limit; "
            "set --memory-limit or CCLAB_MEMORY_LIMIT to what this machine has",
            file=sys.stderr,
        )
        return 1
    except BaseException as e:
        # A panic in the simulator is a bug: one line, not a traceback (pyo3 raises
        # PanicException, a BaseException, for it).
        if type(e).__name__ != "PanicException":
            raise
        first = str(e).splitlines()[0] if str(e) else "a panic"
        print(f"cclab: internal error (a bug in the simulator, please report it): {first}", file=sys.stderr)
        return 70


if __name__ == "__main__":
    raise SystemExit(main())
