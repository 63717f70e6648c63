"""COCO fixtures: the real sample (../shared/data/coco-sample) and helpers to
replay the accelerated path's random draws through a native SSDTransformer."""
from __future__ import annotations

import json
import random
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import torch
from torchvision import transforms as T

from tests.conftest import shared


def coco_sample() -> tuple[Path, Path]:
    root = shared("coco-sample")
    return root / "val2017", root / "annotations" / "instances_val2017.json"


@contextmanager
def scripted_draws(d, k: int):
    """Makes the reference transform take sample k's drawn parameters: its crop
    mode and window (random.choice / uniform), its flip (random.random) and its
    ColorJitter order and factors (ColorJitter.get_params)."""
    window = iter([float(v) for v in (d.window[k][2], d.window[k][3], d.window[k][0],
                                      d.window[k][1])])  # w, h, left, top: the draw order
    b, c, s, h = (float(v) for v in d.factors[k])
    order = torch.tensor([int(o) for o in d.order[k]])
    with mock.patch.object(random, "choice", lambda options: options[int(d.mode[k])]), \
            mock.patch.object(random, "uniform", lambda a, b_: next(window)), \
            mock.patch.object(random, "random", lambda: 0.0 if d.flip[k] else 0.999), \
            mock.patch.object(T.ColorJitter, "get_params",
                              staticmethod(lambda *a: (order, b, c, s, h))):
        yield


def write_coco(root: Path, images: list[dict], annotations: list[dict],
               categories: list[dict]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "instances.json"
    path.write_text(json.dumps({"info": {"description": "test"}, "images": images,
                                "annotations": annotations, "categories": categories}))
    return path
