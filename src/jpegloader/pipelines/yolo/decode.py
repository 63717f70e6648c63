"""Decoding a YOLO validation batch: each photo decoded by the C core straight into
its letterbox (padding_value around it), its labels replayed through the user's own
LetterBox and Format, and the batch made by the dataset's own collate_fn.

NOTE [ YOLO batches ]
Ultralytics reads a photo with OpenCV (islow IDCT, fancy upsampling, EXIF
orientation applied: PIL's decode but for CMYK), resizes its long side to imgsz
(INTER_LINEAR) and letterboxes it; the C core does the same into the slot.  A photo
that needs turning or a CMYK conversion, whose letterbox would resize it again, or
that the C core cannot read takes the dataset's own ``__getitem__``.  Where a
batch's letterboxes are known before decoding and equal (rect batches, a fixed
new_shape), its images lie one after another from the slot's start, viewed as
(B, 3, H, W) without a copy; otherwise each starts its own row, and they are
stacked as the collate_fn would.  The main process runs the dataset's collate_fn
on the labels with an empty stand-in image, then sets "img".
"""
from __future__ import annotations

import numpy as np

from ...decoders import Output, decode_each, skipped_plans
from ...decoders.plans import packed_fill
from ..contract import BatchWork, DecodeOptions
from ..opencv_reading import read_as_opencv
from .batches import YoloBatches, npy_instead
from .draw import letterbox_params, letterbox_plans, padded_hw, rect_hw, resized_hw
from .in_place import replaced_for_batch
from .labels import sample_labels
from .recognise import YoloSource


class YoloBatchDecoder(YoloBatches):
    def __init__(self, source: YoloSource, options: DecodeOptions):
        super().__init__(source, options)
        self.fill = packed_fill([int(source.letterbox.padding_value)] * 3)

    # -- NOTE [ One batch skeleton ] (contract.py): the hooks --------------------------
    def begin(self, work: BatchWork) -> None:
        super().begin(work)
        n = len(work.indices)
        dataset, lb = self.source.dataset, self.source.letterbox
        # NOTE [ YOLO batches ]: where each sample's letterbox is known before decoding
        shapes = None
        if dataset.rect:
            shapes = {rect_hw(dataset, int(i)) for i in work.indices}
        elif not lb.auto:  # every letterbox is the whole new_shape
            shapes = {self.source.largest}
        self.shape_batch(work, shapes)
        work.out_hw = [None] * n    # each sample's letterboxed (h, w)
        work.hw = [None] * n        # its (original, resized) shapes, where native
        work.labels = [None] * n

    def draw_and_decode(self, work, part, encoded, widths, heights, known, c_seconds):
        source, dataset = self.source, self.source.dataset
        rows = range(part.start, part.stop)
        plans, outputs = skipped_plans(len(rows)), [Output.skipped() for _ in rows]
        why = {}  # the samples the C core skips: why
        boxes = {}  # j -> (original, resized size, LetterBox parameters): its plan's
        for j, k in enumerate(rows):
            index = int(work.indices[k])
            ori = (int(heights[j]), int(widths[j]))
            resized = resized_hw(dataset, *ori)
            native = read_as_opencv(encoded, j, bool(known[j]))
            if native and npy_instead(dataset, index, ori):
                # NOTE [ A photo's .npy read as Ultralytics reads it ]
                why[j] = "a .npy beside it, read by the dataset's own load_image"
                continue
            params = letterbox_params(source, index, *resized) if native else None
            if native and tuple(params["new_unpad"]) != (resized[1], resized[0]):
                native = False  # LetterBox would resize too
            if not native:  # the Python path: NOTE [ YOLO batches ]
                why[j] = "needs OpenCV's turn or colour conversion"
                continue
            out_hw = padded_hw(params)
            if work.compact and out_hw != work.shape:
                raise RuntimeError(f"sample {index} ({work.paths[k]}) letterboxes to {out_hw}, "
                                   f"not its batch's {work.shape}")
            boxes[j] = (ori, resized, params)
            outputs[j] = Output(self.image_out(work, k, *out_hw))
            work.out_hw[k], work.hw[k] = out_hw, (ori, resized)
        if boxes:  # every plan at once
            plans[list(boxes)] = letterbox_plans(list(boxes.values()), self.fill)
        status, messages = decode_each(encoded, plans, outputs, self.options.max_pixels,
                                       c_seconds, work.threads)
        for j, text in why.items():
            messages[j] = text
        return status, messages

    def targets(self, work: BatchWork) -> None:
        with replaced_for_batch(self.source.planned):
            for k, hw in enumerate(work.hw):
                if hw is not None:
                    work.labels[k] = sample_labels(self.source, int(work.indices[k]), *hw)

    def redo(self, work: BatchWork, k: int) -> None:
        sample = self.source.dataset[int(work.indices[k])]
        image = sample.pop("img")
        h, w = image.shape[1:]
        if work.compact and (h, w) != work.shape:
            raise RuntimeError(f"the dataset gave a {h} x {w} image, not its batch's "
                               f"{work.shape}")
        if 3 * h * w > work.arrays[0][k].size:
            raise RuntimeError(f"the dataset gave a {h} x {w} image, larger than any "
                               f"letterbox of this dataset {self.source.largest}")
        self.image_out(work, k, h, w)[0] = image.numpy()
        work.out_hw[k], work.labels[k] = (h, w), sample
