"""Small YOLO-format datasets written at test time: coco-sample's real photos with
their instances converted to YOLO labels (boxes, or polygons for segment), and a
generated set that needs no corpus; and the Ultralytics datasets and loaders built
from them as ``yolo val`` builds them."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image

from tests.conftest import noisy_jpeg, shared


def _write_set(root: Path, images: list[tuple[str, bytes | Path, list[str]]],
               names: dict[int, str]) -> Path:
    """images: (file name, bytes or a photo to link, label lines); the data yaml's path."""
    (root / "images" / "val").mkdir(parents=True)
    (root / "labels" / "val").mkdir(parents=True)
    for name, content, lines in images:
        target = root / "images" / "val" / name
        if isinstance(content, Path):
            target.symlink_to(content.resolve())
        else:
            target.write_bytes(content)
        (root / "labels" / "val" / f"{Path(name).stem}.txt").write_text(
            "".join(f"{line}\n" for line in lines))
    yaml = root / "data.yaml"
    yaml.write_text(f"path: {root}\ntrain: images/val\nval: images/val\nnames:\n" +
                    "".join(f"  {k}: {v}\n" for k, v in names.items()))
    return yaml


def coco_yolo_set(root: Path, segments: bool = False) -> Path:
    """coco-sample as a YOLO set: a box line per non-crowd instance (a polygon line
    with ``segments``); images linked, not copied."""
    coco = shared("coco-sample")
    meta = json.loads((coco / "annotations" / "instances_val2017.json").read_text())
    cats = sorted(c["id"] for c in meta["categories"])
    cls_of = {c: k for k, c in enumerate(cats)}
    names = {cls_of[c["id"]]: c["name"] for c in meta["categories"]}
    by_image: dict[int, list] = {}
    for a in meta["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    images = []
    for im in meta["images"]:
        path = coco / "val2017" / im["file_name"]
        if not path.exists():
            continue
        w, h = im["width"], im["height"]
        lines = []
        for a in by_image.get(im["id"], []):
            if a.get("iscrowd"):
                continue
            if segments:
                poly = max(a["segmentation"], key=len)
                xy = np.asarray(poly, float).reshape(-1, 2) / (w, h)
                lines.append(f"{cls_of[a['category_id']]} " +
                             " ".join(f"{v:.6f}" for v in xy.reshape(-1)))
            else:
                x, y, bw, bh = a["bbox"]
                if bw <= 0 or bh <= 0:
                    continue
                lines.append(f"{cls_of[a['category_id']]} {(x + bw / 2) / w:.6f} "
                             f"{(y + bh / 2) / h:.6f} {bw / w:.6f} {bh / h:.6f}")
        images.append((im["file_name"], path, lines))
    return _write_set(root, images, names)


def _exif_rotated(width: int, height: int, seed: int) -> bytes:
    image = Image.open(io.BytesIO(noisy_jpeg(width, height, seed)))
    exif = Image.Exif()
    exif[0x0112] = 6  # turned 90 degrees
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, exif=exif)
    return out.getvalue()


def generated_yolo_set(root: Path, count: int = 12) -> Path:
    """Noise JPEGs at imgsz 64 and other sizes (landscape, portrait, one to be
    resized, one EXIF-turned, one PNG), each with a few boxes."""
    rng = np.random.default_rng(0)
    sizes = [(64, 48), (48, 64), (64, 64), (64, 40), (30, 64), (64, 56)]
    images = []
    for k in range(count):
        w, h = sizes[k % len(sizes)]
        if k == 3:
            content, name = _exif_rotated(64, 48, k), f"turned{k}.jpg"
        elif k == 5:
            w, h = 96, 80
            content, name = noisy_jpeg(w, h, k), f"large{k}.jpg"
        elif k == 7:
            out = io.BytesIO()
            Image.open(io.BytesIO(noisy_jpeg(w, h, k))).save(out, "PNG")
            content, name = out.getvalue(), f"png{k}.png"
        else:
            content, name = noisy_jpeg(w, h, k), f"photo{k}.jpg"
        lines = []
        for _ in range(int(rng.integers(0, 4))):
            cx, cy = rng.uniform(0.2, 0.8, 2)
            bw, bh = rng.uniform(0.05, 0.3, 2)
            lines.append(f"{int(rng.integers(0, 3))} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}")
        images.append((name, content, lines))
    return _write_set(root, images, {0: "a", 1: "b", 2: "c"})


def val_dataset(yaml: Path, imgsz: int = 640, batch: int = 16, rect: bool = True,
                task: str = "detect", **overrides):
    """The dataset ``yolo val`` builds (build_yolo_dataset, mode="val")."""
    from ultralytics.cfg import get_cfg
    from ultralytics.data import build_yolo_dataset
    from ultralytics.data.utils import check_det_dataset

    cfg = get_cfg(overrides={"imgsz": imgsz, "task": task, "rect": rect, **overrides})
    data = check_det_dataset(str(yaml))
    return build_yolo_dataset(cfg, data["val"], batch, data, mode="val", rect=rect, stride=32)


def train_dataset(yaml: Path, imgsz: int = 640, batch: int = 16, **overrides):
    from ultralytics.cfg import get_cfg
    from ultralytics.data import build_yolo_dataset
    from ultralytics.data.utils import check_det_dataset

    cfg = get_cfg(overrides={"imgsz": imgsz, **overrides})
    data = check_det_dataset(str(yaml))
    return build_yolo_dataset(cfg, data["train"], batch, data, mode="train", stride=32)
