"""The tables a run hands to Python as Arrow buffers, against the JSON summary
they used to cross as: the same rows, columns, types and nulls either way."""

import json

import cclab
import polars as pl
import pytest
from cclab.result import Result, metrics_schema
from conftest import EXAMPLES

# TCP and UDP flows (so each has counters the other lacks: nulls), finite
# transfers (one unfinished), sampled series and an [[observe]] series.
MIXED = """
name = "mixed"
[run]
duration = "3s"
warmup = "1s"
seed = 4
sample = "100ms"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "20Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
name = "tcp"
count = 2
recovery = "sack"
rtt = "30ms"
[[flows]]
name = "cross"
protocol = "udp"
rtt = "30ms"
app = { kind = "cbr", rate = "4Mbps", size = "1000B" }
[[flows]]
name = "files"
rtt = "30ms"
app = { kind = "transfer", size = "400KB" }
[[flows]]
name = "big"
rtt = "30ms"
start = "2s"
app = { kind = "transfer", size = "50MB" }
"""


def _tables(result: Result) -> dict[str, pl.DataFrame]:
    return {
        "flows": result.flows,
        "links": result.links,
        "transfers": result.transfers,
        "timeseries": result.timeseries,
        "queues": result.queues,
        "metrics": result.metrics,
        "series": result.series,
    }


def test_the_tables_from_the_core_equal_those_read_back_from_the_json_summary() -> None:
    from_core = cclab.run(MIXED)
    from_json = Result(json.loads(from_core.to_json()), {}, from_core.seed)
    for name, frame in _tables(from_core).items():
        again = _tables(from_json)[name]
        assert frame.height > 0, name
        assert frame.columns == again.columns, name
        # JSON loses no value; an all-null column reads back as Null rather than its type.
        assert frame.equals(again.cast(frame.schema, strict=False)), name  # type: ignore[arg-type]


def test_types_and_nulls_are_those_of_the_summary() -> None:
    result = cclab.run(MIXED)
    flows = result.flows
    assert flows.schema["flow_id"] == pl.Int64 and flows.schema["goodput_bps"] == pl.Float64
    tcp, udp = flows.filter(pl.col("protocol") == "tcp"), flows.filter(pl.col("protocol") == "udp")
    # Each protocol's counters are null for the other's rows, as absent keys were.
    assert udp["retransmits"].null_count() == udp.height and tcp["retransmits"].null_count() == 0
    assert tcp["packets_lost"].null_count() == tcp.height and udp["packets_lost"].null_count() == 0
    assert udp["cc"].null_count() == udp.height and tcp["cc"].to_list() == ["reno"] * tcp.height
    transfers = result.transfers
    assert transfers.filter(pl.col("size_bytes") == 50_000_000)["end_s"].to_list() == [None]
    assert transfers.filter(pl.col("size_bytes") == 400_000)["completion_s"].null_count() == 0
    assert result.metrics.schema == pl.Schema(metrics_schema())


def test_the_json_text_is_the_summary() -> None:
    result = cclab.run(MIXED)
    assert json.loads(result.to_json()) == result.summary
    without = json.loads(result.to_json(trace=False))
    assert without == {k: v for k, v in result.summary.items() if k != "trace"}


def test_the_json_text_written_a_few_rows_at_a_time_is_the_summary_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """`cclab run --json` writes flows and links a chunk of rows at a time, never the
    whole summary as Python objects: the text is json.dumps of the summary, byte for byte."""
    import io

    import cclab.result

    monkeypatch.setattr(cclab.result, "ROW_CHUNK", 3)
    result = cclab.run(MIXED + '\n[[trace]]\nlinks = ["left->right"]\npcap = false\n')
    assert result.links.height > 3 * 2 and "trace" in result.header
    with_trace, without = result.to_json(), io.StringIO()
    result.write_json(without, trace=False)
    assert with_trace == json.dumps(result.summary)
    assert without.getvalue() == json.dumps({k: v for k, v in result.summary.items() if k != "trace"})


def test_a_run_without_series_or_transfers_has_empty_tables_with_their_columns() -> None:
    result = cclab.run(EXAMPLES / "dumbbell.toml")
    assert result.transfers.is_empty() and "completion_s" in result.transfers.columns
    assert result.timeseries.is_empty() and {"cwnd", "name", "index"} <= set(result.timeseries.columns)
    assert result.metrics.is_empty() and "value" in result.metrics.columns
    assert "timeseries" not in result.summary and "series" not in result.header


def test_rows_and_columns_read_from_the_buffers_equal_the_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows are read a chunk at a time (here 3, so that chunks split the validity
    bitmaps' bytes and the string offsets): they equal the frames either way."""
    import cclab.result

    monkeypatch.setattr(cclab.result, "ROW_CHUNK", 3)
    result = cclab.run(MIXED)
    for name, frame in (("flows", result.flows), ("links", result.links), ("transfers", result.transfers)):
        assert result.columns(name) == frame.to_dict(as_series=False), name
        assert list(result.rows(name)) == frame.to_dicts(), name
        assert result.height(name) == frame.height, name
    again = Result(result.summary, {}, result.seed)
    assert list(again.rows("flows")) == list(result.rows("flows"))
    assert again.height("links") == result.height("links") == result.links.height
    assert repr(again) == repr(result) == f"Result(scenario='mixed', seed={result.seed}, flows={result.flows.height})"


def test_cclab_run_prints_its_tables_without_importing_polars_or_pyarrow() -> None:
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from cclab.cli import main\n"
        f"main(['run', {str(EXAMPLES / 'dumbbell.toml')!r}])\n"
        "print('heavy', sorted(m for m in ('polars', 'pyarrow') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "left->right" in done.stdout and done.stdout.rstrip().endswith("heavy []"), done.stdout
