"""The cclab side every cross-check shares (run by hand, not in CI): a
scenario run through the Rust example runner, its result as JSON."""

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def run_scenario(text: str) -> dict[str, Any]:
    """Runs scenario text with `cargo run --release --example run` (CCLAB_JSON=1); returns the result."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        command = ["cargo", "run", "--release", "-q", "-p", "cclab-sim", "--example", "run", "--", f.name]
        env = {**os.environ, "CCLAB_JSON": "1"}
        out = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    finally:
        os.unlink(f.name)
    return json.loads(out.stdout)
