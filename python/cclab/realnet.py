"""Real-network commands: ``cclab emulate``, a user-space link emulator for UDP.

It stands where netem and a token-bucket shaper would on a router between two
hosts, for machines (like CI's) where those need privileges that are not there:
clients send to ``--listen``, the emulator relays to ``--forward`` and relays the
replies back, each direction through a path with a rate, a DropTail queue, a
propagation delay and Bernoulli loss (``cclab_net::emulator`` says exactly how).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from cclab import _core


def add_emulate_parser(sub: Any) -> None:
    emulate = sub.add_parser(
        "emulate",
        help="relay UDP through an emulated link (rate, DropTail queue, delay, loss per direction)",
        description="Relays UDP datagrams from clients at --listen to --forward and the replies back, "
        "each direction through an emulated link. The --reverse-* options set the server-to-client "
        "direction; each defaults to its forward setting. Runs until Ctrl-C or --duration, "
        "printing what it relayed and dropped once per --interval and at the end.",
    )
    emulate.add_argument("--listen", required=True, metavar="ADDR:PORT", help="where clients send")
    emulate.add_argument("--forward", required=True, metavar="ADDR:PORT", help="the server datagrams go to")
    for prefix, side in (("", "client to server"), ("reverse-", "server to client")):
        option = emulate.add_argument
        option(f"--{prefix}rate", metavar="RATE", help=f"{side}: link rate, e.g. 100Mbps (default: unlimited)")
        option(f"--{prefix}delay", metavar="TIME", help=f"{side}: one-way propagation delay, e.g. 10ms")
        option(f"--{prefix}loss", type=float, metavar="P", help=f"{side}: loss probability in [0, 1)")
        option(f"--{prefix}queue", metavar="SIZE", help=f"{side}: DropTail limit, 300KB or 100p (default: unlimited)")
    emulate.add_argument("--seed", type=int, default=1, help="seed of the loss draws (default 1)")
    emulate.add_argument("--duration", type=float, metavar="S", help="stop after S seconds (default: at Ctrl-C)")
    emulate.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between reports (default 1)")
    emulate.add_argument("--json", action="store_true", help="print each report as a JSON line")
    emulate.set_defaults(func=cmd_emulate)


def _fail(message: str) -> None:
    from cclab.cli import UsageError

    raise UsageError(message)


def describe(direction: dict[str, Any]) -> str:
    """One direction's counts in a line: what was relayed, and what was dropped and why."""
    return (
        f"{direction['delivered']}/{direction['offered']} relayed, "
        f"{direction['dropped_queue_full']} dropped (queue full), {direction['lost']} lost (random loss), "
        f"{direction['send_errors']} send errors, mean queueing {direction['mean_queueing_s'] * 1e3:.3f} ms"
    )


def _report(stats: dict[str, Any], elapsed: float, as_json: bool, final: bool) -> None:
    if as_json:
        print(json.dumps({"elapsed_s": round(elapsed, 3), "final": final, **stats}), flush=True)
        return
    label = "total" if final else f"{elapsed:7.1f} s"
    print(f"{label}: clients {stats['clients']}; forward {describe(stats['forward'])}; "
          f"reverse {describe(stats['reverse'])}", flush=True)  # fmt: skip
    if final and stats["refused_client_datagrams"]:
        print(f"refused {stats['refused_client_datagrams']} datagrams from clients beyond the limit", flush=True)


def cmd_emulate(args: argparse.Namespace) -> int:
    if args.duration is not None and not args.duration > 0:
        _fail(f"--duration: {args.duration:g} is not a positive number of seconds")
    if not args.interval > 0:
        _fail(f"--interval: {args.interval:g} is not a positive number of seconds")
    settings = {k: getattr(args, k) for k in ("rate", "delay", "loss", "queue")}
    reverse = {f"reverse_{k}": getattr(args, f"reverse_{k}") for k in ("rate", "delay", "loss", "queue")}
    try:
        emulator = _core.Emulator(args.listen, args.forward, **settings, **reverse, seed=args.seed)
    except ValueError as e:
        _fail(str(e))
    except OSError as e:
        _fail(str(e))
    # On stderr, so --json's stdout stays JSON lines; it names the port when --listen asked for port 0.
    print(f"emulating {emulator.local_addr()} -> {args.forward}", file=sys.stderr, flush=True)
    start = time.monotonic()
    next_report = start + args.interval
    end = start + args.duration if args.duration is not None else float("inf")
    try:
        while (now := time.monotonic()) < end:
            time.sleep(max(0.0, min(next_report, end) - now))
            if time.monotonic() >= next_report:
                _report(emulator.stats(), time.monotonic() - start, args.json, final=False)
                next_report += args.interval
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a relay without --duration ends: report and exit normally.
    _report(emulator.stop(), time.monotonic() - start, args.json, final=True)
    return 0
