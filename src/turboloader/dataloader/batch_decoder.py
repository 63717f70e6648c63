"""Turns a batch of dataset indices into pixels and labels, in one process.

Used by each worker process and, with num_workers=0, by the main process.
The C core does the whole batch in one call; a sample it cannot do (PNG
named .JPEG, CMYK, 12-bit, corrupt data, a crop that needs padding) is
re-run through the dataset's own PIL loader with the same random parameters,
so its result equals the native loader's.  Only when that fails too does the
sample fail, with the file, the index and the process named.
"""
from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch._utils import ExceptionWrapper

from ..decoders import DEFAULT_MAX_PIXELS, EncodedBatch, decode_batch, probe
from ..decoders import status as st
from ..transforms import LoweredPipeline, draw, replay, to_plans
from .file_table import FileTable

_LG = logging.getLogger("turboloader")

ON_ERROR_CHOICES = ("raise", "skip")
DECODE_CHOICES = ("auto", "exact")


class SampleFailure(Exception):
    """Internal: carries a wrapped sample error to where it can be re-raised."""

    def __init__(self, wrapper: ExceptionWrapper):
        super().__init__(wrapper.exc_msg)
        self.wrapper = wrapper


@dataclass
class BatchReport:
    """What became of a batch: how many samples were written, which were dropped,
    and how many took the Python path."""

    count: int
    skipped: list[tuple[int, str, str]] = field(default_factory=list)  # (index, path, why)
    python_path: int = 0


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


class ImageFolderBatchDecoder:
    def __init__(self, table: FileTable, pipeline: LoweredPipeline,
                 image_loader: Callable, decode: str = "auto", on_error: str = "raise",
                 max_pixels: int = DEFAULT_MAX_PIXELS):
        self.table = table
        self.pipeline = pipeline
        self.image_loader = image_loader
        self.allow_dct_scaling = decode == "auto"
        self.on_error = on_error
        self.max_pixels = max_pixels

    @property
    def sample_shape(self) -> tuple[int, int, int]:
        return (3, *self.pipeline.output_size)

    def decode(self, indices: Sequence[int], seed: int, images: np.ndarray,
               labels: np.ndarray, where: str) -> BatchReport:
        """Fills images[:count] (float32[n, 3, H, W]) and labels[:count] for the
        samples at ``indices``.  ``where`` names this process in errors."""
        n = len(indices)
        paths = [self.table.path(i) for i in indices]
        contents = []
        for path in paths:
            try:
                contents.append(_read(path))
            except OSError:
                contents.append(b"")  # the PIL path re-raises the real error
        batch = EncodedBatch.from_files(contents)
        sizes = self._image_sizes(indices, batch)
        fast = sizes[:, 0] > 0
        widths, heights = np.maximum(sizes[:, 0], 1), np.maximum(sizes[:, 1], 1)
        geometry = draw(self.pipeline, widths, heights, seed, indices)
        plans = to_plans(geometry, widths, heights, self.allow_dct_scaling, skip=~fast)
        status, messages = decode_batch(batch, plans, images[:n], self.pipeline.lut,
                                        self.max_pixels)
        labels[:n] = self.table.targets_of(indices)
        report = BatchReport(n)
        keep = np.ones(n, dtype=bool)
        for k in np.flatnonzero(status != st.OK):
            report.python_path += 1
            try:
                images[k] = self._python_path(int(indices[k]), paths[k], seed).numpy()
            except Exception:
                why = messages[k] or st.DESCRIPTIONS[int(status[k])]
                if self.on_error == "skip":
                    exc = sys.exc_info()[1]
                    keep[k] = False
                    report.skipped.append((int(indices[k]), paths[k],
                                           f"{type(exc).__name__}: {exc}"))
                    _LG.warning("skipped sample %d (%s): %s: %s", indices[k], paths[k],
                                type(exc).__name__, exc)
                    continue
                raise SampleFailure(ExceptionWrapper(
                    sys.exc_info(),
                    where=f"loading sample {int(indices[k])} ({paths[k]}) {where} "
                          f"[fast path: {why}; to drop unreadable samples instead, pass "
                          "on_error='skip']")) from None
        if not keep.all():
            kept = np.flatnonzero(keep)
            images[:len(kept)] = images[kept]
            labels[:len(kept)] = labels[kept]
            report.count = len(kept)
        return report

    def _image_sizes(self, indices: Sequence[int], batch: EncodedBatch) -> np.ndarray:
        """(width, height) per sample, from the shared table or, the first time,
        from the headers.  A file rewritten with other dimensions later still
        decodes correctly: its plan no longer fits, and it takes the PIL path."""
        sizes = self.table.sizes_of(indices)
        if (sizes[:, 0] != 0).all():
            return sizes
        info, header_status, _ = probe(batch)
        sizes = np.where((header_status == st.OK)[:, None], info[:, :2],
                         self.table.UNDECODABLE).astype(np.int32)
        self.table.remember_sizes(indices, sizes)
        return sizes

    def _python_path(self, index: int, path: str, seed: int) -> torch.Tensor:
        image = self.image_loader(path)
        geometry = draw(self.pipeline, [image.width], [image.height], seed, [index])
        return replay(self.pipeline, geometry, 0, image)
