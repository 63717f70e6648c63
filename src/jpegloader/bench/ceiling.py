"""libjpeg-turbo's own decode ceiling on the benchmark's files, measured in the same run.

``jpeg_limit`` (a small C program that decodes files from memory with libjpeg-turbo
and nothing else: jpeg_limit.c beside this file) runs as many processes at
once as the loaders have workers, in the crop-window mode that matches the
pipeline: ``roi2`` for RandomResizedCrop (a window of half the area, decoded at the
smallest power-of-two DCT scale that keeps 224 px, rows below it not decoded),
``ctr2`` for Resize(256) + CenterCrop(224), each process reading the files in its
own shuffled order, as the loaders' workers do.  Its img/s, summed over the processes,
is what decoding alone could give on these files and cores; a loader's throughput
is quoted as a fraction of it.

NOTE [ The ceiling beside the epochs ]
A shared machine's speed drifts within minutes, so a ceiling
measured once would carry that drift into every fraction.  The benchmark
measures one pass in every round of epochs, beside the two loaders, and quotes
the median of the rounds (``over_rounds``).  One pass per round is also the
stricter ceiling: jpeg_limit's single output row runs faster in later passes
when malloc happens to put it off the 32-byte grid (NOTE [ Rows off the
32-byte grid ] in decoders/csrc/jpeg_region.c).

NOTE [ The ceiling reads the files shuffled ]
The loaders read every file once per epoch in a random order.  A corpus copied
up to a size (corpora.replicate_folder) lists each file's copies side by side,
and reading them in that order decodes the same bytes several times in a row
with the processor's predictors trained on them, faster than any real dataset
(docs/experiments.md).  So each jpeg_limit process reads its own random order
of the files, as a worker does.
"""
from __future__ import annotations

import hashlib
import random
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from .corpora import cache_root

#: libjpeg-turbo's own decode ceiling, shipped with the package (``--ceiling`` with no path)
SOURCE = Path(__file__).with_name("jpeg_limit.c")
#: pipeline -> jpeg_limit mode whose crop window it decodes
MODES = {"train": "roi2", "train-uint8": "roi2", "timm-train": "roi2", "dle-train": "roi2",
         "eval": "ctr2", "eval-uint8": "ctr2", "deit-eval": "ctr2",
         # detection: each photo decoded whole, at its own size
         "det-hflip": "full", "det-multiscale": "full", "det-eval": "full", "maskrcnn": "full",
         "det-hflip-uint8": "full", "det-ssdlite": "full", "det-ssd": "full",
         "det-lsj": "full", "detr": "full", "detr-val": "full",
         "rtdetr": "full", "rtdetr-val": "full", "yolo-val": "full", "yolo-seg-val": "full",
         "yolo-train": "full", "yolo-train-rect": "full", "yolo-seg-train": "full"}


def build(source: Path) -> Path:
    """The jpeg_limit program: ``source`` itself when it is one, else compiled from
    ``source`` (jpeg_limit.c) once into the cache."""
    source = Path(source)
    if source.suffix != ".c":
        return source
    text = source.read_bytes()
    binary = cache_root("tools") / f"jpeg_limit-{hashlib.sha256(text).hexdigest()[:12]}"
    if not binary.exists():
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise RuntimeError("--ceiling needs a C compiler (cc) to build jpeg_limit.c")
        binary.parent.mkdir(parents=True, exist_ok=True)
        tmp = binary.with_suffix(".tmp")
        subprocess.run([cc, "-O2", "-o", str(tmp), str(source), "-ljpeg", "-lm"], check=True)
        tmp.rename(binary)
    return binary


def _parse(output: str, mode: str) -> dict:
    for line in output.splitlines():
        parts = line.split()
        if parts and parts[0] == mode:
            return {"img_per_s": float(parts[1]), "cpu_us_per_img": float(parts[4])}
    raise RuntimeError(f"jpeg_limit printed no {mode} line:\n{output}")


def measure(program: Path, files: list[str], mode: str, processes: int,
            passes: int = 3, seed: int = 0) -> dict:
    """``processes`` copies of jpeg_limit at once on ``files``, each in its own random
    order drawn from ``seed`` (NOTE [ The ceiling reads the files shuffled ]): the
    sum of their median img/s, and the mean CPU-us per image."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        listings = []
        for k in range(max(processes, 1)):
            order = list(files)
            rng.shuffle(order)
            listing = Path(tmp) / f"files-{k}.txt"
            listing.write_text("".join(f"{f}\n" for f in order))
            listings.append(listing)
        runs = []
        for listing in listings:  # each reads its list itself: all start at once
            with open(listing) as stdin:
                runs.append(subprocess.Popen([str(program), "-r", str(passes), mode],
                                             stdin=stdin, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True))
        outputs = [(r, *r.communicate()) for r in runs]
    results = []
    for r, out, err in outputs:
        if r.returncode != 0:
            raise RuntimeError(f"jpeg_limit failed ({r.returncode}): {err[-1000:]}")
        results.append(_parse(out, mode))
    return {"mode": mode, "processes": len(runs), "files": len(files),
            "img_per_s": sum(r["img_per_s"] for r in results),
            "cpu_us_per_img": statistics.mean(r["cpu_us_per_img"] for r in results)}


def over_rounds(rounds: list[dict]) -> dict:
    """One ceiling from ``measure``'s results in each round of epochs: the median
    img/s and CPU-us per image, and the rounds' img/s (NOTE [ The ceiling beside
    the epochs ])."""
    first = rounds[0]
    return {"mode": first["mode"], "processes": first["processes"], "files": first["files"],
            "img_per_s": statistics.median(r["img_per_s"] for r in rounds),
            "cpu_us_per_img": statistics.median(r["cpu_us_per_img"] for r in rounds),
            "img_per_s_per_round": [r["img_per_s"] for r in rounds]}
