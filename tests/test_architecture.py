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


# -- NOTEs ---------------------------------------------------------------------------------
#: where NOTEs are written and cited
NOTE_ROOTS = ("src", "tests", "benchmarks", "docs")
NOTE_LINE = re.compile(r'^\s*(?:#:?|/\*|\*|"""|r""")?\s*NOTE \[ (.+?) \]\s*$')
NOTE_REF = re.compile(r"NOTE \[ (.+?) \]")
CITED = re.compile(r"NOTE \[ (.+?) \]\)?,?\s+in\s+([\w/.\-]+\.(?:py|c|h|md))")
MAX_NOTE_LINES = 12


def _note_files():
    for root in NOTE_ROOTS:
        for path in sorted((REPO / root).rglob("*")):
            if path.suffix in (".py", ".c", ".h", ".md", ".pyi", ".sh") and \
                    path.name != "jpeg_limit.c":
                yield path


def _note_body(lines: list[str], start: int) -> list[str]:
    """The lines of the NOTE that starts at ``start``, up to the end of its comment
    or docstring, or the next NOTE."""
    hashes = lines[start].lstrip().startswith("#")
    body = []
    for line in lines[start + 1:]:
        text = line.strip()
        if hashes:
            if not text.startswith("#"):
                break
            text = text.lstrip("#:").strip()
        if NOTE_LINE.match(line) or text.startswith(('"""', "*/")):
            break
        if text and text != "*":
            body.append(text)
        if text.endswith(("*/", '"""')):
            break
    return body


def _notes():
    """(definitions: title -> [(path, line, body)], references: [(title, path, line)])."""
    definitions, references = {}, []
    for path in _note_files():
        lines = path.read_text().splitlines()
        for k, line in enumerate(lines):
            m = NOTE_LINE.match(line)
            body = _note_body(lines, k) if m else []
            if m and body:
                definitions.setdefault(m.group(1), []).append((path, k + 1, body))
                continue
            references += [(r.group(1), path, k + 1) for r in NOTE_REF.finditer(line)
                           if "{" not in r.group(1)]  # not this file's f-strings
    return definitions, references


def test_every_note_is_defined_once_and_short():
    definitions, _ = _notes()
    twice = {t: [f"{p.relative_to(REPO)}:{n}" for p, n, _ in d]
             for t, d in definitions.items() if len(d) > 1}
    assert not twice, twice
    long = {t: len(d[0][2]) for t, d in definitions.items() if len(d[0][2]) > MAX_NOTE_LINES}
    assert not long, f"NOTEs over {MAX_NOTE_LINES} lines (numbers go to docs/): {long}"


def test_every_note_reference_resolves():
    definitions, references = _notes()
    dangling = [f"{p.relative_to(REPO)}:{n}: NOTE [ {t} ]" for t, p, n in references
                if t not in definitions]
    assert not dangling, dangling


def _resolve(cited: str, citing: Path) -> list[Path]:
    bases = [citing.parent, PACKAGE, *[p for p in PACKAGE.iterdir() if p.is_dir()],
             PACKAGE / "decoders" / "csrc", REPO]
    return [b / cited for b in bases if (b / cited).is_file()]


def test_cited_paths_exist_and_hold_their_notes():
    definitions, _ = _notes()
    wrong = []
    for path in _note_files():
        text = re.sub(r"\s*\n\s*(?:#:?|\*|//)?\s*", " ", path.read_text())
        for m in CITED.finditer(text):
            title, cited = m.group(1), m.group(2)
            found = _resolve(cited, path)
            homes = {str(p) for p, _, _ in definitions.get(title, [])}
            if not found:
                wrong.append(f"{path.relative_to(REPO)}: {cited} (cited for NOTE [ {title} ]) "
                             "does not exist")
            elif title in definitions and not homes & {str(f) for f in found}:
                wrong.append(f"{path.relative_to(REPO)}: NOTE [ {title} ] is not in {cited}")
    assert not wrong, "\n".join(wrong)


def test_the_design_document_indexes_every_note():
    definitions, _ = _notes()
    design = (REPO / "docs" / "design.md").read_text()
    missing = sorted(t for t in definitions if f"NOTE [ {t} ]" not in design)
    assert not missing, f"docs/design.md's NOTE index lacks {missing}"
