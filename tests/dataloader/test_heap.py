"""NOTE [ libjpeg's buffers, kept for a batch ]: in a worker, a large block freed
by one image is reused by the next (no fresh pages), and release_free_heap hands
the free heap back, so the worker's resident memory returns to where it was."""
from __future__ import annotations

import ctypes
import multiprocessing as mp

import pytest

from jpegloader.dataloader import heap

BLOCK = 64 << 20


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def _minor_faults() -> int:
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def _child(queue) -> None:
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    assert heap.keep_large_blocks_in_heap()
    base = _rss_kib()
    p = libc.malloc(BLOCK)
    libc.memset(p, 1, BLOCK)  # the first image: fresh pages
    libc.free(p)
    held = _rss_kib() - base
    before = _minor_faults()
    p = libc.malloc(BLOCK)
    libc.memset(p, 1, BLOCK)  # the next image reuses them
    libc.free(p)
    refaults = _minor_faults() - before
    heap.release_free_heap()
    queue.put((held, refaults, _rss_kib() - base))


@pytest.mark.skipif(heap._libc is None, reason="glibc only (elsewhere both calls do nothing)")
def test_a_freed_block_is_reused_then_released_after_the_batch():
    queue = mp.get_context("fork").Queue()
    child = mp.get_context("fork").Process(target=_child, args=(queue,))
    child.start()
    held, refaults, after = queue.get(timeout=60)
    child.join(10)
    assert child.exitcode == 0
    assert held > 0.9 * BLOCK / 1024          # kept after free()
    assert refaults < 0.01 * BLOCK / 4096     # reused: no page faulted in again
    assert after < 0.1 * BLOCK / 1024         # handed back by release_free_heap()
