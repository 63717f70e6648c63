"""Builds issue 15's second corpus: the files of imagenet-sample still in their
original encoding (luma DC quantiser above 1; the re-encoded ones have 1), as an
ImageFolder; the benchmark's --files then copies them to 2,000.

    python benchmarks/original_encoding.py [SOURCE] [DEST]
    python -m jpegloader.benchmark --data DEST --files 2000 --ceiling
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent / "shared" / "data" / "imagenet-sample"
DEST = Path.home() / ".cache" / "jpegloader" / "imagenet-original-encoding-v1"


def luma_dc_quantiser(path: Path) -> int:
    with Image.open(path) as im:
        return im.quantization[0][0]


def build(source: Path, dest: Path) -> int:
    files = sorted(source.glob("*/*.JPEG"))
    if not files:
        sys.exit(f"no */*.JPEG files under {source}: pass the imagenet-sample folder")
    kept = [f for f in files if luma_dc_quantiser(f) > 1]
    if dest.exists():
        shutil.rmtree(dest)
    for f in kept:
        (dest / f.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest / f.parent.name / f.name)
    print(f"{len(kept)} of {len(files)} files have a luma DC quantiser above 1: {dest}")
    return len(kept)


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE,
          Path(sys.argv[2]) if len(sys.argv) > 2 else DEST)
