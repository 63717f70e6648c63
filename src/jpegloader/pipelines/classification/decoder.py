"""Decoding a classification batch: [images float32|uint8[B, 3, H, W], labels int64[B]]."""
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import torch

from ...decoders import decode_batch
from ...decoders import status as st
from ...decoders.plans import to_plans
from ..contract import (
    BatchDecoder,
    BatchReport,
    DecodeOptions,
    Stopwatch,
    compact,
    image_sizes,
    read_files,
)
from ..file_table import FileTable
from .datasets import TIMM_RETRIES, open_rgb
from .draw import draw, replay
from .transforms import ClassificationProgram

_LG = logging.getLogger("jpegloader")


class ClassificationBatchDecoder(BatchDecoder):
    def __init__(self, table: FileTable, index_map: torch.Tensor | None,
                 program: ClassificationProgram, replace_unreadable: bool,
                 options: DecodeOptions):
        super().__init__(options)
        self.table = table            # paths and targets by base dataset index
        self.index_map = index_map    # int64[len]: loader index -> base index (Subsets)
        self.program = program
        self.replace_unreadable = replace_unreadable  # timm's ImageDataset
        self.lut = program.lut_array

    @property
    def layout(self):
        return (((3, *self.program.output_size), self.program.torch_dtype), ((), torch.int64))

    def assemble(self, tensors: list[torch.Tensor]) -> list:
        return tensors  # default_collate's [images, labels]

    def rows(self, indices: Sequence[int]) -> np.ndarray:
        """Rows of the file table for these loader indices."""
        indices = np.asarray(indices, dtype=np.int64)
        return indices if self.index_map is None else self.index_map.numpy()[indices]

    def decode(self, indices: Sequence[int], seed: int, arrays: tuple[np.ndarray, ...],
               where: str) -> BatchReport:
        """Fills images[:count] and labels[:count] for the samples at ``indices``.
        ``where`` names this process in errors."""
        images, labels = arrays
        n = len(indices)
        report = BatchReport(n)
        watch = Stopwatch(report.seconds)
        rows = self.rows(indices)
        paths = [self.table.path(r) for r in rows]
        batch = read_files(paths)
        watch.lap("read")
        sizes = image_sizes(self.table, rows, batch)
        fast = sizes[:, 0] > 0
        widths, heights = np.maximum(sizes[:, 0], 1), np.maximum(sizes[:, 1], 1)
        d = draw(self.program, widths, heights, seed, indices)
        plans = to_plans(d.geometry, widths, heights, self.options.allow_dct_scaling,
                         skip=~fast, colour=d.colour)
        c_seconds = np.zeros(2)
        status, messages = decode_batch(batch, plans, images[:n], self.lut,
                                        self.options.max_pixels, c_seconds)
        labels[:n] = self.table.targets_of(rows)
        watch.lap_c_core(c_seconds)
        keep = np.ones(n, dtype=bool)
        for k in np.flatnonzero(status != st.OK):
            report.python_path += 1
            try:
                images[k], labels[k] = self._python_path(int(indices[k]), int(rows[k]), seed)
            except Exception:
                keep[k] = False
                self._python_path_failed(report, int(indices[k]), paths[k],
                                         messages[k] or st.DESCRIPTIONS[int(status[k])], where)
        watch.lap("python_path")
        if not keep.all():
            report.count = compact((images, labels), keep)
        return report

    def _python_path(self, index: int, row: int, seed: int) -> tuple[np.ndarray, int]:
        """The sample as the dataset reads it, with this index's random parameters."""
        row, image = self._open(row)
        d = draw(self.program, [image.width], [image.height], seed, [index])
        return replay(self.program, d, 0, image).numpy(), int(self.table.targets_of([row])[0])

    def _open(self, row: int):
        if not self.replace_unreadable:
            return row, open_rgb(self.table.path(row))
        # timm's ImageDataset: a file that cannot be opened is replaced by the next
        # sample's, up to TIMM_RETRIES times; converting (decoding) errors propagate.
        from PIL import Image

        for _ in range(TIMM_RETRIES):
            path = self.table.path(row)
            try:
                image = Image.open(open(path, "rb"))  # noqa: SIM115 - as timm reads it
                break
            except OSError as e:
                _LG.warning("Skipped sample (index %d). %s", row, e)
                row = (row + 1) % len(self.table)
        else:
            raise RuntimeError(f"Failed to load {TIMM_RETRIES} consecutive samples")
        return row, image.convert("RGB")
