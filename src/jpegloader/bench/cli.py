"""python -m jpegloader.benchmark: jpegloader against torch's DataLoader, side by side.

    python -m jpegloader.benchmark                   # built-in synthetic dataset
    python -m jpegloader.benchmark --data DIR        # any ImageFolder
    python -m jpegloader.benchmark --data imagenet-sample   # a corpus in ../shared/data
    python -m jpegloader.benchmark --data DIR --files 2000 --json out.json
    python -m jpegloader.benchmark --data DIR --ceiling                # vs libjpeg-turbo alone
    python -m jpegloader.benchmark --recipe ssd,ssd-val              # built-in COCO-like set
    python -m jpegloader.benchmark --recipe ssd --data COCO_ROOT --files 1000
    python -m jpegloader.benchmark --workers 0,1,2,4 --ceiling --plot plots/
    python -m jpegloader.benchmark --consumer-ms 120     # a model step of 120 ms per batch

Both loaders read the same files with the same transforms, workers and batch
size, and alternate epoch by epoch: the machine's speed drifts, so only ratios
measured side by side mean anything.  For each loader it reports the median
img/s over the measured epochs, CPU milliseconds per image (the main process
and all workers), the largest worker's peak resident memory, the time to the
first batch and, measured with each loader alone in a new process (three
times by default, alternating; the medians), the peak PSS summed over the
main process and the workers, and what it holds in shared memory beyond that.
For jpegloader it also reports where the time goes (read, decode, augment,
your own code, waiting) and whether the loader or the simulated model
(--consumer-ms) is the limit.  With --ceiling it measures libjpeg-turbo's own
decode ceiling on the same files (the tool ships with the package and is
compiled on first use: it needs a C compiler and libjpeg-turbo's headers), one
pass beside every round of epochs, and each loader's fraction of it.  The
native loader's PIL is named (Pillow or pillow-simd).

--json writes every figure: {"dataset", "workers", "batch_size", "epochs",
"warmup", "consumer_ms", "native_pil", "torch", "python", "cpus", "results":
{pipeline: {workers: {"native": {...}, "jpegloader": {..., "stages_ms_per_img"},
"ratio", "ratio_per_epoch_pair", "waited_fraction", "advice", and with
--ceiling "ceiling" and "of_ceiling_per_round"}}}}; per loader "img_per_s",
"cpu_ms_per_img", "first_batch_s", "worker_peak_mib", "epochs", the memory
medians "pss_mib" and "held_mib" with their runs, and "of_ceiling".
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from importlib import util
from pathlib import Path

import torch

import jpegloader

from . import ceiling as bench_ceiling
from . import corpora
from . import peers
from . import sources
from .measure import benchmark, native_pil
from .recipes import DETECTION, DETR, NEEDS, PIPELINES
from .plots import plot
from .report import table


def _dataset(args, detection: bool, tmp: Path):
    """(root, description) of the dataset a pipeline kind runs on."""
    if args.data is None:
        name, make, params, describe = (
            ("bench-coco-like-v1", corpora.make_coco_like, corpora.COCO_LIKE,
             corpora.COCO_LIKE_DESCRIPTION)
            if detection else
            ("bench-imagenet-like-v1", corpora.make_imagenet_like, corpora.IMAGENET_LIKE,
             corpora.IMAGENET_LIKE_DESCRIPTION))
        root = corpora.cache_root(name)
        if not (root / ".complete").exists():
            print(f"generating the built-in {'COCO' if detection else 'ImageNet'}-like "
                  "dataset (once)...", flush=True)
        make(root, **params)
        description = describe(root=root, **params)
    else:
        root, description = args.data, f"{'COCO' if detection else 'ImageFolder'} {args.data}"
    if detection:
        images, annotations = corpora.find_coco(root, args.annotations)
        if args.files:
            images, annotations = corpora.replicate_coco(images, annotations, args.files,
                                                         tmp / "coco")
            description += f", copied to exactly {args.files} annotated images"
        return (images, annotations), description
    if args.files:
        root = corpora.replicate_folder(root, args.files, tmp / "folder")
        description += f", copied to exactly {args.files} files"
    return root, description


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m jpegloader.benchmark", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path,
                   help="an ImageFolder root for train/eval; for ssd/ssd-val an image folder "
                        "with --annotations, or a COCO root (annotations/instances_<split>.json "
                        "+ <split>/); default: the built-in synthetic datasets")
    p.add_argument("--annotations", type=Path, help="COCO instances JSON for ssd/ssd-val")
    p.add_argument("--files", type=int, default=0,
                   help="copy the dataset's files (byte for byte, repeated) into a temporary "
                        "dataset of exactly this many images")
    p.add_argument("--recipe", "--pipeline", dest="pipeline", metavar="RECIPE",
                   default="train,eval",
                   help="the recipes' loaders to compare (--pipeline: the same), "
                        "comma-separated, of: " + "; ".join(f"{k}: {v[0]}"
                                                          for k, v in PIPELINES.items())
                   + " (default: train,eval)")
    p.add_argument("--source", choices=sources.SOURCES, default="folder",
                   help="where the images are kept, made from the dataset's files: folder "
                        "(loose files, default), webdataset (tar shards: torch's loader runs "
                        "webdataset's own pipeline, jpegloader WebDataset) or hf (a Hugging "
                        "Face Arrow dataset: torch's loader runs ds.with_transform, jpegloader "
                        "HuggingFaceImages); classification pipelines without a collate_fn")
    p.add_argument("--workers", default="2",
                   help="num_workers for both loaders; a comma-separated list (0,1,2,4) "
                        "benchmarks each")
    p.add_argument("--consumer-ms", type=float, default=0.0,
                   help="simulated model time per batch in ms, to see whether loading hides "
                        "behind compute")
    p.add_argument("--pin", choices=("off", "on", "emulated"), default="off",
                   help="pin_memory for both loaders: off; on (pinned where an accelerator "
                        "is); emulated (what pinning costs on a GPU host, a copy of each "
                        "batch into fresh host memory, on any machine: jpegloader.bench."
                        "pinning).  With pinning, each epoch line also gives the main "
                        "thread's CPU time inside next() per batch")
    p.add_argument("--plot", type=Path, metavar="DIR",
                   help="also draw the run as PNGs in DIR: scaling.png (img/s of both "
                        "loaders and the ceiling against num_workers), stages.png (where "
                        "jpegloader's time goes, per pipeline) and ratios.png (the ratios "
                        "side by side) (needs matplotlib: pip install 'jpegloader[bench]')")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=5, help="measured epochs per loader")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured epochs per loader")
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--memory-runs", type=int, default=3,
                   help="how many times each loader's memory is measured alone in a new "
                        "process, alternating (the table gives the medians; 0 skips it)")
    p.add_argument("--no-memory", action="store_true", help="the same as --memory-runs 0")
    p.add_argument("--ceiling", type=Path, nargs="?", const=bench_ceiling.SOURCE,
                   metavar="JPEG_LIMIT",
                   help="also measure libjpeg-turbo's own decode ceiling on the same files "
                        "and give each loader's fraction of it (train-like pipelines: a "
                        "random crop window, eval-like: the centre crop); with no value, the "
                        "jpeg_limit.c shipped with the package, else a jpeg_limit.c or a "
                        "built jpeg_limit")
    args = p.parse_args(argv)
    pipelines = [s.strip() for s in args.pipeline.split(",") if s.strip()]
    unknown = [s for s in pipelines if s not in PIPELINES]
    if unknown:
        p.error(f"unknown pipeline(s) {unknown}; choose from {sorted(PIPELINES)}")
    for pl in pipelines:
        if pl in NEEDS and util.find_spec(NEEDS[pl]) is None:
            p.error(f"--pipeline {pl} needs {NEEDS[pl]}: pip install {NEEDS[pl]}")
        if pl in DETR:
            try:
                peers.detr()
            except peers.PeerMissing as e:
                p.error(f"--pipeline {pl} runs DETR's own code: {e}")

    try:
        worker_counts = [int(w) for w in args.workers.split(",") if w.strip()]
    except ValueError:
        p.error(f"--workers takes integers separated by commas, got {args.workers!r}")
    if not worker_counts or min(worker_counts) < 0:
        p.error(f"--workers needs counts >= 0, got {args.workers!r}")
    if args.consumer_ms < 0:
        p.error("--consumer-ms must be >= 0")
    if args.memory_runs < 0:
        p.error("--memory-runs must be >= 0")
    if args.plot is not None and util.find_spec("matplotlib") is None:
        p.error("--plot needs matplotlib: pip install 'jpegloader[bench]'")
    if args.plot is not None and ((args.plot.exists() and not args.plot.is_dir())
                                  or args.plot.suffix.lower() == ".png"):
        p.error(f"--plot takes a folder to write its PNGs into, not a file: {args.plot}")
    ceiling = None
    if args.ceiling is not None:
        if not args.ceiling.is_file():
            p.error(f"--ceiling {args.ceiling} is not a file")
        try:
            ceiling = bench_ceiling.build(args.ceiling)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
            p.error(f"--ceiling: could not build {args.ceiling}: {e}")

    if args.source != "folder":
        unfit = [pl for pl in pipelines if pl in DETECTION or len(PIPELINES[pl]) > 2]
        if unfit:
            p.error(f"--source {args.source} runs classification pipelines without a "
                    f"collate_fn; not {', '.join(unfit)}")
        needs = {"webdataset": "webdataset", "hf": "datasets"}[args.source]
        if util.find_spec(needs) is None:
            p.error(f"--source {args.source} compares against {needs}: pip install {needs}")
    kinds = {pl in DETECTION for pl in pipelines}
    if args.data is not None and len(kinds) > 1:
        p.error("--data names one dataset: benchmark classification (train, eval) and "
                "detection (ssd, ssd-val) pipelines in separate runs")
    if args.data is not None and not args.data.is_dir():
        found = corpora.find_corpus(args.data)
        if found is None:
            p.error(f"--data {args.data} is not a directory, nor a corpus in "
                    f"{' or '.join(str(r) for r in corpora.corpus_roots())}")
        print(f"--data {args.data}: {found}", flush=True)
        args.data = found
    with tempfile.TemporaryDirectory(prefix="jpegloader-bench-") as tmp:
        roots, descriptions = {}, []
        for detection in sorted(kinds):
            root, description = _dataset(args, detection, Path(tmp))
            roots[detection] = root
            descriptions.append(description)
        pil = native_pil()
        print("\ndataset: " + "\ndataset: ".join(descriptions))
        print(f"workers={','.join(map(str, worker_counts))} batch={args.batch_size} "
              f"epochs={args.epochs} (+{args.warmup} warm-up), alternating; consumer "
              f"{args.consumer_ms:g} ms/batch; pin_memory {args.pin}; torch "
              f"{torch.__version__}, libjpeg-turbo "
              f"{jpegloader.libjpeg_turbo_version()}, native PIL from {pil['distribution']} "
              f"{pil['version']}, {os.cpu_count()} CPUs")
        if args.source != "folder":
            print(f"source: {args.source}, made from the dataset's files")
        results = {pl: {w: benchmark(roots[pl in DETECTION], pl, w, args.batch_size,
                                     args.epochs, args.warmup, consumer_ms=args.consumer_ms,
                                     memory_runs=0 if args.no_memory else args.memory_runs,
                                     ceiling=ceiling, source=args.source,
                                     work=Path(tmp) / f"{args.source}-{pl}-{w}",
                                     pin=args.pin)
                        for w in worker_counts}
                   for pl in pipelines}
    print()
    print(table(results, pil))
    if args.json:
        args.json.write_text(json.dumps({
            "dataset": "; ".join(descriptions), "workers": worker_counts,
            "batch_size": args.batch_size, "epochs": args.epochs, "warmup": args.warmup,
            "consumer_ms": args.consumer_ms, "native_pil": pil, "torch": torch.__version__,
            "python": platform.python_version(), "cpus": os.cpu_count(),
            "results": results}, indent=2))
        print(f"\nwrote {args.json}")
    if args.plot is not None:
        print(f"wrote {', '.join(str(path) for path in plot(results, args.plot))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
