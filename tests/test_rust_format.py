"""Every Rust source file is formatted as `cargo fmt` would format it.

`cargo fmt` follows `mod` declarations, and an algorithm's module is declared
by its role's `cclab_wire::algorithms!` list (docs/architecture.md, adding an
algorithm), which `cargo fmt` does not open. So this test hands rustfmt every
`.rs` file under `crates/` itself. Skipped where rustfmt is not installed
(`rustup component add rustfmt`).
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_rust_file_is_formatted() -> None:
    rustfmt = shutil.which("rustfmt")
    if rustfmt is None:
        pytest.skip("rustfmt is not installed (rustup component add rustfmt)")
    files = sorted(str(p) for p in (ROOT / "crates").rglob("*.rs") if "target" not in p.parts)
    proc = subprocess.run(
        [rustfmt, "--check", "--edition", "2021", "--config-path", str(ROOT / "rustfmt.toml"), *files],
        capture_output=True,
        text=True,
    )
    unformatted = sorted(set(re.findall(r"^Diff in (.+?\.rs)", proc.stdout, re.M)))
    assert proc.returncode == 0, f"not formatted (run `rustfmt --edition 2021 FILE`): {unformatted or proc.stderr}"
