"""NOTE [ libjpeg's buffers, kept for a batch ]

A progressive JPEG is decoded through a coefficient buffer of the whole image
(50-100 MB for a 16-24 MP photo), which libjpeg mallocs per image.  Blocks that
large come from mmap, so every image pays for mapping, faulting in and zeroing
fresh pages and unmapping them again: measured, 40% of an 18 MP progressive
decode at 1/8 (Elephants 5640x3172: 79 -> 36 ms, Infinite Sea 4096x4096: 129 ->
55 ms with the pages kept).  A worker therefore has glibc serve such blocks from
its heap, where a freed block is reused by the next image, and hands the free
heap back to the system after each batch (malloc_trim), so it holds the memory
only while it decodes: measured on the large photos, eval 3.49x -> 4.54x native
with the loader's summed PSS still below native's (390 vs 431 MiB).  Only our
worker processes do this, never the process that owns the loader.  Elsewhere
than glibc, both calls do nothing.
"""
from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
HEAP_BLOCKS_UP_TO = 256 << 20   # blocks larger than this still come from mmap
TRIM_ONLY_PAST = 512 << 20      # free() no longer trims; release_free_heap() does


def _glibc():
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - raises AttributeError off glibc
        return libc
    except (OSError, AttributeError):
        return None


_libc = _glibc()


def keep_large_blocks_in_heap() -> bool:
    """Large mallocs come from the heap, where the next image reuses them."""
    if _libc is None:
        return False
    return bool(_libc.mallopt(M_MMAP_THRESHOLD, HEAP_BLOCKS_UP_TO)
                and _libc.mallopt(M_TRIM_THRESHOLD, TRIM_ONLY_PAST))


def release_free_heap() -> None:
    """Returns the heap's free pages to the system (after each batch)."""
    if _libc is not None:
        _libc.malloc_trim(0)
