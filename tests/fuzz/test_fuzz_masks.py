"""The C mask painting under AddressSanitizer + UndefinedBehaviorSanitizer: random
RLE counts (valid and not) at random sizes, flipped and through random index maps
(fuzz_masks.c checks the contract on every input)."""
from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.fuzz import drivers

CSRC = REPO / "src" / "jpegloader" / "pipelines" / "detection" / "csrc"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return drivers.build(tmp_path_factory, "fuzz_masks", CSRC, ["masks.c"])


@pytest.mark.parametrize("seed", [1, 2])
def test_random_counts_keep_the_painting_contract(driver, seed):
    summary = drivers.run(driver, 200000, seed)
    assert summary["painted"] > 1000  # both outcomes reached
