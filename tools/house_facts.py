"""Facts about the code's shape: module import circles and the longest functions.

Run from the repository root: `python3 tools/house_facts.py`. Used to state, in
an issue's closing note, what a restructuring changed (issue 46); not part of
the tests.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rust_module_name(crate_src: Path, path: Path) -> str:
    rel = path.relative_to(crate_src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return "::".join(parts) or "crate"


def rust_graph(crate_src: Path) -> dict[str, set[str]]:
    """Edges module -> top-level-or-nested module it names through `crate::`."""
    files = sorted(crate_src.rglob("*.rs"))
    modules = {rust_module_name(crate_src, f): f for f in files}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        text = path.read_text()
        # Tests inside a module may import anything; they are not the design.
        text = text.split("#[cfg(test)]")[0]
        refs = set(re.findall(r"crate::((?:\w+::)*\w+)", text))
        for group in re.findall(r"use crate::\{([^}]*)\}", text, re.S):
            refs.update(p.strip().split("::")[0] for p in group.split(","))
        for ref in refs:
            parts = ref.split("::")
            # Longest prefix that is a module.
            for n in range(len(parts), 0, -1):
                target = "::".join(parts[:n])
                if target in modules:
                    break
            else:
                continue
            # Parent modules re-export children; an edge to a submodule of
            # oneself or to one's own ancestor is not a circle of design.
            if target != name and not name.startswith(target + "::") and not target.startswith(name + "::"):
                graph[name].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def rust_functions(path: Path) -> list[tuple[int, str, int]]:
    """(length in lines, name, first line) of every fn outside test modules."""
    lines = path.read_text().splitlines()
    out = []
    in_tests = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == "#[cfg(test)]":
            in_tests = True
        m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(\w+)", line)
        if m and not in_tests:
            depth = 0
            started = False
            j = i
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if "{" in lines[j]:
                    started = True
                if started and depth <= 0:
                    break
                if not started and lines[j].rstrip().endswith(";"):
                    break
                j += 1
            if started:
                out.append((j - i + 1, m.group(1), i + 1))
        i += 1
    return out


def python_functions(path: Path) -> list[tuple[int, str, int]]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = node.end_lineno or node.lineno
            out.append((end - node.lineno + 1, node.name, node.lineno))
    return out


def python_graph(package: Path) -> dict[str, set[str]]:
    """Module-level (not function-local) imports between cclab's modules."""
    modules = {}
    for f in sorted(package.rglob("*.py")):
        rel = f.relative_to(package.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = f
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        is_pkg = path.name == "__init__.py"
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        for node in tree.body:
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    prefix = base[: len(base) - node.level + 1]
                    mod = ".".join(prefix + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets.append(mod)
                targets.extend(f"{mod}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                targets.extend(a.name for a in node.names)
            for t in targets:
                if t in modules and t != name and not name.startswith(t + ".") and not t.startswith(name + "."):
                    graph[name].add(t)
    return graph


def main() -> None:
    crates = sorted((ROOT / "crates").glob("*/src"))
    print("# Import circles (strongly connected module groups, tests excluded)\n")
    total = 0
    for src in crates:
        for comp in strongly_connected(rust_graph(src)):
            total += 1
            print(f"- {src.parent.name}: {len(comp)} modules: {', '.join(comp)}")
    for comp in strongly_connected(python_graph(ROOT / "python" / "cclab")):
        total += 1
        print(f"- python: {len(comp)} modules: {', '.join(comp)}")
    print(f"\n{total} circles\n")
    print("# Longest functions (lines, tests excluded)\n")
    funcs = []
    for src in crates:
        for f in src.rglob("*.rs"):
            funcs += [(n, name, f"{f.relative_to(ROOT)}:{line}") for n, name, line in rust_functions(f)]
    for f in (ROOT / "python" / "cclab").rglob("*.py"):
        funcs += [(n, name, f"{f.relative_to(ROOT)}:{line}") for n, name, line in python_functions(f)]
    funcs.sort(reverse=True)
    for n, name, where in funcs[:20]:
        print(f"- {n:4d}  {name}  ({where})")
    over = sum(1 for n, _, _ in funcs if n > 100)
    print(f"\n{over} functions longer than 100 lines of {len(funcs)}")


if __name__ == "__main__":
    main()
