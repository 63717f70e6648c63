"""Shared memory mapped into a process in one call, not a page fault at a time (the
ring's slots, a pipeline's Workspace)."""
from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

# NOTE [ A worker maps a slot in one call ]
# A forked worker inherits no page-table entries for the ring, so each first write
# to a 4 KiB page of a slot faults, in every new worker, every epoch with torch's
# default persistent_workers=False.  One MADV_POPULATE_WRITE over the slot before
# its first write maps the same pages for less CPU (docs/experiments.md).
_MADV_POPULATE_WRITE = 23  # Linux 5.14+; older kernels answer EINVAL and pages fault in
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
