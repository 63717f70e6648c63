"""Throughput benchmark: jpegloader vs torch's DataLoader, side by side.

    python -m jpegloader.benchmark                   # built-in synthetic dataset
    python -m jpegloader.benchmark --data DIR        # any ImageFolder
    python -m jpegloader.benchmark --data DIR --files 2000 --json out.json
    python -m jpegloader.benchmark --pipeline ssd,ssd-val        # built-in COCO-like set
    python -m jpegloader.benchmark --pipeline ssd --data COCO_ROOT --files 1000
    python -m jpegloader.benchmark --workers 0,1,2,4 --plot scaling.png
    python -m jpegloader.benchmark --consumer-ms 120     # a model step of 120 ms per batch
    python -m jpegloader.benchmark --data DIR --ceiling jpeg_limit.c  # vs libjpeg-turbo alone

Both loaders read the same files with the same transforms, workers and batch
size, and alternate epoch by epoch (the machine is noisy, so only side-by-side
ratios mean anything).  Per loader it reports the median img/s over the
measured epochs, CPU milliseconds per image (main process and workers), the
peak resident memory of the largest worker, the time to the first batch, and
(each loader then run alone in a new process, three times by default,
alternating: the medians) the peak PSS summed over the main process and the
workers and what it holds in shared memory beyond that (NOTE [ Counting
memory ] in bench_memory.py); for jpegloader also where the
time goes (NOTE [ Stage times ] in loader.py) and whether the loader or the
simulated model (--consumer-ms) is the limit.  With --ceiling, libjpeg-turbo's
own decode ceiling on the same files, read in a shuffled order as the loaders
read them (bench_ceiling.py), and each loader's fraction of it.  The native
loader's PIL is named (Pillow or pillow-simd): pillow-simd speeds up torch's
path, and the comparison is against whichever is installed.

JSON (--json): {"dataset", "workers": [..], "batch_size", "epochs", "warmup",
"consumer_ms", "native_pil": {"distribution", "version"}, "torch", "python",
"cpus", "results": {pipeline: {workers: {"native": {...}, "jpegloader":
{..., "stages_ms_per_img": {stage: ms}}, "ratio", "ratio_per_epoch_pair",
"waited_fraction", "advice"[, "ceiling": {"mode", "processes", "files",
"img_per_s", "cpu_us_per_img", "img_per_s_per_round"}, "of_ceiling_per_round"]}}}};
per loader "pss_mib", "held_mib" (medians) and "pss_mib_per_run", "held_mib_per_run"
(unless --memory-runs 0) and "of_ceiling" (with
--ceiling: the loader's median img/s over the ceiling's median, one ceiling pass
measured in every round of epochs, NOTE [ The ceiling beside the epochs ] in
bench_ceiling.py).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
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
from jpegloader import bench_ceiling, bench_memory
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
    def hwm_kib(pid: int) -> int:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def _run(self):
        while not self._stop.is_set():
            for pid in bench_memory.children():
                self.workers[pid] = max(self.workers.get(pid, 0), self.hwm_kib(pid))
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _wait_for_children_to_exit(timeout: float, keep=()) -> None:
    """Until every child but ``keep`` (workers a loader keeps for its next epoch)
    has exited, or ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not set(bench_memory.children()) - set(keep):
            return
        time.sleep(0.005)


_TICKS = os.sysconf("SC_CLK_TCK")


def _live_children_cpu() -> float:
    """CPU seconds of the children not reaped yet (running, or exited unreaped)."""
    total = 0.0
    for pid in bench_memory.children():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime
    return total


def _cpu_seconds() -> float:
    """This process's CPU time and all its children's: reaped ones from rusage, live
    ones (workers a loader keeps between epochs) from /proc.  A child reaped between
    two readings moves from the second term to the first, so differences count each
    child's CPU once."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime + _live_children_cpu()


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


def run_epoch(loader, label: str = "", consumer_ms: float = 0.0, others=()) -> dict:
    """One full epoch (persistent_workers=False: torch's workers start and exit inside
    it; jpegloader's may stay for the next one, their CPU counted all the same).
    ``consumer_ms`` of simulated model time follow each batch (a sleep: a model on
    an accelerator leaves the CPU to the loader).  ``others``: loaders alternated
    with this one, whose kept workers are not waited for either."""
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
    # Workers that exit at the epoch's end do so in the background (jpegloader reaps
    # them on a thread): wait for that, outside the timed window, so that each epoch
    # is charged its own workers' exit.  Workers kept for the next epoch stay (NOTE
    # [ Workers kept between epochs ]); _cpu_seconds reads theirs from /proc.
    kept = [w.pid for held in (loader, *others) if hasattr(held, "_workers")
            for w in held._workers()]
    _wait_for_children_to_exit(timeout=10.0, keep=kept)
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


def build_dataset(pipeline: str, root):
    """(dataset, collate_fn or None) of a pipeline on root: an ImageFolder root, or
    (image folder, instances JSON) for detection."""
    entry = PIPELINES[pipeline]
    if pipeline in DETECTION:
        dataset = COCODetection(str(root[0]), str(root[1]), entry[1]())
    else:
        dataset = datasets.ImageFolder(str(root), entry[1]())
    return dataset, (entry[2](dataset) if len(entry) > 2 else None)


def benchmark(root, pipeline: str, workers: int, batch_size: int, epochs: int,
              warmup: int, log=print, consumer_ms: float = 0.0, memory_runs: int = 3,
              ceiling: Path | None = None) -> dict:
    """root: an ImageFolder root, or (image folder, instances JSON) for detection.
    Each loader's memory is measured alone in a fresh process (bench_memory),
    ``memory_runs`` times; with ``ceiling`` (a jpeg_limit program), the decode
    ceiling on the same files."""
    dataset, collate_fn = build_dataset(pipeline, root)
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
    ceilings: list[dict] = []
    with_ceiling = ceiling is not None and pipeline in bench_ceiling.MODES
    files = [path for path, _ in dataset.samples] if with_ceiling else []
    order = list(loaders)
    for epoch in range(warmup + epochs):
        for name in order if epoch % 2 == 0 else order[::-1]:  # alternate who goes first
            r = run_epoch(loaders[name], f"{pipeline} w={workers} {name} "
                                         f"{epoch + 1}/{warmup + epochs}", consumer_ms,
                          others=[loader for other, loader in loaders.items() if other != name])
            if epoch >= warmup:
                runs[name].append(r)
            log(f"  {pipeline:7s} workers={workers} epoch {epoch + 1}/{warmup + epochs} "
                f"{name:11s} {r['img_per_s']:7.0f} img/s"
                f"{'  (warm-up)' if epoch < warmup else ''}")
        if with_ceiling and epoch >= warmup:  # NOTE [ The ceiling beside the epochs ]
            c = bench_ceiling.measure(ceiling, files, bench_ceiling.MODES[pipeline],
                                      decode_threads(workers), passes=1, seed=epoch)
            ceilings.append(c)
            log(f"  {pipeline:7s} workers={workers} epoch {epoch + 1}/{warmup + epochs} "
                f"{'ceiling':11s} {c['img_per_s']:7.0f} img/s")
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
    # With num_workers=0 the loop decodes the batches itself: all but the model's time
    # is waiting (the stage times are summed over the decode threads).
    batches = sum(-(-r["images"] // batch_size) for r in runs["jpegloader"])
    waited = stages.get("wait", 0.0) if workers else \
        max(0.0, wall - batches * consumer_ms / 1000)
    summary["waited_fraction"] = waited / wall if wall else 0.0
    ratios = [t["img_per_s"] / n["img_per_s"] for t, n in zip(runs["jpegloader"], runs["native"])]
    summary["ratio"] = summary["jpegloader"]["img_per_s"] / summary["native"]["img_per_s"]
    summary["ratio_per_epoch_pair"] = ratios
    summary["advice"] = advice(summary, consumer_ms, batch_size, workers)
    loaders.clear()  # their workers and ring go before the runs below
    for run in range(memory_runs):
        # Alternating, as the epochs do; the medians go in the table.
        for name in order if run % 2 == 0 else order[::-1]:
            m = bench_memory.measure_alone(name, pipeline, root, workers, batch_size)
            for key in ("pss_mib", "held_mib"):
                summary[name].setdefault(f"{key}_per_run", []).append(m[key])
            log(f"  {pipeline:7s} workers={workers} {name:11s} alone in a new process "
                f"{run + 1}/{memory_runs}: PSS {m['pss_mib']:.0f} MiB, "
                f"held {m['held_mib']:.0f} MiB")
    for name in ("native", "jpegloader") if memory_runs else ():
        for key in ("pss_mib", "held_mib"):
            summary[name][key] = statistics.median(summary[name][f"{key}_per_run"])
    if ceilings:
        c = summary["ceiling"] = bench_ceiling.over_rounds(ceilings)
        for name in ("native", "jpegloader"):
            summary[name]["of_ceiling"] = summary[name]["img_per_s"] / c["img_per_s"]
        summary["of_ceiling_per_round"] = [t["img_per_s"] / r["img_per_s"]
                                           for t, r in zip(runs["jpegloader"], ceilings)]
        log(f"  {pipeline:7s} workers={workers} ceiling: jpeg_limit {c['mode']} x "
            f"{c['processes']}: {c['img_per_s']:.0f} img/s (median of {len(ceilings)} rounds)")
    return summary


def decode_threads(workers: int) -> int:
    """How many decodes jpegloader runs at once: one per worker, or with
    num_workers=0 its decode threads (DataLoader's decode_threads default)."""
    return workers if workers else torch.get_num_threads()


STAGE_LABELS = {"read": "read", "decode": "decode", "augment": "augment",
                "python_path": "PIL path", "yours": "yours", "wait": "waited",
                "assembly": "assembly", "pin_copy": "pin/copy"}


def _table(results: dict, pil: dict) -> str:
    lines = [f"{'pipeline':14s} {'workers':>7s} {'loader':10s} {'img/s':>7s} {'ratio':>6s} "
             f"{'ceiling':>7s} {'CPU ms/img':>10s} {'1st batch s':>11s} "
             f"{'worker RSS MiB':>14s} {'PSS MiB':>7s} {'held MiB':>8s}"]
    for pipeline, by_workers in results.items():
        for workers, r in by_workers.items():
            for name in ("native", "jpegloader"):
                s = r[name]
                ratio = f"{r['ratio']:.2f}x" if name == "jpegloader" else ""
                lines.append(f"{pipeline:14s} {workers:>7} {name:10s} {s['img_per_s']:7.0f} "
                             f"{ratio:>6s} {_maybe(s, 'of_ceiling', '{:.0%}'):>7s} "
                             f"{s['cpu_ms_per_img']:10.2f} {s['first_batch_s']:11.2f} "
                             f"{s['worker_peak_mib']:14.0f} {_maybe(s, 'pss_mib', '{:.0f}'):>7s} "
                             f"{_maybe(s, 'held_mib', '{:.0f}'):>8s}")
    ceilings = [(p, w, r["ceiling"]) for p, by in results.items() for w, r in by.items()
                if "ceiling" in r]
    for pipeline, workers, c in ceilings:
        lines.append(f"ceiling {pipeline} workers={workers}: libjpeg-turbo alone (jpeg_limit "
                     f"{c['mode']}, {c['processes']} at once, files shuffled) "
                     f"{c['img_per_s']:.0f} img/s, "
                     f"{c['cpu_us_per_img'] / 1000:.2f} CPU ms/img, the median of "
                     f"{len(c['img_per_s_per_round'])} passes beside the epochs "
                     f"({min(c['img_per_s_per_round']):.0f}-"
                     f"{max(c['img_per_s_per_round']):.0f})")
    if any("pss_mib" in r["native"] for by in results.values() for r in by.values()):
        runs = max(len(r["native"].get("pss_mib_per_run", ())) for by in results.values()
                   for r in by.values())
        lines.append("PSS: summed over the main process and workers, each loader alone in a "
                     f"new process, the median of {runs} run{'s' * (runs != 1)}; held: PSS plus "
                     "shared memory no process maps (torch's queued batches), see "
                     "jpegloader.bench_memory")
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


def _maybe(summary: dict, key: str, form: str) -> str:
    return form.format(summary[key]) if key in summary else "-"


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
    p.add_argument("--memory-runs", type=int, default=3,
                   help="how many times each loader's memory is measured alone in a new "
                        "process, alternating (the table gives the medians; 0 skips it)")
    p.add_argument("--no-memory", action="store_true", help="the same as --memory-runs 0")
    p.add_argument("--ceiling", type=Path, metavar="JPEG_LIMIT",
                   help="jpeg_limit.c (or a built jpeg_limit): measure libjpeg-turbo's own "
                        "decode ceiling on the same files and quote throughput as a fraction "
                        "of it (train-like pipelines: roi2, eval-like: ctr2)")
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
    if args.memory_runs < 0:
        p.error("--memory-runs must be >= 0")
    if args.plot is not None and util.find_spec("matplotlib") is None:
        p.error("--plot needs matplotlib: pip install 'jpegloader[plot]'")
    ceiling = None
    if args.ceiling is not None:
        if not args.ceiling.is_file():
            p.error(f"--ceiling {args.ceiling} is not a file")
        try:
            ceiling = bench_ceiling.build(args.ceiling)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
            p.error(f"--ceiling: could not build {args.ceiling}: {e}")

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
                                     args.epochs, args.warmup, consumer_ms=args.consumer_ms,
                                     memory_runs=0 if args.no_memory else args.memory_runs,
                                     ceiling=ceiling)
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
