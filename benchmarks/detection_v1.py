"""torchvision's detection references without --use-v2 (their default, and what most
copies of them run): their CocoDetection with ConvertCocoPolysToMask and their own
transforms.py, jpegloader against torch's DataLoader, side by side.

The references' classes come from tests/detection_references_v1.py (written out in their
style); the photos are coco-sample's, copied to --files annotated images.

    python benchmarks/detection_v1.py [--files 1000] [--epochs 3] [--workers 2] [--batch-size 8]
        [--policies hflip,multiscale,eval,lsj,ssd]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import jpegloader  # noqa: E402
from jpegloader.bench import corpora as bd  # noqa: E402
from jpegloader.bench.measure import alternate_epochs  # noqa: E402
from tests import detection_references_v1 as R1  # noqa: E402


def collate_fn(batch):
    return tuple(zip(*batch))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "coco-sample")
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--policies", default="hflip,multiscale,eval,lsj,ssd",
                   help="comma-separated: the presets' --data-augmentation policies, and eval")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        images, annotations = bd.replicate_coco(args.data / "val2017", args.data / "annotations"
                                                / "instances_val2017.json", args.files,
                                                Path(tmp))
        for policy in args.policies.split(","):
            preset = R1.DetectionPresetEval() if policy == "eval" else \
                R1.DetectionPresetTrain(data_augmentation=policy)
            ds = R1.get_coco(str(images), str(annotations),
                             "val" if policy == "eval" else "train", preset)
            kwargs = dict(batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                          collate_fn=collate_fn)
            loaders = {"torch": torch.utils.data.DataLoader(ds, **kwargs),
                       "jpegloader": jpegloader.DataLoader(ds, **kwargs)}
            assert loaders["jpegloader"].eligibility.accelerated
            runs = alternate_epochs(loaders, args.epochs)
            ratios = [b / a for a, b in zip(runs["torch"], runs["jpegloader"])]
            results[policy] = {k: statistics.median(v) for k, v in runs.items()}
            results[policy]["ratio"] = statistics.median(ratios)
            results[policy]["ratio_range"] = [min(ratios), max(ratios)]
            print(f"v1 {policy:<10} torch {results[policy]['torch']:6.0f} img/s  jpegloader "
                  f"{results[policy]['jpegloader']:6.0f} img/s  {results[policy]['ratio']:.2f}x "
                  f"({min(ratios):.2f}-{max(ratios):.2f})", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
