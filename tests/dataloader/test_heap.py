"""NOTE [ libjpeg's buffers, kept for a batch ]: in a worker, a large block freed
by one image is reused by the next (no fresh pages); release_free_heap hands a
large photo's free heap back, so the worker's resident memory returns to where it
was, and keeps an ordinary batch's for the next batch."""
from __future__ import annotations

import ctypes
import multiprocessing as mp

import pytest

from jpegloader.dataloader import heap

BLOCK = 64 << 20
SMALL_BLOCK = 8 << 20  # an ordinary batch's file bytes and libjpeg buffers


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def _minor_faults() -> int:
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def _use_and_free(size: int = BLOCK) -> int:
    """Page faults of using and freeing one block of malloc's (an image's buffers, or a
    collate_fn's batch)."""
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    before = _minor_faults()
    p = libc.malloc(size)
    libc.memset(p, 1, size)
    libc.free(p)
    return _minor_faults() - before


def _child(queue) -> None:
    one_image = _use_and_free
    assert heap.keep_large_blocks_in_heap()
    first = one_image()    # fresh pages
    reused = one_image()   # the next image reuses them
    base = _rss_kib()
    heap.release_free_heap()
    released = base - _rss_kib()
    again = one_image()    # after the batch: fresh pages again
    heap.release_free_heap()
    small_first = one_image(SMALL_BLOCK)
    heap.release_free_heap()  # under KEEP_UP_TO: kept for the next batch
    small_next_batch = one_image(SMALL_BLOCK)
    queue.put((first, reused, released, again, small_first, small_next_batch))


@pytest.mark.skipif(heap._libc is None, reason="glibc only (elsewhere both calls do nothing)")
def test_a_freed_block_is_reused_then_released_after_the_batch():
    # spawn: the child starts with a heap of its own; forked, it would inherit this
    # process's free heap (e.g. after pyarrow ran here) and reuse it instead of growing
    queue = mp.get_context("spawn").Queue()
    child = mp.get_context("spawn").Process(target=_child, args=(queue,))
    child.start()
    first, reused, released, again, small_first, small_next_batch = queue.get(timeout=60)
    child.join(10)
    assert child.exitcode == 0
    pages = BLOCK // 4096
    assert first > 0.5 * pages            # a fresh block is faulted in
    assert reused < 0.01 * pages          # kept in the heap: no page faulted in again
    # handed back by release_free_heap() (KiB; the kernel's RSS counters lag a little)
    assert released > 0.5 * BLOCK / 1024
    assert again > 0.5 * pages
    if heap.heap_bytes() is not None:  # glibc 2.33+ says how large the heap is
        small_pages = SMALL_BLOCK // 4096
        assert small_first > 0.5 * small_pages
        assert small_next_batch < 0.01 * small_pages


def _child_running_your_code(queue) -> None:
    assert heap.keep_large_blocks_in_heap()
    faults = []
    for _ in range(heap.REFRESH_BATCHES + 1):
        faults.append(_use_and_free())  # a batch whose collate_fn uses a large block
        heap.release_free_heap(SMALL_BLOCK, grown_by_your_code=True)
    queue.put(faults)


@pytest.mark.skipif(heap._libc is None or heap.heap_bytes() is None,
                    reason="glibc 2.33+ only (elsewhere the heap's size is unknown)")
def test_a_heap_grown_by_your_code_stays_then_is_handed_back_every_refresh():
    queue = mp.get_context("spawn").Queue()
    child = mp.get_context("spawn").Process(target=_child_running_your_code, args=(queue,))
    child.start()
    faults = queue.get(timeout=60)
    child.join(10)
    assert child.exitcode == 0
    pages = BLOCK // 4096
    # the first batch faults its block in; the next ones reuse it, beyond what the
    # decoder declared; after REFRESH_BATCHES batches it is handed back once
    assert faults[0] > 0.5 * pages
    assert all(f < 0.01 * pages for f in faults[1:heap.REFRESH_BATCHES])
    assert faults[heap.REFRESH_BATCHES] > 0.5 * pages
