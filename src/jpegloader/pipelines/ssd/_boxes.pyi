"""The C box arithmetic's contract (see csrc/module.c)."""
from collections.abc import Buffer

def encode(boxes: Buffer, labels: Buffer, dboxes: Buffer, criteria: float,
           out_boxes: Buffer, out_labels: Buffer, /) -> None:
    """The SSD reference's Encoder.encode for one image, bit-identical to
    transforms.boxes.encode: boxes float32[n, 4] (n >= 1) and labels int64[n]
    against dboxes float32[m, 4], all ltrb; writes out_boxes float32[m, 4]
    (centre x, centre y, w, h) and out_labels int64[m] (0: background).
    Runs without the GIL.  Raises ValueError for wrong buffers."""

def crop(boxes: Buffer, left: float, top: float, w: float, h: float, out: Buffer,
         kept: Buffer, /) -> int:
    """transforms.boxes.crop_boxes for one image, bit-identical: of boxes
    float32[n, 4] (ltrb), those whose centre lies strictly inside the window
    (left, top, left + w, top + h), clamped to it and renormalised by w and h,
    written in input order into out float32[n, 4], their indices into kept
    int64[n]; returns how many.  Raises ValueError for wrong buffers."""
