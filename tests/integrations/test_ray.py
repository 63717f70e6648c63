"""Ray Train's prepare_data_loader rebuilds a loader as torch's when it adds its
DistributedSampler.  With the real Ray Train, TorchTrainer on 2 CPU workers:
jpegloader's adapter keeps the loader accelerated with its options (persistent_workers
too, which Ray drops), and each worker gets exactly the batches torch's loader gives it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations import (batch_record, script_dataset, script_env,
                                two_class_folder)

pytest.importorskip("ray.train", reason="needs Ray Train (a test dependency)")

SCRIPT = Path(__file__).with_name("ray_script.py")


def _torchs_batches(folder, rank: int) -> list:
    """What torch's loader gives a rank once Ray's prepare_data_loader has added its
    DistributedSampler (shuffled as the RandomSampler it replaces, seed 0), over the
    script's two epochs.  Built here rather than in Ray: torch's loader forks new
    workers from the actor every epoch, and such a fork has crashed Ray's raylet
    ("Invalid Plasma message type"); the two agreed when checked side by side."""
    import torch
    ds = script_dataset(folder)
    sampler = torch.utils.data.DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=True)
    loader = torch.utils.data.DataLoader(ds, batch_size=4, sampler=sampler)
    seen = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        seen += [batch_record(images, labels) for images, labels in loader]
    return seen


def test_the_adapter_keeps_each_workers_loader_accelerated_with_torchs_batches(tmp_path):
    folder = two_class_folder(tmp_path / "data")
    env = script_env()
    runs = {}
    # plain: the script's own jpegloader.DataLoader(decode="exact") through Ray's own
    # prepare_data_loader, under python -m jpegloader run (NOTE [ A trainer's rebuild
    # keeps the user's options ])
    for how, prefix in (("adapter", []), ("plain", ["-m", "jpegloader", "run"])):
        done = subprocess.run([sys.executable, *prefix, str(SCRIPT), str(folder),
                               str(tmp_path), how],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        # Ray's driver may print its error on stdout: both, to tell a crash from a setup fault
        assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-4000:])
        runs[how] = [json.loads((tmp_path / f"{how}-rank{r}.json").read_text())
                     for r in (0, 1)]
    for rank in (0, 1):
        want = _torchs_batches(folder, rank)
        for how in ("adapter", "plain"):
            got = runs[how][rank]
            assert got[0][:3] == ["jpegloader.dataloader.loader", True, "exact"], (how, got[0])
            assert got[1:] == want, f"{how}, rank {rank}: other batches than torch's"
        assert runs["adapter"][rank][0][3] is True  # persistent_workers, which Ray drops
    assert runs["adapter"][0][1:] != runs["adapter"][1][1:]


def test_a_loader_dropped_unused_where_ray_train_is_imported_is_said(small_folder, caplog):
    # NOTE [ A loader a trainer threw away ]: Ray's prepare_data_loader rebuilds ours
    import gc

    import ray.train.torch  # noqa: F401 - what a Ray Train script imports
    from torchvision import datasets

    import jpegloader
    from jpegloader.dataloader import trainers
    from tests.conftest import eval_transform
    # ray.train.torch stays imported in this process: the WARNING, once said, stays said
    trainers._said = False
    ds = datasets.ImageFolder(str(small_folder), eval_transform())
    with caplog.at_level("WARNING", logger="jpegloader"):
        jpegloader.DataLoader(ds, batch_size=4)
        gc.collect()
    messages = [r.getMessage() for r in caplog.records if "dropped without" in r.getMessage()]
    assert len(messages) == 1 and "while Ray Train is in use" in messages[0]
    assert "jpegloader.integrations.ray.prepare_data_loader(loader)" in messages[0]
