"""The Python API: scenarios and key paths, runs and their tables."""

from pathlib import Path

import cclab
import polars as pl
import pytest
from conftest import EXAMPLES

DUMBBELL = EXAMPLES / "dumbbell.toml"


def test_load_and_round_trip_through_toml() -> None:
    scn = cclab.load(DUMBBELL)
    assert scn.name == "dumbbell"
    again = cclab.Scenario.from_toml(scn.to_toml(), "dumbbell")
    assert again == scn
    assert cclab.Scenario.from_dict(scn.to_dict()).get("topology.bottleneck.rate") == "100Mbps"


def test_with_sets_key_paths_and_leaves_the_original_alone() -> None:
    scn = cclab.load(DUMBBELL)
    fast = scn.with_(**{"topology.bottleneck.rate": "1Gbps", "flows[0].recovery": "newreno"})
    assert fast.get("topology.bottleneck.rate") == "1Gbps"
    assert fast.get("flows[0].recovery") == "newreno"
    assert scn.get("topology.bottleneck.rate") == "100Mbps"
    # Missing tables are created; [*] applies to every entry.
    two = scn.to_dict()
    two["flows"].append({"name": "other", "rtt": "80ms"})
    both = cclab.Scenario.from_dict(two).with_(**{"flows[*].cc": "reno", "flows[1].delayed_ack": True})
    assert both.get("flows[*].cc") == ["reno", "reno"]
    assert both.validate()["flows"][1]["tcp"]["delayed_ack"] is True


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("flows[0].reocvery", "sack", 'flows[0].reocvery: unknown key; did you mean "recovery"?'),
        ("flows[3].cc", "reno", "flows[3]: the scenario has only 1 flows entries"),
        ("topology.bottleneck.rate", 100, "topology.bottleneck.rate: 100 has no unit"),
        ("flows[0].delayed_ack", "yes", "flows[0].delayed_ack: expected true or false"),
        ("run..duration", "1s", "is not a key"),
    ],
)
def test_bad_overrides_name_the_key(key: str, value: object, fragment: str) -> None:
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.load(DUMBBELL).with_(**{key: value})
    assert fragment in err.value.args[0]


def test_run_returns_typed_tables_with_summary_column_names() -> None:
    scn = cclab.load(DUMBBELL).with_(**{"run.duration": "4s", "run.warmup": "1s", "run.sample": "500ms"})
    res = cclab.run(scn, seed=3)
    assert res.seed == 3
    assert res.config["run"]["sample"] == 0.5
    assert res.flows.height == 2
    assert res.flows.schema["goodput_bps"] == pl.Float64
    assert res.flows.schema["retransmits"] == pl.Int64
    assert {"name", "index", "cc", "recovery", "throughput_bps", "rtt_mean_s"} <= set(res.flows.columns)
    assert res.links.schema["utilization"] == pl.Float64
    assert {"drops", "queue_mean_pkts", "queue_max_pkts", "role"} <= set(res.links.columns)
    ts = res.timeseries
    assert ts.height == 2 * 8  # two flows, samples at 0, 0.5, ..., 3.5 s
    assert {"time_s", "name", "index", "cwnd", "seq_sent", "seq_acked"} <= set(ts.columns)
    assert res.queues.filter(pl.col("link") == "left->right").height == 8
    pandas = pytest.importorskip("pandas")
    assert isinstance(res.flows.to_pandas(), pandas.DataFrame)


def test_run_without_sampling_has_empty_but_typed_series() -> None:
    res = cclab.run(cclab.load(DUMBBELL).with_(**{"run.duration": "1s", "run.warmup": 0}))
    assert res.timeseries.height == 0 and "cwnd" in res.timeseries.columns
    assert res.queues.height == 0 and "queue_pkts" in res.queues.columns


def test_run_accepts_paths_and_dicts(tmp_path: Path) -> None:
    a = cclab.run(DUMBBELL, seed=1)
    b = cclab.run(cclab.load(DUMBBELL).to_dict(), seed=1)
    assert a.flows.equals(b.flows)


def test_run_accepts_toml_text_and_says_what_it_expects() -> None:
    text = cclab.load(DUMBBELL).with_(**{"run.duration": "1s", "run.warmup": 0}).to_toml()
    res = cclab.run(text, seed=1)
    assert res.summary["scenario"] == "dumbbell" and res.flows.height == 2
    assert res.flows.equals(cclab.run(cclab.Scenario.from_toml(text), seed=1).flows)
    # A TOML problem is reported as one, not as a missing file named after the text.
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(text.replace('"1s"', '"1 parsec"'))
    assert "run.duration" in err.value.args[0] and "no such file" not in err.value.args[0]
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run("[run\nduration = 1")
    assert err.value.args[0].startswith("invalid TOML")
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run("nowhere.toml")
    assert err.value.args[0] == "nowhere.toml: no such file (expected a path, TOML text or a Scenario)"
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(42)  # type: ignore[arg-type]
    assert err.value.args == ("scenario: expected a path, TOML text, a dict or a Scenario, not int", "scenario")


def test_a_run_builds_its_scenario_once_and_still_refuses_what_only_a_build_finds() -> None:
    """cclab.run no longer validates (builds) the scenario before and after the run:
    the resolved scenario it keeps is parse_toml's, equal to validate_toml's, and an
    error only a build finds (a flow between unknown nodes) comes from the run itself."""
    from cclab import _core

    text = DUMBBELL.read_text()
    assert _core.parse_toml(text, "d") == _core.validate_toml(text, "d", "unlimited")
    assert cclab.run(text, seed=1).config == cclab.load(DUMBBELL).validate()
    data = cclab.load(DUMBBELL).to_dict()
    link = {"from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms", "buffer": "unlimited"}
    data["topology"] = {"kind": "graph", "nodes": ["a", "b", "island"], "links": [link]}
    data["flows"] = [{"name": "f", "from": "a", "to": "island"}]
    cclab.estimate_memory(data)  # parsed and checked without a build: no error yet
    with pytest.raises(cclab.ScenarioError) as before:
        cclab.Scenario.from_dict(data)
    with pytest.raises(cclab.ScenarioError) as run:
        cclab.run(data)
    assert run.value.args == before.value.args == ('flows[0].to: no route from "a" to "island"', "flows[0].to")
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run({**data, "run": {"duration": object()}})
    assert err.value.args[0].startswith("cannot be written as TOML")


def test_errors_print_as_one_sentence_and_wrong_types_name_the_argument(tmp_path: Path) -> None:
    """`print(e)` shows the message, not the (message, key_path) tuple in `args`;
    a value of the wrong type is a ScenarioError naming the argument, not a raw TypeError."""
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.load(tmp_path / "nope.toml")
    assert str(err.value) == f"{tmp_path / 'nope.toml'}: no such file"
    assert err.value.args == (str(err.value), "")
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(DUMBBELL.read_text().replace('"20s"', '"20 parsecs"'))
    assert str(err.value).startswith('run.duration: unknown time unit "parsecs"')
    assert err.value.args[1] == "run.duration"
    for call, message in (
        (lambda: cclab.load(None), "path: expected a scenario file's path (a str or Path), not NoneType"),  # type: ignore[arg-type]
        (lambda: cclab.run(None), "scenario: expected a path, TOML text, a dict or a Scenario, not NoneType"),  # type: ignore[arg-type]
        (lambda: cclab.estimate_memory(3.5), "scenario: expected a path, TOML text, a dict or a Scenario, not float"),  # type: ignore[arg-type]
        (lambda: cclab.Scenario.from_toml(b"[run]"), "text: expected TOML text (a str), not bytes"),  # type: ignore[arg-type]
        (lambda: cclab.Scenario.from_dict([1]), "data: expected a dict shaped like the TOML file, not list"),  # type: ignore[arg-type]
    ):
        with pytest.raises(cclab.ScenarioError) as err:
            call()
        assert str(err.value) == message
        assert err.value.args[1] == message.split(":")[0]
    cancelled = cclab.RunCancelled("run cancelled at 1.5 of 20 simulated seconds, after 100 events", 1.5)
    assert str(cancelled) == "run cancelled at 1.5 of 20 simulated seconds, after 100 events"


@pytest.mark.parametrize("seed", [-1, 2**64, "7", 1.0, True])
def test_run_refuses_seeds_the_command_line_refuses(seed: object) -> None:
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(DUMBBELL, seed=seed)  # type: ignore[arg-type]
    assert err.value.args[0].startswith("seed: ") and err.value.args[1] == "seed"


def test_a_run_estimated_above_an_hour_of_cpu_is_refused_unless_allow_long() -> None:
    """Issue 45 item 2, from Python: refused before anything is built, with the
    estimate; loading and validating do not refuse it."""
    slow = cclab.load(DUMBBELL).with_(**{"run.duration": "1000000s"})
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(slow)
    assert err.value.args[1] == "run.duration"
    assert "about 1.6 h of CPU, above the 1 h limit on a run's time" in str(err.value)
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(slow, allow_long="yes")  # type: ignore[arg-type]
    assert str(err.value) == "allow_long: expected True or False, not 'yes'"
    quick = cclab.load(DUMBBELL).with_(**{"run.duration": "1s", "run.warmup": 0})
    assert cclab.run(quick, allow_long=True).flows.height == 2


def test_memory_limit_refuses_a_scenario_before_it_is_built() -> None:
    big = cclab.load(DUMBBELL).with_(**{"flows[0].count": 1000})
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(big, memory_limit="1MB")
    message, path = err.value.args
    assert path == "flows"
    assert message.startswith("flows: 1,000 flow instances need about ")
    assert "above the 1 MB memory limit" in message
    with pytest.raises(cclab.ScenarioError) as err:
        big.validate(memory_limit=1_000_000)
    assert "above the 1 MB memory limit" in err.value.args[0]
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(big, memory_limit="lots")
    assert err.value.args[1] == "memory_limit"
    assert big.validate(memory_limit="unlimited")["flows"][0]["count"] == 1000
    estimate = cclab.estimate_memory(big)
    assert 5e6 < estimate["bytes"] < 20e6 and estimate["largest"] == "flows"


def test_observe_sections_record_long_metrics_with_their_series_known_beforehand() -> None:
    scn = cclab.load(DUMBBELL).to_dict()
    scn["run"] |= {"duration": "1s", "warmup": "0s", "sample": "250ms"}
    scn["observe"] = [
        {"flows": ["bulk"], "metrics": ["cwnd", "recovery.*"], "every": "100ms"},
        {"links": ["left->right"], "metrics": ["drops"], "every": "500ms"},
    ]
    res = cclab.run(scn)
    assert res.config["observe"][0]["metrics"] == ["cwnd", "recovery.in_recovery", "recovery.pipe"]
    m = res.metrics
    assert dict(m.schema) == cclab.result.metrics_schema()
    observed = m.filter(pl.col("selection") == "observe[0]")
    assert observed.filter(pl.col("metric") == "recovery.pipe").height == 2 * 10  # two flows, every 100 ms
    assert observed["unit"].unique().sort().to_list() == ["bool", "segments"]
    drops = m.filter(pl.col("selection") == "observe[1]")
    assert drops["component"].unique().to_list() == ["left->right"] and drops["instance"].null_count() == 2
    series = res.series
    assert series.height == series.unique().height and set(series["selection"]) == {
        "run.sample",
        "observe[0]",
        "observe[1]",
    }
    # The wide views are what run.sample recorded.
    cwnd = m.filter((pl.col("selection") == "run.sample") & (pl.col("metric") == "cwnd"))
    assert res.timeseries["cwnd"].to_list() == cwnd["value"].to_list()
    assert res.timeseries.height == 2 * 4 and res.queues["queue_pkts"].dtype == pl.Int64


def test_on_change_keeps_exactly_the_samples_whose_value_changed() -> None:
    scn = cclab.load(DUMBBELL).to_dict()
    scn["run"] |= {"duration": "2s", "warmup": "0s"}
    every = {"flows": ["bulk"], "links": ["left->right"], "metrics": ["cwnd", "drops", "departed_bytes.flow"],
             "every": "1ms"}  # fmt: skip
    scn["observe"] = [every, every | {"on_change": True}]
    res = cclab.run(scn)
    assert res.config["observe"][1]["on_change"] is True and res.config["observe"][0]["on_change"] is False
    keys = ["kind", "component", "instance", "flow_id", "metric"]
    full = res.metrics.filter(pl.col("selection") == "observe[0]")
    changed = res.metrics.filter(pl.col("selection") == "observe[1]")
    # The first sample of a series, then each one that differs from the one before it.
    expected = full.filter(pl.col("value").ne_missing(pl.col("value").shift(1).over(keys)))
    assert changed.drop("selection").sort([*keys, "time_s"]).equals(expected.drop("selection").sort([*keys, "time_s"]))
    assert 0 < changed.height < full.height / 2, (changed.height, full.height)
    assert set(changed["metric"]) == {"cwnd", "drops", "departed_bytes.flow"}


def test_observe_alone_leaves_the_wide_views_empty_and_typed() -> None:
    scn = cclab.load(DUMBBELL).to_dict()
    scn["run"] |= {"duration": "1s", "warmup": "0s"}
    scn["observe"] = [{"flows": ["*"], "metrics": ["cwnd"], "every": "500ms"}]
    res = cclab.run(scn)
    assert res.metrics.height == 2 * 2
    assert res.timeseries.height == 0 and "cwnd" in res.timeseries.columns
    assert res.queues.height == 0


def test_run_without_time_series_has_an_empty_typed_metrics_table() -> None:
    res = cclab.run(cclab.load(DUMBBELL).with_(**{"run.duration": "1s", "run.warmup": 0}))
    assert res.metrics.height == 0 and dict(res.metrics.schema) == cclab.result.metrics_schema()
    assert res.series.height == 0


def test_an_unknown_metric_is_one_line_naming_the_key() -> None:
    scn = cclab.load(DUMBBELL).to_dict()
    scn["observe"] = [{"flows": ["bulk"], "metrics": ["cwdn"], "every": "1ms"}]
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.run(scn)
    message = err.value.args[0]
    assert message.startswith('observe[0].metrics: unknown metric "cwdn"; did you mean "cwnd"?'), message
    assert "\n" not in message
