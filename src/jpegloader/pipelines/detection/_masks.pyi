"""The C mask painting's contract (see csrc/module.c)."""
from collections.abc import Buffer

def paint(counts: tuple[bytes, ...], h: int, w: int, flip: bool, out: Buffer, /) -> None:
    """Paints each mask of ``counts`` (compressed RLE counts as pycocotools writes
    them: column-major runs, zeros first) into ``out``, a writable uint8 buffer
    of ``len(counts) * h * w`` bytes, one h x w row-major plane per mask (1
    inside, 0 outside), mirrored left to right when ``flip``.  Runs without the
    GIL.  Raises ValueError for a wrong buffer or counts that are malformed or
    do not cover exactly h * w pixels."""
