"""The C affine transform's contract (see csrc/module.c)."""
from collections.abc import Buffer

def affine(src: Buffer, sw: int, sh: int, dst: Buffer, dw: int, dh: int,
           coefficients: tuple[float, float, float, float, float, float], filter: int,
           fill: tuple[int, int, int], /) -> None:
    """Pillow's ``Image.transform((dw, dh), Transform.AFFINE, coefficients, filter,
    fillcolor=fill)`` of an RGB image, bit-identical: ``src`` uint8[sh, sw, 3] into
    ``dst``, a writable uint8[dh, dw, 3], whose pixels mapped outside ``src`` get
    ``fill``; ``filter`` 2 (bilinear) or 3 (bicubic).  Runs without the GIL.  Raises
    ValueError for wrong buffers, sizes or filter."""

def allow_avx2(allow: bool, /) -> bool:
    """Whether the four-pixel AVX2 loop may run where the processor has it (the
    default); returns the previous setting.  The tests turn it off to hold the
    one-pixel loop to Pillow as well."""
