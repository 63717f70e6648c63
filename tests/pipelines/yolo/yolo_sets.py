"""Small YOLO-format datasets written at test time: coco-sample's real photos with
their instances converted to YOLO labels (boxes, or polygons for segment), and a
generated set that needs no corpus; and the Ultralytics datasets and loaders built
from them as ``yolo val`` builds them."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from jpegloader.bench import yolo_user
from jpegloader.bench.yolo_user import write_yolo_set
from tests.conftest import noisy_jpeg, shared


def _write_set(root: Path, images: list[tuple[str, bytes | Path, list[str]]],
               names: dict[int, str], extra: str = "") -> Path:
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
    yaml.write_text(f"path: {root}\ntrain: images/val\nval: images/val\n{extra}names:\n" +
                    "".join(f"  {k}: {v}\n" for k, v in names.items()))
    return yaml


def coco_yolo_set(root: Path, segments: bool = False) -> Path:
    """coco-sample as a YOLO set (the benchmark's converter): a box line per non-crowd
    instance, or its polygon with ``segments``; images linked, not copied."""
    coco = shared("coco-sample")
    return write_yolo_set(coco / "val2017", coco / "annotations" / "instances_val2017.json",
                          root, segments)


def _exif_rotated(width: int, height: int, seed: int) -> bytes:
    image = Image.open(io.BytesIO(noisy_jpeg(width, height, seed)))
    exif = Image.Exif()
    exif[0x0112] = 6  # turned 90 degrees
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, exif=exif)
    return out.getvalue()


def _label(rng, task: str) -> str:
    """One object: a box (detect), with two keypoints (pose), or a quadrilateral
    (obb); segment gets the box's corners as its polygon."""
    cls = int(rng.integers(0, 3))
    cx, cy = rng.uniform(0.3, 0.7, 2)
    bw, bh = rng.uniform(0.05, 0.3, 2)
    x0, y0, x1, y1 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
    if task == "obb" or task == "segment":
        corners = [x0, y0, x1, y0, x1, y1, x0, y1]
        return f"{cls} " + " ".join(f"{v:.6f}" for v in corners)
    line = f"{cls} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}"
    if task == "pose":
        kx, ky = rng.uniform(x0, x1, 2), rng.uniform(y0, y1, 2)
        line += "".join(f" {x:.6f} {y:.6f} 2" for x, y in zip(kx, ky))
    return line


def generated_yolo_set(root: Path, count: int = 12, task: str = "detect") -> Path:
    """Noise JPEGs at imgsz 64 and other sizes (landscape, portrait, one to be
    resized, one EXIF-turned, one PNG), each with a few objects labelled for
    ``task``."""
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
        lines = [_label(rng, task) for _ in range(int(rng.integers(0, 4)))]
        images.append((name, content, lines))
    extra = "kpt_shape: [2, 3]\nflip_idx: [1, 0]\n" if task == "pose" else ""
    return _write_set(root, images, {0: "a", 1: "b", 2: "c"}, extra)


def batch_record(batch: dict) -> list:
    """A YOLO batch as processes compare it: its files (names), image shape, and the
    sums of its pixels and boxes."""
    return [[Path(f).name for f in batch["im_file"]], list(batch["img"].shape[-2:]),
            float(batch["img"].double().sum()), float(batch["bboxes"].double().sum())]


def val_dataset(yaml: Path, imgsz: int = 640, batch: int = 16, rect: bool = True,
                task: str = "detect"):
    """The dataset ``yolo val`` builds (build_yolo_dataset, mode="val")."""
    return yolo_user.val_dataset(yaml, batch, imgsz, rect, task)


def train_dataset(yaml: Path, imgsz: int = 640, batch: int = 16, **overrides):
    from ultralytics.cfg import get_cfg
    from ultralytics.data import build_yolo_dataset
    from ultralytics.data.utils import check_det_dataset

    cfg = get_cfg(overrides={"imgsz": imgsz, **overrides})
    data = check_det_dataset(str(yaml))
    return build_yolo_dataset(cfg, data["train"], batch, data, mode="train", stride=32)


def npy_beside(ds, name: str, change, age_s: float = 0.0) -> Path:
    """Writes ``<photo>.npy`` beside the dataset's photo ``name`` as cache="disk" would
    (the photo as cv2.imread reads it), passed through ``change``, and dates it
    ``age_s`` seconds before the photo (0: as new as the photo)."""
    import os

    import cv2
    photo = next(Path(f) for f in ds.im_files if Path(f).name == name)
    npy = photo.with_suffix(".npy")
    np.save(npy, change(cv2.imread(str(photo))), allow_pickle=False)
    stamp = photo.stat().st_mtime - age_s if age_s else npy.stat().st_mtime
    os.utime(photo, (photo.stat().st_atime, min(photo.stat().st_mtime, npy.stat().st_mtime)))
    os.utime(npy, (stamp, stamp))
    return npy
