"""COCO detection batches handed to a CUDA GPU: torch's DataLoader with pin_memory and
the references' own copy to the device, against jpegloader with pin_memory and
device="cuda" (the copy one batch ahead on a side stream), side by side on the same
files, transforms and workers.  Each loader runs --batches batches after its first,
twice, in alternating order; img/s is the median, the GPU synchronised at the end.

    python benchmarks/gpu_delivery.py --data COCO_ROOT [--files 2000] [--workers 4,14]
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch

import jpegloader
from jpegloader.bench import corpora
from jpegloader.bench.recipes import DETECTION_V2, _detection_presets, coco_v2, detection_collate

RECIPES = ("det-hflip", "maskrcnn")


def to_device(batch, device):
    """The references' train_one_epoch: each image and each target's tensors moved."""
    images, targets = batch
    images = [i.to(device, non_blocking=True) for i in images]
    targets = [{k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v
                for k, v in t.items()} for t in targets]
    return images, targets


def timed(loader, batches: int, move) -> float:
    """img/s over ``batches`` batches after the first, the GPU synchronised."""
    it = iter(loader)
    move(next(it))
    torch.cuda.synchronize()
    start, n = time.perf_counter(), 0
    for _ in range(batches):
        images, _ = move(next(it))
        n += len(images)
    torch.cuda.synchronize()
    rate = n / (time.perf_counter() - start)
    del it
    return rate


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, required=True, help="a COCO root (val2017/, "
                   "annotations/instances_val2017.json)")
    p.add_argument("--files", type=int, default=2000)
    p.add_argument("--workers", default="4,14")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU")
    device = torch.device("cuda")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        images, annotations = corpora.replicate_coco(
            args.data / "val2017", args.data / "annotations" / "instances_val2017.json",
            args.files, Path(tmp))
        for recipe in RECIPES:
            _, policy, masks = DETECTION_V2[recipe]
            ds = coco_v2(images, annotations, _detection_presets(policy), True, masks=masks)
            for workers in [int(w) for w in args.workers.split(",")]:
                kw = dict(batch_size=args.batch_size, shuffle=True, num_workers=workers,
                          collate_fn=detection_collate, pin_memory=True, drop_last=True)
                ours = jpegloader.DataLoader(ds, device="cuda", **kw)
                assert ours.eligibility.accelerated, ours.eligibility
                theirs = torch.utils.data.DataLoader(ds, **kw)
                runs = {"torch": [], "jpegloader": []}
                for order in (("torch", "jpegloader"), ("jpegloader", "torch")):
                    for name in order:
                        loader, move = (theirs, lambda b: to_device(b, device)) \
                            if name == "torch" else (ours, lambda b: b)
                        runs[name].append(timed(loader, args.batches, move))
                row = {k: statistics.median(v) for k, v in runs.items()}
                row["ratio"] = row["jpegloader"] / row["torch"]
                row["runs"] = runs
                results.setdefault(recipe, {})[workers] = row
                print(f"{recipe:10s} workers={workers:<3d} torch {row['torch']:7.0f} img/s  "
                      f"jpegloader {row['jpegloader']:7.0f} img/s  {row['ratio']:.2f}x",
                      flush=True)
    if args.json:
        args.json.write_text(json.dumps({"gpu": torch.cuda.get_device_name(),
                                         "batch_size": args.batch_size,
                                         "files": args.files, "results": results}, indent=1))


if __name__ == "__main__":
    main()
