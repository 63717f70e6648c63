"""COCO + SSD-300 batches: the C core for pixels, torch for boxes.

Per batch (NOTE [ One batch skeleton ] in contract.py): crop/flip/jitter drawn
from the JSON's image sizes (training), the files read in groups, each image's
header size checked against the JSON's (a mismatch, or a file the C core cannot
decode, takes the Python path), the C core decodes only each crop window,
resizes, jitters, flips and normalizes into the slot, and the boxes are cropped,
flipped and encoded against the default boxes with the reference's own
operations (boxes.py).  Validation batches carry
the boxes zero-padded to ``max_num``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image

from ...decoders import decode_batch
from ..contract import BatchDecoder, BatchWork, DecodeOptions
from ...sources.file_table import FileTable
from ..tensor_stage import division_form
from . import boxes as B
from .draw import boxes_for, draw_ssd, plans_for, replay_image
from .lower import LoweredSSD
from .table import AnnotationTable


def _load_rgb(path: str) -> Image.Image:
    # What the reference COCODetection.__getitem__ does.
    with Image.open(path) as img:
        return img.convert("RGB")


@dataclass(slots=True)
class SsdWork(BatchWork):
    json_hw: object = None             # each photo's size in the annotation file
    annotations: list | None = None    # each photo's (boxes, labels)
    draws: object = None               # the SSD draws (None in validation)
    plans: object = None               # the C core's plans


class CocoBatchDecoder(BatchDecoder):
    work_type = SsdWork

    def __init__(self, table: AnnotationTable, lowered: LoweredSSD, options: DecodeOptions):
        super().__init__(options)
        self.table = table
        self.lowered = lowered
        self.lut = lowered.lut_array
        self.norm = division_form(lowered.tensor_stage, self.lut)  # NOTE [ Levels by division ]
        self.dboxes_ltrb = lowered.dboxes_ltrb
        self.n_boxes = lowered.max_num if lowered.val else self.dboxes_ltrb.shape[0]

    def shared_tensors(self) -> list[torch.Tensor]:
        return self.table.tensors()

    @property
    def layout(self):
        return (((3, *self.lowered.size), torch.float32),  # image
                ((), torch.int64),                         # image id
                ((), torch.int64), ((), torch.int64),      # height, width
                ((self.n_boxes, 4), torch.float32),        # boxes
                ((self.n_boxes,), torch.int64))            # labels

    def assemble(self, tensors: list[torch.Tensor], extras=None) -> list:
        img, ids, h, w, bbox, label = tensors
        return [img, ids, [h, w], bbox, label]  # default_collate's structure

    # -- NOTE [ One batch skeleton ] (contract.py): the hooks --------------------------
    @property
    def files(self) -> FileTable:
        return self.table.files

    def begin(self, work: BatchWork) -> None:
        table, lowered, indices = self.table, self.lowered, work.indices
        work.rows = indices
        work.paths = table.files.paths(indices)
        # The crop box is computed from the JSON's size, as in the reference, so the
        # draws need no file; a file whose real size differs goes to PIL, which crops
        # it the same way.
        work.json_hw = table.json_sizes(indices)
        work.annotations = [table.annotations(int(i)) for i in indices]
        work.draws = None if lowered.val else draw_ssd(
            lowered, [a[0].numpy() for a in work.annotations],
            [a[1] for a in work.annotations], work.seed, indices)
        work.plans, out_hw = plans_for(lowered, work.draws, work.json_hw,
                                       self.options.dct_scaling,
                                       np.zeros(len(indices), dtype=bool))
        images, ids, heights, widths, _, _ = work.arrays
        n = len(indices)
        ids[:n] = table.files.targets_of(indices)
        heights[:n], widths[:n] = out_hw[:, 0], out_hw[:, 1]

    def draw_and_decode(self, work, part, encoded, widths, heights, known, c_seconds):
        json_hw = work.json_hw[part]
        same = known & (widths == json_hw[:, 1]) & (heights == json_hw[:, 0])
        plans = work.plans[part].copy()
        plans["skip"] |= ~same
        return decode_batch(encoded, plans, work.arrays[0][part], self.lut,
                            self.options.max_pixels, c_seconds, threads=work.threads,
                            norm=self.norm)

    def targets(self, work: BatchWork) -> None:
        """The boxes cropped, flipped and encoded with the reference's operations."""
        bboxes, labels = work.arrays[4], work.arrays[5]
        for k in range(len(work.indices)):
            try:
                self._write_boxes(work.draws, k, *work.annotations[k], bboxes[k], labels[k])
            except ValueError:
                work.keep[k] = False
                self._python_path_failed(work.report, int(work.indices[k]), work.paths[k],
                                         "boxes", work.where)

    def redo(self, work: BatchWork, k: int) -> None:
        lowered = self.lowered
        image = _load_rgb(work.paths[k])
        work.arrays[0][k] = replay_image(lowered, lowered.tensor_stage, work.draws, k, image,
                                         work.json_hw[k]).numpy()

    def _write_boxes(self, d, k: int, boxes: torch.Tensor, labels: torch.Tensor,
                     out_boxes: np.ndarray, out_labels: np.ndarray) -> None:
        if d is None:  # validation: ltrb boxes zero-padded to max_num
            if len(boxes) > self.n_boxes:
                raise ValueError(f"{len(boxes)} boxes do not fit the {self.n_boxes} "
                                 "validation slots (SSDTransformer's max_num)")
            out_boxes[:] = 0
            out_labels[:] = 0
            out_boxes[:len(boxes)] = boxes.numpy()
            out_labels[:len(labels)] = labels.numpy()
            return
        boxes, labels = boxes_for(d, k, boxes, labels)
        B.encode_into(boxes, labels, self.dboxes_ltrb, self.lowered.criteria,
                      out_boxes, out_labels)
