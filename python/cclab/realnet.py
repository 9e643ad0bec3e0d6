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


def add_transfer_parsers(sub: Any) -> None:
    send = sub.add_parser(
        "send",
        help="send a file or test bytes over UDT to `cclab recv`",
        description="Connects to a `cclab recv` (or any UDT 4 listener reading the same framing) with "
        "UDT 4's handshake and sends a file, --bytes N of a test pattern, or the pattern for --duration "
        "seconds, with the simulator's UDT code and the congestion control named by --cc. Once per "
        "--interval it prints the rate, RTT, window, sending period, ACKs and NAKs; at the end a summary.",
    )
    send.add_argument("file", nargs="?", help="the file to send (or use --bytes, or --duration alone)")
    send.add_argument("--to", required=True, metavar="ADDR:PORT", help="where `cclab recv` listens")
    send.add_argument("--bytes", metavar="SIZE", help="send this many bytes of a test pattern, e.g. 50MB or 4096B")
    send.add_argument(
        "--cc", default="udt", metavar="NAME", help="UDT congestion control (default udt; see `cclab algorithms`)"
    )
    send.add_argument(
        "--cc-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a parameter of the congestion control (repeatable), e.g. decrease_factor=1.12",
    )
    send.add_argument(
        "--duration", type=float, metavar="S", help="stop after S seconds (alone: an unbounded test that long)"
    )
    send.add_argument(
        "--mss", type=int, default=1500, help="largest packet, IP and UDP headers included (default 1500)"
    )
    _add_report_options(send)
    send.set_defaults(func=cmd_send)

    recv = sub.add_parser(
        "recv",
        help="receive one UDT transfer from `cclab send` and verify it",
        description="Listens for one UDT 4 connection, receives its byte stream, writes the content to "
        "--out if given, and verifies its size and checksum (or, for an unbounded test, the pattern). "
        "Once per --interval it prints the rate and what it acknowledged; at the end a summary.",
    )
    recv.add_argument("--listen", required=True, metavar="ADDR:PORT", help="where to listen (port 0: any free port)")
    recv.add_argument("--out", metavar="FILE", help="write the content here (default: verify and discard)")
    recv.add_argument(
        "--timeout", type=float, default=10.0, metavar="S", help="give up on a sender silent this long (default 10)"
    )
    recv.add_argument("--mss", type=int, default=1500, help="largest packet this side accepts (default 1500)")
    _add_report_options(recv)
    recv.set_defaults(func=cmd_recv)


def _add_report_options(parser: Any) -> None:
    parser.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between reports (default 1)")
    parser.add_argument("--json", action="store_true", help="print each report and the summary as a JSON line")


def _progress_line(p: dict[str, Any], rate_mbps: float, sender: bool) -> str:
    done = f"{p['bytes'] / 1e6:.2f}" + (f"/{p['total'] / 1e6:.2f}" if p["total"] is not None else "") + " MB"
    line = f"{p['elapsed_s']:7.1f} s  {rate_mbps:8.2f} Mbit/s  {done}  RTT {p['rtt_ms']:.2f} ms"
    if sender:
        line += (f"  window {p['cwnd']:.0f}  period {p['period_us']:.1f} us  ACKs {p['acks']}  NAKs {p['naks']}"
                 f"  retransmitted {p['retransmits']}")  # fmt: skip
    else:
        line += f"  ACKs {p['acks']}  NAKs {p['naks']}"
    return line


def _run_transfer(transfer: Any, args: argparse.Namespace, sender: bool) -> int:
    """Reports once per interval until the transfer ends (Ctrl-C stops it), then the summary."""
    role = "sending" if sender else "receiving"
    print(f"{role} on {transfer.local_addr()}", file=sys.stderr, flush=True)
    last_bytes, last_elapsed = 0, 0.0
    next_report = time.monotonic() + args.interval
    interrupted = False
    while not transfer.is_finished():
        try:
            time.sleep(min(0.05, max(0.0, next_report - time.monotonic())))
        except KeyboardInterrupt:
            transfer.stop()
            interrupted = True
            continue
        if time.monotonic() < next_report:
            continue
        next_report += args.interval
        p = transfer.progress()
        if not p["connected"]:
            continue
        span = p["elapsed_s"] - last_elapsed
        rate = (p["bytes"] - last_bytes) * 8 / span / 1e6 if span > 0 else 0.0
        last_bytes, last_elapsed = p["bytes"], p["elapsed_s"]
        if args.json:
            print(json.dumps({"final": False, "rate_mbps": round(rate, 3), **p}), flush=True)
        else:
            print(_progress_line(p, rate, sender), flush=True)
    try:
        summary = transfer.join()
    except _core.TransferFailed as e:
        print(f"cclab {'send' if sender else 'recv'}: {e}", file=sys.stderr, flush=True)
        return 1
    p = summary["progress"]
    rate = summary["content_bytes"] * 8 / p["elapsed_s"] / 1e6 if p["elapsed_s"] > 0 else 0.0
    if args.json:
        print(json.dumps({"final": True, "rate_mbps": round(rate, 3), **summary}), flush=True)
    else:
        print(_summary_line(summary, rate, sender, interrupted), flush=True)
    return 0 if summary["complete"] else 1


def _summary_line(summary: dict[str, Any], rate_mbps: float, sender: bool, interrupted: bool) -> str:
    p = summary["progress"]
    if not p["connected"]:
        return "stopped before a connection was made"
    state = "complete" if summary["complete"] else ("interrupted" if interrupted else "incomplete")
    verified = ""
    if not sender and summary["complete"]:
        verified = (
            "; content matches the test pattern"
            if summary["pattern_checked"]
            else f"; size and checksum {summary['checksum']} verified"
        )
    pacing = p["pacing"]
    late = (f"; sends late by {pacing['p50_late_us']:.0f} us (median), {pacing['p99_late_us']:.0f} us (99th pct.)"
            if sender and pacing["sends"] else "")  # fmt: skip
    return (
        f"{state}: {summary['content_bytes']} bytes in {p['elapsed_s']:.2f} s ({rate_mbps:.2f} Mbit/s) "
        f"{'to' if sender else 'from'} {p['peer']}{verified}; {p['packets_sent']} packets sent, "
        f"{p['retransmits']} retransmitted, {p['naks']} NAKs, {p['timeouts']} timeouts{late}"
    )


def _positive_interval(args: argparse.Namespace) -> None:
    if not args.interval > 0:
        _fail(f"--interval: {args.interval:g} is not a positive number of seconds")


def cmd_send(args: argparse.Namespace) -> int:
    _positive_interval(args)
    if args.file is not None and args.bytes is not None:
        _fail("--bytes: give a file or --bytes, not both")
    if args.file is None and args.bytes is None and args.duration is None:
        _fail("send: give a file, --bytes SIZE, or --duration S for an unbounded test")
    cc_params = []
    for item in args.cc_param:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            _fail(f"--cc-param: {item!r} is not KEY=VALUE")
        cc_params.append((key.strip(), value.strip()))
    try:
        transfer = _core.Transfer.send(
            args.to,
            path=args.file,
            bytes=args.bytes,
            cc=args.cc,
            cc_params=cc_params,
            duration_s=args.duration,
            mss=args.mss,
        )
    except (ValueError, OSError, OverflowError) as e:
        _fail(str(e))
    return _run_transfer(transfer, args, sender=True)


def cmd_recv(args: argparse.Namespace) -> int:
    _positive_interval(args)
    try:
        transfer = _core.Transfer.recv(args.listen, out=args.out, timeout_s=args.timeout, mss=args.mss)
    except (ValueError, OSError, OverflowError) as e:
        _fail(str(e))
    return _run_transfer(transfer, args, sender=False)
