"""The benchmark's Ultralytics recipe: a COCO set (image folder and instances JSON)
written out as a YOLO set (images linked, one label file per image, a data yaml), and
the dataset ``yolo val`` builds on it.  Ultralytics is needed only here (``pip install
ultralytics``); it is not a dependency of the package."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from .corpora import cache_root


def _label_lines(annotations: list[dict], cls_of: dict[int, int], w: int, h: int,
                 segments: bool) -> list[str]:
    """YOLO label lines of one image's non-crowd instances: normalised boxes (class cx
    cy w h), or with ``segments`` each instance's longest polygon."""
    lines = []
    for a in annotations:
        if a.get("iscrowd"):
            continue
        if segments:
            if not isinstance(a.get("segmentation"), list) or not a["segmentation"]:
                continue
            xy = np.asarray(max(a["segmentation"], key=len), float).reshape(-1, 2) / (w, h)
            lines.append(f"{cls_of[a['category_id']]} " +
                         " ".join(f"{v:.6f}" for v in xy.reshape(-1)))
            continue
        x, y, bw, bh = a["bbox"]
        if bw > 0 and bh > 0:
            lines.append(f"{cls_of[a['category_id']]} {(x + bw / 2) / w:.6f} "
                         f"{(y + bh / 2) / h:.6f} {bw / w:.6f} {bh / h:.6f}")
    return lines


def write_yolo_set(images: Path, annotations: Path, root: Path, segments: bool = False) -> Path:
    """COCO's images (linked, not copied) and instances as a YOLO set in ``root``, its
    categories numbered 0..n-1 in id order; returns the data yaml."""
    meta = json.loads(Path(annotations).read_text())
    cls_of = {c: k for k, c in enumerate(sorted(c["id"] for c in meta["categories"]))}
    names = {cls_of[c["id"]]: c["name"] for c in meta["categories"]}
    by_image: dict[int, list] = {}
    for a in meta["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    (root / "images" / "val").mkdir(parents=True, exist_ok=True)
    (root / "labels" / "val").mkdir(parents=True, exist_ok=True)
    for im in meta["images"]:
        path = Path(images) / im["file_name"]
        if not path.exists():
            continue
        link = root / "images" / "val" / Path(im["file_name"]).name
        if not link.is_symlink():
            link.symlink_to(path.resolve())
        lines = _label_lines(by_image.get(im["id"], []), cls_of, im["width"], im["height"],
                             segments)
        (root / "labels" / "val" / f"{link.stem}.txt").write_text(
            "".join(f"{line}\n" for line in lines))
    yaml = root / "data.yaml"
    yaml.write_text(f"path: {root}\ntrain: images/val\nval: images/val\nnames:\n" +
                    "".join(f"  {k}: {json.dumps(v)}\n" for k, v in sorted(names.items())))
    return yaml


def yolo_set_for(images: Path, annotations: Path, segments: bool = False,
                 variant: str = "") -> Path:
    """The YOLO set of a COCO set, written once into the cache (keyed by both paths,
    the JSON's modification time, the task and ``variant``: a set that cache="disk"
    writes .npy files into is a copy of its own, so no other recipe reads them); its
    data yaml."""
    key = f"{Path(images).resolve()}|{Path(annotations).resolve()}|" \
          f"{os.stat(annotations).st_mtime_ns}|{segments}" + (f"|{variant}" if variant else "")
    root = cache_root(f"yolo-{hashlib.sha1(key.encode()).hexdigest()[:16]}")
    yaml = root / "data.yaml"
    if not yaml.exists():
        write_yolo_set(Path(images), Path(annotations), root, segments)
    return yaml


def val_dataset(yaml: Path, batch_size: int, imgsz: int = 640, rect: bool = True,
                task: str = "detect", cache=False):
    """The dataset ``yolo val`` builds: build_yolo_dataset with mode="val"."""
    from ultralytics.cfg import get_cfg
    from ultralytics.data import build_yolo_dataset
    from ultralytics.data.utils import check_det_dataset

    cfg = get_cfg(overrides={"imgsz": imgsz, "task": task, "rect": rect, "cache": cache})
    data = check_det_dataset(str(yaml))
    return build_yolo_dataset(cfg, data["val"], batch_size, data, mode="val", rect=rect,
                              stride=32)


def train_dataset(yaml: Path, batch_size: int, imgsz: int = 640, task: str = "detect",
                  cache=False, rect: bool = False):
    """The dataset ``yolo train`` builds: build_yolo_dataset with mode="train" and
    Ultralytics' default hyperparameters; ``cache`` its setting ("ram", "disk"),
    ``rect`` rect training."""
    from ultralytics.cfg import get_cfg
    from ultralytics.data import build_yolo_dataset
    from ultralytics.data.utils import check_det_dataset

    cfg = get_cfg(overrides={"imgsz": imgsz, "task": task, "cache": cache, "rect": rect})
    data = check_det_dataset(str(yaml))
    return build_yolo_dataset(cfg, data["train"], batch_size, data, mode="train", stride=32)


def classify_dataset(root: Path, augment: bool, imgsz: int = 224):
    """The dataset ``yolo classify`` builds over an image folder (ClassificationDataset,
    Ultralytics' default hyperparameters), for training (``augment``) or validation."""
    from ultralytics.cfg import get_cfg
    from ultralytics.data.dataset import ClassificationDataset

    return ClassificationDataset(str(root), args=get_cfg(overrides={"imgsz": imgsz}),
                                 augment=augment, prefix="train" if augment else "val")


def ram_cache_mib(dataset) -> float:
    """What a dataset built with cache="ram" holds of decoded photos (0 without)."""
    if getattr(dataset, "cache", None) != "ram":
        return 0.0
    return sum(im.nbytes for im in dataset.ims if im is not None) / (1 << 20)
