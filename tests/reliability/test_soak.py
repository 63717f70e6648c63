"""The 20-epoch soak (tests/reliability/soak.py), marked slow: about three
minutes on 2 cores.  Its figures are in docs/reliability.md."""
from __future__ import annotations

import pytest

from tests.reliability import soak


@pytest.mark.slow
def test_twenty_epoch_soak(tmp_path):
    report = tmp_path / "soak.json"
    assert soak.main(["--json", str(report)]) == 0, report.read_text()[-3000:]
