"""Sharing one batch's C work out over threads (num_workers=0 uses the machine).

The C core releases the GIL, so threads decode in parallel.  A batch is cut into a
few more chunks than threads (images differ in cost; a thread that finishes early
takes the next chunk); each chunk is one call of the C core with its own decoder
and scratch, so chunks share nothing but the read-only input.  Sample i's pixels
depend only on its own bytes and plan: any split gives the same batch.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CHUNKS_PER_THREAD = 4

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_pid = 0


def _executor(threads: int) -> ThreadPoolExecutor:
    """One pool per process, grown to the largest size asked for (a forked child
    does not inherit the parent's threads, so it makes its own)."""
    global _pool, _pool_size, _pool_pid
    with _lock:
        if _pool is None or _pool_pid != os.getpid() or _pool_size < threads:
            if _pool is not None and _pool_pid == os.getpid():
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(threads, thread_name_prefix="jpegloader-decode")
            _pool_size, _pool_pid = threads, os.getpid()
        return _pool


def share_out(run: Callable[[int, int, np.ndarray], None], n: int, threads: int) -> np.ndarray:
    """Calls ``run(a, b, seconds)`` for chunks [a, b) covering [0, n) on up to
    ``threads`` threads (the caller's among them); returns the chunks' seconds
    (float64[2]) summed.  An exception in any chunk is raised here, after all
    chunks have finished (none is left writing into the caller's buffers)."""
    chunks = min(n, threads * CHUNKS_PER_THREAD)
    bounds = np.linspace(0, n, chunks + 1).round().astype(int)
    seconds = np.zeros((chunks, 2))
    todo = iter(range(chunks))
    todo_lock = threading.Lock()

    def drain() -> None:
        while True:
            with todo_lock:
                k = next(todo, None)
            if k is None:
                return
            run(int(bounds[k]), int(bounds[k + 1]), seconds[k])
    helpers = [_executor(threads - 1).submit(drain) for _ in range(min(threads, chunks) - 1)]
    error = None
    try:
        drain()
    except BaseException as e:  # noqa: BLE001 - re-raised once the helpers stopped
        error = e
    for h in helpers:
        try:
            h.result()
        except BaseException as e:  # noqa: BLE001
            error = error or e
    if error is not None:
        raise error
    return seconds.sum(axis=0)
