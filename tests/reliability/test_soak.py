"""The soaks, marked slow: the 20-epoch loader soak (tests/reliability/soak.py), about
three minutes on 2 cores, and the shared remote shard cache soak
(tests/reliability/shard_cache_soak.py), about a minute; a 4-epoch cache soak runs in
every run of the suite.  Their figures are in docs/reliability.md."""
from __future__ import annotations

import pytest

from tests.reliability import soak


@pytest.mark.slow
def test_twenty_epoch_soak(tmp_path):
    report = tmp_path / "soak.json"
    assert soak.main(["--json", str(report)]) == 0, report.read_text()[-3000:]


@pytest.mark.slow
def test_shared_shard_cache_soak(tmp_path):
    """Three processes, two datasets, one remote cache with a small limit, objects
    replaced and the server stopped at random, 20 epochs (shard_cache_soak.py)."""
    pytest.importorskip("moto.server", reason="moto[server] is a test dependency")
    from tests.reliability import shard_cache_soak
    report = tmp_path / "soak.json"
    assert shard_cache_soak.main(["--json", str(report)]) == 0, report.read_text()[-3000:]


@pytest.mark.integration  # a local S3 server and loaders over it for 4 epochs
def test_shared_shard_cache_soak_short(tmp_path):
    """The same soak, 4 epochs, in every CI run (the integration tier)."""
    pytest.importorskip("moto.server", reason="moto[server] is a test dependency")
    from tests.reliability import shard_cache_soak
    report = tmp_path / "soak.json"
    assert shard_cache_soak.main(["--epochs", "4", "--json", str(report)]) == 0, \
        report.read_text()[-3000:]
