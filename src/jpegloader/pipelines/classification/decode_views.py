"""Decoding a batch of a multi-view transform (NOTE [ Multi-view transforms ] in
views.py): default_collate's [[view 0 images[B, ...], view 1 images, ...],
labels int64[B]], each JPEG decoded once for all its views."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ...decoders import decode_views
from ...decoders.plans import view_plans
from ..contract import BatchDecoder, BatchWork, DecodeOptions
from ...sources.file_table import FileTable
from .decode import ClassificationBatchDecoder
from .draw import draw
from .hybrid import sample_layout
from .views import Views, view_seed


@dataclass(slots=True)
class ViewsWork(BatchWork):
    labels: np.ndarray | None = None
    buffers: list | None = None        # each view's (native, final, labels)
    natives: list | None = None        # each view's C output
    keys: list | None = None           # each view's random stream


class ViewsBatchDecoder(BatchDecoder):
    work_type = ViewsWork

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

    def assemble(self, tensors: list[torch.Tensor], extras=None):
        return [list(tensors[:-1]), tensors[-1]]

    # -- NOTE [ One batch skeleton ] (contract.py): the hooks --------------------------
    @property
    def files(self) -> FileTable:
        return self.table

    def begin(self, work: BatchWork) -> None:
        parts = self.parts
        work.rows = parts[0].rows(work.indices)
        work.paths = self.table.paths(work.rows)
        work.labels = work.arrays[-1]
        # per view: (native: what the C core writes, final: the slot's array, labels)
        work.buffers = [d.buffers(len(work.indices), (work.arrays[v], work.labels))
                        for v, d in enumerate(parts)]
        work.natives = [b[0] for b in work.buffers]
        work.keys = [view_seed(work.seed, v) for v in range(len(parts))]

    def draw_and_decode(self, work, part, encoded, widths, heights, known, c_seconds):
        parts = self.parts
        draws = [draw(d.program, widths, heights, work.keys[v], work.indices[part])
                 for v, d in enumerate(parts)]
        plans = view_plans([(x.geometry, x.colour) for x in draws], widths, heights,
                           self.options.dct_scaling, skip=~known)
        return decode_views(encoded, plans, [a[part] for a in work.natives],
                            [d.lut for d in parts], [d.norm for d in parts],
                            [d.program.handover == "pil" for d in parts],
                            self.options.max_pixels, c_seconds, work.threads)

    def targets(self, work: BatchWork) -> None:
        work.labels[:len(work.rows)] = self.table.targets_of(work.rows)

    def redo(self, work: BatchWork, k: int) -> None:  # the image opened once for all views
        row, image = self.parts[0].open_row(int(work.rows[k]))
        for v, d in enumerate(self.parts):
            work.natives[v][k] = d.native_from_image(image, int(work.indices[k]),
                                                     work.keys[v])
        work.labels[k] = int(self.table.targets_of([row])[0])

    def fields(self, work: BatchWork):
        return (*work.natives, work.labels)

    def finish(self, work: BatchWork, count: int) -> None:
        indices = work.indices[work.keep]
        for v, d in enumerate(self.parts):
            native, final, _ = work.buffers[v]
            if d.program.hybrid:
                d.yours.run(native[:count], indices, work.keys[v], final[:count], work.where,
                            work.in_main)
            elif final is not native:
                final[:count] = native[:count]
