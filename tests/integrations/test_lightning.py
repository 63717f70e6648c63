"""Lightning re-instantiates a loader to add its DistributedSampler, and launches ranks
of its own (ddp runs the script again, ddp_spawn starts fresh interpreters).  With the
real Lightning on 2 CPU ranks: jpegloader's loader survives that, accelerated and with
its options, and each rank sees exactly the batches torch's loader gives it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations import script_env, two_class_folder

pytest.importorskip("lightning", reason="needs Lightning (a test dependency)")

SCRIPT = Path(__file__).with_name("lightning_script.py")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return two_class_folder(tmp_path_factory.mktemp("lightning") / "data")


def _run(folder, out: Path, strategy: str, mode: str, loader: str, under_run: bool):
    out.mkdir(parents=True, exist_ok=True)
    prefix = [sys.executable, "-m", "jpegloader", "run", "--decode", "exact"] if under_run \
        else [sys.executable]
    done = subprocess.run([*prefix, str(SCRIPT), str(folder), str(out), strategy, mode, loader],
                          cwd=out, env=script_env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    ranks = [json.loads((out / f"{mode}-rank{r}.json").read_text()) for r in (0, 1)]
    return ranks, done.stderr


_TORCH: dict = {}


def torchs(folder, tmp_path, strategy, mode):
    """What torch's loader gives each rank under the same trainer (run once per case)."""
    if (strategy, mode) not in _TORCH:
        _TORCH[strategy, mode] = _run(folder, tmp_path / "torch", strategy, mode, "torch",
                                      False)[0]
    return _TORCH[strategy, mode]


def _check(ranks, expected, sampler):
    for rank, (got, want) in enumerate(zip(ranks, expected)):
        kind, module, accelerated, decode, used = got[0]
        assert (module, accelerated, decode) == ("jpegloader.dataloader.loader", True,
                                                 "exact"), (rank, got[0])
        assert used == sampler, (rank, got[0])
        assert got[1:] == want[1:], f"rank {rank}: other batches than torch's loader gives"
    assert ranks[0][1:] != ranks[1][1:]  # each rank its own part of the data


@pytest.mark.parametrize("strategy", ["ddp_spawn", "ddp"])
def test_jpegloader_built_in_train_dataloader_survives_lightnings_ddp(folder, tmp_path,
                                                                       strategy):
    ranks, _ = _run(folder, tmp_path / "ours", strategy, "fit", "jpegloader", False)
    _check(ranks, torchs(folder, tmp_path, strategy, "fit"), "DistributedSampler")


def test_run_patches_the_ranks_ddp_relaunches(folder, tmp_path):
    ranks, stderr = _run(folder, tmp_path / "run", "ddp", "fit", "torch", True)
    _check(ranks, torchs(folder, tmp_path, "ddp", "fit"), "DistributedSampler")
    # the user's line is named where the loader was built, not Lightning's wrapper
    assert f"built at {SCRIPT}:" in stderr


def test_run_patches_the_ranks_ddp_spawn_starts_and_predict_works(folder, tmp_path):
    ranks, _ = _run(folder, tmp_path / "run", "ddp_spawn", "predict", "torch", True)
    _check(ranks, torchs(folder, tmp_path, "ddp_spawn", "predict"), "SequentialSampler")
