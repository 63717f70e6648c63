"""Trainers, run for real in subprocesses: what every such test needs."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.conftest import shared

REPO = Path(__file__).resolve().parents[2]


def two_class_folder(root: Path, count: int = 40) -> Path:
    """An ImageFolder of ``count`` real photos in two classes."""
    for i, f in enumerate(sorted(shared("imagenet-sample").glob("*/*.JPEG"))[:count]):
        (root / "ab"[i % 2]).mkdir(parents=True, exist_ok=True)
        shutil.copy(f, root / "ab"[i % 2] / f"{i}.JPEG")
    return root


def script_dataset(folder):
    """The ImageFolder every trainer script here builds, for the reference batches
    a test computes itself."""
    from torchvision import datasets, transforms as T
    return datasets.ImageFolder(str(folder), T.Compose([T.Resize(64), T.CenterCrop(56),
                                                        T.ToTensor()]))


def batch_record(images, labels) -> list:
    """A batch as the scripts write it down: its labels and its pixels' sum."""
    return [labels.tolist(), float(images.double().sum())]


def script_env() -> dict:
    """The environment a trainer's script runs in: this checkout importable, and no
    patch inherited from a run this test runs under."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("JPEGLOADER_PATCH", None)
    return env
