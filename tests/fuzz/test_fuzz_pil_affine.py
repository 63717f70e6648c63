"""Pillow's affine warps in C under AddressSanitizer + UndefinedBehaviorSanitizer: random
images, sizes, matrices and filters, the AVX2 and one-pixel loops compared byte for
byte, the source flush against unreadable pages (fuzz_pil_affine.c checks the contract
on every input)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.conftest import REPO
from tests.fuzz.run_fuzz import SANITIZER_ENV, SANITIZER_MARKS

CSRC = REPO / "src" / "jpegloader" / "pipelines" / "classification" / "csrc"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc.split()[0]) is None:
        pytest.skip(f"no C compiler ({cc})")
    binary = tmp_path_factory.mktemp("fuzz-pil-affine") / "fuzz_pil_affine"
    built = subprocess.run([*cc.split(), "-std=c11", "-O1", "-g", "-fno-omit-frame-pointer",
                            "-ffp-contract=off", "-fno-trapping-math",
                            "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                            f"-I{CSRC}", str(REPO / "tests" / "fuzz" / "fuzz_pil_affine.c"),
                            str(CSRC / "pil_affine.c"), "-lm", "-o", str(binary)],
                           capture_output=True, text=True, check=False)
    if built.returncode != 0:
        pytest.skip(f"{cc} cannot build the sanitized driver: {built.stderr.strip()[-300:]}")
    return binary


@pytest.mark.parametrize("seed", [1, 2])
def test_random_warps_agree_in_both_loops_and_read_only_the_image(driver, seed):
    done = subprocess.run([str(driver), "100000", str(seed)], capture_output=True, text=True,
                          env={**os.environ, **SANITIZER_ENV}, timeout=120, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0 and not any(m in out for m in SANITIZER_MARKS), out[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["inputs"] == 100000
    assert summary["copies"] > 1000 and summary["interpolated"] > 10000  # both paths reached
