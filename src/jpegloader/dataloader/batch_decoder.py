"""Turns a batch of dataset indices into a batch's tensors, in one process.

Used by each worker process and, with num_workers=0, by the main process.
A decoder declares its batch ``layout`` (per field: one sample's shape and
dtype), fills those arrays in ``decode`` and gives the batch its
default_collate structure in ``assemble``.  This module holds the ImageFolder
decoder; coco_decoder.py the COCO one.

The C core does the whole batch in one call; a sample it cannot do (PNG
named .JPEG, CMYK, 12-bit, corrupt data, a crop that needs padding) is
re-run through the dataset's own PIL loader with the same random parameters,
so its result equals the native loader's.  Only when that fails too does the
sample fail, with the file, the index and the process named.
"""
from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch._utils import ExceptionWrapper

from ..decoders import DEFAULT_MAX_PIXELS, EncodedBatch, decode_batch, probe
from ..decoders import status as st
from ..transforms import LoweredPipeline, draw, replay, to_plans
from .file_table import FileTable

_LG = logging.getLogger("jpegloader")

ON_ERROR_CHOICES = ("raise", "skip")
DECODE_CHOICES = ("auto", "exact")


class SampleFailure(Exception):
    """Internal: carries a wrapped sample error to where it can be re-raised."""

    def __init__(self, wrapper: ExceptionWrapper):
        super().__init__(wrapper.exc_msg)
        self.wrapper = wrapper


#: Where a worker's time goes, per batch (seconds, in BatchReport.seconds).
WORKER_STAGES = ("read", "decode", "augment", "python_path")


@dataclass
class BatchReport:
    """What became of a batch: how many samples were written, which were dropped,
    how many took the Python path, and the seconds spent in each of WORKER_STAGES."""

    count: int
    skipped: list[tuple[int, str, str]] = field(default_factory=list)  # (index, path, why)
    python_path: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


class Stopwatch:
    """Charges the time since the previous lap to a stage of ``seconds``."""

    def __init__(self, seconds: dict[str, float]):
        self.seconds = seconds
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self.last
        self.last = now

    def lap_c_core(self, c_seconds: np.ndarray) -> None:
        """Ends a C core call: its decode time to "decode", the rest to "augment"."""
        self.lap("augment")
        self.seconds["augment"] -= float(c_seconds[0])
        self.seconds["decode"] = self.seconds.get("decode", 0.0) + float(c_seconds[0])


def read_files(paths: Sequence[str]) -> EncodedBatch:
    """The files' bytes; an unreadable file gets no bytes (its Python path
    re-raises the real error)."""
    contents = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                contents.append(f.read())
        except OSError:
            contents.append(b"")
    return EncodedBatch.from_files(contents)


def compact(arrays: Sequence[np.ndarray], keep: np.ndarray) -> int:
    """Moves the kept samples of every field to the front; returns their count."""
    kept = np.flatnonzero(keep)
    for a in arrays:
        a[:len(kept)] = a[kept]
    return len(kept)


class BatchDecoder:
    """The interface the engine and the iterator use; see the module docstring."""

    layout: tuple[tuple[tuple[int, ...], torch.dtype], ...]
    def __init__(self, decode: str, on_error: str, max_pixels: int):
        self.allow_dct_scaling = decode == "auto"
        self.on_error = on_error
        self.max_pixels = max_pixels

    def decode(self, indices: Sequence[int], seed: int, arrays: tuple[np.ndarray, ...],
               where: str) -> BatchReport:
        raise NotImplementedError

    def assemble(self, tensors: list[torch.Tensor]) -> list:
        raise NotImplementedError

    def _python_path_failed(self, report: BatchReport, index: int, path: str, why: str,
                            where: str) -> None:
        """A sample failed in C and in Python: skip it (recorded in the report)
        or raise, naming the file, the index and the process."""
        exc = sys.exc_info()[1]
        if self.on_error == "skip":
            report.skipped.append((index, path, f"{type(exc).__name__}: {exc}"))
            _LG.warning("skipped sample %d (%s): %s: %s", index, path, type(exc).__name__, exc)
            return
        raise SampleFailure(ExceptionWrapper(
            sys.exc_info(),
            where=f"loading sample {index} ({path}) {where} [fast path: {why}; to drop "
                  "unreadable samples instead, pass on_error='skip']")) from None


class ImageFolderBatchDecoder(BatchDecoder):
    def __init__(self, table: FileTable, pipeline: LoweredPipeline,
                 image_loader: Callable, decode: str = "auto", on_error: str = "raise",
                 max_pixels: int = DEFAULT_MAX_PIXELS):
        super().__init__(decode, on_error, max_pixels)
        self.table = table
        self.pipeline = pipeline
        self.image_loader = image_loader

    @property
    def layout(self):
        return (((3, *self.pipeline.output_size), torch.float32), ((), torch.int64))

    def assemble(self, tensors: list[torch.Tensor]) -> list:
        return tensors  # [images float32[B, 3, H, W], labels int64[B]]

    def decode(self, indices: Sequence[int], seed: int, arrays: tuple[np.ndarray, ...],
               where: str) -> BatchReport:
        """Fills images[:count] (float32[n, 3, H, W]) and labels[:count] for the
        samples at ``indices``.  ``where`` names this process in errors."""
        images, labels = arrays
        n = len(indices)
        report = BatchReport(n)
        watch = Stopwatch(report.seconds)
        paths = [self.table.path(i) for i in indices]
        batch = read_files(paths)
        watch.lap("read")
        sizes = image_sizes(self.table, indices, batch)
        fast = sizes[:, 0] > 0
        widths, heights = np.maximum(sizes[:, 0], 1), np.maximum(sizes[:, 1], 1)
        geometry = draw(self.pipeline, widths, heights, seed, indices)
        plans = to_plans(geometry, widths, heights, self.allow_dct_scaling, skip=~fast)
        c_seconds = np.zeros(2)
        status, messages = decode_batch(batch, plans, images[:n], self.pipeline.lut,
                                        self.max_pixels, c_seconds)
        labels[:n] = self.table.targets_of(indices)
        watch.lap_c_core(c_seconds)
        keep = np.ones(n, dtype=bool)
        for k in np.flatnonzero(status != st.OK):
            report.python_path += 1
            try:
                images[k] = self._python_path(int(indices[k]), paths[k], seed).numpy()
            except Exception:
                keep[k] = False
                self._python_path_failed(report, int(indices[k]), paths[k],
                                         messages[k] or st.DESCRIPTIONS[int(status[k])], where)
        watch.lap("python_path")
        if not keep.all():
            report.count = compact((images, labels), keep)
        return report

    def _python_path(self, index: int, path: str, seed: int) -> torch.Tensor:
        image = self.image_loader(path)
        geometry = draw(self.pipeline, [image.width], [image.height], seed, [index])
        return replay(self.pipeline, geometry, 0, image)


def image_sizes(table: FileTable, indices: Sequence[int], batch: EncodedBatch) -> np.ndarray:
    """(width, height) per sample, from the shared table or, the first time,
    from the headers.  A file rewritten with other dimensions later still
    decodes correctly: its plan no longer fits, and it takes the PIL path."""
    sizes = table.sizes_of(indices)
    if (sizes[:, 0] != 0).all():
        return sizes
    info, header_status, _ = probe(batch)
    sizes = np.where((header_status == st.OK)[:, None], info[:, :2],
                     table.UNDECODABLE).astype(np.int32)
    table.remember_sizes(indices, sizes)
    return sizes
