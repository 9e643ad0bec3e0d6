"""cclab: a congestion-control laboratory.

    >>> import cclab
    >>> scn = cclab.load("examples/dumbbell.toml")
    >>> res = cclab.run(scn.with_(**{"topology.bottleneck.rate": "50Mbps"}), seed=2)
    >>> res.flows.select("name", "index", "goodput_bps")
    >>> sw = cclab.sweep(scn, grid={"flows[0].recovery": ["newreno", "sack"]}, replications=5)
    >>> sw.summary

The simulator is a Rust core (``cclab._core``); this package is its Python
front end and the ``cclab`` command.
"""

from cclab._core import CancelToken, RunCancelled, __version__
from cclab.api import estimate_memory, run
from cclab.availbw import available_bandwidth, counter_rates
from cclab.result import Result
from cclab.scenario import Scenario, ScenarioError, load
from cclab.sweep import IdenticalReplicationsWarning, SweepError, SweepInterrupted, SweepResult, derive_seed, sweep

__all__ = [
    "CancelToken",
    "IdenticalReplicationsWarning",
    "Result",
    "RunCancelled",
    "Scenario",
    "ScenarioError",
    "SweepError",
    "SweepInterrupted",
    "SweepResult",
    "__version__",
    "available_bandwidth",
    "counter_rates",
    "derive_seed",
    "estimate_memory",
    "load",
    "run",
    "sweep",
]
