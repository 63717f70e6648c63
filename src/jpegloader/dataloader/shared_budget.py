"""Everything an accelerated loader puts in /dev/shm, checked against one budget.

NOTE [ One shared-memory budget ]
An accelerated loader with workers keeps two things in /dev/shm: the decoder's
tables (file paths, targets, image sizes, an index map, SSD boxes: tens of MB
for ImageNet's 1.28M samples) and the batch ring (NOTE [ When /dev/shm is
small ] in ring.py).  Before anything is allocated, the tables plus the
smallest ring (one batch per worker and the one the user holds) are checked
against the free space, keeping a tenth for others.  When they do not fit but
torch's own loader would (its batches in flight: prefetch_factor per worker),
the loader falls back with that reason; when not even that fits, it raises
SharedMemoryError saying what needs what and how to give more.  The ring is then
fitted to what is left (``fit_prefetch``).  With num_workers=0 nothing is
shared: the tables stay in private memory.
"""
from __future__ import annotations

import torch

from ..pipelines import BatchDecoder, Check
from .ring import (
    MIB,
    SHM_ADVICE,
    SHM_DIR,
    BatchRing,
    SharedMemoryError,
    layout_bytes,
    shared_memory_free,
)

RULE = "loader.shared_memory"


def _nbytes(t: torch.Tensor) -> int:
    return t.untyped_storage().nbytes()


def share_tables(decoder: BatchDecoder, num_workers: int, batch_size: int,
                 prefetch_factor: int, free: int | None = None) -> Check | None:
    """Moves the decoder's tables into shared memory when they and the smallest ring
    fit the free space (None); else the failed check to fall back with, or
    SharedMemoryError when torch's loader would not fit either."""
    if num_workers == 0:
        return None
    tensors = [t for t in decoder.shared_tensors() if not t.is_shared()]
    tables = sum(_nbytes(t) for t in tensors)
    slot = layout_bytes(decoder.layout, batch_size)
    ring = BatchRing.slots_for(1, num_workers) * slot
    free = shared_memory_free() if free is None else free
    if free is not None and tables + ring > free * 9 // 10:
        torch_needs = prefetch_factor * num_workers * slot
        parts = (f"{tables / MIB:.0f} MiB of tables for the workers (file list, targets, "
                 f"image sizes) and at least {ring / MIB:.0f} MiB of batch slots "
                 f"({BatchRing.slots_for(1, num_workers)} of {slot / MIB:.1f} MiB)")
        if torch_needs > free * 9 // 10:
            raise SharedMemoryError(
                f"{SHM_DIR} has {free / MIB:.0f} MiB free: too little for this loader, which "
                f"needs {parts}; torch's own loader would need {torch_needs / MIB:.0f} MiB "
                f"for its batches in flight. {SHM_ADVICE}")
        return Check(RULE, False,
                     f"{SHM_DIR} has {free / MIB:.0f} MiB free; the accelerated loader needs "
                     f"{(tables + ring) / MIB:.0f} MiB ({parts}), torch's "
                     f"{torch_needs / MIB:.0f} MiB",
                     "give the machine more shared memory (Docker: --shm-size=2g; "
                     "Kubernetes: an emptyDir with medium Memory on /dev/shm) to accelerate")
    try:
        for t in tensors:
            t.share_memory_()
    except RuntimeError as e:  # taken meanwhile by another process
        if "shared memory" not in str(e):
            raise
        raise SharedMemoryError(f"could not move {tables / MIB:.0f} MiB of tables into "
                                f"{SHM_DIR}: {e}. {SHM_ADVICE}") from None
    return None
