"""COCO + SSD-300 batches: the C core for pixels, torch for boxes.

Per batch: the files are read, each image's header size checked against the
JSON's (a mismatch, or a file the C core cannot decode, takes the Python
path), crop/flip/jitter drawn (training), the C core decodes only each crop
window, resizes, jitters, flips and normalizes into the slot, and the boxes
are cropped, flipped and encoded against the default boxes with the
reference's own operations (boxes.py).  Validation batches carry
the boxes zero-padded to ``max_num``.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from PIL import Image

from ...decoders import decode_batch
from ...decoders import status as st
from ..contract import (
    BatchDecoder,
    BatchReport,
    DecodeOptions,
    Stopwatch,
    compact,
)
from ..file_table import forget_changed, image_sizes
from ..read_files import read_files
from ..tensor_stage import division_form
from . import boxes as B
from .draw import boxes_for, draw_ssd, plans_for, replay_image
from .lower import LoweredSSD
from .table import AnnotationTable


def _load_rgb(path: str) -> Image.Image:
    # What the reference COCODetection.__getitem__ does.
    with Image.open(path) as img:
        return img.convert("RGB")


class CocoBatchDecoder(BatchDecoder):
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

    def assemble(self, tensors: list[torch.Tensor]) -> list:
        img, ids, h, w, bbox, label = tensors
        return [img, ids, [h, w], bbox, label]  # default_collate's structure

    def decode(self, indices: Sequence[int], seed: int, arrays: tuple[np.ndarray, ...],
               where: str, batch_no: int = 0, threads: int = 1) -> BatchReport:
        images, ids, heights, widths, bboxes, labels = arrays
        n = len(indices)
        table, lowered = self.table, self.lowered
        report = BatchReport(n)
        watch = Stopwatch(report.seconds)
        paths = table.files.paths(indices)
        batch = read_files(paths)
        watch.lap("read")
        header_wh = image_sizes(table.files, indices, batch)
        json_hw = table.json_sizes(indices)
        # The crop box is computed from the JSON's size, as in the reference; a
        # file whose real size differs goes to PIL, which crops it the same way.
        fast = (header_wh[:, 0] == json_hw[:, 1]) & (header_wh[:, 1] == json_hw[:, 0])
        annotations = [table.annotations(int(i)) for i in indices]
        d = None
        if not lowered.val:
            d = draw_ssd(lowered, [a[0].numpy() for a in annotations],
                         [a[1] for a in annotations], seed, indices)
        plans, out_hw = plans_for(lowered, d, json_hw, self.options.allow_dct_scaling, ~fast)
        c_seconds = np.zeros(2)
        status, messages = decode_batch(batch, plans, images[:n], self.lut,
                                        self.options.max_pixels, c_seconds, threads=threads,
                                        norm=self.norm)
        forget_changed(table.files, indices, status)
        ids[:n] = table.files.targets_of(indices)
        heights[:n], widths[:n] = out_hw[:, 0], out_hw[:, 1]
        watch.lap_c_core(c_seconds, threads)
        keep = np.ones(n, dtype=bool)
        for k in range(n):
            try:
                self._write_boxes(d, k, *annotations[k], bboxes[k], labels[k])
            except ValueError:
                keep[k] = False
                self._python_path_failed(report, int(indices[k]), paths[k], "boxes", where)
        watch.lap("augment")  # box cropping, flipping and encoding
        for k in np.flatnonzero((status != st.OK) & keep):
            report.python_path += 1
            try:
                image = _load_rgb(paths[k])
                images[k] = replay_image(lowered, lowered.tensor_stage, d, k, image,
                                         json_hw[k]).numpy()
            except Exception:
                keep[k] = False
                self._python_path_failed(report, int(indices[k]), paths[k],
                                         messages[k] or st.DESCRIPTIONS[int(status[k])], where)
        watch.lap("python_path")
        if not keep.all():
            report.count = compact(arrays, keep)
        return report

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
