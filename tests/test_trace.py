"""Packet traces (issue 8, item 3): `cclab run --out DIR` writes the trace
table and pcap files, and what tshark reads from the pcap (sequence numbers,
ACKs, SACK blocks, retransmissions, times) is what the simulator recorded.

The tshark test skips only outside CI when tshark is not installed; `.ci/run`
installs it, and under CI (the ``CI`` environment variable) a missing tshark
fails the test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.conftest import cclab

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "trace.toml"


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("trace")
    proc = cclab("run", str(EXAMPLE), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "pcap: " in proc.stdout
    return out


def tshark() -> str:
    found = shutil.which("tshark")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("tshark is required under CI (.ci/run installs it)")
        pytest.skip("tshark is not installed (apt-get install tshark)")
    return found


def test_run_out_writes_the_trace_table_and_a_pcap(traced: Path) -> None:
    table = pl.read_parquet(traced / "trace.parquet")
    assert set(table["event"].unique()) == {"enqueue", "depart", "drop", "deliver"}
    assert "random_loss" in set(table["cause"].drop_nulls())
    assert table["time_ns"].is_sorted()
    assert (traced / "trace0-bulk-0.pcap").stat().st_size > 1000
    assert "trace" not in json.loads((traced / "summary.json").read_text())


def test_a_bad_trace_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace('flows = ["bulk"]', 'flows = ["bulc"]'))
    proc = cclab("run", str(bad))
    assert proc.returncode == 2
    assert "trace[0].flows" in proc.stderr and 'did you mean "bulk"' in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def _tshark_rows(pcap: Path) -> list[dict[str, str]]:
    fields = ["frame.time_epoch", "ip.src", "tcp.seq", "tcp.len", "tcp.ack", "tcp.options.sack_le",
              "tcp.options.sack_re", "tcp.analysis.retransmission", "tcp.analysis.fast_retransmission"]  # fmt: skip
    cmd = [tshark(), "-r", str(pcap), "-o", "tcp.relative_sequence_numbers:FALSE", "-T", "fields",
           "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"]  # fmt: skip
    for f in fields:
        cmd += ["-e", f]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return [dict(zip(fields, line.split("\t"), strict=True)) for line in proc.stdout.splitlines()]


def _numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def test_tshark_reads_what_the_simulator_recorded(traced: Path) -> None:
    table = pl.read_parquet(traced / "trace.parquet")
    proc = cclab("run", str(EXAMPLE), "--json")
    summary: dict[str, Any] = json.loads(proc.stdout)
    capture = summary["trace"]["captures"][0]
    rows = table[capture["rows"]]
    got = _tshark_rows(traced / capture["file"])
    assert len(got) == rows.height > 100
    retransmissions = {"sim": 0, "tshark": 0}
    sack_rows = 0
    highest = 0  # the highest sequence number the capture has seen sent
    for mine, theirs in zip(rows.iter_rows(named=True), got, strict=True):
        seconds, nanos = theirs["frame.time_epoch"].split(".")
        assert int(seconds) * 10**9 + int(nanos.ljust(9, "0")[:9]) == mine["time_ns"]
        assert theirs["ip.src"] == mine["ip_src"]
        assert int(theirs["tcp.seq"]) == (mine["seq"] or 0) % 2**32
        assert int(theirs["tcp.len"]) == mine["len"]
        if mine["kind"] == "ack":
            assert int(theirs["tcp.ack"]) == mine["ack"] % 2**32
            want = [(a % 2**32, b % 2**32) for a, b in zip(mine["sack_left"], mine["sack_right"], strict=True)][:3]
            edges = (_numbers(theirs["tcp.options.sack_le"]), _numbers(theirs["tcp.options.sack_re"]))
            sacks = list(zip(*edges, strict=True))
            assert sacks == want
            sack_rows += bool(want)
        else:
            # A data segment below the highest byte already sent is a retransmission, for both.
            resent = mine["seq"] < highest
            highest = max(highest, mine["seq"] + mine["len"])
            flagged = bool(theirs["tcp.analysis.retransmission"] or theirs["tcp.analysis.fast_retransmission"])
            assert flagged == resent, mine
            retransmissions["sim"] += resent
            retransmissions["tshark"] += flagged
    assert sack_rows > 0
    assert retransmissions["sim"] == retransmissions["tshark"] > 0
