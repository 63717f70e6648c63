"""A training process for the fault tests, run as
``python -m tests.reliability.child MODE DATA_DIR``.  It prints one JSON line
per event (worker pids, batch counts) so the test can check, from outside,
what happened to it and to its workers.

Modes:
    interrupt  Ctrl-C (SIGINT to the whole process group) mid-epoch: caught
               once, a full epoch follows, then a second one is not caught.
    exit       sys.exit(0) mid-epoch with the iterator alive.
    hold       mid-epoch, then sleeps until killed (the parent-death test).
    epoch      one full epoch (the small /dev/shm test).
    big-table  a dataset of 200,000 samples (the folder's files under long paths),
               batches of BATCH (the third argument): the verdict and two batches, or
               the error, then what /dev/shm holds (the shared-memory budget test).
    shm-taken  Mask R-CNN's loader (DATA_DIR unused: coco-sample) whose workers, as
               they start, take all of /dev/shm left: the verdict, the error, then
               what /dev/shm holds.
    shm-taken-yolo  The same with Ultralytics' YOLO training (a generated set written
               into DATA_DIR): Mosaic's photo store reserves each photo's pages.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time

from torchvision import datasets

import jpegloader
from tests.conftest import train_transform


def say(**event) -> None:
    print(json.dumps(event), flush=True)


def big_table(root: str, batch_size: int) -> None:
    ds = datasets.ImageFolder(root, train_transform())
    files = [(os.path.relpath(p, root), t) for p, t in ds.samples]
    # Long real paths ("././.../c0/img000.jpg"): a table of about 25 MB.
    ds.samples = ds.imgs = [(os.path.join(root, *["."] * 40, files[k % len(files)][0]),
                             files[k % len(files)][1]) for k in range(200_000)]
    ds.targets = [t for _, t in ds.samples]
    try:
        loader = jpegloader.DataLoader(ds, batch_size=batch_size, num_workers=2)
        it = iter(loader)
        count = len(next(it)[1]) + len(next(it)[1])
        say(accelerated=loader.eligibility.accelerated,
            reasons=[c.rule for c in loader.eligibility.reasons], count=count)
        del it, loader
    except Exception as e:  # noqa: BLE001 - reported to the test
        say(error=type(e).__name__, message=str(e))
    say(shm=sorted(os.listdir("/dev/shm")))


def _take_shared_memory(worker_id: int) -> None:
    """What another program does to a node's /dev/shm: takes all that is free."""
    fd = os.open(f"/dev/shm/taken-{worker_id}", os.O_RDWR | os.O_CREAT)
    taken, chunk = 0, 1 << 16  # a chunk at a time: a failed fallocate takes nothing
    try:
        while True:
            os.posix_fallocate(fd, taken, chunk)
            taken += chunk
    except OSError:
        pass  # full
    os.close(fd)


def _shm_taken(ds, batch_size: int, collate_fn, samples) -> None:
    """A loader over ``ds`` whose workers take all of /dev/shm left as they start: the
    verdict, the samples counted (``samples`` of a batch) or the error, then what
    /dev/shm holds."""
    loader = None
    try:
        loader = jpegloader.DataLoader(ds, batch_size=batch_size, num_workers=2,
                                       collate_fn=collate_fn,
                                       worker_init_fn=_take_shared_memory)
        say(accelerated=loader.eligibility.accelerated)
        say(count=sum(samples(b) for b in loader))
    except Exception as e:  # noqa: BLE001 - reported to the test
        say(error=type(e).__name__, message=str(e))
    del loader
    say(shm=sorted(os.listdir("/dev/shm")))


def shm_taken() -> None:
    from tests.pipelines.detection.conftest import R, build
    _shm_taken(build("hflip", with_masks=True), 2, R.collate_fn, lambda b: len(b[0]))


def shm_taken_yolo(root: str) -> None:
    from pathlib import Path

    from tests.pipelines.yolo.yolo_sets import generated_yolo_set, train_dataset
    ds = train_dataset(generated_yolo_set(Path(root), count=30), imgsz=320, batch=3)
    _shm_taken(ds, 3, ds.collate_fn, lambda b: len(b["im_file"]))


def main(mode: str, root: str, *args: str) -> None:
    # A process started in the background by a non-interactive shell (as a CI runner
    # may start the suite) inherits SIGINT ignored, and Python then keeps it ignored:
    # install Python's own handler, as an interactive training run has it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if mode == "big-table":
        big_table(root, int(args[0]))
        return
    if mode == "shm-taken":
        shm_taken()
        return
    if mode == "shm-taken-yolo":
        shm_taken_yolo(root)
        return
    ds = datasets.ImageFolder(root, train_transform())
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=2, shuffle=True)
    if mode == "epoch":
        say(count=sum(len(b[1]) for b in loader))
        return
    it = iter(loader)
    next(it)
    say(workers=[w.pid for w in loader._workers()])
    if mode == "exit":
        sys.exit(0)
    if mode == "hold":
        time.sleep(120)
        return
    if mode == "interrupt":
        try:
            for _ in it:
                os.killpg(os.getpgid(0), signal.SIGINT)
                time.sleep(5)  # the interrupt arrives here
            say(error="not interrupted")
        except KeyboardInterrupt:
            say(interrupted=1)
        say(count=sum(len(b[1]) for b in loader))
        it = iter(loader)
        next(it)
        say(workers=[w.pid for w in loader._workers()])
        for _ in it:  # this time the interrupt ends the program
            os.killpg(os.getpgid(0), signal.SIGINT)
            time.sleep(5)


if __name__ == "__main__":
    main(*sys.argv[1:])
