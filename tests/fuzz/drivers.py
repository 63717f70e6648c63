"""The small sanitizer-instrumented drivers of one C file each (fuzz_masks.c,
fuzz_pil_affine.c, fuzz_pil_enhance.c): built once per test module, run with a count
and a seed, their one-line JSON summary read back."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fuzz.run_fuzz import SANITIZER_ENV, SANITIZER_MARKS


def build(tmp_path_factory, name: str, csrc: Path, sources: list[str]) -> Path:
    """tests/fuzz/<name>.c with ``sources`` of ``csrc``, under ASan + UBSan (skips where
    the compiler cannot link them)."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc.split()[0]) is None:
        pytest.skip(f"no C compiler ({cc})")
    binary = tmp_path_factory.mktemp(name) / name
    built = subprocess.run([*cc.split(), "-std=c11", "-O1", "-g", "-fno-omit-frame-pointer",
                            "-ffp-contract=off", "-fno-trapping-math",
                            "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                            f"-I{csrc}", str(REPO / "tests" / "fuzz" / f"{name}.c"),
                            *(str(csrc / s) for s in sources), "-lm", "-o", str(binary)],
                           capture_output=True, text=True, check=False)
    if built.returncode != 0:
        pytest.skip(f"{cc} cannot build the sanitized driver: {built.stderr.strip()[-300:]}")
    return binary


def run(binary: Path, iterations: int, seed: int) -> dict:
    """The driver's summary after ``iterations`` inputs; fails on a crash, a sanitizer
    report or a breach of the contract it checks."""
    done = subprocess.run([str(binary), str(iterations), str(seed)], capture_output=True,
                          text=True, env={**os.environ, **SANITIZER_ENV}, timeout=120,
                          check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0 and not any(m in out for m in SANITIZER_MARKS), out[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["inputs"] == iterations, summary
    return summary
