"""Pillow's enhancements in C under AddressSanitizer + UndefinedBehaviorSanitizer: random
images, kinds and factors, the AVX2 and plain loops compared byte for byte, the image and
the output flush against unreadable pages (fuzz_pil_enhance.c checks the contract on every
input)."""
from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.fuzz import drivers

CSRC = REPO / "src" / "jpegloader" / "pipelines" / "classification" / "csrc"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return drivers.build(tmp_path_factory, "fuzz_pil_enhance", CSRC, ["pil_enhance.c"])


@pytest.mark.parametrize("seed", [1, 2])
def test_random_enhancements_agree_in_both_loops_and_stay_in_bounds(driver, seed):
    summary = drivers.run(driver, 50000, seed)
    assert summary["smoothed"] > 10000  # sharpness's 3 x 3 reached, not only its edges
