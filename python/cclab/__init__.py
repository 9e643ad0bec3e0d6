"""cclab: a congestion-control laboratory.

The simulator is a Rust core (``cclab._core``); this package is its Python
front end and the ``cclab`` command.
"""

from cclab._core import ScenarioError, __version__

__all__ = ["ScenarioError", "__version__"]
