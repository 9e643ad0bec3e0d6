"""The cclab side every cross-check shares (run by hand, not in CI): a
scenario run through the Rust example runner, its result as JSON.

With CCLAB_PYTHON set to a Python interpreter that has cclab installed (e.g.
CCLAB_PYTHON=/work/venv-fair/bin/python), the scenario runs through that
installation's `python -m cclab run FILE --json` instead, which builds nothing;
the JSON is the same result."""

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def run_scenario(text: str) -> dict[str, Any]:
    """Runs scenario text with `cargo run --release --example run` (CCLAB_JSON=1), or CCLAB_PYTHON's
    `-m cclab run --json`; returns the result."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        python = os.environ.get("CCLAB_PYTHON")
        if python:
            command = [python, "-m", "cclab", "run", f.name, "--json"]
        else:
            command = ["cargo", "run", "--release", "-q", "-p", "cclab-sim", "--example", "run", "--", f.name]
        env = {**os.environ, "CCLAB_JSON": "1"}
        out = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    finally:
        os.unlink(f.name)
    return json.loads(out.stdout)
