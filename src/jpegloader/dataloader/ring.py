"""The shared-memory batch ring: where workers write batches for the main process.

Slots are torch tensors in shared memory (file-descriptor sharing, so the
names are unlinked at creation and a crash cannot leak a /dev/shm segment).
Only the main process allocates slots; workers receive each slot once, with
the task that first uses it.

NOTE [ Handing out slots without copying ]
A yielded batch is a view of its slot.  Before a slot is reused, the main
process checks the slot storage's use count: if the user still holds the
batch (or any view of it), the slot is retired (the user keeps that memory)
and a fresh one takes its place.  So a yielded tensor is never overwritten,
and in the usual loop, where the batch is dropped before the ring comes
round, nothing is copied.  Where torch cannot report use counts, batches are
copied out instead.

NOTE [ When /dev/shm is small ]
Slots live in /dev/shm, which containers often keep at 64 MB.  torch reserves
each slot's pages when it creates it (posix_fallocate), so a full /dev/shm is
an allocation error, never a bus error on first touch; a slot whose batches
vary reserves its pages as they are written instead (NOTE [ A slot holds what
its batch takes ] in _shared_pages.py), an error naming the batch.  Before the
first epoch the engine sizes the ring to the free space, every slot counted
whole (``fit_prefetch`` in shared_budget.py): fewer batches in flight, with a
warning, or a clear error when even one batch per worker and the one the user
holds do not fit.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch

from .._shared_pages import (  # noqa: F401 (map_in: the workers'; the rest: this API's)
    MIB, SHM_ADVICE, SHM_DIR, SharedMemoryError, _madvise, hand_back, map_in,
    shared_empty, shared_memory_free, tensor_bytes)
from ..pipelines.contract import Layout

_use_count = getattr(torch._C, "_storage_Use_Count", None)
ZERO_COPY_SUPPORTED = _use_count is not None


# NOTE [ Slots stay mapped ]
# A worker keeps every slot mapped once it has written it.  Dropping the mapping
# after each write (MADV_DONTNEED) lowered a worker's RSS but saved no memory: the
# pages stay in the shared-memory file whoever maps them.  It cost time
# (docs/experiments.md); memory is compared by what the loader's processes hold,
# private and shared (NOTE [ Counting memory ] in bench/memory.py).

def layout_bytes(layout: Layout, capacity: int) -> int:
    """The size of one slot of ``capacity`` samples."""
    return sum(tensor_bytes((capacity, *shape), dtype) for shape, dtype in layout)


def _storage_refs(t: torch.Tensor) -> int:
    return _use_count(t.untyped_storage()._cdata)


@dataclass
class Slot:
    id: int
    generation: int
    tensors: tuple[torch.Tensor, ...]  # one shared tensor per field, [capacity, ...]
    refs_when_free: tuple[int, ...] = ()

    @property
    def capacity(self) -> int:
        return self.tensors[0].shape[0]

    def in_use(self) -> bool:
        """Does anything beyond the ring hold a view of this slot?"""
        return any(_storage_refs(t) > r for t, r in zip(self.tensors, self.refs_when_free))


class BatchRing:
    def __init__(self, size: int, layout: Layout, capacity: int = 1, sparse: bool = False):
        self.layout = layout
        self.capacity = capacity  # samples per slot; grows to the largest batch seen
        #: slots are made without pages, which their batches reserve (NOTE [ A slot
        #: holds what its batch takes ] in _shared_pages.py)
        self.sparse = sparse
        self._generations = itertools.count()
        self._free: list[Slot] = []
        self._lent: list[Slot] = []   # views handed to the user
        self._spare_ids = list(range(size))
        self.size = size

    def _allocate(self, slot_id: int, capacity: int) -> Slot:
        self.capacity = capacity = max(capacity, self.capacity)
        tensors = tuple(shared_empty((capacity, *shape), dtype, pages=not self.sparse)
                        for shape, dtype in self.layout)
        return Slot(slot_id, next(self._generations), tensors)

    def acquire(self, capacity: int) -> Slot:
        """A slot with room for ``capacity`` samples that nothing else uses."""
        slot = self._free.pop() if self._free else None
        if slot is None:
            for k, lent in enumerate(self._lent):
                if not lent.in_use():
                    slot = self._lent.pop(k)
                    break
        if slot is None:
            if self._spare_ids:
                new_id = self._spare_ids.pop()
            elif self._lent:  # every slot is still held by the user: retire the oldest
                new_id = self._lent.pop(0).id
            else:  # every slot is in flight (cannot happen within the pool's bounds)
                new_id, self.size = self.size, self.size + 1
            return self._allocate(new_id, capacity)
        if slot.capacity < capacity:
            return self._allocate(slot.id, capacity)
        return slot

    def has_spare(self) -> bool:
        """Is a slot free for another batch, without allocating one?"""
        return bool(self._free) or any(not lent.in_use() for lent in self._lent)

    def preallocate(self) -> list[Slot]:
        """Allocates every slot not yet allocated; returns all slots the ring knows."""
        while self._spare_ids:
            self._free.append(self._allocate(self._spare_ids.pop(), self.capacity))
        return self._free + self._lent

    @staticmethod
    def slots_for(prefetch_factor: int, num_workers: int) -> int:
        # As many batches as torch keeps in flight (prefetch_factor per worker; see
        # NOTE [ A worker's quota includes the batch the user holds ]), and one for
        # the batch the user still holds while asking for the next.
        return prefetch_factor * num_workers + 1

    def discard(self, slot: Slot) -> None:
        """Forgets a slot whose contents are unknown; its id gets a fresh slot."""
        self._spare_ids.append(slot.id)

    def release(self, slot: Slot) -> None:
        """The slot's contents were copied out; it can be reused at once."""
        self._free.append(slot)

    def lend(self, slot: Slot, count: int) -> list[torch.Tensor]:
        """Views of the slot's first ``count`` samples, one per field, for the user
        (no copy).  See NOTE [ Handing out slots without copying ]."""
        slot.refs_when_free = tuple(_storage_refs(t) for t in slot.tensors)
        self._lent.append(slot)
        return [t[:count] for t in slot.tensors]
