"""NOTE [ libjpeg's buffers, kept for a batch ]

A progressive JPEG is decoded through a coefficient buffer of the whole image
(50-100 MB for a 16-24 MP photo), which libjpeg mallocs per image.  Blocks that
large come from mmap, so every image pays for mapping, faulting in and zeroing
fresh pages and unmapping them again: measured, 40% of an 18 MP progressive
decode at 1/8 (Elephants 5640x3172: 79 -> 36 ms, Infinite Sea 4096x4096: 129 ->
55 ms with the pages kept).  A worker therefore has glibc serve such blocks from
its heap, where a freed block is reused by the next image.  After each batch
it hands the free heap back to the system (malloc_trim) once the heap has grown
more than KEEP_UP_TO beyond its size when the worker started, so it holds a large
photo's buffers only while it decodes: measured on the large photos, eval 3.49x
-> 4.54x native with the loader's summed PSS still below native's (390 vs 431
MiB).  Below that, what a batch of ordinary images used (the batch's file bytes,
libjpeg's and the resampler's buffers: 10-15 MB) stays for the next batch, which
would otherwise fault it all in again (18 page faults per ImageNet image; with
the slots mapped in one call, NOTE [ A worker maps a slot in one call ], train
went 7% faster, measured epoch by epoch).  The peak memory is the same either
way: those pages are resident while every batch decodes.  The growth is counted
from the worker's start because a worker forked from a large process inherits
its free heap, which says nothing about what the worker holds.  Only our
worker processes do this, never the process that owns the loader.  Elsewhere
than glibc, both calls do nothing.
"""
from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
HEAP_BLOCKS_UP_TO = 256 << 20   # blocks larger than this still come from mmap
TRIM_ONLY_PAST = 512 << 20      # free() no longer trims; release_free_heap() does
KEEP_UP_TO = 32 << 20           # heap growth a worker keeps from one batch to the next


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _glibc():
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - raises AttributeError off glibc
        return libc
    except (OSError, AttributeError):
        return None


_libc = _glibc()
_mallinfo2 = getattr(_libc, "mallinfo2", None)  # glibc 2.33+
if _mallinfo2 is not None:
    _mallinfo2.restype = _MallInfo2


_heap_at_start: int | None = None


def heap_bytes() -> int | None:
    """Bytes malloc's heap holds from the system (None where glibc cannot say)."""
    return None if _mallinfo2 is None else _mallinfo2().arena


def keep_large_blocks_in_heap() -> bool:
    """Large mallocs come from the heap, where the next image reuses them."""
    global _heap_at_start
    if _libc is None:
        return False
    _heap_at_start = heap_bytes()
    return bool(_libc.mallopt(M_MMAP_THRESHOLD, HEAP_BLOCKS_UP_TO)
                and _libc.mallopt(M_TRIM_THRESHOLD, TRIM_ONLY_PAST))


def release_free_heap() -> None:
    """After each batch: returns the heap's free pages to the system once the heap
    has grown more than KEEP_UP_TO since keep_large_blocks_in_heap() (always,
    where glibc cannot say)."""
    if _libc is None:
        return
    size = heap_bytes()
    if size is None or _heap_at_start is None or size - _heap_at_start > KEEP_UP_TO:
        _libc.malloc_trim(0)
