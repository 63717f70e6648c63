"""Soak: many epochs with 2 workers, watching for slow leaks.

    python -m tests.reliability.soak [--epochs 20] [--files 3000] [--coco-files 1500]
                                     [--json FILE]

Runs the ImageFolder train pipeline and the SSD train pipeline, each with
persistent workers (the same processes all along, so their memory can be
followed) and then with workers restarted every epoch.  After every epoch it
records the largest resident memory (VmRSS, sampled at every batch) of the
main process and of each worker,
the open file descriptors, the threads, and the /dev/shm entries; after the
loader is deleted it records them again.  Datasets: ../shared/data's real
images copied up to the file counts when present, else the benchmark's
built-in synthetic sets.

Pass criteria (checked, exit status 1 on failure): every process's RSS after
each later epoch within 5% of its RSS after the first epoch; descriptors,
threads, child processes and /dev/shm entries back to their starting counts
once the loader is gone.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from torchvision import datasets

import jpegloader
from jpegloader.bench import corpora
from jpegloader.bench.recipes import PIPELINES
from jpegloader.datasets import COCODetection
from tests.conftest import SHARED_DATA, shm_entries, worker_pids

RSS_TOLERANCE = 0.05


def rss_mib(pid: int) -> float:
    """Resident memory of a process, 0 once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def resources() -> dict:
    return {"fds": len(os.listdir("/proc/self/fd")), "threads": threading.active_count(),
            "shm": len(shm_entries()), "children": len(worker_pids())}


def soak_loader(dataset, epochs: int, persistent: bool, batch_size: int, log) -> dict:
    gc.collect()
    start = resources()
    loader = jpegloader.DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=2,
                                   persistent_workers=persistent)
    assert loader.eligibility.accelerated, loader.eligibility.report()
    per_epoch = []
    for epoch in range(epochs):
        t0 = time.perf_counter()
        count, main_rss, worker_rss = 0, 0.0, []
        for batch in loader:
            count += len(batch[-1])
            # The largest RSS seen at any batch of the epoch: a snapshot at its end
            # would miss workers already stopping and catch unmapped slots by chance.
            main_rss = max(main_rss, rss_mib(os.getpid()))
            sizes = [rss_mib(w.pid) for w in loader._workers()]
            worker_rss = [max(a, b) for a, b in zip(worker_rss, sizes, strict=True)] \
                if worker_rss else sizes
        del batch  # the user lets go of the last batch (it holds slot descriptors)
        seconds = time.perf_counter() - t0
        record = {"epoch": epoch + 1, "images": count, "img_per_s": round(count / seconds),
                  "main_rss_mib": round(main_rss, 1),
                  "worker_rss_mib": [round(r, 1) for r in worker_rss], **resources()}
        per_epoch.append(record)
        log(f"    epoch {epoch + 1:2d}: {record['img_per_s']:5d} img/s, main "
            f"{record['main_rss_mib']:.0f} MiB, workers {record['worker_rss_mib']} MiB, "
            f"fds {record['fds']}, shm {record['shm']}")
        assert count == len(dataset), f"epoch {epoch + 1}: {count} of {len(dataset)} images"
    del loader
    gc.collect()
    deadline = time.monotonic() + 10
    while resources() != start and time.monotonic() < deadline:
        time.sleep(0.1)  # the reaper finishes in the background
        gc.collect()
    return {"persistent_workers": persistent, "epochs": per_epoch, "start": start,
            "end": resources()}


def check(run: dict) -> list[str]:
    """The pass criteria; a list of failures."""
    failures = []
    first, later = run["epochs"][0], run["epochs"][1:]
    series = {"main": [e["main_rss_mib"] for e in run["epochs"]]}
    if run["persistent_workers"]:  # the same worker processes throughout
        for w in range(len(first["worker_rss_mib"])):
            series[f"worker {w}"] = [e["worker_rss_mib"][w] for e in run["epochs"]]
    else:  # fresh workers each epoch: each one's RSS at its epoch's end
        series["workers (max)"] = [max(e["worker_rss_mib"]) for e in run["epochs"]]
    growth = {}
    for name, values in series.items():
        growth[name] = max(values[1:]) / values[0] - 1 if later else 0.0
        if growth[name] > RSS_TOLERANCE:
            failures.append(f"{name} RSS grew {100 * growth[name]:.1f}% after epoch 1: {values}")
    run["rss_growth_after_epoch_1"] = {k: round(v, 4) for k, v in growth.items()}
    if run["end"] != run["start"]:
        failures.append(f"resources not returned: start {run['start']}, end {run['end']}")
    return failures


def datasets_for(args, tmp: Path) -> dict:
    """{name: (dataset, batch_size, description)}"""
    sample, coco = SHARED_DATA / "imagenet-sample", SHARED_DATA / "coco-sample"
    if sample.is_dir():
        folder_src, what = sample, f"../shared/data/imagenet-sample copied to {args.files} files"
    else:
        folder_src = corpora.make_imagenet_like(corpora.cache_root("bench-imagenet-like-v1"),
                                           **corpora.IMAGENET_LIKE)
        what = f"built-in ImageNet-like set copied to {args.files} files"
    folder = corpora.replicate_folder(folder_src, args.files, tmp / "folder")
    if coco.is_dir():
        images, annotations = corpora.find_coco(coco, None)
        coco_what = f"../shared/data/coco-sample copied to {args.coco_files} images"
    else:
        root = corpora.make_coco_like(corpora.cache_root("bench-coco-like-v1"), **corpora.COCO_LIKE)
        images, annotations = root / "images", root / "annotations.json"
        coco_what = f"built-in COCO-like set copied to {args.coco_files} images"
    images, annotations = corpora.replicate_coco(images, annotations, args.coco_files, tmp / "coco")
    return {
        "imagefolder-train": (datasets.ImageFolder(str(folder), PIPELINES["train"][1]()), 64,
                              what),
        "coco-ssd-train": (COCODetection(str(images), str(annotations), PIPELINES["ssd"][1]()), 32,
                           coco_what),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--files", type=int, default=3000)
    p.add_argument("--coco-files", type=int, default=1500)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    results, failures = {}, []
    with tempfile.TemporaryDirectory(prefix="jpegloader-soak-") as tmp:
        for name, (dataset, batch_size, what) in datasets_for(args, Path(tmp)).items():
            for persistent in (True, False):
                label = f"{name} ({'persistent' if persistent else 'per-epoch'} workers)"
                print(f"  {label}: {what}, {args.epochs} epochs, batch {batch_size}",
                      flush=True)
                run = soak_loader(dataset, args.epochs, persistent, batch_size, print)
                run["dataset"] = what
                problems = check(run)
                failures += [f"{label}: {f}" for f in problems]
                print(f"    RSS growth after epoch 1: {run['rss_growth_after_epoch_1']}; "
                      f"resources start {run['start']} end {run['end']}; "
                      f"{'PASS' if not problems else 'FAIL'}", flush=True)
                results[label] = run
    summary = {"passed": not failures, "failures": failures, "runs": results}
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
