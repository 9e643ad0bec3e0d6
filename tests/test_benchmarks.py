"""The benchmark scripts' scenarios stay valid and mean what their comments say."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import cclab

ROOT = Path(__file__).resolve().parent.parent


def table2_speed() -> ModuleType:
    spec = importlib.util.spec_from_file_location("table2_speed", ROOT / "benchmarks" / "table2_speed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_scenarios_take_the_asked_duration_and_a_warmup_that_ends_before_it() -> None:
    bench = table2_speed()
    for path in [bench.SCENARIO, bench.ENGINE_FLOOR]:
        scn = cclab.Scenario.from_toml(bench.scenario_text(2, path), path.stem)
        assert scn.get("run.duration") == "2s"
        assert scn.get("run.warmup") == "1s"


def test_the_engine_floor_loads_each_bottleneck_to_92_percent_with_udp_both_ways() -> None:
    bench = table2_speed()
    scn = cclab.Scenario.from_toml(bench.scenario_text(1, bench.ENGINE_FLOOR), "udp-engine")
    assert {flow["protocol"] for flow in scn.to_dict()["flows"]} == {"udp"}
    links = cclab.run(scn).links.to_pandas().set_index("name")
    for bottleneck in ["left->right", "right->left"]:
        assert abs(links.loc[bottleneck, "utilization"] - 0.92) < 0.01, links.loc[bottleneck]
