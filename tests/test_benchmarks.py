"""The benchmark scripts' scenarios stay valid and mean what their comments say."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import cclab
import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Where `cargo test --release` put the examples: CARGO_TARGET_DIR when set (the
#: memory-probe tests used to look only in ROOT/target and skipped there).
EXAMPLES_BUILT = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "examples"


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


def test_a_variant_sets_both_high_speed_flows_as_the_study_does_and_nothing_else() -> None:
    from cclab.studies.pacing import CC_PARAMS, VARIANTS

    bench = table2_speed()
    text = bench.scenario_text(2)
    plain = cclab.Scenario.from_toml(text, "t2").to_dict()
    for variant in VARIANTS:
        flows = cclab.Scenario.from_toml(bench.variant_text(text, variant), variant.slug).to_dict()["flows"]
        for i, flow in enumerate(flows):
            if i < 2:
                assert (flow["cc"], flow["pacing"], flow["cc_params"]) == (
                    variant.cc,
                    variant.pacing,
                    CC_PARAMS[variant.cc],
                )
                flow = flow | {key: plain["flows"][i][key] for key in ["cc", "pacing", "cc_params"]}
            assert flow == plain["flows"][i], (variant.slug, i)


def test_the_summary_gives_the_median_and_range_of_the_cpu_times_and_the_largest_peak() -> None:
    line = table2_speed().summary_line([31.8, 27.1, 28.7, 29.5], [99.0, 107.0, 101.5, 100.0])
    assert line == "CPU over 4 runs: median 29.10 s, range 27.10-31.80 s; peak RSS up to 107.0 MB"


def test_the_engine_floor_loads_each_bottleneck_to_92_percent_with_udp_both_ways() -> None:
    bench = table2_speed()
    scn = cclab.Scenario.from_toml(bench.scenario_text(1, bench.ENGINE_FLOOR), "udp-engine")
    assert {flow["protocol"] for flow in scn.to_dict()["flows"]} == {"udp"}
    links = cclab.run(scn).links.to_pandas().set_index("name")
    for bottleneck in ["left->right", "right->left"]:
        assert abs(links.loc[bottleneck, "utilization"] - 0.92) < 0.01, links.loc[bottleneck]


def fake_machine(tmp_path: Path) -> tuple[Path, Path]:
    """A /proc/cpuinfo of two processors and cpu0's cache directory, as Linux writes them."""
    processor = (
        "processor\t: {n}\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
        "model name\t: AMD EPYC\nflags\t\t: fpu sse2 hypervisor avx512f\n\n"
    )
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(processor.format(n=0) + processor.format(n=1).replace("model\t\t: 17", "model\t\t: 99"))
    caches = tmp_path / "cache"
    for index, (level, kind, size) in enumerate(
        [("1", "Data", "32K"), ("1", "Instruction", "32K"), ("2", "Unified", "1024K"), ("3", "Unified", "32768K")]
    ):
        d = caches / f"index{index}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return cpuinfo, caches


def test_the_machine_line_names_the_first_processors_family_model_and_data_caches(tmp_path: Path) -> None:
    from cclab.machine import machine_facts, machine_line

    facts = machine_facts(*fake_machine(tmp_path))
    assert (facts["cpu_model"], facts["cpu_family"], facts["cpu_model_number"]) == ("AMD EPYC", 25, 17)
    assert facts["caches"] == {"L1d": "32K", "L2": "1024K", "L3": "32768K"}
    assert facts["virtual_machine"] is True
    line = machine_line(facts)
    assert line.startswith("AMD EPYC (family 25, model 17), ")
    assert ", L1d 32K, L2 1024K, L3 32768K, virtual machine, " in line


def test_the_machine_line_says_what_it_cannot_read(tmp_path: Path) -> None:
    from cclab.machine import machine_facts, machine_line

    facts = machine_facts(tmp_path / "no-cpuinfo", tmp_path / "no-caches")
    unread = (facts["cpu_model"], facts["cpu_family"], facts["caches"], facts["virtual_machine"])
    assert unread == (None, None, {}, None)
    assert "(family" not in machine_line(facts) and "CPUs" in machine_line(facts)


def test_the_memory_probe_times_a_load_from_each_buffer_size_or_says_it_is_not_built(tmp_path: Path) -> None:
    bench = table2_speed()
    assert bench.memory_line(tmp_path / "run").startswith(f"(no {tmp_path / 'memory_probe'}: cargo build")
    built = EXAMPLES_BUILT / "run"
    if not (built.parent / "memory_probe").is_file():
        pytest.skip("the memory_probe example is not built (cargo build --release --examples)")
    line = bench.memory_line(built)
    sizes = re.fullmatch(r"ns per dependent load: 256K ([0-9.]+), 8M ([0-9.]+), 256M ([0-9.]+)", line)
    assert sizes is not None, line
    assert all(float(ns) > 0 for ns in sizes.groups())


@pytest.mark.parametrize("millis", ["0", "x", "-5"])
def test_the_memory_probe_refuses_a_bad_duration_in_one_line(millis: str) -> None:
    probe = EXAMPLES_BUILT / "memory_probe"
    if not probe.is_file():
        pytest.skip("the memory_probe example is not built (cargo build --release --examples)")
    done = subprocess.run([str(probe), millis], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["usage: memory_probe [MILLIS per size, a positive integer; default 300]"]


def run_table2_speed(args: list[str], path: str | None = None) -> subprocess.CompletedProcess[str]:
    """table2_speed.py with `args`; with `path`, finding programs (valgrind) on it alone."""
    script = ROOT / "benchmarks" / "table2_speed.py"
    env = None if path is None else {"PATH": path}
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env)


def test_an_unknown_variant_is_refused_naming_the_argument_and_the_choices() -> None:
    done = run_table2_speed(["--variant", "fast-tcp"])
    assert done.returncode == 2 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert "argument --variant: invalid choice: 'fast-tcp'" in last and "paced-hstcp" in last, done.stderr
    assert "Traceback" not in done.stderr


def test_instructions_are_counted_under_cachegrind_in_total_per_hop_and_per_event(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    called = tmp_path / "called"
    valgrind = bin_dir / "valgrind"
    # Stands in for valgrind: notes its arguments and answers as cachegrind and the `run` example do.
    valgrind.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(called)!r}, 'w').write(' '.join(sys.argv[1:]))\n"
        "print('wall 0.0100s events 1000 (0.1 M/s) hops 3000 (0.3 M/s) delivered 1 MB')\n"
        "print('==7== I   refs:      2,100,000', file=sys.stderr)\n"
    )
    valgrind.chmod(0o755)
    binary = tmp_path / "run"
    binary.write_text("")
    done = run_table2_speed(
        ["--binary", str(binary), "--duration", "1", "--variant", "stcp", "--instructions"], str(bin_dir)
    )
    assert done.returncode == 0, done.stderr
    line = "instructions 2,100,000 (700 per packet hop, 2100 per event), events 1000, packet hops 3000"
    assert line in done.stdout.splitlines()
    arguments = called.read_text().split()
    assert arguments[:3] == ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    assert arguments[3] == str(binary) and arguments[4].endswith("table2-2g5.toml")


def test_counting_instructions_without_valgrind_is_refused_in_one_line(tmp_path: Path) -> None:
    done = run_table2_speed(["--duration", "1", "--instructions"], str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "--instructions: valgrind is not on PATH (its cachegrind tool counts the instructions)"
    ]


def test_repeating_a_count_of_instructions_is_refused_in_one_line(tmp_path: Path) -> None:
    # A stand-in valgrind on PATH, so that the refusal is the repeat's, not valgrind's absence.
    (tmp_path / "valgrind").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "valgrind").chmod(0o755)
    binary = tmp_path / "run"
    binary.write_text("")
    done = run_table2_speed(["--binary", str(binary), "--repeat", "3", "--instructions"], str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["--repeat: with --instructions each run is counted once (counts do not vary)"]


def test_flow_scaling_reports_each_count_interleaved_with_cpu_per_hop_and_memory_per_flow() -> None:
    script = ROOT / "benchmarks" / "flow_scaling.py"
    args = ["--flows", "4,2", "--duration", "0.3", "--rounds", "2"]
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if re.match(r"\s*\d+\s+\d", line)]
    assert [row[0] for row in rows] == ["2", "4"], done.stdout  # sorted, one median row per count
    assert rows[0][4] == "1.00" and rows[0][7] == "-", done.stdout  # the first count is the reference
    hops = int(rows[0][2])
    # ns/hop is the call's CPU over its hops (the CPU printed to the millisecond).
    assert hops > 0 and abs(int(rows[0][3]) * hops / 1e9 - float(rows[0][1])) <= 0.0005 + hops / 1e9
    assert ": medians of 2 interleaved rounds" in done.stdout and "load average after" in done.stdout


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--flows", "0"], "--flows"), (["--rounds", "0"], "--rounds"), (["--duration", "-1"], "--duration")],
)
def test_flow_scaling_refuses_bad_arguments_in_one_line(args: list[str], named: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "flow_scaling.py"), *args],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith(named) and len(done.stderr.splitlines()) == 1


def run_ns3_p1(args: list[str]) -> subprocess.CompletedProcess[str]:
    script = ROOT / "benchmarks" / "ns3_p1.py"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)


@pytest.mark.parametrize(
    "args, line",
    [
        (["--ns3-python", sys.executable, "--rounds", "0"], "--rounds: must be at least 1, not 0"),
        (["--ns3-python", sys.executable, "--rounds", "two"], "argument --rounds: invalid int value: 'two'"),
        (["--ns3-python", "/no/such/python"], "--ns3-python: /no/such/python is not an executable file"),
        ([], "the following arguments are required: --ns3-python"),
    ],
)
def test_the_ns3_p1_comparison_refuses_a_bad_argument_in_one_line_naming_it(args: list[str], line: str) -> None:
    done = run_ns3_p1(args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [line]
