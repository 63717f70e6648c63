"""NOTE [ libjpeg's buffers, kept for a batch ]
A progressive photo's coefficient buffer (50-100 MB) came from mmap per image:
mapped, zeroed and unmapped each time.  A worker has glibc serve such blocks from
its heap, where the next image reuses them, and after each batch hands the free
heap back (malloc_trim) once it has grown beyond what a batch needs: KEEP_UP_TO,
or what the decoder declares per sample (a collate_fn's padded batch).  A decoder
that runs your code (or whose heap grows with its batches' sizes: ``heap_unsized``)
cannot size it: the heap its batches grow stays, handed back every REFRESH_BATCHES
batches, so a rare large photo's buffers still go.  Only worker processes do this;
elsewhere than glibc the calls do nothing.  Measured: docs/experiments.md.
"""
from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
HEAP_BLOCKS_UP_TO = 256 << 20   # blocks larger than this still come from mmap
TRIM_ONLY_PAST = 512 << 20      # free() no longer trims; release_free_heap() does
KEEP_UP_TO = 32 << 20           # heap growth a worker keeps from one batch to the next
REFRESH_BATCHES = 16            # a heap grown by your code is handed back this often


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
_batches_kept = 0  # batches since the heap was last handed back


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


def release_free_heap(keep_up_to: int = KEEP_UP_TO, grown_by_your_code: bool = False) -> None:
    """After each batch: returns the heap's free pages to the system once the heap
    has grown more than ``keep_up_to`` (at least KEEP_UP_TO; what a batch of the
    decoder's needs: BatchDecoder.heap_per_sample) since keep_large_blocks_in_heap()
    (always, where glibc cannot say); ``grown_by_your_code`` (the decoder runs your
    code in the workers, or BatchDecoder.heap_unsized): only every REFRESH_BATCHES
    batches."""
    global _batches_kept
    if _libc is None:
        return
    size = heap_bytes()
    _batches_kept += 1
    if size is None or _heap_at_start is None or \
            (size - _heap_at_start > max(keep_up_to, KEEP_UP_TO) and
             (not grown_by_your_code or _batches_kept >= REFRESH_BATCHES)):
        _libc.malloc_trim(0)
        _batches_kept = 0
