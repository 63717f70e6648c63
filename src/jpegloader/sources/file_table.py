"""The dataset's file list and targets as compact tensors, shared with the workers.

ImageFolder keeps ``samples`` as a Python list of tuples; touching it from
forked workers bumps reference counts and copies pages into every worker
(pytorch/pytorch#13246).  Workers read this table instead: one byte blob of
file-system-encoded paths, their offsets, the targets and the sizes read so
far; for samples that are members of a file (a tar shard's), the file each
sample is in and the span of its bytes there.  The table is built in private
memory; the loader moves it into shared
memory (by file descriptor: never copied, never left behind in /dev/shm) once
it has checked the whole budget (NOTE [ One shared-memory budget ] in
dataloader/shared_budget.py).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch

from ..decoders import EncodedBatch, probe
from ..decoders import status as st
from .read_files import read_span


class Members(NamedTuple):
    """Samples that are spans of files (tar shards' members, Arrow files' image cells):
    sample i is the bytes ``spans[i] = (offset, size)`` of ``files[file_of[i]]``."""

    files: list[str]
    file_of: np.ndarray   # int32[n]
    spans: np.ndarray     # int64[n, 2]
    targets: np.ndarray   # int64[n]


class SpanChangedError(OSError):
    """A sample's bytes are not where its index says: the file was rewritten or
    truncated since it was indexed.  The message names the file and the sample."""


def check_span(data: bytes, size: int, where: str) -> bytes:
    """``data`` read for a span of ``size`` bytes, or SpanChangedError naming ``where``."""
    if len(data) != size:
        raise SpanChangedError(f"{where}: the file is shorter than its index says "
                               "(rewritten or truncated since it was indexed)")
    return data


class FileTable:
    UNDECODABLE = -1  # the size recorded for files the fast path cannot decode

    def __init__(self, blob: torch.Tensor, offsets: torch.Tensor, targets: torch.Tensor,
                 sizes: torch.Tensor, file_of: torch.Tensor | None = None,
                 spans: torch.Tensor | None = None):
        self.blob = blob          # uint8[total path bytes]
        self.offsets = offsets    # int64[files + 1]
        self.targets = targets    # int64[n]
        # int32[n, 2]: each image's (width, height) once a worker has read its
        # header, so later epochs need not read it again; (0, 0) not yet known,
        # (-1, -1) not decodable by the fast path.  Workers write it; it is shared.
        self.sizes = sizes
        # Members of files (tar shards): int32[n] the file of each sample, int64[n, 2]
        # (offset, size) of its bytes there.  None: each sample is a whole file.
        self.file_of = file_of
        self.spans = spans

    @staticmethod
    def _blob(paths: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        encoded = [os.fsencode(path) for path in paths]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in encoded], out=offsets[1:])
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8) if encoded else \
            np.zeros(0, dtype=np.uint8)
        return torch.from_numpy(blob.copy()), torch.from_numpy(offsets)

    @classmethod
    def from_samples(cls, samples: Sequence[tuple[str, int]]) -> FileTable:
        blob, offsets = cls._blob([path for path, _ in samples])
        targets = np.fromiter((t for _, t in samples), dtype=np.int64, count=len(samples))
        return cls(blob, offsets, torch.from_numpy(targets),
                   torch.zeros((len(samples), 2), dtype=torch.int32))

    @classmethod
    def from_members(cls, members: Members) -> FileTable:
        """Samples that are spans of files (``Members``)."""
        blob, offsets = cls._blob(members.files)
        return cls(blob, offsets,
                   torch.from_numpy(np.asarray(members.targets, np.int64).copy()),
                   torch.zeros((len(members.targets), 2), dtype=torch.int32),
                   torch.from_numpy(np.asarray(members.file_of, np.int32).copy()),
                   torch.from_numpy(np.asarray(members.spans, np.int64).reshape(-1, 2).copy()))

    def tensors(self) -> list[torch.Tensor]:
        """What goes into shared memory for the workers (BatchDecoder.shared_tensors)."""
        members = [] if self.file_of is None else [self.file_of, self.spans]
        return [self.blob, self.offsets, self.targets, self.sizes, *members]

    def spans_of(self, indices: Sequence[int]) -> np.ndarray | None:
        """(offset, size) of each row's bytes in its file; None for whole files."""
        if self.spans is None:
            return None
        return self.spans.numpy()[np.asarray(indices, dtype=np.int64)]

    def read(self, index: int) -> bytes:
        """One row's bytes (a member's span, or the whole file)."""
        path = self.path(index)
        span = None if self.spans is None else self.spans.numpy()[index]
        data = read_span(path, span)
        return data if span is None else check_span(data, int(span[1]),
                                                     f"{path}, sample {index}")

    def __len__(self) -> int:
        return len(self.targets)

    def path(self, index: int) -> str:
        return self.paths([index])[0]

    def paths(self, indices: Sequence[int]) -> list[str]:
        """The paths of these rows: offsets looked up for all at once, then one
        slice of the blob each (a sixth of the time of a ``path`` call per row)."""
        rows = np.asarray(indices, dtype=np.int64)
        if self.file_of is not None:
            rows = self.file_of.numpy()[rows].astype(np.int64)
        o = self.offsets.numpy()
        blob = memoryview(self.blob.numpy())
        return [os.fsdecode(bytes(blob[a:b]))
                for a, b in zip(o[rows].tolist(), o[rows + 1].tolist())]

    def sizes_of(self, indices: Sequence[int]) -> np.ndarray:
        return self.sizes.numpy()[np.asarray(indices, dtype=np.int64)]

    def remember_sizes(self, indices: Sequence[int], sizes: np.ndarray) -> None:
        self.sizes.numpy()[np.asarray(indices, dtype=np.int64)] = sizes

    def targets_of(self, indices: Sequence[int]) -> np.ndarray:
        return self.targets.numpy()[np.asarray(indices, dtype=np.int64)]


def image_sizes(table, rows: np.ndarray, batch: EncodedBatch) -> np.ndarray:
    """(width, height) per sample, from a FileTable's shared size column or, the
    first time, from the headers.  Plans are drawn for these sizes; a file
    rewritten since with an image of another size is caught by the C core
    (status CHANGED, NOTE [ A plan fits one image size ] in csrc/pipeline.c):
    ``forget_changed`` then makes the next epoch read its header again, and this
    epoch's sample takes the Python path, drawn for the real size."""
    sizes = table.sizes_of(rows)
    if (sizes[:, 0] != 0).all():
        return sizes
    info, header_status, _ = probe(batch)
    sizes = np.where((header_status == st.OK)[:, None], info[:, :2],
                     table.UNDECODABLE).astype(np.int32)
    table.remember_sizes(rows, sizes)
    return sizes


def forget_changed(table, rows: np.ndarray, status: np.ndarray) -> None:
    """Forgets the remembered size of the samples the C core found changed
    (status CHANGED), so that their header is read again next time."""
    changed = status == st.CHANGED
    if changed.any():
        table.remember_sizes(np.asarray(rows)[changed], np.zeros((int(changed.sum()), 2),
                                                               np.int32))
