"""Real-network commands: ``cclab emulate``, a user-space link emulator for UDP.

It stands where netem and a token-bucket shaper would on a router between two
hosts, for machines (like CI's) where those need privileges that are not there:
clients send to ``--listen``, the emulator relays to ``--forward`` and relays the
replies back, each direction through a path with a rate, a DropTail queue, a
propagation delay and Bernoulli loss (``cclab_net::emulator`` says exactly how).
"""

from __future__ import annotations

import argparse
import csv
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
        help="send a file or test bytes over UDT or TCP-in-UDP to `cclab recv`",
        description="Connects to a `cclab recv` (or, with UDT, any UDT 4 listener reading the same framing, "
        "or with --raw any UDT 4 application) "
        "and sends a file, --bytes N of a test pattern, or the pattern for --duration seconds, with the "
        "simulator's own UDT or TCP code and the algorithms named as in a scenario. With --protocol tcp it "
        "is a sending host: --connections N transfers, each with its send-buffer policy, sharing "
        "--memory-cap. Once per --interval it prints the rate, RTT, window, sending period, ACKs and NAKs; "
        "at the end a summary.",
    )
    send.add_argument("file", nargs="?", help="the file to send (or use --bytes, or --duration alone)")
    send.add_argument("--to", required=True, metavar="ADDR:PORT", help="where `cclab recv` listens")
    send.add_argument("--bytes", metavar="SIZE", help="send this many bytes of a test pattern, e.g. 50MB or 4096B")
    send.add_argument("--protocol", default="udt", choices=["udt", "tcp"], help="the transport (default udt)")
    send.add_argument(
        "--cc",
        metavar="NAME",
        help="congestion control (default udt with UDT, reno with TCP; see `cclab algorithms`)",
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
    send.add_argument(
        "--raw",
        action="store_true",
        help="UDT: send the content alone, with no length or checksum, as a plain UDT 4 application "
        "(UDT::sendfile) does; for a receiver that is not `cclab recv`, or `cclab recv --raw`",
    )
    tcp = send.add_argument_group("TCP (with --protocol tcp)")
    tcp.add_argument("--recovery", metavar="NAME", help="loss recovery (default newreno)")
    tcp.add_argument("--recovery-param", action="append", default=[], metavar="KEY=VALUE", help="(repeatable)")
    tcp.add_argument("--pacing", metavar="NAME", help="sender pacing (default none)")
    tcp.add_argument("--pacing-param", action="append", default=[], metavar="KEY=VALUE", help="(repeatable)")
    tcp.add_argument("--send-buffer", metavar="POLICY", help="send-buffer policy: fixed, atbt or rtba")
    tcp.add_argument("--buffer-param", action="append", default=[], metavar="KEY=VALUE", help="(repeatable)")
    tcp.add_argument("--memory-cap", metavar="SIZE", help="the host's send-buffer memory, shared by its connections")
    tcp.add_argument("--share-every", type=float, metavar="S", help="how often the host shares it (default 0.5)")
    tcp.add_argument("--connections", type=int, metavar="N", help="concurrent transfers of the content (default 1)")
    tcp.add_argument("--stagger", type=float, metavar="S", help="connection i starts i x S seconds after the first")
    tcp.add_argument(
        "--cwnd-growth",
        choices=["always", "cwnd_limited"],
        help="grow the window on every ACK (always, the default) or only while it is used (as Linux)",
    )
    tcp.add_argument("--allocations", metavar="FILE", help="write the host's send-buffer allocations as CSV")
    _add_report_options(send)
    send.set_defaults(func=cmd_send)

    recv = sub.add_parser(
        "recv",
        help="receive transfers from `cclab send` and verify them",
        description="Listens for one UDT 4 connection (or --connections N TCP-in-UDP ones), receives its "
        "byte stream, writes the content to --out if given, and verifies its size and checksum (or, for an "
        "unbounded test, the pattern). The content goes to FILE.part, renamed to FILE only once it is "
        "complete and verified, and removed if the transfer fails. Once per --interval it prints the rate "
        "and what it acknowledged; at the end a summary.",
    )
    recv.add_argument("--protocol", default="udt", choices=["udt", "tcp"], help="the transport (default udt)")
    recv.add_argument("--listen", required=True, metavar="ADDR:PORT", help="where to listen (port 0: any free port)")
    recv.add_argument("--out", metavar="FILE", help="write the content here (default: verify and discard)")
    recv.add_argument(
        "--timeout", type=float, default=10.0, metavar="S", help="give up on a sender silent this long (default 10)"
    )
    recv.add_argument("--mss", type=int, default=1500, help="largest packet this side accepts (default 1500)")
    recv.add_argument(
        "--raw",
        action="store_true",
        help="UDT: take the stream as the content alone, as a plain UDT 4 sender (UDT::sendfile) sends it, "
        "and write what arrives until the sender closes; nothing verifies it",
    )
    tcp = recv.add_argument_group("TCP (with --protocol tcp)")
    tcp.add_argument("--connections", type=int, metavar="N", help="transfers to take before ending (default 1)")
    tcp.add_argument("--window", type=int, metavar="SEGMENTS", help="receive window it advertises (default 4096)")
    tcp.add_argument("--delayed-ack", action="store_true", help="acknowledge every second segment (RFC 5681)")
    _add_report_options(recv)
    recv.set_defaults(func=cmd_recv)


def _add_report_options(parser: Any) -> None:
    parser.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between reports (default 1)")
    parser.add_argument("--json", action="store_true", help="print each report and the summary as a JSON line")


def _progress_line(p: dict[str, Any], rate_mbps: float, sender: bool, udt: bool) -> str:
    done = f"{p['bytes'] / 1e6:.2f}" + (f"/{p['total'] / 1e6:.2f}" if p["total"] is not None else "") + " MB"
    line = f"{p['elapsed_s']:7.1f} s  {rate_mbps:8.2f} Mbit/s  {done}"
    if sender or udt:  # a TCP receiver measures no RTT
        line += f"  RTT {p['rtt_ms']:.2f} ms"
    if sender and udt:
        line += (f"  window {p['cwnd']:.0f}  period {p['period_us']:.1f} us  ACKs {p['acks']}  NAKs {p['naks']}"
                 f"  retransmitted {p['retransmits']}")  # fmt: skip
    elif sender:
        line += f"  window {p['cwnd']:.0f}  ACKs {p['acks']}  retransmitted {p['retransmits']}"
    else:
        line += f"  ACKs {p['acks']}" + (f"  NAKs {p['naks']}" if udt else "")
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
            print(_progress_line(p, rate, sender, args.protocol == "udt"), flush=True)
    try:
        summary = transfer.join()
    except _core.TransferFailed as e:
        print(f"cclab {'send' if sender else 'recv'}: {e}", file=sys.stderr, flush=True)
        return 1
    if sender and args.allocations is not None:
        write_allocations(args.allocations, summary["allocations"])
    p = summary["progress"]
    rate = summary["content_bytes"] * 8 / p["elapsed_s"] / 1e6 if p["elapsed_s"] > 0 else 0.0
    if args.json:
        print(json.dumps({"final": True, "rate_mbps": round(rate, 3), **summary}), flush=True)
    else:
        print(_summary_line(summary, rate, sender, args.protocol == "udt", interrupted, args.raw), flush=True)
    return 0 if summary["complete"] else 1


def _summary_line(
    summary: dict[str, Any], rate_mbps: float, sender: bool, udt: bool, interrupted: bool, raw: bool = False
) -> str:
    p = summary["progress"]
    if not p["connected"]:
        return "stopped before a connection was made"
    state = "complete" if summary["complete"] else ("interrupted" if interrupted else "incomplete")
    verified = ""
    transfers = len(summary["connections"])
    if not sender and summary["complete"]:
        if raw:
            verified = (f"; raw: written as it arrived until the sender closed, FNV-1a {summary['checksum']} "
                        "(not verified: the stream carries no checksum)")  # fmt: skip
        elif summary["pattern_checked"]:
            verified = "; content matches the test pattern"
        elif transfers > 1:
            verified = f"; {transfers} transfers, the size and checksum of each verified"
        else:
            verified = f"; size and checksum {summary['checksum']} verified"
    pacing = p["pacing"]
    late = (f"; sends late by {pacing['p50_late_us']:.0f} us (median), {pacing['p99_late_us']:.0f} us (99th pct.)"
            if sender and pacing["sends"] else "")  # fmt: skip
    return (
        f"{state}: {summary['content_bytes']} bytes in {p['elapsed_s']:.2f} s ({rate_mbps:.2f} Mbit/s) "
        f"{'to' if sender else 'from'} {p['peer']}{verified}; {p['packets_sent']} packets sent, "
        f"{p['retransmits']} retransmitted, "
        + (f"{p['naks']} NAKs, " if udt else "")
        + f"{p['timeouts']} timeouts{late}"
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
    if args.allocations is not None and args.send_buffer is None:
        _fail("--allocations: the host allocates send buffers only with --send-buffer")
    try:
        transfer = _core.Transfer.send(
            args.to,
            path=args.file,
            bytes=args.bytes,
            protocol=args.protocol,
            cc=args.cc,
            cc_params=_key_values("--cc-param", args.cc_param),
            duration_s=args.duration,
            mss=args.mss,
            recovery=args.recovery,
            recovery_params=_key_values("--recovery-param", args.recovery_param),
            pacing=args.pacing,
            pacing_params=_key_values("--pacing-param", args.pacing_param),
            send_buffer=args.send_buffer,
            buffer_params=_key_values("--buffer-param", args.buffer_param),
            memory_cap=args.memory_cap,
            share_every_s=args.share_every,
            connections=args.connections,
            stagger_s=args.stagger,
            cwnd_growth=args.cwnd_growth,
            raw=args.raw,
        )
    except (ValueError, OSError, OverflowError) as e:
        _fail(str(e))
    return _run_transfer(transfer, args, sender=True)


def _key_values(option: str, items: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            _fail(f"{option}: {item!r} is not KEY=VALUE")
        pairs.append((key.strip(), value.strip()))
    return pairs


def write_allocations(path: str, allocations: list[dict[str, Any]]) -> None:
    """The sending host's send-buffer decisions, one row per connection and sharing time."""
    columns = ["at_s", "connection", "desired", "limit", "buffered", "cwnd_bytes", "srtt_ms", "weight"]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(allocations)


def cmd_recv(args: argparse.Namespace) -> int:
    _positive_interval(args)
    try:
        transfer = _core.Transfer.recv(
            args.listen,
            out=args.out,
            timeout_s=args.timeout,
            mss=args.mss,
            protocol=args.protocol,
            connections=args.connections,
            window=args.window,
            delayed_ack=args.delayed_ack,
            raw=args.raw,
        )
    except (ValueError, OSError, OverflowError) as e:
        _fail(str(e))
    return _run_transfer(transfer, args, sender=False)
