"""Decoding a batch of a multi-view transform (NOTE [ Multi-view transforms ] in
views.py): default_collate's [[view 0 images[B, ...], view 1 images, ...],
labels int64[B]], each JPEG decoded once for all its views."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ...decoders import decode_views
from ...decoders.plans import view_plans
from ..contract import BatchDecoder, BatchReport, DecodeOptions, Stopwatch, compact
from ..file_table import FileTable
from .decode import ClassificationBatchDecoder, decode_in_groups, redo_in_python
from .draw import draw
from .hybrid import sample_layout
from .views import Views, view_seed


class ViewsBatchDecoder(BatchDecoder):
    def __init__(self, table: FileTable, index_map: torch.Tensor | None, views: Views,
                 replace_unreadable: bool, options: DecodeOptions):
        super().__init__(options)
        self.table = table
        self.views = views
        # one single-view decoder per view: its buffers, its user part, its Python path
        self.parts = [ClassificationBatchDecoder(table, index_map, p, replace_unreadable,
                                                 options) for p in views.programs]
        self.runs_user_code = any(d.runs_user_code for d in self.parts)
        self.splittable = not self.runs_user_code

    def shared_tensors(self) -> list[torch.Tensor]:
        return self.parts[0].shared_tensors()

    @property
    def layout(self):
        return (*(sample_layout(p.sample)[0] for p in self.views.programs), ((), torch.int64))

    def assemble(self, tensors: list[torch.Tensor]):
        return [list(tensors[:-1]), tensors[-1]]

    def decode(self, indices: Sequence[int], seed: int, arrays: tuple[np.ndarray, ...],
               where: str, batch_no: int = 0, threads: int = 1) -> BatchReport:
        parts = self.parts
        indices = np.asarray(indices, dtype=np.int64)
        n = len(indices)
        report = BatchReport(n)
        watch = Stopwatch(report.seconds)
        rows = parts[0].rows(indices)
        paths = self.table.paths(rows)
        labels = arrays[-1]
        # per view: (native: what the C core writes, final: the slot's array, labels)
        buffers = [d._buffers(n, (arrays[v], labels)) for v, d in enumerate(parts)]
        natives = [b[0] for b in buffers]
        keys = [view_seed(seed, v) for v in range(len(parts))]

        def run(part, batch, widths, heights, fast, c_seconds):
            draws = [draw(d.program, widths, heights, keys[v], indices[part])
                     for v, d in enumerate(parts)]
            plans = view_plans([(x.geometry, x.colour) for x in draws], widths, heights,
                               self.options.allow_dct_scaling, skip=~fast)
            return decode_views(batch, plans, [a[part] for a in natives], [d.lut for d in parts],
                                [d.norm for d in parts],
                                [d.program.handover == "pil" for d in parts],
                                self.options.max_pixels, c_seconds, threads)

        def redo(k: int) -> None:  # the image opened once for all its views
            row, image = parts[0].open_row(int(rows[k]))
            for v, d in enumerate(parts):
                natives[v][k] = d.native_from_image(image, int(indices[k]), keys[v])
            labels[k] = int(self.table.targets_of([row])[0])

        status, messages = decode_in_groups(self.table, rows, paths, watch, threads, run)
        labels[:n] = self.table.targets_of(rows)
        keep = redo_in_python(self, status, messages, indices, paths, report, where, redo)
        watch.lap("python_path")
        count = n if keep.all() else compact((*natives, labels), keep)
        indices = indices[keep]
        report.count = count
        in_main = where == "in the main process"
        for v, d in enumerate(parts):
            native, final, _ = buffers[v]
            if d.program.hybrid:
                d.yours.run(native[:count], indices, keys[v], final[:count], where, in_main)
            elif final is not native:
                final[:count] = native[:count]
        watch.lap("yours")
        return report
