"""The contracts of Pillow's operations in C (see csrc/module.c)."""
from collections.abc import Buffer

def affine(src: Buffer, sw: int, sh: int, dst: Buffer, dw: int, dh: int,
           coefficients: tuple[float, float, float, float, float, float], filter: int,
           fill: tuple[int, int, int], /) -> None:
    """Pillow's ``Image.transform((dw, dh), Transform.AFFINE, coefficients, filter,
    fillcolor=fill)`` of an RGB image, bit-identical: ``src`` uint8[sh, sw, 3] into
    ``dst``, a writable uint8[dh, dw, 3], whose pixels mapped outside ``src`` get
    ``fill``; ``filter`` 2 (bilinear) or 3 (bicubic).  Runs without the GIL.  Raises
    ValueError for wrong buffers, sizes or filter."""

def enhance(src: Buffer, w: int, h: int, dst: Buffer, kind: int, factor: float, /) -> None:
    """``ImageEnhance.Brightness`` (kind 0), ``Color`` (1), ``Contrast`` (2) or
    ``Sharpness`` (3) of an RGB image, ``.enhance(factor)``, bit-identical: ``src``
    uint8[h, w, 3] into ``dst``, a writable uint8[h, w, 3] apart from it.  Runs without
    the GIL.  Raises ValueError for wrong buffers, sizes, kind or a factor that is not
    finite."""

def histograms(src: Buffer, counts: Buffer, /) -> None:
    """``Image.histogram()`` of an RGB image: ``src`` uint8[..., 3] counted into
    ``counts``, a writable int64[3, 256] (written whole).  Runs without the GIL."""

def apply_luts(src: Buffer, dst: Buffer, luts: Buffer, /) -> None:
    """``Image.point(luts)`` of an RGB image: each channel of ``src`` uint8[..., 3]
    through its table of ``luts``, uint8[3, 256], into ``dst`` (as many bytes; may be
    ``src``).  Runs without the GIL."""

def allow_avx2(allow: bool, /) -> bool:
    """Whether the AVX2 loops (the warp's four pixels at a time, the enhancements'
    vector loops) may run where the processor has it (the default); returns the
    previous setting.  The tests turn it off to hold the other loops to Pillow too."""
