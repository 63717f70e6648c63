"""The C mask painting under AddressSanitizer + UndefinedBehaviorSanitizer: random
RLE counts (valid and not) at random sizes, flipped and through random index maps
(fuzz_masks.c checks the contract on every input)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.conftest import REPO
from tests.fuzz.run_fuzz import SANITIZER_ENV, SANITIZER_MARKS

CSRC = REPO / "src" / "jpegloader" / "pipelines" / "detection" / "csrc"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc.split()[0]) is None:
        pytest.skip(f"no C compiler ({cc})")
    binary = tmp_path_factory.mktemp("fuzz-masks") / "fuzz_masks"
    built = subprocess.run([*cc.split(), "-std=c11", "-O1", "-g", "-fno-omit-frame-pointer",
                            "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                            f"-I{CSRC}", str(REPO / "tests" / "fuzz" / "fuzz_masks.c"),
                            str(CSRC / "masks.c"), "-o", str(binary)],
                           capture_output=True, text=True, check=False)
    if built.returncode != 0:
        pytest.skip(f"{cc} cannot build the sanitized driver: {built.stderr.strip()[-300:]}")
    return binary


@pytest.mark.parametrize("seed", [1, 2])
def test_random_counts_keep_the_painting_contract(driver, seed):
    done = subprocess.run([str(driver), "200000", str(seed)], capture_output=True, text=True,
                          env={**os.environ, **SANITIZER_ENV}, timeout=120, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0 and not any(m in out for m in SANITIZER_MARKS), out[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["inputs"] == 200000 and summary["painted"] > 1000  # both outcomes reached
