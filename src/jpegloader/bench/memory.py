"""Memory a loader holds, measured with the loader alone in a fresh process.

NOTE [ Counting memory ]
RSS counts a shared page in every process that maps it; PSS (/proc/PID/smaps)
splits it between them, so summed over the main process and its workers it
counts each mapped page once.  PSS cannot see shared memory no process maps
(torch's finished batches wait in its queues as files only a descriptor
holds), so two figures, each the peak over an epoch less the process's PSS
before the loader was built:

  pss_mib   PSS summed over the process and its workers;
  held_mib  the same without its shared-memory files, plus every one of them
            the processes map or hold open, counted once at its size.

Each loader runs alone in a new process: in the benchmark's alternating epochs
the other loader's buffers would be counted too.  The training loop reads every
batch (as a copy to a GPU would).

NOTE [ A shared file counted once ]
The processes are read one after another, not at one instant, so a page whose
sharers change between two reads is counted twice (in the main process alone,
then again in a worker that has just mapped it): ring slots change sharers as
workers map them, torch's batches as they pass to the main process.  So each
shared-memory file's PSS is summed over the processes and capped at the file's
size, which its pages cannot exceed at any instant (docs/experiments.md).

    python -m jpegloader.bench.memory KIND PIPELINE ROOT [ANNOTATIONS] [--workers 2]
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
#: where the held memory is (NOTE [ Counting memory ]), and /dev/shm's reserve
PARTS = ("main", "workers", "shared", "before", "shmem")
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


def _vmas(pid: int):
    """(address range, path, PSS in KiB) of each of the process's mappings."""
    try:
        text = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return
    vma = None
    for line in text.splitlines():
        key, _, rest = line.partition(" ")
        if key.endswith(":"):
            if key == "Pss:" and vma is not None:
                yield vma[0], vma[1], int(rest.split()[0])
        else:  # a mapping's first line: range, perms, offset, device, inode[, path]
            parts = line.split(maxsplit=5)
            vma = (parts[0], parts[5] if len(parts) == 6 else "")


def _file_key(path: str):
    """(device, inode) and size in KiB of the file at path, or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino), st.st_blocks // 2


def _open_shm_files(pid: int, files: dict) -> None:
    """Adds the shared-memory files ``pid`` holds open: (dev, inode) -> KiB."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return
    for fd in fds:
        try:
            if not os.readlink(f"/proc/{pid}/fd/{fd}").startswith(SHM_PREFIXES):
                continue
        except OSError:
            continue
        found = _file_key(f"/proc/{pid}/fd/{fd}")
        if found is not None:
            files[found[0]] = found[1]


def combine(other_kib: int, shared: dict) -> int:
    """PSS over the processes: ``other_kib`` (every mapping but shared-memory
    files) plus each shared file's PSS summed over them, at most its size
    (NOTE [ A shared file counted once ]).  ``shared``: key -> (PSS KiB summed,
    size KiB or None when unknown)."""
    return other_kib + sum(p if size is None else min(p, size) for p, size in shared.values())


def shmem_kib() -> int:
    """The machine's Shmem (/proc/meminfo) in KiB: shared-memory pages in use."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("Shmem:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(pids: list[int], parts: dict | None = None) -> tuple[int, int]:
    """(PSS, held) in KiB over ``pids`` (NOTE [ Counting memory ]); with ``parts``,
    the held KiB there too by where they are: "main" (the first pid's own pages),
    "workers" (the others'), "shared" (the shared-memory files)."""
    other = 0  # every mapping but shared-memory files
    own = [0] * len(pids)  # each pid's share of ``other``
    shared: dict = {}     # (dev, inode) or mapping -> [PSS KiB summed, size KiB or None]
    held_files: dict = {}  # (dev, inode) -> size KiB, mapped or open
    for k, pid in enumerate(pids):
        for where, path, pss in _vmas(pid):
            if not path.startswith(SHM_PREFIXES):
                other += pss
                own[k] += pss
                continue
            found = _file_key(f"/proc/{pid}/map_files/{where}")
            key, size = found if found is not None else ((pid, where), None)
            entry = shared.setdefault(key, [0, size])
            entry[0] += pss
            if found is not None:
                held_files[key] = size
        _open_shm_files(pid, held_files)
    if parts is not None:
        parts.update(main=own[0] if own else 0, workers=sum(own[1:]),
                     shared=sum(held_files.values()))
    return combine(other, shared), other + sum(held_files.values())


def where_held(m: dict) -> str:
    """Where a loader's held memory is at its peak, and the /dev/shm reserved, in MiB
    (``run_alone``'s figures)."""
    return (f"main {m['main_mib']:.0f}, workers {m['workers_mib']:.0f}, shared memory "
            f"{m['shared_mib']:.0f}, less {m['before_mib']:.0f} held before the loader; "
            f"/dev/shm reserved {m['shmem_mib']:.0f} MiB")


def run_alone(kind: str, pipeline: str, root, workers: int, batch_size: int,
              epochs: int) -> dict:
    """In this (fresh) process: one loader, its epochs, the peaks.  Where the held
    memory is at its peak: ``main_mib`` (the main process's PSS but shared-memory
    files), ``workers_mib`` (the workers' likewise, with their share of the parent's
    pages since the fork) and ``shared_mib`` (the shared-memory files: the ring's
    slots, batches in flight), which sum to the held figure plus ``before_mib``, what
    the process held before the loader was built; and ``shmem_mib``, the machine's
    Shmem (/proc/meminfo) above what it was: the /dev/shm pages reserved."""
    import jpegloader

    from ..dataloader.loader import TorchDataLoader
    from .recipes import IN_ORDER, batch_images, build_dataset

    dataset, collate_fn = build_dataset(pipeline, root, batch_size)
    me = os.getpid()
    base_pss, base_held = measure([me])
    base_shmem = shmem_kib()
    peaks = {"pss": 0, "held": 0, "parts": {}}
    stop = threading.Event()

    lock = threading.Lock()

    def sample_once() -> None:
        parts: dict = {}
        pss, held = measure([me, *children(me)], parts)
        parts["shmem"] = shmem_kib()
        with lock:
            peaks["pss"] = max(peaks["pss"], pss)
            if held > peaks["held"]:
                peaks["held"], peaks["parts"] = held, parts

    def sample():
        while not stop.is_set():
            sample_once()
            stop.wait(0.1)
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    cls = jpegloader.DataLoader if kind == "jpegloader" else TorchDataLoader
    loader = cls(dataset, batch_size=batch_size, shuffle=pipeline not in IN_ORDER,
                 num_workers=workers, collate_fn=collate_fn)
    start = time.perf_counter()
    for _ in range(epochs):
        for k, batch in enumerate(loader):
            for images in batch_images(batch):  # the training step reads the batch
                images.float().sum()
            if k == 0:
                # An epoch shorter than the sampling period would otherwise go
                # unmeasured: one sample while its workers and first batch exist.
                sample_once()
    seconds = time.perf_counter() - start
    stop.set()
    thread.join()
    where = {f"{part}_mib": peaks["parts"].get(part, 0) / 1024
             for part in ("main", "workers", "shared")}
    where.update(before_mib=base_held / 1024,
                 shmem_mib=(peaks["parts"].get("shmem", base_shmem) - base_shmem) / 1024)
    return {"pss_mib": (peaks["pss"] - base_pss) / 1024,
            "held_mib": (peaks["held"] - base_held) / 1024, **where, "seconds": seconds}


def measure_alone(kind: str, pipeline: str, root, workers: int, batch_size: int,
                  epochs: int = 1) -> dict:
    """run_alone in a new Python process; root is a folder or (images, annotations)."""
    roots = [str(r) for r in (root if isinstance(root, tuple) else (root,))]
    out = subprocess.run([sys.executable, "-m", "jpegloader.bench.memory", kind, pipeline,
                          *roots, "--workers", str(workers), "--batch-size", str(batch_size),
                          "--epochs", str(epochs)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"measuring {kind}'s memory failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m jpegloader.bench.memory", description=__doc__,
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
