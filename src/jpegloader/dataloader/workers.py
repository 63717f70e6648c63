"""The worker process: receives batch tasks, fills ring slots, reports back.

NOTE [ Worker shutdown ]
A worker exits on a None task, when its parent process is gone (checked
every second while idle, as torch's ManagerWatchdog does), or when its
task queue breaks.  It ignores SIGINT: a Ctrl-C reaches the whole process
group, and the main process, which gets it too, decides what happens.
"""
from __future__ import annotations

import gc
import os
import queue
import random
import signal
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch._utils import ExceptionWrapper
from torch.utils.data._utils import worker as torch_worker

from ..pipelines.contract import BatchDecoder, EarlierSamples, SampleFailure
from . import heap, ring

WATCHDOG_SECONDS = 1.0


@dataclass(frozen=True)
class Task:
    epoch: int
    batch_no: int
    slot_id: int
    generation: int
    indices: list[int]
    seed: int
    slot_tensors: tuple[torch.Tensor, ...] | None  # sent once per slot generation
    #: the slot row of the first sample: a part of a batch spread out starts past 0
    #: (NOTE [ The last batches spread out ] in pool.py)
    start: int = 0
    #: the main process pins the batch in its pin thread (BatchDecoder.decode)
    pinned: bool = False
    #: the samples before the batch it reads (BatchDecoder.window), or None
    earlier: EarlierSamples | None = None


@dataclass(frozen=True)
class Result:
    epoch: int
    batch_no: int
    slot_id: int
    worker_id: int
    report: object  # BatchReport, or ExceptionWrapper on failure
    #: the worker's wall-clock seconds on the task (NOTE [ Batches to the least
    #: loaded worker ] in assign.py)
    seconds: float = 0.0


def _seed_worker(seed: int, worker_id: int) -> None:
    # The same seeding as torch's own workers, so user code sees the same state.
    random.seed(seed)
    torch.manual_seed(seed)
    generate = getattr(torch_worker, "_generate_state", None)
    if generate is not None:
        np.random.seed(generate(seed - worker_id, worker_id))


def worker_loop(worker_id: int, num_workers: int, decoder: BatchDecoder,
                tasks, results, seed: int, worker_init_fn, dataset,
                initial_slots: dict) -> None:
    # Everything inherited from the parent is moved out of the collector's reach
    # (a list splice, touching no object): otherwise each full collection walks
    # the parent's whole heap, costing CPU and copy-on-write page copies.
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # NOTE [ Worker shutdown ]
    torch.set_num_threads(1)
    heap.keep_large_blocks_in_heap()  # NOTE [ libjpeg's buffers, kept for a batch ]
    where = f"in DataLoader worker process {worker_id} (pid {os.getpid()})"
    # NOTE [ The watchdog's parent ]
    # A worker ends when the parent it started with is gone, as torch's ManagerWatchdog
    # decides: under forkserver that parent is the fork server (which lives as long as
    # the main process), not the main process, whose pid it must not be compared with.
    parent = os.getppid()
    try:
        _seed_worker(seed, worker_id)
        torch_worker._worker_info = torch_worker.WorkerInfo(
            id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
    except Exception:
        results.put(Result(-1, -1, -1, worker_id, ExceptionWrapper(sys.exc_info(), where=where)))
        return

    slots: dict[int, tuple[int, tuple[np.ndarray, ...]]] = {
        sid: (gen, tuple(t.numpy() for t in tensors))
        for sid, (gen, tensors) in initial_slots.items()}
    mapped: set[tuple[int, int]] = set()  # (slot, generation) this process has mapped in
    while True:
        try:
            task = tasks.get(timeout=WATCHDOG_SECONDS)
        except queue.Empty:
            if os.getppid() != parent:
                return  # the main process is gone
            continue
        except (EOFError, OSError):
            return
        if task is None:
            return
        if task.slot_tensors is not None:
            slots[task.slot_id] = (task.generation, tuple(t.numpy() for t in task.slot_tensors))
        generation, arrays = slots[task.slot_id]
        if (task.slot_id, generation) not in mapped:
            if not decoder.sparse_slots:  # else its batches reserve what they write
                ring.map_in(arrays)  # NOTE [ A worker maps a slot in one call ]
            mapped.add((task.slot_id, generation))
        if task.start:
            arrays = tuple(a[task.start:] for a in arrays)
        started = time.perf_counter()
        try:
            report = decoder.decode(task.indices, task.seed, arrays, where, task.batch_no,
                                    pinned=task.pinned, earlier=task.earlier)
        except SampleFailure as failure:
            report = failure.wrapper
        except Exception:
            report = ExceptionWrapper(sys.exc_info(), where=where)
        results.put(Result(task.epoch, task.batch_no, task.slot_id, worker_id, report,
                           time.perf_counter() - started))
        heap.release_free_heap(decoder.heap_per_sample * len(task.indices),
                               decoder.runs_user_code or decoder.heap_unsized)
