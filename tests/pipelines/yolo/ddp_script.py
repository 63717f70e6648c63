"""Ultralytics' loaders as its trainer builds them on each rank of a DDP run (gloo, CPU):
each rank seeded as the trainer seeds it, then build_dataloader(..., rank=RANK) for the
training set (DistributedSampler) and the validation set (ContiguousDistributedSampler);
what each loader was and the batches of one pass go to OUT/rank{R}.json.

    torchrun --nproc_per_node=2 -m jpegloader run --decode exact ddp_script.py DATA_YAML OUT
"""
import json
import os
import sys

import torch.distributed as dist

sys.path.insert(0, os.environ["JPEGLOADER_REPO"])
from tests.pipelines.yolo.yolo_sets import (batch_record, train_dataset,  # noqa: E402
                                             val_dataset)
from ultralytics.data import build_dataloader  # noqa: E402
from ultralytics.utils.torch_utils import init_seeds  # noqa: E402

YAML, OUT = sys.argv[1:3]
dist.init_process_group("gloo")
rank = dist.get_rank()
init_seeds(0 + 1 + rank)  # the trainer's: args.seed + 1 + RANK
seen = {}
for mode, dataset, shuffle in (("train", train_dataset(YAML, imgsz=64, batch=4), True),
                               ("val", val_dataset(YAML, imgsz=64, batch=4), False)):
    loader = build_dataloader(dataset, 4, 2, shuffle=shuffle, rank=rank)
    seen[mode] = {
        "accelerated": bool(loader.eligibility.accelerated),
        "sampler": type(loader.sampler).__name__,
        "batches": [batch_record(b) for b in loader]}
with open(os.path.join(OUT, f"rank{rank}.json"), "w") as f:
    json.dump(seen, f)
dist.destroy_process_group()
