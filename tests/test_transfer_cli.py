"""`cclab send` and `cclab recv` as a user runs them: processes on loopback, directly and through `cclab emulate`."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ctrl_c_as_on_a_terminal


def _cclab(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "cclab", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_as_on_a_terminal,
    )


def _receiver(*options: str) -> tuple[subprocess.Popen[str], str]:
    proc = _cclab("recv", "--listen", "127.0.0.1:0", *options)
    assert proc.stderr is not None
    first = proc.stderr.readline()  # "receiving on 127.0.0.1:PORT"
    assert first.startswith("receiving on "), first
    return proc, first.split()[-1]


def _json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.strip().splitlines()]


def test_a_file_arrives_intact_and_both_sides_report(tmp_path: Path) -> None:
    source, copy = tmp_path / "source.bin", tmp_path / "copy.bin"
    source.write_bytes(bytes(range(256)) * 8000 + b"tail")
    receiver, addr = _receiver("--out", str(copy), "--json", "--interval", "0.2")
    sender = _cclab("send", str(source), "--to", addr, "--json", "--interval", "0.2")
    sent_out, sent_err = sender.communicate(timeout=60)
    received_out, _ = receiver.communicate(timeout=60)
    assert sender.returncode == 0, sent_err
    assert receiver.returncode == 0
    assert copy.read_bytes() == source.read_bytes()
    assert not (tmp_path / "copy.bin.part").exists()
    sent, received = _json_lines(sent_out)[-1], _json_lines(received_out)[-1]
    assert sent["final"] and received["final"]
    assert sent["content_bytes"] == received["content_bytes"] == source.stat().st_size
    assert sent["checksum"] == received["checksum"] is not None
    assert sent["progress"]["packets_sent"] >= source.stat().st_size // 1456


def test_an_unbounded_test_through_the_emulator_checks_the_pattern() -> None:
    receiver, addr = _receiver("--json")
    emulator = _cclab("emulate", "--listen", "127.0.0.1:0", "--forward", addr, "--rate", "20Mbps",
                      "--delay", "5ms", "--queue", "25KB", "--duration", "30")  # fmt: skip
    assert emulator.stderr is not None
    relay = emulator.stderr.readline().split()[1]  # "emulating ADDR -> ..."
    sender = _cclab("send", "--to", relay, "--duration", "2", "--cc", "udt_combined", "--interval", "0.5")
    sent_out, sent_err = sender.communicate(timeout=60)
    received_out, _ = receiver.communicate(timeout=60)
    emulator.send_signal(signal.SIGINT)
    emulator.communicate(timeout=30)
    assert sender.returncode == 0, sent_err
    lines = sent_out.strip().splitlines()
    assert len(lines) >= 3 and "Mbit/s" in lines[0] and "period" in lines[0]
    assert lines[-1].startswith("complete: ")
    final = _json_lines(received_out)[-1]
    assert final["complete"] and final["pattern_checked"]
    # Two seconds at 20 Mbit/s: more than a megabyte, less than the link could carry.
    assert 1_000_000 < final["content_bytes"] < 2.2 * 20e6 / 8


def test_a_sender_with_nobody_listening_gives_up_after_the_handshake_timeout() -> None:
    started = time.monotonic()
    sender = _cclab("send", "--to", "127.0.0.1:9", "--bytes", "1MB")
    _, err = sender.communicate(timeout=30)
    assert sender.returncode == 1
    assert "no answer from 127.0.0.1:9 within 3 s" in err
    assert 2.5 < time.monotonic() - started < 20


def test_ctrl_c_stops_a_waiting_receiver() -> None:
    receiver, _ = _receiver()
    time.sleep(0.3)
    receiver.send_signal(signal.SIGINT)
    out, _ = receiver.communicate(timeout=30)
    assert receiver.returncode == 1
    assert "stopped before a connection was made" in out


def test_tcp_connections_from_one_host_share_its_memory_cap_through_the_emulator(tmp_path: Path) -> None:
    receiver, addr = _receiver("--protocol", "tcp", "--connections", "2", "--json")
    emulator = _cclab("emulate", "--listen", "127.0.0.1:0", "--forward", addr, "--rate", "20Mbps",
                      "--delay", "10ms", "--queue", "100KB", "--duration", "60")  # fmt: skip
    assert emulator.stderr is not None
    relay = emulator.stderr.readline().split()[1]
    allocations = tmp_path / "allocations.csv"
    sender = _cclab("send", "--protocol", "tcp", "--to", relay, "--bytes", "2MB", "--connections", "2",
                    "--stagger", "0.5", "--cc", "cubic", "--recovery", "sack", "--send-buffer", "rtba",
                    "--memory-cap", "120KB", "--allocations", str(allocations), "--interval", "0.5")  # fmt: skip
    sent_out, sent_err = sender.communicate(timeout=90)
    received_out, _ = receiver.communicate(timeout=60)
    emulator.send_signal(signal.SIGINT)
    emulator.communicate(timeout=30)
    assert sender.returncode == 0, sent_err
    lines = sent_out.strip().splitlines()
    assert "window" in lines[0] and "period" not in lines[0]
    assert lines[-1].startswith("complete: 4000000 bytes")
    final = _json_lines(received_out)[-1]
    assert final["complete"] and len(final["connections"]) == 2
    assert all(c["content_bytes"] == 2_000_000 and c["checksum"] for c in final["connections"])
    rows = [line.split(",") for line in allocations.read_text().splitlines()]
    assert rows[0] == ["at_s", "connection", "desired", "limit", "buffered", "cwnd_bytes", "srtt_ms", "weight"]
    by_time: dict[str, int] = {}
    for row in rows[1:]:
        by_time[row[0]] = by_time.get(row[0], 0) + int(row[3])
    assert len(by_time) >= 2 and max(by_time.values()) <= 120_000
    assert {row[1] for row in rows[1:]} == {"0", "1"}


def _until_data_arrives(part: Path) -> None:
    """Waits (up to 30 s) until the receiver's partial file holds data. Interrupting a transfer once it
    is under way, not after a fixed time: on a loaded machine a sender's start alone can take longer
    than any fixed wait short enough for a test."""
    deadline = time.monotonic() + 30
    while not (part.exists() and part.stat().st_size > 0) and time.monotonic() < deadline:
        time.sleep(0.05)


def _kill_mid_transfer(proc: subprocess.Popen[str]) -> float:
    """Kills `proc` (SIGKILL: it can say nothing to its peer) mid-transfer; when it did."""
    assert proc.poll() is None, "the transfer ended before it could be interrupted"
    proc.kill()
    proc.wait(timeout=10)
    return time.monotonic()


@pytest.mark.parametrize(
    ("protocol", "gives_up_within"),
    # UDT: the first EXP expiry more than 5 s after the receiver was last heard (on loopback the
    # backed-off expiries fall at 0.3, 0.9, 1.8, 3.0, 4.5 and 6.3 s). TCP: 10 s of silence.
    [("udt", (5.0, 9.0)), ("tcp", (10.0, 13.0))],
)
def test_a_sender_gives_up_on_a_receiver_killed_mid_transfer(
    protocol: str, gives_up_within: tuple[float, float]
) -> None:
    receiver, addr = _receiver("--protocol", protocol)
    sender = _cclab("send", "--protocol", protocol, "--to", addr, "--bytes", "100GB", "--interval", "0.5")
    # Killed after the sender's first report (connected, data flowing), not after a fixed wait: on a
    # loaded machine the sender's start alone can take longer than any fixed wait.
    assert sender.stdout is not None
    assert sender.stdout.readline(), "the sender ended before its first report"
    killed = _kill_mid_transfer(receiver)
    _, err = sender.communicate(timeout=30)
    took = time.monotonic() - killed
    assert sender.returncode == 1, err
    last = err.strip().splitlines()[-1]
    gave_up = r"cclab send: the receiver stopped responding: \d+ expiries, no response for [\d.]+ s"
    assert re.fullmatch(gave_up, last), err
    low, high = gives_up_within
    assert low < took < high, f"gave up {took:.1f} s after the receiver was killed: {last}"


def test_a_failed_receive_leaves_no_file_and_an_earlier_one_untouched(tmp_path: Path) -> None:
    copy = tmp_path / "copy.bin"
    copy.write_bytes(b"an earlier result")
    receiver, addr = _receiver("--out", str(copy), "--timeout", "1")
    sender = _cclab("send", "--to", addr, "--bytes", "100GB")
    _until_data_arrives(tmp_path / "copy.bin.part")
    _kill_mid_transfer(sender)
    _, err = receiver.communicate(timeout=30)
    assert receiver.returncode == 1
    assert "the sender went silent" in err.strip().splitlines()[-1], err
    assert copy.read_bytes() == b"an earlier result"
    assert not (tmp_path / "copy.bin.part").exists()


def test_raw_sends_the_content_alone_and_the_raw_receiver_keeps_it_only_if_the_sender_closed(
    tmp_path: Path,
) -> None:
    source, copy = tmp_path / "source.bin", tmp_path / "copy.bin"
    source.write_bytes(bytes(range(256)) * 4000 + b"no framing")
    receiver, addr = _receiver("--raw", "--out", str(copy))
    sender = _cclab("send", "--raw", str(source), "--to", addr)
    _, sent_err = sender.communicate(timeout=60)
    received_out, received_err = receiver.communicate(timeout=60)
    assert sender.returncode == 0 and receiver.returncode == 0, (sent_err, received_err)
    assert copy.read_bytes() == source.read_bytes()
    assert f"complete: {source.stat().st_size} bytes" in received_out
    assert "raw: written as it arrived until the sender closed" in received_out
    # A sender that dies closes nothing: what arrived is not a result.
    lost = tmp_path / "lost.bin"
    receiver, addr = _receiver("--raw", "--out", str(lost), "--timeout", "1")
    sender = _cclab("send", "--raw", "--to", addr, "--bytes", "100GB")
    _until_data_arrives(tmp_path / "lost.bin.part")
    _kill_mid_transfer(sender)
    _, err = receiver.communicate(timeout=30)
    assert receiver.returncode == 1 and "the sender went silent" in err, err
    assert not lost.exists() and not (tmp_path / "lost.bin.part").exists()


#: A send that would be valid but for the options after it.
SEND = ["send", "--to", "127.0.0.1:9000", "--bytes", "1MB"]
TCP_SEND = [*SEND, "--protocol", "tcp"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["send", "--to", "nowhere", "--bytes", "1MB"], "--to:"),
        (["send", "--to", "127.0.0.1:70000", "--bytes", "1MB"], "--to:"),
        (["send", "--to", "127.0.0.1:9000", "--bytes", "lots"], "--bytes:"),
        (["send", "--to", "127.0.0.1:9000", "--bytes", "1MB", "--cc", "cubic"], "--cc:"),
        (["send", "--to", "127.0.0.1:9000", "--bytes", "1MB", "--duration", "0"], "--duration:"),
        (["send", "--to", "127.0.0.1:9000", "--bytes", "1MB", "--cc-param", "x"], "--cc-param: 'x' is not KEY=VALUE"),
        (["send", "--to", "127.0.0.1:9000", "--bytes", "1MB", "--cc-param", "nope=1"], 'no parameter "nope"'),
        (["send", "--to", "127.0.0.1:9000", "--bytes", "1MB", "--cc-param", "decrease_factor=3"], "--cc-param:"),
        (["send", "--to", "127.0.0.1:9000", "--bytes", "1MB", "--mss", "20"], "--mss:"),
        (["send", "--to", "127.0.0.1:9000", "/no/such/file"], "/no/such/file"),
        (["send", "--to", "127.0.0.1:9000"], "send: give a file, --bytes SIZE, or --duration S"),
        (["send", "x", "--to", "127.0.0.1:9000", "--bytes", "1MB"], "--bytes: give a file or --bytes, not both"),
        (["send", "--to", "127.0.0.1:0", "--bytes", "1MB"], "--to: 127.0.0.1:0 has port 0"),
        ([*TCP_SEND[:2], "127.0.0.1:0", *TCP_SEND[3:]], "--to: 127.0.0.1:0 has port 0"),
        (["send", "/", "--to", "127.0.0.1:9000"], "/: is a directory, not a file to send"),
        (["send", "/dev/null", "--to", "127.0.0.1:9000"], "/dev/null: is not a regular file"),
        (["recv", "--listen", "127.0.0.1:0", "--out", "/"], "--out: / is a directory"),
        ([*TCP_SEND, "--raw"], "--raw: only with --protocol udt"),
        (["recv", "--protocol", "tcp", "--listen", "127.0.0.1:0", "--raw"], "--raw: only with --protocol udt"),
        (["recv", "--listen", "127.0.0.1:0", "--timeout", "-1"], "--timeout:"),
        (["recv", "--listen", "127.0.0.1:0", "--interval", "0"], "--interval:"),
        (["recv", "--listen", "127.0.0.1:0", "--out", "/no/such/dir/x"], "/no/such/dir/x"),
        (["recv", "--listen", "192.0.2.1:5000"], "cannot use 192.0.2.1:5000"),
        ([*SEND, "--recovery", "sack"], "--recovery: only with --protocol tcp"),
        ([*SEND, "--connections", "2"], "--connections: only with"),
        ([*TCP_SEND, "--cc", "udt"], "--cc:"),
        ([*TCP_SEND, "--recovery", "x"], "--recovery:"),
        ([*TCP_SEND, "--memory-cap", "1MB"], "--send-buffer: --memory-cap"),
        ([*TCP_SEND, "--send-buffer", "rtba", "--memory-cap", "lots"], "--memory-cap:"),
        ([*TCP_SEND, "--send-buffer", "fixed", "--buffer-param", "size=-5"], "--buffer-param:"),
        ([*TCP_SEND, "--connections", "0"], "--connections:"),
        ([*TCP_SEND, "--mss", "80"], "--mss:"),
        ([*TCP_SEND, "--allocations", "a.csv"], "--allocations:"),
        (["recv", "--listen", "127.0.0.1:0", "--window", "100"], "--window: only with --protocol tcp"),
        (["recv", "--protocol", "tcp", "--listen", "127.0.0.1:0", "--window", "1"], "--window:"),
        (["recv", "--protocol", "tcp", "--listen", "127.0.0.1:0", "--connections", "2", "--out", "x"], "--out:"),
    ],
)
def test_bad_input_is_one_line_naming_it_and_exit_2(args: list[str], message: str) -> None:
    proc = _cclab(*args)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err
    assert "Traceback" not in err
