"""Throughput benchmark: turboloader vs torch's DataLoader, side by side.

    python -m turboloader.benchmark                   # built-in synthetic dataset
    python -m turboloader.benchmark --data DIR        # any ImageFolder
    python -m turboloader.benchmark --data DIR --files 2000 --json out.json
    python -m turboloader.benchmark --pipeline ssd,ssd-val        # built-in COCO-like set
    python -m turboloader.benchmark --pipeline ssd --data COCO_ROOT --files 1000

Both loaders read the same files with the same transforms, workers and batch
size, and alternate epoch by epoch (the machine is noisy, so only side-by-side
ratios mean anything).  Per loader it reports the median img/s over the
measured epochs, CPU milliseconds per image (main process and workers), the
peak resident memory of the main process and of the largest worker, and the
time to the first batch.
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
from pathlib import Path

import torch
from torchvision import datasets
from torchvision import transforms as T

import turboloader
from turboloader import bench_datasets as bd
from turboloader.datasets import COCODetection
from turboloader.transforms.ssd import SSDTransformer, dboxes300_coco

IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
PIPELINES = {
    "train": lambda: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                                T.Normalize(IMAGENET_MEAN, IMAGENET_STD)]),
    "eval": lambda: T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                               T.Normalize(IMAGENET_MEAN, IMAGENET_STD)]),
    "ssd": lambda: SSDTransformer(dboxes300_coco(), (300, 300), val=False),
    "ssd-val": lambda: SSDTransformer(dboxes300_coco(), (300, 300), val=True),
}
DETECTION = ("ssd", "ssd-val")
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


def run_epoch(loader) -> dict:
    """One full epoch, workers started and joined inside it (persistent_workers=False)."""
    cpu0, t0 = _cpu_seconds(), time.perf_counter()
    first = None
    images = 0
    with PeakMemory() as mem:
        for batch in loader:
            if first is None:
                first = time.perf_counter() - t0
            images += batch[0].shape[0]
    wall = time.perf_counter() - t0
    # Workers' CPU time reaches RUSAGE_CHILDREN only once they are reaped, which
    # turboloader does in the background after an epoch: wait for that (outside
    # the timed window) so each epoch is charged its own workers.
    _wait_for_children_to_exit(timeout=10.0)
    cpu = _cpu_seconds() - cpu0
    return dict(images=images, seconds=wall, img_per_s=images / wall,
                cpu_ms_per_img=1000 * cpu / max(images, 1), first_batch_s=first,
                worker_peak_mib=max(mem.workers.values(), default=0) / 1024)


def benchmark(root, pipeline: str, workers: int, batch_size: int, epochs: int,
              warmup: int, log=print) -> dict:
    """root: an ImageFolder root, or (image folder, instances JSON) for detection."""
    if pipeline in DETECTION:
        dataset = COCODetection(str(root[0]), str(root[1]), PIPELINES[pipeline]())
    else:
        dataset = datasets.ImageFolder(str(root), PIPELINES[pipeline]())
    # Built once and iterated epoch after epoch, as a training script does.
    loaders = {
        "native": torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                              num_workers=workers),
        "turboloader": turboloader.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                              num_workers=workers),
    }
    verdict = turboloader.explain(dataset, batch_size=batch_size)
    if not verdict.accelerated:
        raise SystemExit("turboloader would fall back on this dataset:\n" + verdict.report())
    runs: dict[str, list[dict]] = {name: [] for name in loaders}
    order = list(loaders)
    for epoch in range(warmup + epochs):
        for name in order if epoch % 2 == 0 else order[::-1]:  # alternate who goes first
            r = run_epoch(loaders[name])
            if epoch >= warmup:
                runs[name].append(r)
            log(f"  {pipeline:7s} epoch {epoch + 1}/{warmup + epochs} {name:11s} "
                f"{r['img_per_s']:7.0f} img/s{'  (warm-up)' if epoch < warmup else ''}")
    summary = {}
    for name, rs in runs.items():
        summary[name] = {
            "img_per_s": statistics.median(r["img_per_s"] for r in rs),
            "cpu_ms_per_img": statistics.median(r["cpu_ms_per_img"] for r in rs),
            "first_batch_s": statistics.median(r["first_batch_s"] for r in rs),
            "worker_peak_mib": max(r["worker_peak_mib"] for r in rs),
            "epochs": rs,
        }
    ratios = [t["img_per_s"] / n["img_per_s"] for t, n in zip(runs["turboloader"], runs["native"])]
    summary["ratio"] = summary["turboloader"]["img_per_s"] / summary["native"]["img_per_s"]
    summary["ratio_per_epoch_pair"] = ratios
    return summary


def _table(results: dict) -> str:
    lines = [f"{'pipeline':9s} {'loader':12s} {'img/s':>8s} {'ratio':>6s} {'CPU-ms/img':>10s} "
             f"{'1st batch s':>11s} {'worker peak MiB':>15s}"]
    for pipeline, r in results.items():
        for name in ("native", "turboloader"):
            s = r[name]
            ratio = f"{r['ratio']:.2f}x" if name == "turboloader" else ""
            lines.append(f"{pipeline:9s} {name:12s} {s['img_per_s']:8.0f} {ratio:>6s} "
                         f"{s['cpu_ms_per_img']:10.2f} {s['first_batch_s']:11.2f} "
                         f"{s['worker_peak_mib']:15.0f}")
    return "\n".join(lines)


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
    p = argparse.ArgumentParser(prog="python -m turboloader.benchmark", description=__doc__,
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
                   help="comma-separated: train, eval, ssd, ssd-val (default: train,eval)")
    p.add_argument("--workers", type=int, default=2, help="num_workers for both loaders")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=5, help="measured epochs per loader")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured epochs per loader")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args(argv)
    pipelines = [s.strip() for s in args.pipeline.split(",") if s.strip()]
    unknown = [s for s in pipelines if s not in PIPELINES]
    if unknown:
        p.error(f"unknown pipeline(s) {unknown}; choose from {sorted(PIPELINES)}")

    kinds = {pl in DETECTION for pl in pipelines}
    if args.data is not None and len(kinds) > 1:
        p.error("--data names one dataset: benchmark classification (train, eval) and "
                "detection (ssd, ssd-val) pipelines in separate runs")
    if args.data is not None and not args.data.is_dir():
        p.error(f"--data {args.data} is not a directory")
    with tempfile.TemporaryDirectory(prefix="turboloader-bench-") as tmp:
        roots, descriptions = {}, []
        for detection in sorted(kinds):
            root, description = _dataset(args, detection, Path(tmp))
            roots[detection] = root
            descriptions.append(description)
        print("\ndataset: " + "\ndataset: ".join(descriptions))
        print(f"workers={args.workers} batch={args.batch_size} epochs={args.epochs} "
              f"(+{args.warmup} warm-up), alternating; torch {torch.__version__}, "
              f"libjpeg-turbo {turboloader.libjpeg_turbo_version()}, {os.cpu_count()} CPUs")
        results = {pl: benchmark(roots[pl in DETECTION], pl, args.workers, args.batch_size,
                                 args.epochs, args.warmup) for pl in pipelines}
    print()
    print(_table(results))
    if args.json:
        args.json.write_text(json.dumps({
            "dataset": description, "workers": args.workers, "batch_size": args.batch_size,
            "epochs": args.epochs, "warmup": args.warmup, "torch": torch.__version__,
            "python": platform.python_version(), "cpus": os.cpu_count(),
            "results": results}, indent=2))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
