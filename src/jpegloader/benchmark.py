"""Throughput benchmark: jpegloader vs torch's DataLoader, side by side.

    python -m jpegloader.benchmark                   # built-in synthetic dataset
    python -m jpegloader.benchmark --data DIR        # any ImageFolder
    python -m jpegloader.benchmark --data DIR --files 2000 --json out.json
    python -m jpegloader.benchmark --pipeline ssd,ssd-val        # built-in COCO-like set
    python -m jpegloader.benchmark --pipeline ssd --data COCO_ROOT --files 1000
    python -m jpegloader.benchmark --workers 0,1,2,4 --plot scaling.png
    python -m jpegloader.benchmark --consumer-ms 120     # a model step of 120 ms per batch

Both loaders read the same files with the same transforms, workers and batch
size, and alternate epoch by epoch (the machine is noisy, so only side-by-side
ratios mean anything).  Per loader it reports the median img/s over the
measured epochs, CPU milliseconds per image (main process and workers), the
peak resident memory of the largest worker, and the time to the first batch;
for jpegloader also where the time goes (NOTE [ Stage times ] in loader.py)
and whether the loader or the simulated model (--consumer-ms) is the limit.
The native loader's PIL is named (Pillow or pillow-simd): pillow-simd speeds
up torch's path, and the comparison is against whichever is installed.

JSON (--json): {"dataset", "workers": [..], "batch_size", "epochs", "warmup",
"consumer_ms", "native_pil": {"distribution", "version"}, "torch", "python",
"cpus", "results": {pipeline: {workers: {"native": {...}, "jpegloader":
{..., "stages_ms_per_img": {stage: ms}}, "ratio", "ratio_per_epoch_pair",
"waited_fraction", "advice"}}}}.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import threading
import time
from importlib import metadata, util
from pathlib import Path

import numpy as np
import PIL
import torch
from torchvision import datasets
from torchvision import transforms as T
from tqdm import tqdm

import jpegloader
from jpegloader import bench_datasets as bd
from jpegloader.datasets import COCODetection
from jpegloader.pipelines import WORKER_STAGES
from jpegloader.transforms.ssd import SSDTransformer, dboxes300_coco

IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def _normalized():
    return [T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)]


def _timm_train():
    # timm's train.py without its prefetcher: train_interpolation "random", color_jitter 0.4
    from timm.data import create_transform
    return create_transform(224, is_training=True, interpolation="random", color_jitter=0.4)


def _deit_train():
    # DeiT's "rand-m9-mstd0.5-inc1" minus "inc1": with Pillow 13, timm's increasing
    # posterize asks for 0 bits when the noisy magnitude reaches 10 and Pillow raises
    # (about 1 sample in 500, torch's own loader included); the plain variant runs the
    # same operations.
    from timm.data import create_transform
    return create_transform(224, is_training=True, color_jitter=0.4,
                            auto_augment="rand-m9-mstd0.5", interpolation="bicubic",
                            re_prob=0.25)


def _tv_resnet50_v2():
    # torchvision references/classification, the ResNet-50 v2 recipe's train transform
    return T.Compose([T.RandomResizedCrop(176), T.RandomHorizontalFlip(),
                      T.TrivialAugmentWide(), T.PILToTensor(), T.ConvertImageDtype(torch.float),
                      T.Normalize(IMAGENET_MEAN, IMAGENET_STD), T.RandomErasing(0.1)])


class MixUpCutMixCollate:
    """The references' collate: MixUp(0.2) or CutMix(1.0), chosen per batch, after
    default_collate (a class, so that spawned workers can unpickle it)."""

    def __init__(self, num_classes: int):
        from torchvision.transforms import v2
        self.mix = v2.RandomChoice([v2.MixUp(alpha=0.2, num_classes=num_classes),
                                    v2.CutMix(alpha=1.0, num_classes=num_classes)])

    def __call__(self, batch):
        return self.mix(*torch.utils.data.default_collate(batch))


def fast_collate(batch):
    """A fast_collate as NVIDIA's DeepLearningExamples writes it: PIL images stacked
    into uint8[B, 3, H, W] and int64 targets."""
    images = torch.stack([torch.from_numpy(np.asarray(image, dtype=np.uint8).transpose(2, 0, 1)
                                           .copy()) for image, _ in batch])
    return images, torch.tensor([target for _, target in batch], dtype=torch.int64)


#: name -> (what it is, transform factory[, collate_fn factory taking the dataset]);
#: the transforms (and collate functions) real recipes build.
PIPELINES = {
    "train": ("RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize "
              "(pytorch/examples)",
              lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                 *_normalized()])),
    "eval": ("Resize(256), CenterCrop(224), ToTensor, Normalize (pytorch/examples)",
             lambda: T.Compose([T.Resize(256), T.CenterCrop(224), *_normalized()])),
    "deit-eval": ("Resize(256, bicubic), CenterCrop(224), ToTensor, Normalize (DeiT, ConvNeXt, "
                  "Swin validation)",
                  lambda: T.Compose([T.Resize(256, interpolation=T.InterpolationMode.BICUBIC),
                                     T.CenterCrop(224), *_normalized()])),
    "timm-train": ("timm create_transform(224, is_training=True, interpolation='random', "
                   "color_jitter=0.4): RandomResizedCropAndInterpolation, flip, ColorJitter, "
                   "ToTensor, Normalize (needs timm)", _timm_train),
    "eval-uint8": ("Resize(256), CenterCrop(224), PILToTensor: uint8 batches",
                   lambda: T.Compose([T.Resize(256), T.CenterCrop(224), T.PILToTensor()])),
    "train-uint8": ("RandomResizedCrop(224), RandomHorizontalFlip, PILToTensor: uint8 batches",
                    lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                       T.PILToTensor()])),
    "deit-train": ("DeiT/ConvNeXt/Swin training: timm create_transform(224, is_training=True, "
                   "color_jitter=0.4, auto_augment='rand-m9-mstd0.5', "
                   "interpolation='bicubic', re_prob=0.25): RandAugment and RandomErasing run "
                   "as your own objects (needs timm)", _deit_train),
    "tv-resnet50-v2": ("torchvision references ResNet-50 v2 recipe: RandomResizedCrop(176), "
                       "flip, TrivialAugmentWide, PILToTensor, ConvertImageDtype, Normalize, "
                       "RandomErasing(0.1), MixUp/CutMix collate",
                       _tv_resnet50_v2, lambda ds: MixUpCutMixCollate(len(ds.classes))),
    "dle-train": ("NVIDIA DeepLearningExamples ResNet-50: RandomResizedCrop(224), flip, "
                  "fast_collate to uint8 batches",
                  lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip()]),
                  lambda ds: fast_collate),
    "ssd": ("SSD-300 training (crop, flip, Resize, ColorJitter, Normalize, encode boxes)",
            lambda: SSDTransformer(dboxes300_coco(), (300, 300), val=False)),
    "ssd-val": ("SSD-300 validation (Resize, Normalize, boxes padded to 200)",
                lambda: SSDTransformer(dboxes300_coco(), (300, 300), val=True)),
}
DETECTION = ("ssd", "ssd-val")
NEEDS = {"timm-train": "timm", "deit-train": "timm"}


class PeakMemory:
    """Samples VmHWM of this process's children (the workers) while running."""

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.workers: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _children() -> list[int]:
        pids = []
        for task in Path(f"/proc/{os.getpid()}/task").glob("*"):
            try:
                pids += [int(p) for p in (task / "children").read_text().split()]
            except OSError:
                pass
        return pids

    @staticmethod
    def hwm_kib(pid: int | str) -> int:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def _run(self):
        while not self._stop.is_set():
            for pid in self._children():
                self.workers[pid] = max(self.workers.get(pid, 0), self.hwm_kib(pid))
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _wait_for_children_to_exit(timeout: float) -> None:
    helpers = (b"resource_tracker", b"forkserver")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = [p for p in PeakMemory._children()
                if not any(h in _cmdline(p) for h in helpers)]
        if not pids:
            return
        time.sleep(0.005)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _cpu_seconds() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def native_pil() -> dict:
    """Which distribution provides PIL here: pillow-simd or Pillow."""
    for name in ("pillow-simd", "Pillow"):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        if version.split(".post")[0].split(".")[:2] == PIL.__version__.split(".")[:2] \
                or name == "Pillow":
            return {"distribution": name, "version": version}
    return {"distribution": "PIL", "version": PIL.__version__}


def run_epoch(loader, label: str = "", consumer_ms: float = 0.0) -> dict:
    """One full epoch, workers started and joined inside it (persistent_workers=False).
    ``consumer_ms`` of simulated model time follow each batch (a sleep: a model on
    an accelerator leaves the CPU to the loader)."""
    stages0 = dict(getattr(loader, "stage_seconds", {}))
    cpu0, t0 = _cpu_seconds(), time.perf_counter()
    first = None
    images = 0
    with PeakMemory() as mem:
        # Progress on stderr; tqdm stays quiet when it is not a terminal.
        for batch in tqdm(loader, desc=label, total=len(loader), unit="batch", leave=False,
                          disable=None):
            if first is None:
                first = time.perf_counter() - t0
            images += batch[0].shape[0]
            if consumer_ms:
                time.sleep(consumer_ms / 1000)
    wall = time.perf_counter() - t0
    # Workers' CPU time reaches RUSAGE_CHILDREN only once they are reaped, which
    # jpegloader does in the background after an epoch: wait for that (outside
    # the timed window) so each epoch is charged its own workers.
    _wait_for_children_to_exit(timeout=10.0)
    cpu = _cpu_seconds() - cpu0
    stages = {k: v - stages0.get(k, 0.0) for k, v in getattr(loader, "stage_seconds", {}).items()}
    return dict(images=images, seconds=wall, img_per_s=images / wall,
                cpu_ms_per_img=1000 * cpu / max(images, 1), first_batch_s=first,
                worker_peak_mib=max(mem.workers.values(), default=0) / 1024,
                stage_seconds=stages)


def advice(summary: dict, consumer_ms: float, batch_size: int, workers: int) -> str:
    """One line: is the loader or the (simulated) model the limit?"""
    t = summary["jpegloader"]
    waited = summary["waited_fraction"]
    if not consumer_ms:
        return ("no model time simulated, so the loop only waits for data; pass "
                "--consumer-ms with your model's time per batch to see whether loading hides "
                "behind compute")
    needed = batch_size / (consumer_ms / 1000)
    if waited <= 0.05:
        return (f"loading is hidden behind compute: the loop waited {waited:.0%} of the time "
                f"(the model takes {needed:.0f} img/s; jpegloader can give more)")
    stages = t["stages_ms_per_img"]
    worker_stages = {k: v for k, v in stages.items() if k in WORKER_STAGES}
    heaviest = max(worker_stages, key=worker_stages.get) if worker_stages else "decode"
    cpus = os.cpu_count() or 1
    more = (f"more workers (num_workers={workers}, {cpus} CPUs here)" if workers < cpus
            else "more CPU cores (every core here already runs a worker)")
    return (f"the loader is the limit: the loop waited {waited:.0%} of the time; the model "
            f"could take {needed:.0f} img/s, jpegloader gave {t['img_per_s']:.0f}; "
            f"{heaviest} is the largest stage, so {more} would help")


def benchmark(root, pipeline: str, workers: int, batch_size: int, epochs: int,
              warmup: int, log=print, consumer_ms: float = 0.0) -> dict:
    """root: an ImageFolder root, or (image folder, instances JSON) for detection."""
    entry = PIPELINES[pipeline]
    if pipeline in DETECTION:
        dataset = COCODetection(str(root[0]), str(root[1]), entry[1]())
    else:
        dataset = datasets.ImageFolder(str(root), entry[1]())
    collate_fn = entry[2](dataset) if len(entry) > 2 else None
    # Built once and iterated epoch after epoch, as a training script does.
    loaders = {
        "native": torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                              num_workers=workers, collate_fn=collate_fn),
        "jpegloader": jpegloader.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                            num_workers=workers, collate_fn=collate_fn),
    }
    verdict = jpegloader.explain(dataset, batch_size=batch_size, collate_fn=collate_fn)
    if not verdict.accelerated:
        raise SystemExit("jpegloader would fall back on this dataset:\n" + verdict.report())
    log(f"  {pipeline}: {verdict.split_text()}")
    runs: dict[str, list[dict]] = {name: [] for name in loaders}
    order = list(loaders)
    for epoch in range(warmup + epochs):
        for name in order if epoch % 2 == 0 else order[::-1]:  # alternate who goes first
            r = run_epoch(loaders[name], f"{pipeline} w={workers} {name} "
                                         f"{epoch + 1}/{warmup + epochs}", consumer_ms)
            if epoch >= warmup:
                runs[name].append(r)
            log(f"  {pipeline:7s} workers={workers} epoch {epoch + 1}/{warmup + epochs} "
                f"{name:11s} {r['img_per_s']:7.0f} img/s"
                f"{'  (warm-up)' if epoch < warmup else ''}")
    summary = {}
    for name, rs in runs.items():
        summary[name] = {
            "img_per_s": statistics.median(r["img_per_s"] for r in rs),
            "cpu_ms_per_img": statistics.median(r["cpu_ms_per_img"] for r in rs),
            "first_batch_s": statistics.median(r["first_batch_s"] for r in rs),
            "worker_peak_mib": max(r["worker_peak_mib"] for r in rs),
            "epochs": rs,
        }
    images = sum(r["images"] for r in runs["jpegloader"])
    stages: dict[str, float] = {}
    for r in runs["jpegloader"]:
        for k, v in r.pop("stage_seconds").items():
            stages[k] = stages.get(k, 0.0) + v
    for r in runs["native"]:
        r.pop("stage_seconds")
    summary["jpegloader"]["stages_ms_per_img"] = {k: 1000 * v / max(images, 1)
                                                  for k, v in stages.items()}
    wall = sum(r["seconds"] for r in runs["jpegloader"])
    # With num_workers=0 the loop decodes the batches itself: all of that is waiting.
    waited = stages.get("wait", 0.0) if workers else \
        sum(stages.get(k, 0.0) for k in WORKER_STAGES)
    summary["waited_fraction"] = waited / wall if wall else 0.0
    ratios = [t["img_per_s"] / n["img_per_s"] for t, n in zip(runs["jpegloader"], runs["native"])]
    summary["ratio"] = summary["jpegloader"]["img_per_s"] / summary["native"]["img_per_s"]
    summary["ratio_per_epoch_pair"] = ratios
    summary["advice"] = advice(summary, consumer_ms, batch_size, workers)
    return summary


STAGE_LABELS = {"read": "read", "decode": "decode", "augment": "augment",
                "python_path": "PIL path", "yours": "yours", "wait": "waited",
                "assembly": "assembly", "pin_copy": "pin/copy"}


def _table(results: dict, pil: dict) -> str:
    lines = [f"{'pipeline':9s} {'workers':>7s} {'loader':12s} {'img/s':>8s} {'ratio':>6s} "
             f"{'CPU ms/img':>10s} {'1st batch s':>11s} {'worker peak MiB':>15s}"]
    for pipeline, by_workers in results.items():
        for workers, r in by_workers.items():
            for name in ("native", "jpegloader"):
                s = r[name]
                ratio = f"{r['ratio']:.2f}x" if name == "jpegloader" else ""
                lines.append(f"{pipeline:9s} {workers:>7} {name:12s} {s['img_per_s']:8.0f} "
                             f"{ratio:>6s} {s['cpu_ms_per_img']:10.2f} "
                             f"{s['first_batch_s']:11.2f} {s['worker_peak_mib']:15.0f}")
    lines.append(f"native = torch.utils.data.DataLoader, PIL from {pil['distribution']} "
                 f"{pil['version']}" + (" (SIMD resize: a faster native path than Pillow's)"
                                        if pil["distribution"] == "pillow-simd" else ""))
    lines.append("")
    lines.append("where jpegloader's time goes, ms per image (worker stages summed over "
                 "workers; 'waited' is the training loop blocked on the next batch):")
    for pipeline, by_workers in results.items():
        for workers, r in by_workers.items():
            stages = r["jpegloader"]["stages_ms_per_img"]
            parts = "  ".join(f"{STAGE_LABELS.get(k, k)} {stages[k]:.2f}"
                              for k in STAGE_LABELS if k in stages)
            lines.append(f"  {pipeline:9s} workers={workers}: {parts}")
            lines.append(f"    -> {r['advice']}")
    return "\n".join(lines)


def plot(results: dict, path: Path) -> None:
    """img/s per loader and pipeline, and (with several worker counts) against
    num_workers.  Needs matplotlib (pip install 'jpegloader[plot]')."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pipelines = list(results)
    counts = sorted({w for r in results.values() for w in r})
    panels = 2 if len(counts) > 1 else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4), squeeze=False)
    bars = axes[0][0]
    top = counts[-1]
    for k, name in enumerate(("native", "jpegloader")):
        values = [results[p][top][name]["img_per_s"] for p in pipelines if top in results[p]]
        bars.bar([i + 0.4 * k for i in range(len(values))], values, width=0.4, label=name)
    bars.set_xticks([i + 0.2 for i in range(len(pipelines))], pipelines)
    bars.set_ylabel("images / s")
    bars.set_title(f"throughput, num_workers={top}")
    bars.legend()
    if panels == 2:
        lines = axes[0][1]
        for p in pipelines:
            for name, style in (("native", "--o"), ("jpegloader", "-o")):
                ws = [w for w in counts if w in results[p]]
                lines.plot(ws, [results[p][w][name]["img_per_s"] for w in ws], style,
                           label=f"{p} {name}")
        lines.set_xlabel("num_workers")
        lines.set_ylabel("images / s")
        lines.set_xticks(counts)
        lines.set_title("throughput against num_workers")
        lines.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _dataset(args, detection: bool, tmp: Path):
    """(root, description) of the dataset a pipeline kind runs on."""
    if args.data is None:
        name, make, params, describe = (
            ("bench-coco-like-v1", bd.make_coco_like, bd.COCO_LIKE, bd.COCO_LIKE_DESCRIPTION)
            if detection else
            ("bench-imagenet-like-v1", bd.make_imagenet_like, bd.IMAGENET_LIKE,
             bd.IMAGENET_LIKE_DESCRIPTION))
        root = bd.cache_root(name)
        if not (root / ".complete").exists():
            print(f"generating the built-in {'COCO' if detection else 'ImageNet'}-like "
                  "dataset (once)...", flush=True)
        make(root, **params)
        description = describe(root=root, **params)
    else:
        root, description = args.data, f"{'COCO' if detection else 'ImageFolder'} {args.data}"
    if detection:
        images, annotations = bd.find_coco(root, args.annotations)
        if args.files:
            images, annotations = bd.replicate_coco(images, annotations, args.files, tmp / "coco")
            description += f", copied to exactly {args.files} annotated images"
        return (images, annotations), description
    if args.files:
        root = bd.replicate_folder(root, args.files, tmp / "folder")
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
    p.add_argument("--pipeline", default="train,eval",
                   help="comma-separated, of: " + "; ".join(f"{k}: {v[0]}"
                                                          for k, v in PIPELINES.items())
                   + " (default: train,eval)")
    p.add_argument("--workers", default="2",
                   help="num_workers for both loaders; a comma-separated list (0,1,2,4) "
                        "benchmarks each")
    p.add_argument("--consumer-ms", type=float, default=0.0,
                   help="simulated model time per batch in ms, to see whether loading hides "
                        "behind compute")
    p.add_argument("--plot", type=Path, metavar="FILE.png",
                   help="draw img/s per loader and pipeline (and against num_workers) "
                        "(needs matplotlib: pip install 'jpegloader[plot]')")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=5, help="measured epochs per loader")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured epochs per loader")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args(argv)
    pipelines = [s.strip() for s in args.pipeline.split(",") if s.strip()]
    unknown = [s for s in pipelines if s not in PIPELINES]
    if unknown:
        p.error(f"unknown pipeline(s) {unknown}; choose from {sorted(PIPELINES)}")
    for pl in pipelines:
        if pl in NEEDS and util.find_spec(NEEDS[pl]) is None:
            p.error(f"--pipeline {pl} needs {NEEDS[pl]}: pip install {NEEDS[pl]}")

    try:
        worker_counts = [int(w) for w in args.workers.split(",") if w.strip()]
    except ValueError:
        p.error(f"--workers takes integers separated by commas, got {args.workers!r}")
    if not worker_counts or min(worker_counts) < 0:
        p.error(f"--workers needs counts >= 0, got {args.workers!r}")
    if args.consumer_ms < 0:
        p.error("--consumer-ms must be >= 0")
    if args.plot is not None and util.find_spec("matplotlib") is None:
        p.error("--plot needs matplotlib: pip install 'jpegloader[plot]'")

    kinds = {pl in DETECTION for pl in pipelines}
    if args.data is not None and len(kinds) > 1:
        p.error("--data names one dataset: benchmark classification (train, eval) and "
                "detection (ssd, ssd-val) pipelines in separate runs")
    if args.data is not None and not args.data.is_dir():
        p.error(f"--data {args.data} is not a directory")
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
              f"{args.consumer_ms:g} ms/batch; torch {torch.__version__}, libjpeg-turbo "
              f"{jpegloader.libjpeg_turbo_version()}, native PIL from {pil['distribution']} "
              f"{pil['version']}, {os.cpu_count()} CPUs")
        results = {pl: {w: benchmark(roots[pl in DETECTION], pl, w, args.batch_size,
                                     args.epochs, args.warmup, consumer_ms=args.consumer_ms)
                        for w in worker_counts}
                   for pl in pipelines}
    print()
    print(_table(results, pil))
    if args.json:
        args.json.write_text(json.dumps({
            "dataset": "; ".join(descriptions), "workers": worker_counts,
            "batch_size": args.batch_size, "epochs": args.epochs, "warmup": args.warmup,
            "consumer_ms": args.consumer_ms, "native_pil": pil, "torch": torch.__version__,
            "python": platform.python_version(), "cpus": os.cpu_count(),
            "results": results}, indent=2))
        print(f"\nwrote {args.json}")
    if args.plot is not None:
        plot(results, args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
