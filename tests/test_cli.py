"""The `cclab` command as a user meets it: output shapes, seeds, and errors."""

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, cclab

FLOW_KEYS = {
    "name",
    "index",
    "direction",
    "protocol",
    "cc",
    "recovery",
    "goodput_bps",
    "throughput_bps",
    "retransmits",
    "timeouts",
    "rtt_mean_s",
}
LINK_KEYS = {"name", "utilization", "drops", "queue_mean_pkts", "queue_max_pkts"}
TOP_KEYS = {"scenario", "seed", "sim_time_s", "wall_s", "events", "packet_hops", "flows", "links"}


def run_json(*args: str) -> dict:
    proc = cclab("run", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_json_summary_has_the_documented_keys(dumbbell: Path) -> None:
    summary = run_json(str(dumbbell))
    assert TOP_KEYS <= summary.keys()
    assert summary["scenario"] == "dumbbell"
    assert summary["sim_time_s"] == 20.0
    assert len(summary["flows"]) == 2
    for flow in summary["flows"]:
        assert FLOW_KEYS <= flow.keys()
        assert flow["protocol"] == "tcp" and flow["recovery"] == "sack" and flow["cc"] == "reno"
    bottleneck = next(link for link in summary["links"] if link["role"] == "bottleneck")
    assert LINK_KEYS <= bottleneck.keys()
    # Two bulk flows on a 1-BDP buffer keep the 100 Mbit/s bottleneck busy; 40-byte
    # headers on 1000-byte segments cap goodput at 1000/1040 of the link, give or
    # take data that crossed before the window and was delivered inside it (1 %).
    assert bottleneck["utilization"] > 0.95
    total_goodput = sum(f["goodput_bps"] for f in summary["flows"])
    assert 0.9 * 100e6 * 1000 / 1040 < total_goodput <= 1.01 * 100e6 * 1000 / 1040


def test_same_seed_same_output_and_seed_override(dumbbell: Path) -> None:
    a = run_json(str(dumbbell), "--seed", "7")
    b = run_json(str(dumbbell), "--seed", "7")
    c = run_json(str(dumbbell), "--seed", "8")
    for s in (a, b, c):
        s.pop("wall_s")
    assert a == b
    assert a["seed"] == 7 and c["seed"] == 8
    # Start times are drawn per seed, so the flows differ.
    assert a["flows"] != c["flows"]


def test_human_table(dumbbell: Path) -> None:
    proc = cclab("run", str(dumbbell))
    assert proc.returncode == 0, proc.stderr
    assert "bulk[0]" in proc.stdout and "bulk[1]" in proc.stdout
    assert "left->right" in proc.stdout and "bottleneck" in proc.stdout
    assert "access links not shown" in proc.stdout


def test_a_udt_flow_shows_protocol_and_congestion_control(tmp_path: Path) -> None:
    scenario = tmp_path / "udt.toml"
    scenario.write_text(
        '[run]\nduration = "2s"\n[topology]\nkind = "dumbbell"\n'
        '[topology.bottleneck]\nrate = "20Mbps"\ndelay = "10ms"\nbuffer = "1bdp"\n'
        '[[flows]]\nname = "u"\nprotocol = "udt"\ncc = "udt_combined"\nrtt = "40ms"\n',
        encoding="utf-8",
    )
    proc = cclab("run", str(scenario))
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("u[0]"))
    assert "udt/udt_combined" in row
    assert float(row.split()[3]) > 10, row


def test_validate_and_algorithms(dumbbell: Path) -> None:
    proc = cclab("validate", str(dumbbell))
    assert proc.returncode == 0 and "ok" in proc.stdout
    resolved = json.loads(cclab("validate", str(dumbbell), "--json").stdout)
    assert resolved["flows"][0]["tcp"]["mss"] == 1000
    algos = json.loads(cclab("algorithms", "--json").stdout)
    names = {(a["role"], a["name"]) for a in algos}
    assert {("recovery", n) for n in ("tahoe", "reno", "newreno", "sack", "sack1")} <= names
    assert {("cc", n) for n in ("reno", "highspeed", "scalable", "bic", "cubic", "vegas")} <= names
    assert all(a["source"] for a in algos)


def test_version_names_the_build() -> None:
    from cclab import _core

    proc = cclab("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"cclab {_core.__version__} (build {_core.build_id()[:12]})"


def test_bench_prints_rates() -> None:
    proc = cclab("bench", str(EXAMPLES / "dumbbell.toml"), "--repeat", "1")
    assert proc.returncode == 0, proc.stderr
    for label in ("simulation wall", "CPU (user+sys)", "events", "packet hops", "peak memory", "load at start",
                  "load at end"):  # fmt: skip
        assert label in proc.stdout


def test_bench_versus_times_both_variants_side_by_side() -> None:
    proc = cclab("bench", str(EXAMPLES / "dumbbell.toml"), "--versus", "flows[*].recovery=newreno",
                 "--versus", "run.duration=10s", "--repeat", "2")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "2 runs of each variant, interleaved" in lines[0]
    assert lines[2].split() == ["B", "flows[*].recovery=newreno", "run.duration=10s"]
    rows = {line[:17].strip(): line[17:].split() for line in lines}
    assert rows["median per run"] == ["A", "B", "A/B"]
    assert rows["simulated"] == ["20", "s", "10", "s"]
    for label in ("simulation wall", "CPU (user+sys)", "events/s"):
        a, b, ratio = float(rows[label][0]), float(rows[label][2]), float(rows[label][4])
        assert ratio == pytest.approx(a / b, rel=0.02), label
    # The variant simulates half the time, so it processes fewer events.
    assert int(rows["events"][0].replace(",", "")) > int(rows["events"][1].replace(",", ""))


BAD_VERSUS = [
    ("flows[0].reocvery=newreno", 'flows[0].reocvery: unknown key; did you mean "recovery"?'),
    ("flows[*].recovery=sackk", 'unknown loss recovery algorithm "sackk"'),
    ("flows[3].recovery=sack", "flows[3]: the scenario has only 1 flows entries"),
    ("flows[0].count=two", "flows[0].count"),
    ("topology.bottleneck.rate", "write KEY=VALUE"),
    ("run.duration=", "write KEY=VALUE"),
]


@pytest.mark.parametrize(("versus", "message"), BAD_VERSUS)
def test_bad_versus_is_one_line_naming_the_argument(dumbbell: Path, versus: str, message: str) -> None:
    proc = cclab("bench", str(dumbbell), "--versus", versus, "--repeat", "1")
    assert proc.returncode == 2, proc
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("cclab: error: --versus ")
    assert versus in proc.stderr and message in proc.stderr
    assert proc.stdout == "", "nothing runs before the arguments are checked"


def test_versus_given_twice_or_jointly_invalid(dumbbell: Path) -> None:
    proc = cclab("bench", str(dumbbell), "--versus", "run.seed=2", "--versus", "run.seed=3")
    assert proc.returncode == 2 and proc.stderr.strip() == "cclab: error: --versus run.seed: given twice"
    # Duration below the 5 s warmup: the error is at run.warmup, so every override is named.
    proc = cclab("bench", str(dumbbell), "--versus", "run.duration=1s", "--versus", "flows[0].cc=reno")
    assert proc.returncode == 2
    assert proc.stderr.startswith("cclab: error: --versus run.duration=1s, flows[0].cc=reno: run.warmup:")


BAD_INPUTS = [
    (
        'recovery = "sack"',
        'recovery = "sackk"',
        'flows[0].recovery: unknown loss recovery algorithm "sackk"; did you mean "sack"?',
    ),
    ('recovery = "sack"', 'reocvery = "sack"', 'flows[0].reocvery: unknown key; did you mean "recovery"?'),
    ('rate = "100Mbps"', 'rate = "100MBps"', 'topology.bottleneck.rate: unknown rate unit "MBps"'),
    ('rate = "100Mbps"', 'rate = "0Mbps"', "topology.bottleneck.rate"),
    ('warmup = "5s"', 'warmup = "25s"', "run.warmup: must be shorter than run.duration"),
    ('buffer = "1bdp"', 'buffer = "0pkts"', "topology.bottleneck.buffer: is under one packet"),
    ('rtt = "40ms"', 'rtt = "12ms"', "flows[0].rtt:"),
    # Issue 45 items 3 and 4: values outside physically meaningful ranges; a rate too slow for a BDP buffer.
    ('rtt = "40ms"', 'rtt = "100000s"', "flows[0].rtt: 100000s is above 20s, the longest round trip a flow may have"),
    ('buffer = "1bdp"', 'buffer = "1e12bdp"', 'topology.bottleneck.buffer: "1e12bdp" is above 1000bdp'),
    ('delay = "10ms"', 'delay = "1h"', "topology.bottleneck.delay: 3600s is above 10s"),
    (
        'rate = "100Mbps"',
        'rate = "1bps"',
        'topology.bottleneck.rate: 1bps is too slow for the buffer topology.bottleneck.buffer = "1bdp"',
    ),
    ("[run]", "[run\n", "invalid TOML"),
    ('app = "bulk"', 'app = { kind = "web", load = 1.5 }', "flows[0].app.load: 1.5 is out of range [0, 1]"),
    ('app = "bulk"', 'app = { kind = "web", load = 0 }', "flows[0].app.load: must be above 0 and at most 1"),
    (
        'app = "bulk"',
        'app = { kind = "web", load = 0.3, size = "pareto2(mean=10KB, shape=0.9)" }',
        'flows[0].app.size: "pareto2(mean=10KB, shape=0.9)": shape 0.9 must be above 1',
    ),
    ('rtt = "40ms"', 'rtt = "200ms..20ms"', 'flows[0].rtt: range "200ms..20ms" ends before it starts'),
    ('rtt = "40ms"', 'rtt = "20ms...200ms"', 'flows[0].rtt: "20ms...200ms" is not a range'),
    ("mss = 1000", "max_window = 0", "flows[0].max_window: 0 is out of range"),
    (
        'protocol = "tcp"',
        'protocol = "udt"',
        "flows[0].recovery: only applies to protocol tcp, not udt",
    ),
    # Links that dequeue (issue 44): disciplines, schedules, traces.
    ('queue = "droptail"', 'queue = "codle"', 'topology.bottleneck.queue: unknown queue discipline "codle"'),
    (
        'queue = "droptail"',
        'queue = "codel"\nqueue_params = { target = "100ms" }',
        "topology.bottleneck.queue_params.target: must be below interval",
    ),
    (
        'queue = "droptail"',
        'queue = "fq_codel"\nqueue_params = { quantum = "-1514B" }',
        "topology.bottleneck.queue_params.quantum",
    ),
    (
        'rate = "100Mbps"',
        'rate = [["0s", "100Mbps"], ["5s", "10Mbps"], ["2s", "50Mbps"]]',
        "topology.bottleneck.rate: the schedule goes back in time at step 2",
    ),
    ('delay = "10ms"', 'delay = [["1s", "10ms"]]', "topology.bottleneck.delay: the schedule must start at 0s"),
    ('rate = "100Mbps"', 'rate = "100Mbps"\ntrace = "nope.trace"', "topology.bottleneck.trace: no such trace file"),
    (
        'rate = "100Mbps"',
        f'rate = "100Mbps"\ntrace = "{EXAMPLES / "traces" / "constant-12mbps.trace"}"',
        "topology.bottleneck.buffer: a buffer sized in BDPs on a link whose rate varies needs buffer_rate",
    ),
]


def refused(tmp_path: Path, dumbbell: Path, old: str, new: str, message: str) -> list[str]:
    """Runs and validates the example with ``old`` replaced by ``new``; both must
    exit 2 with ``message`` on stderr, no traceback and nothing on stdout. Returns their stderr."""
    text = dumbbell.read_text()
    assert old in text
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(old, new, 1))
    errors = []
    for command in ("run", "validate"):
        proc = cclab(command, str(bad))
        assert proc.returncode == 2, proc
        assert message in proc.stderr
        assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
        assert proc.stdout == ""
        errors.append(proc.stderr)
    return errors


@pytest.mark.parametrize(("old", "new", "message"), BAD_INPUTS)
def test_bad_input_is_one_line_naming_the_key_and_exits_2(
    tmp_path: Path, dumbbell: Path, old: str, new: str, message: str
) -> None:
    refused(tmp_path, dumbbell, old, new, message)


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        ("", "has no delivery opportunities"),
        ("1\n5\n3\n", "line 3 goes back in time"),
        ("1\ntwo\n", "line 2 is not a whole number of milliseconds"),
        ("1\n\n2\n", "line 2 is empty"),
        ("0\n", "lasts no time"),
    ],
)
def test_a_bad_trace_file_is_one_line_naming_the_key_and_the_line(
    tmp_path: Path, dumbbell: Path, trace: str, message: str
) -> None:
    # A relative path is relative to the scenario file, which refused() writes beside it.
    (tmp_path / "bad.trace").write_text(trace)
    new = 'rate = "100Mbps"\ntrace = "bad.trace"\nbuffer = "100pkts"'
    text = dumbbell.read_text().replace('buffer = "1bdp"', "")
    scenario = tmp_path / "base.toml"
    scenario.write_text(text)
    refused(
        tmp_path, scenario, 'rate = "100Mbps"', new, f"topology.bottleneck.trace: {tmp_path / 'bad.trace'}: {message}"
    )


def test_missing_file_and_directory(tmp_path: Path) -> None:
    for path, message in ((tmp_path / "nope.toml", "no such file"), (tmp_path, "is a directory")):
        proc = cclab("run", str(path))
        assert proc.returncode == 2
        assert message in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "{dumbbell}", "--seed", "-1"), "argument --seed: -1 is outside [0, 2^64); see cclab run --help"),
        (("run", "{dumbbell}", "--seed", "abc"), "argument --seed: 'abc' is not a whole number; see cclab run --help"),
        (("sweep", "{dumbbell}", "--replications", "0"), "argument --replications: 0 is outside [1, 2^31)"),
        (("sweep", "{dumbbell}", "--jobs", "0"), "argument --jobs: 0 is outside [1, 2^31); see cclab sweep --help"),
        (("plot", "{dumbbell}", "--kind", "pie"), "argument --kind: invalid choice: 'pie' (choose from 'goodput',"),
        (("bench", "{dumbbell}", "--repeat", "0"), "argument --repeat: 0 is outside [1, 2^31)"),
        (("run",), "the following arguments are required: file; see cclab run --help"),
        (("frobnicate",), "argument COMMAND: invalid choice: 'frobnicate'"),
        ((), "the following arguments are required: COMMAND; see cclab --help"),
    ],
)
def test_bad_arguments_are_one_line_without_a_usage_block(dumbbell: Path, args: tuple[str, ...], message: str) -> None:
    """Like every other cclab error: one `cclab: error:` line and status 2 (argparse's
    own report starts with a usage block of several lines)."""
    proc = cclab(*(a.format(dumbbell=dumbbell) for a in args))
    assert proc.returncode == 2, args
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("cclab: error: "), proc.stderr
    assert message in proc.stderr and "usage:" not in proc.stderr, proc.stderr


def test_binding_raises_scenario_error_with_the_key_path() -> None:
    from cclab import ScenarioError, _core

    with pytest.raises(ScenarioError) as err:
        _core.run_toml('[run]\nduration = "1s"\nwarmup = "2s"\n', "t")
    message, path = err.value.args
    assert path == "run.warmup"
    assert message.startswith("run.warmup: ")


NEW_BAD_INPUTS = [
    ('start = "0s..1s"', 'start = "0s...1s"', 'flows[0].start: "0s...1s" is not'),
    ('rate = "100Mbps"', "rate = 100", 'topology.bottleneck.rate: 100 has no unit; write it as a string like "100Mb'),
    ('kind = "dumbbell"', 'kind = "ring"', 'topology.kind: unknown topology kind "ring" (one of dumbbell, graph)'),
    ('cc = "reno"', 'cc = "reno"\nmin_rto = "0s"\nclock_granularity = "0s"', "flows[0].min_rto:"),
    ('cc = "reno"', 'cc = "reno"\nmax_rto = "1ns"', "flows[0].max_rto: 1ns is under 1ms"),
    ('delay = "10ms"', 'delay = "1.5.3ms"', "topology.bottleneck.delay:"),
    (
        'cc = "reno"',
        'cc = "reno"\nssthresh_basis = "pipes"',
        'flows[0].ssthresh_basis: unknown basis "pipes"; did you mean "pipe"? (one of flight, pipe, cwnd)',
    ),
    (
        'cc = "reno"',
        'cc = "reno"\ncwnd_growth = "limited"',
        'flows[0].cwnd_growth: unknown rule "limited"; did you mean "cwnd_limited"? (one of always, cwnd_limited)',
    ),
    ('cc = "reno"', 'cc = "reno"\nsend_overhead = "-1ms"', 'flows[0].send_overhead: "-1ms" is negative'),
    (
        'queue = "droptail"',
        'queue = "red"\nqueue_params = { min_thresh = 20, max_thresh = 10 }',
        "topology.bottleneck.queue_params.min_thresh: must be below max_thresh",
    ),
    (
        'queue = "droptail"',
        'queue = "red"\nqueue_params = { w_q = 0 }',
        "topology.bottleneck.queue_params.w_q: must be in (0, 1)",
    ),
    (
        'queue = "droptail"',
        'queue = "red"\nqueue_params = { max_p = 2 }',
        "topology.bottleneck.queue_params.max_p: 2 is out of range [0, 1]",
    ),
    (
        'buffer = "1bdp"',
        'buffer = "20pkts"\nqueue_params = { threshold = 30 }',
        "topology.bottleneck.queue_params.threshold: droptail has no parameter",
    ),
    (
        'queue = "droptail"',
        'queue = "cw"\nqueue_params = { threshold = 1e6 }',
        "topology.bottleneck.queue_params.threshold: must not exceed the link's buffer of",
    ),
]


@pytest.mark.parametrize(("old", "new", "message"), NEW_BAD_INPUTS)
def test_strict_values_are_one_line_naming_the_key(
    tmp_path: Path, dumbbell: Path, old: str, new: str, message: str
) -> None:
    for stderr in refused(tmp_path, dumbbell, old, new, message):
        assert stderr.count("\n") == 1


def _limited(max_bytes: int):  # noqa: ANN202
    """A preexec_fn capping the child's address space, so a test of the memory
    refusal can never take the machine's memory if the refusal is missing."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


def test_a_scenario_too_big_for_memory_is_refused_in_one_line(tmp_path: Path, dumbbell: Path) -> None:
    import os
    import subprocess
    import sys

    text = dumbbell.read_text().replace("count = 2", "count = 100000")
    for g in range(1, 10):
        text += f'\n[[flows]]\nname = "g{g}"\ncount = 100000\nrtt = "40ms"\n'
    big = tmp_path / "big.toml"
    big.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "CCLAB_MEMORY_LIMIT"}
    for command in ("validate", "run"):
        proc = subprocess.run(
            [sys.executable, "-m", "cclab", command, str(big)],
            capture_output=True, text=True, timeout=120, env=env, preexec_fn=_limited(3 << 30),
        )  # fmt: skip
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith(f"cclab: error: {big}: flows: 1,000,000 flow instances need about ")
        assert "above the 4 GB memory limit" in proc.stderr and "CCLAB_MEMORY_LIMIT" in proc.stderr


def test_the_memory_limit_is_set_by_option_or_environment(tmp_path: Path, dumbbell: Path) -> None:
    import os
    import subprocess
    import sys

    scenario = tmp_path / "thousand.toml"
    text = dumbbell.read_text().replace("count = 2", "count = 1000")
    scenario.write_text(text.replace('duration = "20s"', 'duration = "1s"').replace('warmup = "5s"', "warmup = 0"))

    def run(*args: str, limit: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "CCLAB_MEMORY_LIMIT"}
        if limit is not None:
            env["CCLAB_MEMORY_LIMIT"] = limit
        return subprocess.run([sys.executable, "-m", "cclab", *args], capture_output=True, text=True, env=env,
                              timeout=300)  # fmt: skip

    for proc in (
        run("validate", str(scenario), limit="1MB"),
        run("validate", str(scenario), "--memory-limit", "1MB"),
        run("run", str(scenario), "--memory-limit", "1MB", limit="64GB"),
    ):
        assert proc.returncode == 2, proc.stderr
        assert "flows: 1,000 flow instances need about" in proc.stderr and "above the 1 MB memory limit" in proc.stderr
    assert run("validate", str(scenario), "--memory-limit", "64GB", limit="1MB").returncode == 0
    assert run("validate", str(scenario), limit="unlimited").returncode == 0
    for proc, where in (
        (run("validate", str(scenario), "--memory-limit", "5 parsecs"), "--memory-limit"),
        (run("validate", str(scenario), limit="lots"), "CCLAB_MEMORY_LIMIT"),
    ):
        assert proc.returncode == 2 and where in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_an_unknown_observed_link_exits_2_with_one_line_naming_the_key(tmp_path: Path, dumbbell: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(dumbbell.read_text() + '\n[[observe]]\nlinks = ["left->middle"]\nevery = "1ms"\n')
    proc = cclab("run", str(scenario))
    assert proc.returncode == 2, proc
    line = proc.stderr.strip()
    assert "\n" not in line and line.startswith("cclab: error: ") and "observe[0].links: unknown link" in line, line


def test_a_path_too_fast_for_memory_is_refused_by_validate_at_once(tmp_path: Path) -> None:
    """Issue 45 item 1: a 100 Tbit/s bottleneck (1000 Tbit/s access) for 1000 s passed
    validate ("memory about 34.5 KB") and its run aborted on a failed allocation."""
    import time

    scenario = tmp_path / "tbit.toml"
    scenario.write_text(
        '[run]\nduration = "1000s"\n[topology]\nkind = "dumbbell"\naccess = { rate = "1000Tbps" }\n'
        '[topology.bottleneck]\nrate = "100Tbps"\ndelay = "10ms"\n[[flows]]\nname = "bulk"\nrtt = "40ms"\n'
    )
    started = time.monotonic()
    proc = cclab("validate", str(scenario))
    assert time.monotonic() - started < 5  # the interpreter's start included; the check itself is milliseconds
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr == (
        f"cclab: error: {scenario}: topology.bottleneck.rate: up to 961,538,462 packets of 1040 bytes in flight "
        "and queued on the bottleneck left->right (100Tbps x the 40ms RTT, and its 1bdp buffer) need about 240 GB, "
        "above the 4 GB memory limit; raise the limit with --memory-limit, memory_limit= or CCLAB_MEMORY_LIMIT if the "
        "machine has the memory\n"
    )
    proc = cclab("run", str(scenario))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "need about 240 GB" in proc.stderr, proc


@pytest.mark.parametrize(
    ("changes", "estimate"),
    [
        ({'duration = "20s"': 'duration = "1000000s"'}, "1000000s simulated with 2 flow instances is about "),
        (
            {'duration = "20s"': 'duration = "100000s"', "count = 2": "count = 100000"},
            "100000s simulated with 100,000 flow instances is about 7,211,538,462 packet hops, about 11.3 h of CPU",
        ),
    ],
)
def test_a_run_estimated_above_an_hour_is_refused_unless_allowed(
    tmp_path: Path, dumbbell: Path, changes: dict[str, str], estimate: str
) -> None:
    """Issue 45 item 2: such runs validated as ok and ran for hours."""
    text = dumbbell.read_text()
    for old, new in changes.items():
        text = text.replace(old, new)
    scenario = tmp_path / "long.toml"
    scenario.write_text(text)
    for command in ("validate", "run"):
        proc = cclab(command, str(scenario))
        assert proc.returncode == 2 and proc.stdout == "", proc
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"cclab: error: {scenario}: run.duration: ")
        assert estimate in proc.stderr and "above the 1 h limit on a run's time; pass --allow-long" in proc.stderr
    for form in ("--json", "--toml"):
        proc = cclab("validate", str(scenario), form)
        assert proc.returncode == 2 and proc.stdout == "" and "pass --allow-long" in proc.stderr, proc
    proc = cclab("validate", str(scenario), "--allow-long")
    assert proc.returncode == 0 and proc.stdout.startswith(f"{scenario}: ok ("), proc
    assert " h of CPU" not in proc.stdout and "CPU about " in proc.stdout and " h)" in proc.stdout, proc.stdout


@pytest.mark.parametrize("start", [".5s", "0.5x", "1e999s"])
def test_a_plot_start_that_is_not_a_time_is_named_in_one_line(tmp_path: Path, start: str) -> None:
    # Plots read times with the simulator's unit parser (`_core.quantity`), so what a scenario
    # refuses (".5s") is refused here too, in one line, before any run is read.
    proc = cclab("plot", "tseq", str(tmp_path), "--from", start)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"cclab: error: argument --from: '{start}' is not a time (seconds, or e.g. 250ms); see cclab plot --help"
    )


def test_a_prague_flow_on_a_path_without_l4s_marking_runs_with_a_warning(tmp_path: Path, dumbbell: Path) -> None:
    import cclab as api

    scenario = tmp_path / "prague.toml"
    text = dumbbell.read_text().replace('cc = "reno"', 'cc = "prague"').replace('duration = "20s"', 'duration = "6s"')
    scenario.write_text(text)
    proc = cclab("run", str(scenario), "--json")
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("cclab: warning:")]
    assert 'cc = "prague"' in line and "no link on its path marks L4S traffic" in line, line
    assert json.loads(proc.stdout)["warnings"] == [line.removeprefix("cclab: warning: ")]
    marked = text.replace('queue = "droptail"', 'queue = "step"\nqueue_params = { threshold = 20 }')
    assert api.run(marked, seed=1).warnings == []
