"""The ``cclab`` command.

Every failure the user can cause (a missing file, bad TOML, an unknown key, a
bad argument) is reported as one line on stderr naming the file, key path or
argument, and exits with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from cclab import _core

EXIT_USAGE = 2


class UsageError(Exception):
    """A problem with the user's input, reported without a traceback."""


def _fail(message: str) -> NoReturn:
    raise UsageError(message)


def _read_scenario(path: str) -> tuple[str, str]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        _fail(f"{path}: no such file")
    except IsADirectoryError:
        _fail(f"{path}: is a directory, not a scenario file")
    except PermissionError:
        _fail(f"{path}: permission denied")
    except UnicodeDecodeError:
        _fail(f"{path}: not UTF-8 text")
    except OSError as e:
        _fail(f"{path}: {e.strerror or e}")
    return text, p.stem


def _run(path: str, seed: int | None) -> dict[str, Any]:
    text, name = _read_scenario(path)
    try:
        summary: dict[str, Any] = json.loads(_core.run_toml(text, name, seed))
    except _core.ScenarioError as e:
        _fail(f"{path}: {e.args[0]}")
    return summary


def _seed(value: str) -> int:
    try:
        seed = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed: {value!r} is not a whole number") from None
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"--seed: {seed} is outside [0, 2^64)")
    return seed


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} must be at least 1")
    return n


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:9.3f}"


def _ms(seconds: float | None) -> str:
    return "      -" if seconds is None else f"{seconds * 1e3:7.2f}"


def format_summary(summary: dict[str, Any], all_links: bool = False) -> str:
    """The human-readable table `cclab run` prints."""
    lines = [
        f"scenario {summary['scenario']}  seed {summary['seed']}  "
        f"simulated {summary['sim_time_s']:g} s (statistics over {summary['warmup_s']:g}-"
        f"{summary['sim_time_s']:g} s)  wall {summary['wall_s']:.3f} s  "
        f"events {summary['events']:,}",
        "",
        f"{'flow':<16} {'dir':<4} {'cc/recovery':<14} {'goodput Mb/s':>12} {'thruput Mb/s':>12} "
        f"{'retx':>6} {'RTOs':>5} {'rtt ms':>7} {'done s':>7}",
    ]
    for f in summary["flows"]:
        done = "      -" if f["completion_s"] is None else f"{f['completion_s']:7.3f}"
        lines.append(
            f"{f['name'] + '[' + str(f['index']) + ']':<16} {f['direction'][:3]:<4} "
            f"{f['cc'] + '/' + f['recovery']:<14} {_mbps(f['goodput_bps']):>12} "
            f"{_mbps(f['throughput_bps']):>12} {f['retransmits']:>6} {f['timeouts']:>5} "
            f"{_ms(f['rtt_mean_s'])} {done}"
        )
    lines += [
        "",
        f"{'link':<24} {'role':<19} {'util':>7} {'drops':>7} {'losses':>7} {'queue mean/max pkts':>20}",
    ]
    hidden = 0
    for link in summary["links"]:
        if link["role"] == "access" and not all_links:
            hidden += 1
            continue
        lines.append(
            f"{link['name']:<24} {link['role']:<19} {link['utilization'] * 100:6.2f}% "
            f"{link['drops']:>7} {link['losses']:>7} "
            f"{link['queue_mean_pkts']:>11.1f} / {link['queue_max_pkts']:<6}"
        )
    if hidden:
        lines.append(f"({hidden} access links not shown; --all-links or --json lists them)")
    return "\n".join(lines)


def cmd_run(args: argparse.Namespace) -> int:
    summary = _run(args.file, args.seed)
    if args.json:
        print(json.dumps(summary))
    else:
        print(format_summary(summary, all_links=args.all_links))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    text, name = _read_scenario(args.file)
    try:
        resolved = json.loads(_core.validate_toml(text, name))
    except _core.ScenarioError as e:
        _fail(f"{args.file}: {e.args[0]}")
    if args.json:
        print(json.dumps(resolved))
    else:
        instances = sum(f["count"] for f in resolved["flows"])
        print(
            f"{args.file}: ok ({resolved['topology']['kind']}, {len(resolved['flows'])} flow groups, "
            f"{instances} flows, {resolved['run']['duration']:g} s)"
        )
    return 0


def cmd_algorithms(args: argparse.Namespace) -> int:
    algos = json.loads(_core.algorithms())
    if args.json:
        print(json.dumps(algos))
        return 0
    for role, title in (
        ("cc", "congestion control (cc = ...)"),
        ("recovery", "loss recovery (recovery = ...)"),
    ):
        print(title)
        for a in (a for a in algos if a["role"] == role):
            print(f"  {a['name']:<10} {a['summary']}")
            print(f"  {'':<10} source: {a['source']}")
            for p in a["parameters"]:
                print(f"  {'':<10} {p['name']} = {p['default']}: {p['meaning']}")
        print()
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Runs a scenario several times and prints rates (never asserts a time)."""
    text, name = _read_scenario(args.file)
    call_walls: list[float] = []
    sim_walls: list[float] = []
    summary: dict[str, Any] = {}
    for _ in range(args.repeat):
        start = time.perf_counter()
        try:
            summary = json.loads(_core.run_toml(text, name, args.seed))
        except _core.ScenarioError as e:
            _fail(f"{args.file}: {e.args[0]}")
        call_walls.append(time.perf_counter() - start)
        sim_walls.append(summary["wall_s"])
    sim = statistics.median(sim_walls)
    call = statistics.median(call_walls)
    resolved = json.loads(_core.validate_toml(text, name))
    mss = {g["name"]: g["tcp"]["mss"] for g in resolved["flows"]}
    delivered = sum(f["bytes_delivered"] for f in summary["flows"])
    packets = sum(f["bytes_delivered"] / mss[f["name"]] for f in summary["flows"])
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = [
        ("scenario", f"{summary['scenario']} ({summary['sim_time_s']:g} s simulated, {args.repeat} runs)"),
        ("simulation wall", f"median {sim:.4f} s, best {min(sim_walls):.4f} s (build + run, in Rust)"),
        ("call wall", f"median {call:.4f} s (including JSON to Python)"),
        ("events", f"{summary['events']:,} ({summary['events'] / sim / 1e6:.2f} M/s)"),
        ("packet hops", f"{summary['packet_hops']:,} ({summary['packet_hops'] / sim / 1e6:.2f} M/s)"),
        (
            "data delivered",
            f"{delivered / 1e6:.1f} MB, {packets:,.0f} full segments ({packets / sim / 1e6:.2f} M/s)",
        ),
        ("speed", f"{summary['sim_time_s'] / sim:,.0f}x real time"),
        ("peak memory", f"{peak_mb:.1f} MB (whole process, ru_maxrss)"),
    ]
    for label, value in rows:
        print(f"{label:<17} {value}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cclab", description="A congestion-control laboratory.")
    parser.add_argument("--version", action="version", version=f"cclab {_core.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="run one scenario file")
    run.add_argument("file", help="scenario TOML file")
    run.add_argument("--seed", type=_seed, help="override run.seed")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    run.add_argument("--all-links", action="store_true", help="also list access links")
    run.set_defaults(func=cmd_run)

    validate = sub.add_parser("validate", help="check a scenario file without running it")
    validate.add_argument("file", help="scenario TOML file")
    validate.add_argument("--json", action="store_true", help="print the resolved scenario as JSON")
    validate.set_defaults(func=cmd_validate)

    algorithms = sub.add_parser("algorithms", help="list the algorithms, their parameters and sources")
    algorithms.add_argument("--json", action="store_true")
    algorithms.set_defaults(func=cmd_algorithms)

    bench = sub.add_parser("bench", help="time a scenario: wall time, events/s, packet hops/s, memory")
    bench.add_argument("file", help="scenario TOML file")
    bench.add_argument("--repeat", type=_positive, default=5, help="runs to time (default 5)")
    bench.add_argument("--seed", type=_seed, help="override run.seed")
    bench.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except UsageError as e:
        print(f"cclab: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("cclab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
