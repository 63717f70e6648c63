"""The package's shape, checked: imports point one way (no cycles, the layers
downward, nothing below the top imports the package root), each pipeline package
has its four roles, the loader imports none of the engine's parts, modules stay a
size a reader can hold, the C sources' includes point one way too, and every NOTE a
comment or a document cites exists.  Each import and include check is also run on a
small planted package that breaks it, so that none can pass vacuously."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO

SRC = REPO / "src"
PACKAGE = SRC / "jpegloader"
#: lower layers never import higher ones (NOTE [ A pipeline's contract ]; docs/design.md)
LAYERS = ("decoders", "sources", "pipelines", "dataloader")
#: top-level tools no layer may import
TOOLS = ("bench", "diagnose", "patching", "benchmark", "integrations")
#: what each pipeline package holds (NOTE [ A pipeline's contract ])
ROLES = ("recognise.py", "lower.py", "draw.py", "decode.py")
#: the engine's parts, which the loader reaches only through the engine
ENGINE_PARTS = ("ring", "pool", "shared_budget")
#: the public faces: names re-exported for users, defined in the layers below
FACES = ("datasets", "transforms")
#: all dataloader/ may import of pipelines/: the contract every pipeline serves
PIPELINE_CONTRACT = ("pipelines", "pipelines.contract", "pipelines.random_stream")
MAX_LINES = 600
#: the C resampler: each pass's vector loops for two instruction sets
LONG_ALLOWED = {"decoders/csrc/resample.c"}


def _module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str], src: Path = SRC) -> set[str]:
    """Every module of the package this file imports, at module level or in a
    function: ``from . import x`` names the module x when x is one, and the package
    only when a name comes from its ``__init__``."""
    name = _module_name(path, src)
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
            submodules = {f"{module}.{a.name}" for a in node.names} & modules
            found |= submodules
            if len(submodules) < len(node.names):
                found.add(module)
    return {m for m in found if m in modules and m != name}


def _graph(src: Path = SRC, top: str = "jpegloader") -> dict[str, set[str]]:
    files = list((src / top).rglob("*.py"))
    # C extensions are modules too (their .pyi stubs name them)
    modules = {_module_name(p, src) for p in files} | \
        {_module_name(p, src) for p in (src / top).rglob("*.pyi")}
    return {_module_name(p, src): _imports(p, modules, src) for p in files}


def _is_package(name: str, src: Path) -> bool:
    return (src / name.replace(".", "/") / "__init__.py").exists()


def _cycle(graph: dict[str, set[str]], src: Path = SRC) -> list[str]:
    """An import cycle, if any.  Only a package's ``__init__`` importing its own
    modules is set aside (re-exporting them is not a cycle through them)."""
    edges = {m: {d for d in deps if not (d.startswith(m + ".") and _is_package(m, src))}
             for m, deps in graph.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        path.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return []
    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return []


def _upward(graph: dict[str, set[str]], top: str = "jpegloader") -> list[str]:
    """Imports that point up: a layer importing a higher layer, a tool or a public
    face, a layer's module importing the package root, or a module importing a
    package it is in."""
    bad = []
    for module, deps in graph.items():
        parts = module.split(".")
        for d in deps:
            dp = d.split(".")
            if module.startswith(d + ".") and d != top:  # the root: the next rule
                bad.append(f"{module} imports {d}, a package it is in")
            if len(parts) < 2 or parts[1] not in LAYERS:
                continue
            if d == top:
                bad.append(f"{module} imports the package root {d}")
            elif dp[1] in LAYERS and LAYERS.index(dp[1]) > LAYERS.index(parts[1]):
                bad.append(f"{module} imports {d}, a higher layer")
            elif dp[1] in TOOLS:
                bad.append(f"{module} imports {d}, a tool")
            elif dp[1] in FACES:
                bad.append(f"{module} imports {d}, a public face")
    return bad


def _shape_problems(src: Path = SRC, top: str = "jpegloader") -> list[str]:
    """Layer folders that are missing, pipeline packages without their four roles,
    and the engine's parts imported by the loader."""
    package = src / top
    problems = [f"no layer folder {layer}/" for layer in LAYERS
                if not (package / layer / "__init__.py").is_file()]
    pipelines = package / "pipelines"
    for folder in sorted(p for p in pipelines.iterdir() if (p / "__init__.py").is_file()) \
            if pipelines.is_dir() else ():
        problems += [f"pipelines/{folder.name} has no {role}" for role in ROLES
                     if not (folder / role).is_file()]
    loader = package / "dataloader" / "loader.py"
    if loader.is_file():
        graph = _graph(src, top)
        problems += [f"dataloader/loader.py imports {d}"
                     for d in sorted(graph.get(f"{top}.dataloader.loader", ()))
                     if d.split(".")[-1] in ENGINE_PARTS]
    else:
        problems.append("no dataloader/loader.py")
    return problems


def test_the_import_graph_is_the_package():
    graph = _graph()
    assert len(graph) > 50 and sum(map(len, graph.values())) > 100
    assert {f"jpegloader.{layer}" for layer in LAYERS} <= set(graph)


def test_no_import_cycles():
    assert not _cycle(_graph()), " -> ".join(_cycle(_graph()))


def test_layers_import_downward_only():
    assert not _upward(_graph()), _upward(_graph())


def test_layers_pipeline_roles_and_the_loaders_imports():
    assert not _shape_problems(), _shape_problems()


def _face_problems(src: Path = SRC, top: str = "jpegloader") -> list[str]:
    """A public face defining rather than re-exporting, and dataloader/ reaching past
    the pipelines' contract into a pipeline (a layer importing a face: ``_upward``)."""
    problems = []
    graph = _graph(src, top)
    for face in FACES:
        for path in sorted((src / top / face).rglob("*.py")):
            defined = [n.name for n in ast.parse(path.read_text()).body
                       if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            problems += [f"{_module_name(path, src)} defines {name}: a face only re-exports"
                         for name in defined]
    contract = {f"{top}.{m}" for m in PIPELINE_CONTRACT}
    for module, deps in sorted(graph.items()):
        if module.startswith(f"{top}.dataloader"):
            problems += [f"{module} imports {d}, past the pipelines' contract"
                         for d in sorted(deps)
                         if d.startswith(f"{top}.pipelines") and d not in contract]
    return problems


def test_the_faces_re_export_and_the_loader_knows_only_the_pipelines_contract():
    assert not _face_problems(), _face_problems()


_C_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)


def _c_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """C units under ``root`` (a .c and its .h are one unit, named by their path
    without the suffix) -> the units whose headers they include ("..." includes)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.[ch]")):
        unit = path.with_suffix("").relative_to(root).as_posix()
        deps = graph.setdefault(unit, set())
        for header in _C_INCLUDE.findall(path.read_text()):
            target = (path.parent / header).resolve().with_suffix("")
            if target.is_relative_to(root.resolve()):
                dep = target.relative_to(root.resolve()).as_posix()
                if dep != unit:
                    deps.add(dep)
    return graph


#: A function definition's line: not static, the name (jl_...) before its parameters.
_C_DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(jl_\w+)\s*\(", re.M)
_C_CALL = re.compile(r"\b(jl_\w+)\s*\(")


def _c_calls(root: Path = PACKAGE) -> dict[str, set[str]]:
    """C units under ``root`` -> the units whose exported functions (jl_*) they call.
    A definition is a name at a line's start whose parameters are followed by a body
    (a prototype ends at its ';')."""
    units = {p: p.with_suffix("").relative_to(root).as_posix()
             for p in sorted(root.rglob("*.c"))}
    texts = {p: re.sub(r"/\*.*?\*/|//[^\n]*", "", p.read_text(), flags=re.S) for p in units}
    defined: dict[str, str] = {}
    for path, text in texts.items():
        for m in _C_DEFINITION.finditer(text):
            rest = text[m.end():]
            body, end = rest.find("{"), rest.find(";")
            if body != -1 and (end == -1 or body < end):
                defined.setdefault(m.group(1), units[path])
    graph: dict[str, set[str]] = {}
    for path, text in texts.items():
        unit = units[path]
        graph[unit] = {defined[n] for n in _C_CALL.findall(text)
                       if n in defined and defined[n] != unit}
    return graph


def test_the_c_include_graph_is_the_sources():
    graph = _c_graph()
    assert "decoders/csrc/pipeline" in graph and "decoders/csrc/colour" in graph
    assert "decoders/csrc/colour_tensor" in graph["decoders/csrc/colour"]


def test_no_c_include_cycles():
    # src=SRC: no C unit is a Python package, so every edge counts
    assert not _cycle(_c_graph()), " -> ".join(_cycle(_c_graph()))


def test_no_c_call_cycles():
    calls = _c_calls()
    assert "decoders/csrc/taps" in calls["decoders/csrc/pipeline"]  # the graph is read
    assert not _cycle(calls), " -> ".join(_cycle(calls))


# -- the checks, each shown failing on a planted violation ------------------------------
def _plant(root: Path, files: dict[str, str]) -> Path:
    """A small package ``jpegloader`` under ``root``: the layers, one pipeline with its
    roles and a loader, each file empty unless ``files`` says otherwise."""
    base = {"__init__.py": "", **{f"{layer}/__init__.py": "" for layer in LAYERS},
            **{f"pipelines/demo/{role}": "" for role in ("__init__.py", *ROLES)},
            "dataloader/loader.py": "from .engine import Engine\n",
            "dataloader/engine.py": "from .ring import Ring\n", "dataloader/ring.py": "",
            "decoders/jpeg.py": ""}
    for rel, text in {**base, **files}.items():
        if text is None:
            continue
        path = root / "jpegloader" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_planted_package_itself_passes(tmp_path):
    src = _plant(tmp_path, {})
    graph = _graph(src)
    assert not _cycle(graph, src) and not _upward(graph) and not _shape_problems(src)


def test_a_cycle_is_caught(tmp_path):
    src = _plant(tmp_path, {"pipelines/demo/draw.py": "from .decode import plans\n",
                            "pipelines/demo/decode.py": "from . import draw\n"})
    assert _cycle(_graph(src), src) == ["jpegloader.pipelines.demo.decode",
                                        "jpegloader.pipelines.demo.draw",
                                        "jpegloader.pipelines.demo.decode"]
    # a package's __init__ importing its own modules is not a cycle
    src = _plant(tmp_path / "ok", {"pipelines/__init__.py": "from .demo import decode\n"})
    assert not _cycle(_graph(src), src)


def test_a_face_defining_a_layer_importing_one_and_the_loader_in_a_pipeline_are_caught(
        tmp_path):
    faces = {"datasets/__init__.py": "from ..sources.shards import WebDataset\n",
             "sources/shards.py": "class WebDataset:\n    pass\n",
             "pipelines/contract.py": "", "dataloader/engine.py":
             "from ..pipelines.contract import Tally\nfrom .ring import Ring\n"}
    src = _plant(tmp_path, faces)
    assert not _face_problems(src) and not _upward(_graph(src))
    src = _plant(tmp_path / "bad", {
        **faces, "datasets/__init__.py": "def helper():\n    pass\n",
        "sources/shards.py": "from ..datasets import helper\n",
        "dataloader/engine.py": "from ..pipelines.demo.draw import plans\n"})
    assert _face_problems(src) == [
        "jpegloader.datasets defines helper: a face only re-exports",
        "jpegloader.dataloader.engine imports jpegloader.pipelines.demo.draw, past the "
        "pipelines' contract"]
    assert _upward(_graph(src)) == [
        "jpegloader.sources.shards imports jpegloader.datasets, a public face"]


def test_a_c_include_cycle_is_caught(tmp_path):
    csrc = tmp_path / "pkg" / "csrc"
    csrc.mkdir(parents=True)
    (csrc / "a.h").write_text("int a(void);\n")
    (csrc / "b.h").write_text("int b(void);\n")
    (csrc / "a.c").write_text('#include "a.h"\n#include "b.h"\n')
    (csrc / "b.c").write_text('#include "b.h"\n#include <stdint.h>\n')
    assert not _cycle(_c_graph(tmp_path / "pkg"))
    (csrc / "b.c").write_text('#include "b.h"\n  #  include "a.h"\n')
    assert _cycle(_c_graph(tmp_path / "pkg")) == ["csrc/a", "csrc/b", "csrc/a"]


def test_a_c_call_cycle_is_caught(tmp_path):
    csrc = tmp_path / "pkg" / "csrc"
    csrc.mkdir(parents=True)
    (csrc / "a.c").write_text("int jl_a(int x);\nint jl_a(int x)\n{\n    return jl_b(x);\n}\n")
    (csrc / "b.c").write_text("static int jl_c(void) { return 1; }\n"
                              "int jl_b(int x) { return x + jl_c(); } /* jl_a(x) */\n")
    assert _c_calls(tmp_path / "pkg") == {"csrc/a": {"csrc/b"}, "csrc/b": set()}
    (csrc / "b.c").write_text("int jl_b(int x)\n{\n    return x ? jl_a(x - 1) : 0;\n}\n")
    assert _cycle(_c_calls(tmp_path / "pkg")) == ["csrc/a", "csrc/b", "csrc/a"]


def test_a_layer_importing_the_package_root_is_caught(tmp_path):
    src = _plant(tmp_path, {"decoders/jpeg.py": "import jpegloader\n"})
    assert _upward(_graph(src)) == ["jpegloader.decoders.jpeg imports the package root "
                                    "jpegloader"]
    src = _plant(tmp_path / "b", {"decoders/jpeg.py": "from .. import DataLoader\n"})
    assert _upward(_graph(src)) == ["jpegloader.decoders.jpeg imports the package root "
                                    "jpegloader"]


def test_a_lower_layer_importing_a_higher_one_is_caught(tmp_path):
    src = _plant(tmp_path, {"decoders/jpeg.py": "from ..dataloader.loader import x\n"})
    assert _upward(_graph(src)) == ["jpegloader.decoders.jpeg imports "
                                    "jpegloader.dataloader.loader, a higher layer"]


def test_a_module_importing_its_own_package_is_caught(tmp_path):
    # the package's __init__ imports its module, which imports the package back
    src = _plant(tmp_path, {"pipelines/__init__.py": "from .demo import Pipeline\n",
                            "pipelines/demo/__init__.py": "from .. import CHOICES\n"})
    assert _upward(_graph(src)) == ["jpegloader.pipelines.demo imports "
                                    "jpegloader.pipelines, a package it is in"]
    src = _plant(tmp_path / "b", {"pipelines/demo/draw.py": "from . import SETTINGS\n"})
    assert _upward(_graph(src)) == ["jpegloader.pipelines.demo.draw imports "
                                    "jpegloader.pipelines.demo, a package it is in"]


def test_missing_layers_roles_and_the_loader_reaching_the_ring_are_caught(tmp_path):
    src = _plant(tmp_path, {"pipelines/demo/draw.py": None,
                            "dataloader/loader.py": "from .ring import Ring\n"})
    assert _shape_problems(src) == ["pipelines/demo has no draw.py",
                                    "dataloader/loader.py imports jpegloader.dataloader.ring"]
    src = _plant(tmp_path / "b", {"decoders/__init__.py": None, "decoders/jpeg.py": None})
    assert _shape_problems(src) == ["no layer folder decoders/"]


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
