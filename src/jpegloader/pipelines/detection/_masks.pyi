"""The C mask painting's contract (see csrc/module.c)."""
from collections.abc import Buffer

def paint(counts: tuple[bytes, ...], h: int, w: int, flip: bool, out: Buffer, /) -> None:
    """Paints each mask of ``counts`` (compressed RLE counts as pycocotools writes
    them: column-major runs, zeros first) into ``out``, a writable uint8 buffer
    of ``len(counts) * h * w`` bytes, one h x w row-major plane per mask (1
    inside, 0 outside), mirrored left to right when ``flip``.  Runs without the
    GIL.  Raises ValueError for a wrong buffer or counts that are malformed or
    do not cover exactly h * w pixels."""

def paint_mapped(counts: tuple[bytes, ...], h: int, w: int, rows: Buffer, cols: Buffer,
                 out: Buffer, /) -> None:
    """Paints each mask of ``counts`` (compressed RLE counts of h x w masks) sampled
    by index maps into ``out``, a writable uint8 buffer of ``len(counts) * nh * nw``
    bytes: ``out[m][i][j] = mask_m[rows[i]][cols[j]]``, with ``rows`` int64[nh] in
    [0, h) and ``cols`` int64[nw] in [0, w) (a nearest-neighbour resize and any
    flips, composed).  Runs without the GIL.  Raises ValueError for wrong buffers,
    indices out of range, or counts as paint does."""
