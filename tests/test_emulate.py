"""`cclab emulate` as a user runs it: a relay process between a client and a server on loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading

import pytest
from conftest import ctrl_c_as_on_a_terminal


def _start(*options: str) -> tuple[subprocess.Popen[str], tuple[str, int]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cclab", "emulate", "--listen", "127.0.0.1:0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_as_on_a_terminal,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # "emulating 127.0.0.1:PORT -> ..."
    assert first.startswith("emulating "), first
    host, port = first.split()[1].rsplit(":", 1)
    return proc, (host, int(port))


def test_relays_both_ways_and_reports_what_it_dropped_as_json() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.settimeout(5)
    proc, listen = _start("--forward", f"127.0.0.1:{server.getsockname()[1]}", "--delay", "5ms",
                          "--rate", "1Mbps", "--queue", "4p", "--reverse-rate", "unlimited",
                          "--duration", "1.5", "--json")  # fmt: skip
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.settimeout(5)
    # 1000 + 28 bytes take 8.2 ms at 1 Mbit/s: a burst of 20 keeps one on the wire and 4 waiting.
    for i in range(20):
        client.sendto(bytes([i]) * 1000, listen)
    received = []
    for _ in range(5):
        data, sender = server.recvfrom(2048)
        received.append(data[0])
        server.sendto(b"ack" + data[:1], sender)
    replies = sorted(client.recv(16)[3] for _ in range(5))
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    final = json.loads(out.strip().splitlines()[-1])
    assert final["final"] is True
    assert received == [0, 1, 2, 3, 4] and replies == [0, 1, 2, 3, 4]
    forward, reverse = final["forward"], final["reverse"]
    assert (forward["offered"], forward["delivered"], forward["dropped_queue_full"], forward["lost"]) == (20, 5, 15, 0)
    assert (reverse["offered"], reverse["delivered"], reverse["dropped_queue_full"]) == (5, 5, 0)
    assert final["clients"] == 1


def test_ctrl_c_stops_it_with_a_summary() -> None:
    import signal

    proc, _ = _start("--forward", "127.0.0.1:9", "--interval", "0.2")
    assert proc.stdout is not None
    # Ctrl-C once three reports have come, not after a fixed wait that a busy machine (the other tests
    # run beside this one) could make too short; the watchdog ends a hang.
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        reports = [proc.stdout.readline() for _ in range(3)]
    finally:
        watchdog.cancel()
    assert [line.split(":")[0] for line in reports] == ["    0.2 s", "    0.4 s", "    0.6 s"], reports
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    lines = out.strip().splitlines()
    assert lines[-1].startswith("total: clients 0; forward 0/0 relayed, 0 dropped (queue full), 0 lost (random loss)")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--listen", "127.0.0.1", "--forward", "127.0.0.1:9"], '--listen: "127.0.0.1" is not an address ADDR:PORT'),
        (["--listen", "127.0.0.1:0", "--forward", "127.0.0.1:99999"], "--forward: "),
        (["--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9", "--loss", "1.5"], "--loss: 1.5 is not a probability"),
        (["--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9", "--reverse-delay", "soon"], "--reverse-delay: "),
        (["--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9", "--queue", "10p"], "--queue: a queue needs a rate"),
        (["--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9", "--rate", "1Mbps", "--queue", "0p"], "--queue: "),
        (["--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9", "--duration", "0"], "--duration: 0 is not a positive"),
        (["--listen", "8.8.8.8:53", "--forward", "127.0.0.1:9"], "cannot listen on 8.8.8.8:53"),
        (["--listen", "127.0.0.1:0", "--forward", "127.0.0.1:0"], "--forward: 127.0.0.1:0 has port 0"),
    ],
)
def test_bad_options_are_one_line_naming_the_option(options: list[str], message: str) -> None:
    command = [sys.executable, "-m", "cclab", "emulate", *options]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"cclab: error: {message}"), proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == ""
