"""Memory a loader holds, measured with the loader alone in a fresh process.

NOTE [ Counting memory ]
RSS counts a shared page in every process that maps it, so it overstates a loader
whose workers write batches into shared memory that the main process reads.  PSS
(proportional set size, /proc/PID/smaps_rollup) splits each shared page between the
processes that map it, so summed over the main process and its workers it counts
every mapped page once.  What PSS cannot see are shared-memory pages no process
maps: torch's finished batches wait in its queues as shared-memory files that only
a descriptor holds.  So two figures, each the peak over an epoch, less the
process's own PSS before the loader was built (Python, torch, the dataset):

  pss_mib   PSS summed over the process and its workers;
  held_mib  the same PSS without its shared-memory part, plus every shared-memory
            file the processes map or hold open, counted once at its size.

Each loader runs alone in a new process: in the benchmark's alternating epochs
the other loader's buffers would be counted too.  The training loop reads every
batch (as a copy to a GPU would).

    python -m jpegloader.bench_memory KIND PIPELINE ROOT [ANNOTATIONS] [--workers 2]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

SHM_PREFIXES = ("/dev/shm/", "/memfd:")
HELPERS = (b"resource_tracker", b"forkserver")  # multiprocessing's, not a loader's


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def children(pid: int | None = None) -> list[int]:
    """The process's children, multiprocessing's helper processes left out."""
    pid = os.getpid() if pid is None else pid
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return [p for p in out if not any(h in cmdline(p) for h in HELPERS)]


def _rollup(pid: int) -> dict[str, int]:
    out = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
            key, value = line.split(":")
            out[key] = int(value.split()[0])
    except (OSError, ValueError):
        pass
    return out


def _shm_files(pid: int, seen: dict) -> None:
    """Adds the shared-memory files ``pid`` maps or holds open: (dev, inode) -> KiB."""
    def add(path: str) -> None:
        try:
            st = os.stat(path)
            seen[(st.st_dev, st.st_ino)] = st.st_blocks // 2
        except OSError:
            pass
    try:
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith(SHM_PREFIXES):
                add(f"/proc/{pid}/map_files/{parts[0]}")
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(SHM_PREFIXES):
                    add(f"/proc/{pid}/fd/{fd}")
            except OSError:
                pass
    except OSError:
        pass


def measure(pids: list[int]) -> tuple[int, int]:
    """(PSS, held) in KiB over ``pids`` (NOTE [ Counting memory ])."""
    pss = held = 0
    files: dict = {}
    for pid in pids:
        r = _rollup(pid)
        pss += r.get("Pss", 0)
        held += r.get("Pss", 0) - r.get("Pss_Shmem", 0)
        _shm_files(pid, files)
    return pss, held + sum(files.values())


def run_alone(kind: str, pipeline: str, root, workers: int, batch_size: int,
              epochs: int) -> dict:
    """In this (fresh) process: one loader, its epochs, the peaks."""
    import torch

    import jpegloader
    from jpegloader.benchmark import build_dataset

    dataset, collate_fn = build_dataset(pipeline, root)
    me = os.getpid()
    base_pss, base_held = measure([me])
    peaks = {"pss": 0, "held": 0}
    stop = threading.Event()

    lock = threading.Lock()

    def sample_once() -> None:
        pss, held = measure([me, *children(me)])
        with lock:
            peaks["pss"] = max(peaks["pss"], pss)
            peaks["held"] = max(peaks["held"], held)

    def sample():
        while not stop.is_set():
            sample_once()
            stop.wait(0.1)
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    cls = jpegloader.DataLoader if kind == "jpegloader" else torch.utils.data.DataLoader
    loader = cls(dataset, batch_size=batch_size, shuffle=True, num_workers=workers,
                 collate_fn=collate_fn)
    start = time.perf_counter()
    for _ in range(epochs):
        for k, batch in enumerate(loader):
            batch[0].float().sum()  # the training step reads the batch
            if k == 0:
                # An epoch shorter than the sampling period would otherwise go
                # unmeasured: one sample while its workers and first batch exist.
                sample_once()
    seconds = time.perf_counter() - start
    stop.set()
    thread.join()
    return {"pss_mib": (peaks["pss"] - base_pss) / 1024,
            "held_mib": (peaks["held"] - base_held) / 1024, "seconds": seconds}


def measure_alone(kind: str, pipeline: str, root, workers: int, batch_size: int,
                  epochs: int = 1) -> dict:
    """run_alone in a new Python process; root is a folder or (images, annotations)."""
    roots = [str(r) for r in (root if isinstance(root, tuple) else (root,))]
    out = subprocess.run([sys.executable, "-m", "jpegloader.bench_memory", kind, pipeline,
                          *roots, "--workers", str(workers), "--batch-size", str(batch_size),
                          "--epochs", str(epochs)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"measuring {kind}'s memory failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m jpegloader.bench_memory", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=("native", "jpegloader"))
    p.add_argument("pipeline")
    p.add_argument("root", nargs="+", help="an ImageFolder root, or images and annotations")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=1)
    args = p.parse_args(argv)
    root = Path(args.root[0]) if len(args.root) == 1 else tuple(map(Path, args.root))
    print(json.dumps(run_alone(args.kind, args.pipeline, root, args.workers,
                               args.batch_size, args.epochs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
