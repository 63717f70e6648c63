"""Ultralytics' DDP training on two CPU ranks (torchrun, gloo), unchanged under
``python -m jpegloader run``: on each rank the training loader (its DistributedSampler)
and the validation loader (its ContiguousDistributedSampler, rect batches) are
accelerated; training reads exactly the photos the rank's sampler gives, in its order,
and validation equals Ultralytics' own loading of the rank's share."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import util
from pathlib import Path

import pytest
import torch

from tests.integrations import REPO, script_env
from tests.pipelines.yolo.yolo_sets import (batch_record, generated_yolo_set, train_dataset,
                                             val_dataset)

# a torchrun of two ranks in subprocesses: the integration tier (tests/conftest.py TIERS)
pytestmark = [pytest.mark.skipif(util.find_spec("ultralytics") is None,
                                 reason="Ultralytics is the oracle for the YOLO pipeline"),
              pytest.mark.integration]

SCRIPT = Path(__file__).with_name("ddp_script.py")


def _in_batches(names: list[str], size: int = 4) -> list[list[str]]:
    return [names[k:k + size] for k in range(0, len(names), size)]


def test_ddp_ranks_get_their_samplers_share_accelerated(tmp_path):
    from ultralytics.data.build import ContiguousDistributedSampler
    yaml = generated_yolo_set(tmp_path / "set")
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                           "--nproc_per_node=2", "-m", "jpegloader", "run", "--decode", "exact",
                           str(SCRIPT), str(yaml), str(tmp_path)],
                          cwd=tmp_path, env={**script_env(), "JPEGLOADER_REPO": str(REPO)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    train, val = train_dataset(yaml, imgsz=64, batch=4), val_dataset(yaml, imgsz=64, batch=4)
    name = [os.path.basename(f) for f in train.im_files]
    for rank, seen in enumerate(ranks):
        assert seen["train"]["accelerated"] and seen["val"]["accelerated"], (rank, seen)
        assert seen["train"]["sampler"] == "DistributedSampler"
        # the trainer seeds rank r with 1 + r; build_dataloader gives its sampler
        # torch.initial_seed() - RANK - 1 = 0 on every rank, shuffling alike
        order = torch.utils.data.DistributedSampler(train, num_replicas=2, rank=rank,
                                                    shuffle=True, seed=0)
        assert [b[0] for b in seen["train"]["batches"]] == \
            _in_batches([name[i] for i in order]), rank
        share = ContiguousDistributedSampler(val, num_replicas=2, batch_size=4, rank=rank)
        theirs = torch.utils.data.DataLoader(val, batch_size=4, sampler=share,
                                             collate_fn=val.collate_fn)
        assert seen["val"]["sampler"] == "ContiguousDistributedSampler"
        assert seen["val"]["batches"] == [batch_record(b) for b in theirs], rank
    # each rank its own photos, together every photo once
    trained = [sum((b[0] for b in seen["train"]["batches"]), []) for seen in ranks]
    assert not set(trained[0]) & set(trained[1])
    assert sorted(trained[0] + trained[1]) == sorted(name)
