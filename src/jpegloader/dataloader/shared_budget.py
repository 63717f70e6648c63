"""Everything an accelerated loader puts in /dev/shm, checked against one budget.

NOTE [ One shared-memory budget ]
An accelerated loader with workers keeps two things in /dev/shm: the decoder's
tables (file paths, targets, image sizes, an index map, SSD boxes: tens of MB
for ImageNet's 1.28M samples; a Workspace, counted with each ring's size) and
the batch ring (NOTE [ When /dev/shm is small ] in ring.py).  Before anything is allocated, the tables plus the
smallest ring (one batch per worker and the one the user holds) are checked
against the free space, keeping a tenth for others.  When they do not fit but
torch's own loader would (its batches in flight: prefetch_factor per worker),
the loader falls back with that reason; when not even that fits, it raises
SharedMemoryError saying what needs what and how to give more.  The ring is then
fitted to what is left (``fit_prefetch``).  Both rules are ``SharedBudget``'s,
against one figure (``usable``); it also remembers a refusal until the pipeline
changes or more is free.  With num_workers=0 nothing is shared.
"""
from __future__ import annotations

import torch

from ..pipelines import BatchDecoder, Check
from ..pipelines.contract import HEADER_WIDTH
from . import ring
from .ring import MIB, SHM_ADVICE, SHM_DIR, BatchRing, SharedMemoryError, layout_bytes

RULE = "loader.shared_memory"


def _nbytes(t: torch.Tensor) -> int:
    return t.untyped_storage().nbytes()


def workspace_bytes(decoder: BatchDecoder, slots: int, batch_size: int) -> int:
    """The bytes of the decoder's Workspace beside a ring of ``slots`` slots."""
    size = decoder.workspace_size(slots, batch_size)
    return 0 if size is None else size[0] + 8 * HEADER_WIDTH * size[1]


class SharedBudget:
    """NOTE [ One shared-memory budget ]: the tables' admission and the ring's fit."""

    def __init__(self):
        #: (lowering key, free bytes then, the failed check) of the last refusal
        self._refused: tuple | None = None

    @staticmethod
    def usable(free: int) -> int:
        """What a loader may take of ``free`` bytes: nine tenths, a tenth left to others."""
        return free * 9 // 10

    def refusal(self, key) -> Check | None:
        """The refusal of this pipeline, while no more shared memory is free than then."""
        if self._refused is None or self._refused[0] != key or \
                (ring.shared_memory_free() or 0) > self._refused[1]:
            return None
        return self._refused[2]

    def admit(self, decoder: BatchDecoder, key, num_workers: int, batch_size: int,
              prefetch_factor: int) -> Check | None:
        """Moves the decoder's tables into shared memory when they and the smallest ring
        fit the free space (None); else the failed check to fall back with (kept:
        ``refusal``), or SharedMemoryError when torch's loader would not fit either."""
        refused = _share_tables(self, decoder, num_workers, batch_size, prefetch_factor)
        self._refused = None if refused is None else (key, ring.shared_memory_free() or 0,
                                                      refused)
        return refused

    def fit_prefetch(self, prefetch_factor: int, num_workers: int, slot_bytes: int,
                     free: int | None, workspace=lambda slots: 0) -> int:
        """The largest prefetch factor up to ``prefetch_factor`` whose ring (and the
        ``workspace(slots)`` bytes beside it) fits in ``free`` bytes of /dev/shm (NOTE
        [ When /dev/shm is small ] in ring.py)."""
        if free is None:
            return prefetch_factor
        budget = self.usable(free)

        def size(p: int) -> int:
            slots = BatchRing.slots_for(p, num_workers)
            return slots * slot_bytes + workspace(slots)
        for p in range(prefetch_factor, 0, -1):
            if size(p) <= budget:
                return p
        raise SharedMemoryError(
            f"{SHM_DIR} has {free / MIB:.0f} MiB free, too little for the batch ring: it "
            f"needs at least {size(1) / MIB:.0f} MiB ({BatchRing.slots_for(1, num_workers)} "
            f"slots of {slot_bytes / MIB:.1f} MiB for {num_workers} workers). {SHM_ADVICE}")


def _share_tables(budget: SharedBudget, decoder: BatchDecoder, num_workers: int,
                  batch_size: int, prefetch_factor: int) -> Check | None:
    if num_workers == 0:
        return None
    tensors = [t for t in decoder.shared_tensors() if not t.is_shared()]
    slots = BatchRing.slots_for(1, num_workers)
    tables = sum(_nbytes(t) for t in tensors) + workspace_bytes(decoder, slots, batch_size)
    slot = layout_bytes(decoder.layout, batch_size)
    smallest = slots * slot
    free = ring.shared_memory_free()
    if free is not None and tables + smallest > budget.usable(free):
        torch_needs = prefetch_factor * num_workers * slot
        parts = (f"{tables / MIB:.0f} MiB of tables for the workers (file list, targets, "
                 f"image sizes, decoded photos they share) and at least {smallest / MIB:.0f} MiB of batch slots "
                 f"({BatchRing.slots_for(1, num_workers)} of {slot / MIB:.1f} MiB)")
        if torch_needs > budget.usable(free):
            raise SharedMemoryError(
                f"{SHM_DIR} has {free / MIB:.0f} MiB free: too little for this loader, which "
                f"needs {parts}; torch's own loader would need {torch_needs / MIB:.0f} MiB "
                f"for its batches in flight. {SHM_ADVICE}")
        return Check(RULE, False,
                     f"{SHM_DIR} has {free / MIB:.0f} MiB free; the accelerated loader needs "
                     f"{(tables + smallest) / MIB:.0f} MiB ({parts}), torch's "
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
