"""Measuring loaders: epochs timed side by side, CPU time of every process, worker
memory, the ceiling beside each round, and memory measured alone."""
from __future__ import annotations

import contextlib
import os
import resource
import statistics
import threading
import time
from importlib import metadata
from pathlib import Path

import PIL
import torch
from torchvision import datasets

import jpegloader

try:  # progress bars when the bench extra is installed
    from tqdm import tqdm
except ImportError:  # pragma: no cover - the core package alone
    def tqdm(iterable, **_):
        return iterable

from ..dataloader.loader import TorchDataLoader
from ..pipelines import WORKER_STAGES
from . import ceiling as bench_ceiling
from . import memory as bench_memory
from .pinning import emulated_pinning
from . import sources, yolo_user
from .recipes import IN_ORDER, PIPELINES, YOLO, build_dataset, image_files, images_in


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
#: What the output calls each loader ("native" stays the key in --json).
LABELS = {"native": "torch", "jpegloader": "jpegloader"}


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


def _main_cpu_seconds() -> float:
    """This process's CPU time alone (every thread of it): the main process's share,
    which no number of workers can take over."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    return s.ru_utime + s.ru_stime


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
    main0 = _main_cpu_seconds()
    cpu0, t0 = _cpu_seconds(), time.perf_counter()
    first = None
    images = 0
    inside = [0.0, 0]  # the main thread's CPU seconds inside next(), batches
    with PeakMemory() as mem:
        # Progress on stderr; tqdm stays quiet when it is not a terminal.
        for batch in tqdm(_timed_next(loader, inside), desc=label, total=len(loader),
                          unit="batch", leave=False, disable=None):
            if first is None:
                first = time.perf_counter() - t0
            images += images_in(batch)
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
    main = _main_cpu_seconds() - main0
    stages = {k: v - stages0.get(k, 0.0) for k, v in getattr(loader, "stage_seconds", {}).items()}
    return dict(images=images, seconds=wall, img_per_s=images / wall,
                cpu_ms_per_img=1000 * cpu / max(images, 1), first_batch_s=first,
                main_busy=main / wall if wall else 0.0,
                next_ms_per_batch=1000 * inside[0] / max(inside[1], 1),
                worker_peak_mib=max(mem.workers.values(), default=0) / 1024,
                stage_seconds=stages)


def _timed_next(loader, inside: list):
    """The loader's batches, adding the calling thread's CPU time inside each
    ``next()`` (time.thread_time: not the workers', not a pin thread's) to inside[0]
    and counting them in inside[1]."""
    it = iter(loader)
    while True:
        started = time.thread_time()
        try:
            batch = next(it)
        except StopIteration:
            return
        inside[0] += time.thread_time() - started
        inside[1] += 1
        yield batch


def alternate_epochs(loaders: dict, epochs: int, warmup: int = 1) -> dict[str, list[float]]:
    """img/s of each loader over ``epochs`` measured epochs after ``warmup``, the loaders
    taking turns and the first of each round alternating (as the benchmark does)."""
    rates: dict[str, list[float]] = {name: [] for name in loaders}
    order = list(loaders)
    for epoch in range(warmup + epochs):
        for name in order if epoch % 2 == 0 else order[::-1]:
            r = run_epoch(loaders[name], others=[v for k, v in loaders.items() if k != name])
            if epoch >= warmup:
                rates[name].append(r["img_per_s"])
    return rates


#: the memory figures of a loader alone (bench/memory.py), medians over the runs
MEMORY_KEYS = ("pss_mib", "held_mib", *(f"{part}_mib" for part in bench_memory.PARTS))


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
              warmup: int, log=print, consumer_ms: float = 0.0, memory_runs: int = 3,
              ceiling: Path | None = None, source: str = "folder",
              work: Path | None = None, pin: str = "off") -> dict:
    """root: an ImageFolder root, or (image folder, instances JSON) for detection.
    Each loader's memory is measured alone in a fresh process (bench_memory),
    ``memory_runs`` times; with ``ceiling`` (a jpeg_limit program), the decode
    ceiling on the same files.  ``source``: where the images are kept
    (sources.SOURCES: made from root's files in ``work``), torch's loader reading
    them as users do today."""
    cache_mib = build_s = 0.0
    if source == "folder":
        started = time.perf_counter()
        dataset, collate_fn = build_dataset(pipeline, root, batch_size)
        build_s = time.perf_counter() - started
        if pipeline in YOLO:  # cache="ram": outside both loaders, and not in their memory
            cache_mib = yolo_user.ram_cache_mib(dataset)
            if cache_mib:
                log(f"  {pipeline}: the dataset's cache holds {cache_mib:.0f} MiB of decoded "
                    f"photos, filled in {build_s:.1f} s with the dataset")
        native_args = {"shuffle": pipeline not in IN_ORDER, "collate_fn": collate_fn}
        native_dataset = dataset
    else:
        collate_fn = None
        dataset, native_dataset, native_args = sources.datasets_for(
            source, Path(root), PIPELINES[pipeline][1](), work)
        if memory_runs:
            log(f"  {pipeline}: memory is measured for --source folder only")
            memory_runs = 0
    # Built once and iterated epoch after epoch, as a training script does.
    pinned = pin != "off"
    loaders = {
        "native": TorchDataLoader(native_dataset, batch_size=batch_size, num_workers=workers,
                                  pin_memory=pinned, **native_args),
        "jpegloader": jpegloader.DataLoader(dataset, batch_size=batch_size,
                                            shuffle=pipeline not in IN_ORDER,
                                            num_workers=workers, collate_fn=collate_fn,
                                            pin_memory=pinned),
    }
    with emulated_pinning() if pin == "emulated" else contextlib.nullcontext():
        return _measured(loaders, dataset, root, pipeline, workers, batch_size, epochs,
                         warmup, log, consumer_ms, memory_runs, ceiling, source, collate_fn,
                         cache_mib, build_s, pinned)


def _measured(loaders, dataset, root, pipeline, workers, batch_size, epochs, warmup, log,
              consumer_ms, memory_runs, ceiling, source, collate_fn, cache_mib, build_s,
              pinned) -> dict:
    verdict = jpegloader.explain(dataset, batch_size=batch_size, collate_fn=collate_fn)
    if not verdict.accelerated:
        raise SystemExit("jpegloader would fall back on this dataset:\n" + verdict.report())
    log(f"  {pipeline}: " + "\n    ".join(verdict.split_text().splitlines()))
    runs: dict[str, list[dict]] = {name: [] for name in loaders}
    ceilings: list[dict] = []
    with_ceiling = ceiling is not None and pipeline in bench_ceiling.MODES
    # the same images, wherever the source keeps them: the folder's files
    folder = dataset if source == "folder" else datasets.ImageFolder(str(root)) \
        if with_ceiling else None
    files = image_files(folder) if with_ceiling else []
    order = list(loaders)
    for epoch in range(warmup + epochs):
        for name in order if epoch % 2 == 0 else order[::-1]:  # alternate who goes first
            r = run_epoch(loaders[name], f"{pipeline} w={workers} {LABELS[name]} "
                                         f"{epoch + 1}/{warmup + epochs}", consumer_ms,
                          others=[loader for other, loader in loaders.items() if other != name])
            if epoch >= warmup:
                runs[name].append(r)
            log(f"  {pipeline:7s} workers={workers} epoch {epoch + 1}/{warmup + epochs} "
                f"{LABELS[name]:11s} {r['img_per_s']:7.0f} img/s"
                + (f", next() {r['next_ms_per_batch']:6.2f} ms/batch" if pinned else "")
                + f"{'  (warm-up)' if epoch < warmup else ''}")
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
            "main_busy": statistics.median(r["main_busy"] for r in rs),
            "next_ms_per_batch": statistics.median(r["next_ms_per_batch"] for r in rs),
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
    if cache_mib:
        summary["dataset_ram_cache"] = {"mib": cache_mib, "dataset_built_s": build_s}
    loaders.clear()  # their workers and ring go before the runs below
    for run in range(memory_runs):
        # Alternating, as the epochs do; the medians go in the table.
        for name in order if run % 2 == 0 else order[::-1]:
            log(f"  {pipeline:7s} workers={workers} {LABELS[name]:11s} alone in a new process "
                f"{run + 1}/{memory_runs}: measuring its memory...")
            m = bench_memory.measure_alone(name, pipeline, root, workers, batch_size)
            for key in MEMORY_KEYS:
                summary[name].setdefault(f"{key}_per_run", []).append(m[key])
            log(f"  {pipeline:7s} workers={workers} {LABELS[name]:11s} alone in a new process "
                f"{run + 1}/{memory_runs}: PSS {m['pss_mib']:.0f} MiB, "
                f"held {m['held_mib']:.0f} MiB ({bench_memory.where_held(m)})")
    for name in ("native", "jpegloader") if memory_runs else ():
        for key in MEMORY_KEYS:
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
