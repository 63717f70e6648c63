"""Datasets for the benchmark: the built-in synthetic ones and replication of
real ones up to a file count (files copied byte for byte)."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

IMAGENET_LIKE = dict(files=1000, classes=100, width=500, height=375, quality=90, seed=0)
IMAGENET_LIKE_DESCRIPTION = (
    "{files} synthetic JPEGs in {classes} classes, {width}x{height}, Pillow quality "
    "{quality} with 4:2:0 chroma (ImageNet's typical size and subsampling), random smooth "
    "colour fields plus noise (seed {seed}), generated once into {root}").format
COCO_LIKE = dict(files=1000, categories=80, width=640, height=480, quality=90, seed=0)
COCO_LIKE_DESCRIPTION = (
    "{files} synthetic JPEGs, {width}x{height} (COCO's typical size), Pillow quality {quality} "
    "4:2:0, random smooth colour fields plus noise, each with 1-12 random boxes of "
    "{categories} categories in a COCO instances JSON (seed {seed}), generated once into "
    "{root}").format


def corpus_roots() -> list[Path]:
    """Where a corpus named by its folder alone is looked for, as the tests look for the
    real-photo corpus: $JPEGLOADER_TEST_DATA, or ``shared/data`` beside the checkout
    (or beside the current folder)."""
    env = os.environ.get("JPEGLOADER_TEST_DATA")
    if env:
        return [Path(env)]
    beside = [Path(__file__).resolve().parents[3].parent, Path.cwd().parent]
    return list(dict.fromkeys(b / "shared" / "data" for b in beside))


def find_corpus(name: Path) -> Path | None:
    """The folder of a corpus named by its folder (``imagenet-sample``), or None."""
    if len(name.parts) != 1:
        return None
    return next((r / name for r in corpus_roots() if (r / name).is_dir()), None)


def cache_root(name: str) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "jpegloader" / name


def _texture(rng, width: int, height: int) -> Image.Image:
    coarse = rng.uniform(0, 255, size=(height // 25 + 2, width // 25 + 2, 3))
    field = np.asarray(Image.fromarray(coarse.astype(np.uint8)).resize(
        (width, height), Image.BICUBIC), dtype=np.float32)
    return Image.fromarray(np.clip(field + rng.normal(0, 14, size=field.shape), 0, 255)
                           .astype(np.uint8))


def _build_once(root: Path, write) -> Path:
    """Runs write(tmp_dir) into a fresh directory and moves it to root, once."""
    if (root / ".complete").exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=root.parent))
    write(tmp)
    (tmp / ".complete").touch()
    if root.exists():
        shutil.rmtree(root)
    tmp.rename(root)
    return root


def make_imagenet_like(root: Path, files: int, classes: int, width: int, height: int,
                       quality: int, seed: int) -> Path:
    def write(tmp: Path):
        rng = np.random.default_rng(seed)
        for i in range(files):
            cls = tmp / f"class_{i % classes:03d}"
            cls.mkdir(exist_ok=True)
            _texture(rng, width, height).save(cls / f"img_{i:05d}.JPEG", quality=quality,
                                              subsampling=2)
    return _build_once(root, write)


def make_coco_like(root: Path, files: int, categories: int, width: int, height: int,
                   quality: int, seed: int) -> Path:
    """A COCO-format detection set: root/images/*.jpg and root/annotations.json."""
    def write(tmp: Path):
        rng = np.random.default_rng(seed)
        (tmp / "images").mkdir()
        images, annotations = [], []
        for i in range(files):
            name = f"{i:012d}.jpg"
            _texture(rng, width, height).save(tmp / "images" / name, quality=quality,
                                              subsampling=2)
            images.append({"id": i + 1, "file_name": name, "width": width, "height": height})
            for _ in range(int(rng.integers(1, 13))):
                bw, bh = rng.uniform(0.05, 0.6) * width, rng.uniform(0.05, 0.6) * height
                x, y = rng.uniform(0, width - bw), rng.uniform(0, height - bh)
                annotations.append({"id": len(annotations) + 1, "image_id": i + 1,
                                    "category_id": int(rng.integers(1, categories + 1)),
                                    "bbox": [round(x, 2), round(y, 2), round(bw, 2),
                                             round(bh, 2)],
                                    "area": round(bw * bh, 2), "iscrowd": 0})
        cats = [{"id": k, "name": f"category_{k}", "supercategory": "none"}
                for k in range(1, categories + 1)]
        (tmp / "annotations.json").write_text(json.dumps(
            {"info": {"description": "jpegloader synthetic COCO-like benchmark set"},
             "images": images, "annotations": annotations, "categories": cats}))
    return _build_once(root, write)


def replicate_folder(src: Path, files: int, dest: Path) -> Path:
    """An ImageFolder of exactly ``files`` images: src's files copied byte for byte,
    repeated in order until the count is reached (class by class layout kept)."""
    originals = sorted(p for p in src.rglob("*") if p.is_file() and not p.name.startswith("."))
    if not originals:
        raise SystemExit(f"no files under {src}")
    for i in range(files):
        p = originals[i % len(originals)]
        rel = p.relative_to(src)
        out = dest / rel.parent / (f"r{i // len(originals)}_" + rel.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, out)
    return dest


def replicate_coco(images: Path, annotations: Path, files: int,
                   dest: Path) -> tuple[Path, Path]:
    """A COCO set of exactly ``files`` annotated images: the annotated images of
    the source copied byte for byte (repeated in order), with fresh image and
    annotation ids and their annotations."""
    data = json.loads(annotations.read_text())
    by_image: dict[int, list] = {}
    for ann in data["annotations"]:
        by_image.setdefault(ann["image_id"], []).append(ann)
    sources = [img for img in data["images"] if img["id"] in by_image]
    if not sources:
        raise SystemExit(f"{annotations} has no annotated images")
    (dest / "images").mkdir(parents=True)
    out_images, out_anns = [], []
    for i in range(files):
        img = sources[i % len(sources)]
        name = f"r{i // len(sources)}_{img['file_name']}"
        shutil.copyfile(images / img["file_name"], dest / "images" / name)
        out_images.append({**img, "id": i + 1, "file_name": name})
        for ann in by_image[img["id"]]:
            out_anns.append({**ann, "id": len(out_anns) + 1, "image_id": i + 1})
    out = dest / "annotations.json"
    out.write_text(json.dumps({**data, "images": out_images, "annotations": out_anns}))
    return dest / "images", out


def find_coco(root: Path, annotations: Path | None) -> tuple[Path, Path]:
    """(image folder, instances JSON) for --data: an image folder with
    --annotations, or a COCO root holding annotations/instances_<split>.json and
    <split>/ (or annotations.json and images/)."""
    if annotations is not None:
        return root, annotations
    if (root / "annotations.json").is_file() and (root / "images").is_dir():
        return root / "images", root / "annotations.json"
    for ann in sorted((root / "annotations").glob("instances_*.json")):
        split = ann.stem[len("instances_"):]
        if (root / split).is_dir():
            return root / split, ann
    raise SystemExit(f"--data {root}: no instances JSON found; pass --annotations FILE "
                     "(and --data the image folder)")
