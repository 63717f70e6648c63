"""Pillow's affine warps in C under AddressSanitizer + UndefinedBehaviorSanitizer: random
images, sizes, matrices and filters, the AVX2 and one-pixel loops compared byte for
byte, the source flush against unreadable pages (fuzz_pil_affine.c checks the contract
on every input)."""
from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.fuzz import drivers

CSRC = REPO / "src" / "jpegloader" / "pipelines" / "classification" / "csrc"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return drivers.build(tmp_path_factory, "fuzz_pil_affine", CSRC, ["pil_affine.c"])


@pytest.mark.parametrize("seed", [1, 2])
def test_random_warps_agree_in_both_loops_and_read_only_the_image(driver, seed):
    summary = drivers.run(driver, 100000, seed)
    assert summary["copies"] > 1000 and summary["interpolated"] > 10000  # both paths reached
