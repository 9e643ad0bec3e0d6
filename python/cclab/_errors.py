"""The exceptions the simulator core raises, defined here so that they print as
what they say: ``print(e)`` of a ScenarioError is its message, one sentence,
not the ``(message, key_path)`` tuple that ``args`` holds. The core
(``cclab._core``) raises these classes and exports them under the same names.
Nothing here may import the rest of cclab: the core imports this module while
the package is still being imported."""

from __future__ import annotations


class _MessageFirst:
    """``str()`` is the first of ``args`` (the message); the rest are data."""

    args: tuple[object, ...]

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ScenarioError(_MessageFirst, ValueError):
    """A scenario problem. ``args`` is ``(message, key_path)``; ``str()`` is the message,
    which starts with the key path."""


class RunCancelled(_MessageFirst, KeyboardInterrupt):
    """A run stopped by its CancelToken (Ctrl-C). ``args`` is ``(message,
    simulated_seconds_reached)``; ``str()`` is the message."""
