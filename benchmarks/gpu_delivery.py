"""Batches handed to a CUDA GPU, side by side on the same files, transforms and workers:
torch's DataLoader with pin_memory and the recipe's own copy to the device
("torch"), jpegloader with device="cuda" (copied from the slot one batch ahead on a
side stream: NOTE [ From the slot to the device ]), and jpegloader with pin_memory
and the recipe's own copy ("jpegloader pinned").  Recipes: the detection
references' det-hflip and maskrcnn on COCO, and pytorch/examples' train on an
ImageFolder.  Each loader runs --batches batches after its first, twice, in turn;
img/s is the median, the GPU synchronised at the end.

    python benchmarks/gpu_delivery.py --data COCO_ROOT [--images IMAGEFOLDER] [--files 2000]
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch
from torchvision import datasets

import jpegloader
from jpegloader.bench import corpora
from jpegloader.bench.recipes import (DETECTION_V2, PIPELINES, _detection_presets, coco_v2,
                                      detection_collate)

LOADERS = ("torch", "jpegloader", "jpegloader pinned")


def to_device(batch, device):
    """The recipes' own copy: pytorch/examples' images and labels, or the detection
    references' train_one_epoch, each image and each target's tensors."""
    images, targets = batch
    if isinstance(images, torch.Tensor):
        return images.to(device, non_blocking=True), targets.to(device, non_blocking=True)
    images = [i.to(device, non_blocking=True) for i in images]
    targets = [{k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v
                for k, v in t.items()} for t in targets]
    return images, targets


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(loader, batches: int, move) -> float:
    """img/s over up to ``batches`` batches after the first (the epoch may end
    sooner), the GPU synchronised."""
    it = iter(loader)
    move(next(it))
    synchronize()
    start, n = time.perf_counter(), 0
    for _, batch in zip(range(batches), it):
        images, _ = move(batch)
        n += len(images)
    synchronize()
    rate = n / (time.perf_counter() - start)
    del it
    return rate


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, required=True, help="a COCO root (val2017/, "
                   "annotations/instances_val2017.json)")
    p.add_argument("--images", type=Path, help="an ImageFolder for the train recipe")
    p.add_argument("--files", type=int, default=2000)
    p.add_argument("--workers", default="14")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--device", default="cuda")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU (--device cpu runs the same steps, for a dry run)")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        images, annotations = corpora.replicate_coco(
            args.data / "val2017", args.data / "annotations" / "instances_val2017.json",
            args.files, Path(tmp) / "coco")
        sets = {}
        for recipe in ("det-hflip", "maskrcnn"):
            _, policy, masks = DETECTION_V2[recipe]
            sets[recipe] = (coco_v2(images, annotations, _detection_presets(policy), True,
                                    masks=masks), dict(collate_fn=detection_collate,
                                                       batch_size=args.batch_size))
        if args.images is not None:
            folder = corpora.replicate_folder(args.images, args.files, Path(tmp) / "folder")
            sets["train"] = (datasets.ImageFolder(str(folder), PIPELINES["train"][1]()),
                             dict(batch_size=64))
        for recipe, (ds, kw) in sets.items():
            for workers in [int(w) for w in args.workers.split(",")]:
                kw = dict(kw, shuffle=True, num_workers=workers, drop_last=True)
                loaders = {"torch": torch.utils.data.DataLoader(ds, pin_memory=True, **kw),
                           "jpegloader": jpegloader.DataLoader(ds, device=device, **kw),
                           "jpegloader pinned": jpegloader.DataLoader(ds, pin_memory=True,
                                                                      **kw)}
                assert loaders["jpegloader"].eligibility.accelerated, \
                    loaders["jpegloader"].eligibility
                runs = {name: [] for name in LOADERS}
                for order in (LOADERS, LOADERS[::-1]):
                    for name in order:
                        move = (lambda b: b) if name == "jpegloader" else \
                            (lambda b: to_device(b, device))
                        runs[name].append(timed(loaders[name], args.batches, move))
                row = {k: statistics.median(v) for k, v in runs.items()}
                row["runs"] = runs
                results.setdefault(recipe, {})[workers] = row
                print(f"{recipe:10s} workers={workers:<3d} " + "  ".join(
                    f"{name} {row[name]:6.0f} img/s" for name in LOADERS) +
                    f"  ratio {row['jpegloader'] / row['torch']:.2f}x", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"device": torch.cuda.get_device_name()
                                         if device.type == "cuda" else str(device),
                                         "batch_size": args.batch_size,
                                         "files": args.files, "results": results}, indent=1))


if __name__ == "__main__":
    main()
