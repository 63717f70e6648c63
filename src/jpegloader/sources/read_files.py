"""Reading a batch's files: their bytes in one buffer, for the C core to decode in one
call, and the OS's reason for each file that could not be read."""
from __future__ import annotations

import contextlib
import errno
import itertools
import math
import os
import stat
from collections.abc import Sequence

import numpy as np

from ..decoders import EncodedBatch

#: Bytes of files a worker reads at once (NOTE [ Reading a batch in groups ]).
READ_BUDGET = 16 << 20


def read_files(paths: Sequence[str]) -> EncodedBatch:
    """The files' bytes, read straight into one buffer (one copy, no join); an
    unreadable file gets no bytes (its Python path re-raises the real error)."""
    with contextlib.closing(read_in_groups(paths, budget=math.inf)) as groups:
        return next(groups)[1]


def read_in_groups(paths: Sequence[str], budget: float | None = None,
                   spans: np.ndarray | None = None):
    """Yields (slice of ``paths``, EncodedBatch) for consecutive groups of files of
    at most ``budget`` bytes (default READ_BUDGET; a larger file alone), each read
    when the previous one has been used.  With ``spans`` (int64[n, 2]), sample k is
    the ``spans[k] = (offset, size)`` bytes of ``paths[k]`` (a tar shard's member).

    NOTE [ Reading a batch in groups ]
    A batch's files are read with one readv each into one buffer, which the C
    core decodes in one call.  For ImageNet-sized files a batch is a few MB and
    is one group.  For photos of 5-12 MB, batches of 14 made a 70 MB buffer per
    worker, where torch's worker holds one file: groups of up to 16 MB bound it
    without a syscall or call more per file.  The draws do not change: each
    sample's come from its own index's stream."""
    budget = READ_BUDGET if budget is None else budget
    n = len(paths)
    # Plain ints and lists: numpy scalars cost microseconds a file here.
    fds, sizes = [-1] * n, [0] * n
    unreadable: dict[int, str] = {}
    try:
        for k, path in enumerate(paths):
            try:
                fds[k] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                info = os.fstat(fds[k])
                if stat.S_ISDIR(info.st_mode):
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
                sizes[k] = info.st_size if spans is None else int(spans[k][1])
            except OSError as e:
                unreadable[k] = _cannot_open(e)
                if fds[k] >= 0:
                    os.close(fds[k])
                    fds[k] = -1
        if n == 0:
            yield slice(0, 0), EncodedBatch(np.empty(0, np.uint8), np.zeros(1, np.int64))
        buffer = None
        start = 0
        while start < n:
            stop, total = start + 1, sizes[start]
            while stop < n and total + sizes[stop] <= budget:
                total += sizes[stop]
                stop += 1
            if buffer is None or buffer.nbytes < total:
                buffer = np.empty(total, np.uint8)
            batch = _read_group(paths[start:stop], fds[start:stop], sizes[start:stop],
                                buffer[:total],
                                {k - start: why for k, why in unreadable.items()
                                 if start <= k < stop},
                                None if spans is None else spans[start:stop])
            yield slice(start, stop), batch
            start = stop
    finally:
        for fd in fds:
            if fd >= 0:
                os.close(fd)


def _cannot_open(e: OSError) -> str:
    return f"cannot open: {e.strerror or e}"


def _read_group(paths, fds: list[int], sizes: list[int], data: np.ndarray,
                unreadable: dict[int, str], spans: np.ndarray | None) -> EncodedBatch:
    offsets = [0, *itertools.accumulate(sizes)]
    view, beyond = memoryview(data), bytearray(1)
    for k, (fd, start, end) in enumerate(zip(fds, offsets, offsets[1:])):
        if fd < 0:
            continue
        try:
            if spans is None:
                got = os.readv(fd, [view[start:end], beyond])
            else:  # a member: exactly its span (the shard goes on after it)
                got = os.preadv(fd, [view[start:end]], int(spans[k][0]))
        except OSError:
            got = -1
        if got != end - start:  # rewritten since the fstat, or failing: as it is now
            return _read_files_whole(paths, spans)
    return EncodedBatch(data, np.array(offsets, np.int64), unreadable)


def read_span(path: str, span=None) -> bytes:
    """A file's bytes, or with ``span`` = (offset, size) those at the offset (fewer
    where the file ends first: the caller says what that means)."""
    with open(path, "rb") as f:
        if span is None:
            return f.read()
        f.seek(int(span[0]))
        return f.read(int(span[1]))


def _read_files_whole(paths: Sequence[str], spans: np.ndarray | None = None) -> EncodedBatch:
    contents, unreadable = [], {}
    for k, path in enumerate(paths):
        try:
            contents.append(read_span(path, None if spans is None else spans[k]))
        except OSError as e:
            unreadable[k] = _cannot_open(e)
            contents.append(b"")
    return EncodedBatch.from_files(contents, unreadable)
