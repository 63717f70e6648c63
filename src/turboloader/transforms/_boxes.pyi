"""The C box encoder's contract (see csrc/module.c)."""
from collections.abc import Buffer

def encode(boxes: Buffer, labels: Buffer, dboxes: Buffer, criteria: float,
           out_boxes: Buffer, out_labels: Buffer, /) -> None:
    """The SSD reference's Encoder.encode for one image, bit-identical to
    transforms.boxes.encode: boxes float32[n, 4] (n >= 1) and labels int64[n]
    against dboxes float32[m, 4], all ltrb; writes out_boxes float32[m, 4]
    (centre x, centre y, w, h) and out_labels int64[m] (0: background).
    Runs without the GIL.  Raises ValueError for wrong buffers."""
