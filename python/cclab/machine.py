"""What a timing was measured on: the processor, its caches and the system.

A speed figure means little without the machine beside it: the simulator's
time goes mostly into memory, so another processor generation, another cache
size or another tenant of a shared host's caches moves it (on one 2-core VM
the same binary ran the 200 s Table 2 benchmark in 28 s of CPU and, twenty
minutes later, in 38 s). Every benchmark prints `machine_line()` beside its
load average, so that figures taken on different machines are not compared as
if they were one.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")
CPU0_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


def _cpuinfo_fields(text: str) -> dict[str, str]:
    """The first processor's `key: value` lines of /proc/cpuinfo."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def _caches(root: Path) -> dict[str, str]:
    """The first CPU's data and unified caches by level ("L1d", "L2", "L3") and size as the kernel writes it."""
    caches: dict[str, str] = {}
    for index in sorted(root.glob("index*")):
        with contextlib.suppress(OSError):
            kind = (index / "type").read_text().strip()
            if kind == "Instruction":
                continue
            level = (index / "level").read_text().strip()
            caches[f"L{level}{'d' if kind == 'Data' else ''}"] = (index / "size").read_text().strip()
    return caches


def machine_facts(cpuinfo: Path = CPUINFO, caches: Path = CPU0_CACHES) -> dict[str, Any]:
    """CPU count, model name, family and model numbers, caches, virtualisation, system and Python."""
    fields: dict[str, str] = {}
    with contextlib.suppress(OSError):
        fields = _cpuinfo_fields(cpuinfo.read_text())

    def number(key: str) -> int | None:
        value = fields.get(key, "")
        return int(value) if value.isdigit() else None

    return {
        "cpus": os.cpu_count(),
        "cpu_model": fields.get("model name"),
        "cpu_family": number("cpu family"),
        "cpu_model_number": number("model"),
        "caches": _caches(caches),
        "virtual_machine": " hypervisor" in f" {fields.get('flags', '')}" if fields else None,
        "system": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
    }


def machine_line(facts: dict[str, Any] | None = None) -> str:
    """One line for a benchmark's header, e.g.
    `AMD EPYC (family 25, model 17), 2 CPUs, L1d 32K, L2 1024K, L3 32768K, virtual machine, Linux 6.1.0`."""
    f = machine_facts() if facts is None else facts
    cpu = f.get("cpu_model") or platform.machine() or "unknown CPU"
    if f.get("cpu_family") is not None and f.get("cpu_model_number") is not None:
        cpu += f" (family {f['cpu_family']}, model {f['cpu_model_number']})"
    parts = [cpu, f"{f.get('cpus')} CPUs"]
    parts += [f"{level} {size}" for level, size in f.get("caches", {}).items()]
    if f.get("virtual_machine"):
        parts.append("virtual machine")
    parts.append(f["system"])
    return ", ".join(parts)
