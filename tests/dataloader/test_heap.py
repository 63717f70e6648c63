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
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]

    def one_image() -> int:
        """Page faults of using and freeing one large block."""
        before = _minor_faults()
        p = libc.malloc(BLOCK)
        libc.memset(p, 1, BLOCK)
        libc.free(p)
        return _minor_faults() - before
    assert heap.keep_large_blocks_in_heap()
    first = one_image()    # fresh pages
    reused = one_image()   # the next image reuses them
    base = _rss_kib()
    heap.release_free_heap()
    released = base - _rss_kib()
    again = one_image()    # after the batch: fresh pages again
    queue.put((first, reused, released, again))


@pytest.mark.skipif(heap._libc is None, reason="glibc only (elsewhere both calls do nothing)")
def test_a_freed_block_is_reused_then_released_after_the_batch():
    queue = mp.get_context("fork").Queue()
    child = mp.get_context("fork").Process(target=_child, args=(queue,))
    child.start()
    first, reused, released, again = queue.get(timeout=60)
    child.join(10)
    assert child.exitcode == 0
    pages = BLOCK // 4096
    assert first > 0.5 * pages            # a fresh block is faulted in
    assert reused < 0.01 * pages          # kept in the heap: no page faulted in again
    # handed back by release_free_heap() (KiB; the kernel's RSS counters lag a little)
    assert released > 0.5 * BLOCK / 1024
    assert again > 0.5 * pages
