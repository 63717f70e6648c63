"""NOTE [ A worker maps a slot in one call ]: a forked process that maps a slot with
map_in writes it without a page fault per page, and what it writes is what the
main process reads."""
from __future__ import annotations

import multiprocessing as mp
import sys

import pytest
import torch

from jpegloader.dataloader import ring

SLOT_BYTES = 8 << 20


def _minor_faults() -> int:
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def _write_slot(arrays, populate: bool, queue) -> None:
    before = _minor_faults()
    if populate:
        ring.map_in(arrays)
    mapped = _minor_faults()
    for k, a in enumerate(arrays):
        a[...] = k + 1
    queue.put((mapped - before, _minor_faults() - mapped))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux page accounting")
@pytest.mark.parametrize("populate", [False, True])
def test_a_mapped_slot_is_written_without_a_fault_per_page(populate):
    layout = (((SLOT_BYTES // 4,), torch.float32), ((1024,), torch.uint8))
    slot = ring.BatchRing(1, layout).preallocate()[0]
    for t in slot.tensors:
        t.zero_()  # the main process has the pages; a forked child has no mapping of them
    arrays = tuple(t.numpy() for t in slot.tensors)
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_write_slot, args=(arrays, populate, queue))
    child.start()
    mapping, writing = queue.get(timeout=60)
    child.join(10)
    assert child.exitcode == 0
    pages = SLOT_BYTES // 4096
    if populate and ring._madvise is not None and mapping < 0.5 * pages:
        # MADV_POPULATE_WRITE is Linux 5.14+: older kernels fault each page in
        pytest.skip("this kernel has no MADV_POPULATE_WRITE")
    if populate:
        assert writing < 0.05 * pages  # Python's own allocations fault a few pages
    else:
        assert writing > 0.5 * pages
    assert all((a == k + 1).all() for k, a in enumerate(arrays))
