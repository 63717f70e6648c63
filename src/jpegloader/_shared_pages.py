"""Shared memory's pages: mapped into a process in one call, not a page fault at a time
(the ring's slots, a pipeline's Workspace); reserved as a batch writes them and handed
back after it (a slot whose batches vary in size)."""
from __future__ import annotations

import ctypes
import functools
import math
import mmap
import os
import re
import sys

import numpy as np
import torch

SHM_DIR = "/dev/shm"
MIB = 1 << 20
SHM_ADVICE = ("Give the machine more shared memory (Docker: --shm-size=2g; Kubernetes: an "
              "emptyDir with medium Memory on /dev/shm), or lower batch_size or num_workers "
              "(num_workers=0 needs none).")


class SharedMemoryError(RuntimeError):
    """Not enough shared memory for the batch ring; the message says what to change."""


def shared_memory_free() -> int | None:
    """Bytes free in /dev/shm, where torch creates shared tensors (None if unknown)."""
    try:
        fs = os.statvfs(SHM_DIR)
    except OSError:
        return None
    return fs.f_bavail * fs.f_frsize


def tensor_bytes(shape: tuple[int, ...], dtype: torch.dtype) -> int:
    """The bytes of a tensor of ``shape`` and ``dtype``."""
    return math.prod(shape) * torch.empty((), dtype=dtype).element_size()


def shared_empty(shape: tuple[int, ...], dtype: torch.dtype,
                 what: str = "batch slot", pages: bool = True) -> torch.Tensor:
    """An uninitialised tensor in shared memory.  Made in place, not by
    ``empty().share_memory_()``, which fills private pages and copies them: for a
    slot of a 64-image batch that is 38.5 MB touched twice in the main process,
    delaying the first batch.  The worker that writes a page first maps it.  When
    /dev/shm has no room: SharedMemoryError, and no file left behind (torch leaves the
    file it could not fill).  ``pages=False``: made without pages (torch reserved
    them: handed back), for a caller that reserves what it writes (NOTE [ A slot holds
    what its batch takes ])."""
    tensor = _shared_empty(shape, dtype, what)
    if not pages:
        hand_back(tensor.view(-1).view(torch.uint8).numpy(), 0)
    return tensor


def _shared_empty(shape: tuple[int, ...], dtype: torch.dtype, what: str) -> torch.Tensor:
    new_shared = getattr(torch.UntypedStorage, "_new_shared", None)
    if new_shared is None:
        return torch.empty(shape, dtype=dtype).share_memory_()
    nbytes = max(tensor_bytes(shape, dtype), 1)
    try:
        storage = new_shared(nbytes)
    except RuntimeError as e:
        if "shared memory" not in str(e):
            raise
        left = re.search(r"<(/?torch_[\w.-]+)>", str(e))
        if left is not None:
            try:
                os.unlink(os.path.join(SHM_DIR, left.group(1).lstrip("/")))
            except OSError:
                pass
        free = shared_memory_free()
        raise SharedMemoryError(
            f"could not allocate a {nbytes / MIB:.1f} MiB {what} in {SHM_DIR} "
            f"({'unknown' if free is None else f'{free / MIB:.0f} MiB'} free): {e}. "
            f"{SHM_ADVICE}") from None
    return torch.empty(0, dtype=dtype).set_(storage, 0, shape)


# NOTE [ A worker maps a slot in one call ]
# A forked worker inherits no page-table entries for the ring, so each first write
# to a 4 KiB page of a slot faults, in every new worker, every epoch with torch's
# default persistent_workers=False.  One MADV_POPULATE_WRITE over the slot before
# its first write maps the same pages for less CPU (docs/experiments.md).
_MADV_REMOVE = 9
_MADV_POPULATE_WRITE = 23  # Linux 5.14+; older kernels answer EINVAL and pages fault in
_EFAULT = 14
_PAGE = os.sysconf("SC_PAGE_SIZE")
_madvise = None
if sys.platform.startswith("linux"):
    try:
        _madvise = ctypes.CDLL(None, use_errno=True).madvise
        _madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    except (OSError, AttributeError):
        _madvise = None


def map_in(arrays: tuple[np.ndarray, ...]) -> None:
    """Maps each array's pages (a slot's fields, from a page's start) into this
    process in one call each, before the first write (see NOTE [ A worker maps a
    slot in one call ])."""
    if _madvise is None:
        return
    for a in arrays:
        start = a.ctypes.data // _PAGE * _PAGE  # a slot starts on a page: this is exact
        if a.nbytes:
            _madvise(start, a.ctypes.data + a.nbytes - start, _MADV_POPULATE_WRITE)


# NOTE [ A slot holds what its batch takes ]
# A detection batch fills a part of its slot that varies from batch to batch: images
# then masks in the ring (on average 52% of Mask R-CNN's), or a collate_fn's batch
# (DETR's padded NestedTensor).  Such a slot (BatchDecoder.fills_part) is made without
# pages; a worker reserves the pages of what it writes first (MADV_POPULATE_WRITE: a
# full /dev/shm is then SharedMemoryError naming the batch, never a SIGBUS) and, the
# batch written, hands back the pages past what it keeps (MADV_REMOVE): a quarter more
# than a ring batch used (all of them: the next batches fault theirs in, 8% slower);
# for a collate_fn's batch, whose sizes vary 2-3x, the largest of the worker's last 16
# batches (a quarter more than the last one: 9-13% slower).  Before Linux 5.14, slots
# keep every page.


@functools.cache
def can_reserve() -> bool:
    """Whether this kernel reserves shared pages on request (MADV_POPULATE_WRITE)."""
    if _madvise is None:
        return False
    probe = mmap.mmap(-1, _PAGE, flags=mmap.MAP_SHARED)
    try:
        view = (ctypes.c_char * _PAGE).from_buffer(probe)
        ok = _madvise(ctypes.addressof(view), _PAGE, _MADV_POPULATE_WRITE) == 0
        del view
        return ok
    finally:
        probe.close()


def _span(a: np.ndarray, start: int, end: int) -> tuple[int, int]:
    return a.ctypes.data + start, a.ctypes.data + end


def reserve(view: np.ndarray, what: str) -> None:
    """Reserves the shared-memory pages ``view`` (contiguous) spans before it is
    written (NOTE [ A slot holds what its batch takes ]); SharedMemoryError, saying
    ``what`` it was for, when /dev/shm has no room for them."""
    if not view.nbytes:
        return
    first, end = _span(view, 0, view.nbytes)
    first = first // _PAGE * _PAGE
    if _madvise(first, end - first, _MADV_POPULATE_WRITE) == 0:
        return
    if ctypes.get_errno() != _EFAULT:  # not the file system's refusal
        raise OSError(ctypes.get_errno(), f"reserving shared memory for {what}")
    free = shared_memory_free()
    raise SharedMemoryError(
        f"could not reserve {view.nbytes / MIB:.1f} MiB of {SHM_DIR} for {what}: "
        f"{'an unknown amount' if free is None else f'{free / MIB:.0f} MiB'} free, as "
        f"something else took it since the loader started. {SHM_ADVICE}")


#: the part beyond what a batch used that its slot keeps (NOTE [ A slot holds what its
#: batch takes ]): the next batch of about the same size faults no page in again
KEEP_BEYOND_USED = 0.25


def hand_back(region: np.ndarray, used: int, extra: float = KEEP_BEYOND_USED) -> None:
    """Hands back the whole pages of ``region`` (contiguous, shared) past its first
    ``used`` bytes and ``extra`` times as many more (NOTE [ A slot holds what its
    batch takes ])."""
    kept = min(region.nbytes, used + int(used * extra))
    first, end = _span(region, kept, region.nbytes)
    first = -(-first // _PAGE) * _PAGE
    end = end // _PAGE * _PAGE
    if end > first:
        _madvise(first, end - first, _MADV_REMOVE)
