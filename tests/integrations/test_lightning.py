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

from tests.integrations import (batch_record, script_dataset, script_env,
                                two_class_folder)

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


def torchs(folder, mode: str) -> list:
    """What torch's loader gives each rank once Lightning has put its sampler in (as
    the script builds it: batch 4, no shuffle of its own): fit shuffles with
    DistributedSampler (seed 0) and validates in order, 3 and 2 batches; predict
    keeps order through Lightning's UnrepeatedDistributedSamplerWrapper, 2 batches.
    Made here, not by the trainer: the same as torch's loader run under ddp and
    ddp_spawn gave, checked side by side, without three more trainer launches."""
    import torch
    from lightning.pytorch.overrides.distributed import UnrepeatedDistributedSamplerWrapper
    ds = script_dataset(folder)

    def batches(sampler, stage: str, count: int) -> list:
        loader = torch.utils.data.DataLoader(ds, batch_size=4, sampler=sampler)
        return [[stage, *batch_record(images, labels)]
                for _, (images, labels) in zip(range(count), loader)]

    ranks = []
    for rank in (0, 1):
        def shard(shuffle: bool):
            return torch.utils.data.DistributedSampler(ds, num_replicas=2, rank=rank,
                                                       shuffle=shuffle)
        if mode == "predict":
            ranks.append(batches(UnrepeatedDistributedSamplerWrapper(
                torch.utils.data.SequentialSampler(ds), num_replicas=2, rank=rank,
                shuffle=False), "predict", 2))
        else:
            ranks.append(batches(shard(True), "fit", 3) + batches(shard(False), "validate", 2))
    return ranks


def _check(ranks, expected, sampler):
    for rank, (got, want) in enumerate(zip(ranks, expected)):
        kind, module, accelerated, decode, used = got[0]
        assert (module, accelerated, decode) == ("jpegloader.dataloader.loader", True,
                                                 "exact"), (rank, got[0])
        assert used == sampler, (rank, got[0])
        assert got[1:] == want, f"rank {rank}: other batches than torch's loader gives"
    assert ranks[0][1:] != ranks[1][1:]  # each rank its own part of the data


@pytest.mark.parametrize("strategy", ["ddp_spawn", "ddp"])
def test_jpegloader_built_in_train_dataloader_survives_lightnings_ddp(folder, tmp_path,
                                                                       strategy):
    ranks, _ = _run(folder, tmp_path / "ours", strategy, "fit", "jpegloader", False)
    _check(ranks, torchs(folder, "fit"), "DistributedSampler")


def test_run_patches_the_ranks_ddp_relaunches(folder, tmp_path):
    ranks, stderr = _run(folder, tmp_path / "run", "ddp", "fit", "torch", True)
    _check(ranks, torchs(folder, "fit"), "DistributedSampler")
    # the user's line is named where the loader was built, not Lightning's wrapper
    assert f"built at {SCRIPT}:" in stderr


def test_run_patches_the_ranks_ddp_spawn_starts_and_predict_works(folder, tmp_path):
    ranks, _ = _run(folder, tmp_path / "run", "ddp_spawn", "predict", "torch", True)
    _check(ranks, torchs(folder, "predict"), "SequentialSampler")
