"""Where a hybrid pipeline stops paying (NOTE [ Hybrid pipelines ]): the same training
transform with less and less of it native, against torch's loader, side by side.

On the built-in synthetic set (every image 500x375, so a CenterCrop of the whole image
is a no-op and "decode + that crop" is the decode alone):

    decode-alone:  CenterCrop(375x500) native; RandAugment, RandomResizedCrop(224),
                   flip, ToTensor, Normalize all in Python (the loader refuses this
                   split on its own: the rule this measures)
    crop-native:   RandomResizedCrop(224), flip native; RandAugment in Python; ToTensor,
                   Normalize native
    all-native:    RandomResizedCrop(224), flip, ToTensor, Normalize

    python benchmarks/hybrid_line.py [--epochs 3] [--workers 2]
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch
from torchvision import datasets
from torchvision import transforms as T

import jpegloader
from jpegloader.bench import corpora as bd
from jpegloader.bench.measure import alternate_epochs

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
TAIL = [T.ToTensor(), T.Normalize(MEAN, STD)]
PIPELINES = {
    "decode-alone": lambda: T.Compose([T.CenterCrop((375, 500)), T.RandAugment(),
                                       T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                       *TAIL]),
    "crop-native": lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                      T.RandAugment(), *TAIL]),
    "all-native": lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                     *TAIL]),
}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    root = bd.make_imagenet_like(bd.cache_root("bench-imagenet-like-v1"), **bd.IMAGENET_LIKE)
    results = {}
    for name, make in PIPELINES.items():
        ds = datasets.ImageFolder(str(root), make())
        verdict = jpegloader.explain(ds, batch_size=64)
        loaders = {"native": torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True,
                                                         num_workers=args.workers),
                   "jpegloader": jpegloader.DataLoader(ds, batch_size=64, shuffle=True,
                                                       num_workers=args.workers)}
        runs = alternate_epochs(loaders, args.epochs)
        native, ours = (statistics.median(runs[k]) for k in ("native", "jpegloader"))
        results[name] = {"split": verdict.split_text() or verdict.summary(),
                         "native_img_per_s": round(native), "jpegloader_img_per_s": round(ours),
                         "ratio": round(ours / native, 2)}
        print(name, json.dumps(results[name]), flush=True)


if __name__ == "__main__":
    main()
