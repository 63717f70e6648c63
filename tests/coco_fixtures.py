"""COCO fixtures: the real sample (../shared/data/coco-sample), or a generated set
where the corpus is absent, and helpers to replay the accelerated path's random draws
through a native SSDTransformer."""
from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import torch
from PIL import Image
from torchvision import transforms as T

from tests.conftest import SHARED_DATA, shared


def coco_sample() -> tuple[Path, Path]:
    """The real coco-sample (79 val2017 photos and their instances JSON) where the
    corpus is; else the generated set (generated_coco), so the detection tests run
    without it."""
    if (SHARED_DATA / "coco-sample").is_dir():
        root = shared("coco-sample")
        return root / "val2017", root / "annotations" / "instances_val2017.json"
    return generated_coco()


#: The generated set's categories: sparse ids, as COCO's are.
_CATEGORIES = [(1, "person"), (3, "car"), (18, "dog"), (44, "bottle"), (62, "chair"),
               (90, "toothbrush")]
#: Its photos' sizes (width, height): COCO's usual shapes, landscape (three in four, as
#: COCO's are) then portrait, each kind in a run of its own, and odd sizes.
_LANDSCAPE = [(640, 480), (640, 427), (640, 480), (500, 375), (640, 426), (640, 428),
              (577, 431), (640, 360)]
_PORTRAIT = [(480, 640), (427, 640), (375, 500), (478, 640), (612, 612)]
#: As many as coco-sample has, so the tests' batch counts hold on either.
GENERATED_IMAGES = 79


def generated_coco() -> tuple[Path, Path]:
    """A small COCO set written once per machine (in the temporary folder): 79 JPEG
    photos of smooth random textures at COCO's sizes (every 11th grayscale), each with
    1-6 instances: polygons (some in two parts) with their pycocotools area and box,
    and in every 5th image a crowd instance as an uncompressed RLE.
    Returns (the image folder, the instances JSON), as coco_sample does."""
    root = Path(tempfile.gettempdir()) / f"jpegloader-test-coco-v4-{os.getuid()}"
    images, ann_file = root / "images", root / "instances.json"
    if ann_file.exists():
        return images, ann_file
    from pycocotools import mask as coco_mask
    rng = np.random.default_rng(2026)
    scratch = Path(tempfile.mkdtemp(prefix="coco-", dir=root.parent))
    (scratch / "images").mkdir()
    entries, annotations = [], []
    for i in range(GENERATED_IMAGES):
        w, h = _LANDSCAPE[i % len(_LANDSCAPE)] if i < 60 else _PORTRAIT[i % len(_PORTRAIT)]
        coarse = rng.uniform(0, 255, size=(h // 16 + 2, w // 16 + 2, 3)).astype(np.uint8)
        photo = Image.fromarray(coarse).resize((w, h), Image.BICUBIC)
        if i % 11 == 5:
            photo = photo.convert("L")
        name = f"{i + 1:012d}.jpg"
        photo.save(scratch / "images" / name, quality=90)
        entries.append({"id": i + 1, "file_name": name, "height": h, "width": w})
        count = int(rng.integers(1, 7))
        for k in range(count):
            parts = 2 if k % 3 == 2 else 1
            polygons = [_polygon(rng, w, h) for _ in range(parts)]
            rle = coco_mask.merge(coco_mask.frPyObjects(polygons, h, w))
            annotations.append(_annotation(len(annotations) + 1, i + 1, polygons, rle,
                                           rng, crowd=False))
        if i % 5 == 0:
            blob = np.zeros((h, w), dtype=np.uint8)
            x0, y0 = int(rng.integers(0, w // 2)), int(rng.integers(0, h // 2))
            blob[y0:y0 + h // 3, x0:x0 + w // 3] = 1
            blob[y0 + h // 6:y0 + h // 3, x0 + w // 3:x0 + w // 2] = 1
            runs = _uncompressed_rle(blob)
            rle = coco_mask.frPyObjects(runs, h, w)
            annotations.append(_annotation(len(annotations) + 1, i + 1, runs, rle, rng,
                                           crowd=True))
    (scratch / "instances.json").write_text(json.dumps({
        "info": {"description": "jpegloader's generated test set"}, "images": entries,
        "annotations": annotations,
        "categories": [{"id": c, "name": n, "supercategory": n} for c, n in _CATEGORIES]}))
    try:
        scratch.rename(root)
    except OSError:  # another process wrote it first
        shutil.rmtree(scratch, ignore_errors=True)
    return images, ann_file


def _polygon(rng, w: int, h: int) -> list[float]:
    """A star-shaped polygon inside the image, as COCO's flat [x0, y0, x1, y1, ...]."""
    cx, cy = rng.uniform(0.15, 0.85) * w, rng.uniform(0.15, 0.85) * h
    radius = rng.uniform(0.05, 0.3) * min(w, h)
    angles = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(5, 12))))
    r = radius * rng.uniform(0.5, 1.0, len(angles))
    xs = np.clip(cx + r * np.cos(angles), 0, w - 1)
    ys = np.clip(cy + r * np.sin(angles), 0, h - 1)
    return [round(float(v), 2) for xy in zip(xs, ys) for v in xy]


def _uncompressed_rle(m: np.ndarray) -> dict:
    """COCO's uncompressed RLE of a mask: run lengths in column-major order, from 0s."""
    flat = np.asfortranarray(m).reshape(-1, order="F")
    changes = np.flatnonzero(np.diff(flat)) + 1
    bounds = np.concatenate([[0], changes, [flat.size]])
    counts = np.diff(bounds).tolist()
    if flat[0] == 1:
        counts = [0] + counts
    return {"counts": counts, "size": list(m.shape)}


def _annotation(ann_id: int, image_id: int, segmentation, rle, rng, crowd: bool) -> dict:
    from pycocotools import mask as coco_mask
    return {"id": ann_id, "image_id": image_id,
            "category_id": int(rng.choice([c for c, _ in _CATEGORIES])),
            "segmentation": segmentation, "iscrowd": int(crowd),
            "area": float(coco_mask.area(rle)),
            "bbox": [round(float(v), 2) for v in coco_mask.toBbox(rle)]}


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
