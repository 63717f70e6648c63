"""Pillow's affine transform of RGB images, in C, while your PIL-stage objects run.

NOTE [ Your affine warps in C ]
The shears, translations and rotations of RandAugment (bilinear in Ultralytics'
classify augmentation), timm's RandAugment (bicubic in DeiT's recipe), RandomAffine
and RandomRotation end in Pillow's ``Image.transform(size, AFFINE, ...)``, whose
engine calls two functions a pixel: 0.73 ms bilinear, 1.87 bicubic for a 224 x 224
photo (Intel Xeon), most of what RandAugment costs.  While a worker runs your
PIL-stage objects (yours_in_c.py), ``Image.Image.transform`` warps RGB images
bilinearly or bicubically in C (csrc/pil_affine.c: Pillow's arithmetic, to the bit)
and hands every other call to Pillow's own (nearest is as fast there).  Your
objects, their draws and their pixels are unchanged.  It is used only where, at
first use, it gives the installed Pillow's bytes on a probe; else Pillow's runs.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from PIL import Image

from . import _pillow

PILLOWS = Image.Image.transform
_FILTERS = (Image.Resampling.BILINEAR, Image.Resampling.BICUBIC)


def _fill(fillcolor) -> tuple[int, int, int] | None:
    """The RGB fill of ``fillcolor`` as Pillow would paint it, where it is plain
    (None: black; three ints); None for anything Pillow should parse itself."""
    if fillcolor is None:
        return (0, 0, 0)
    if isinstance(fillcolor, (tuple, list)) and len(fillcolor) == 3 and all(
            type(c) is int and 0 <= c <= 255 for c in fillcolor):
        return tuple(fillcolor)
    return None


def transform(self: Image.Image, size, method, data=None, resample=Image.Resampling.NEAREST,
              fill=1, fillcolor=None) -> Image.Image:
    """``Image.transform``, the bilinear and bicubic affine warps of RGB images in C."""
    colour = _fill(fillcolor)
    if (self.mode != "RGB" or colour is None or resample not in _FILTERS
            or not isinstance(method, int) or method != Image.Transform.AFFINE
            or data is None or len(data) < 6 or len(size) != 2
            or not all(type(v) is int and v > 0 for v in size)):
        return PILLOWS(self, size, method, data, resample, fill, fillcolor)
    coefficients = tuple(float(v) for v in data[:6])
    if not all(map(math.isfinite, coefficients)):
        return PILLOWS(self, size, method, data, resample, fill, fillcolor)
    w, h = size
    out = np.empty((h, w, 3), np.uint8)
    _pillow.affine(np.asarray(self), self.width, self.height, out, w, h, coefficients,
                       int(resample), colour)
    image = Image.fromarray(out)
    image.info = self.info.copy()
    return image


def _probe_cases():
    """(image, size, coefficients, fillcolor): warps that cross the edges."""
    rng = np.random.default_rng(20261207)
    image = Image.fromarray(rng.integers(0, 256, (29, 37, 3), dtype=np.uint8))
    matrices = (
        (1.0, 0.31, -4.0, 0.0, 1.0, 0.0),             # a shear
        (0.96, -0.27, 6.5, 0.27, 0.96, -5.25),        # a rotation
        (1.0, 0.0, 7.0, 0.0, 1.0, -3.0),              # whole pixels: a copy
        (0.77, 0.0, -2.5, 0.0, 1.31, 1.5),            # a scaling
    )
    for a in matrices:
        for fillcolor in (None, (200, 17, 93)):
            yield image, (41, 31), a, fillcolor


@functools.cache
def usable() -> bool:
    """Does this copy give the installed Pillow's bytes?"""
    try:
        return all(
            np.array_equal(np.asarray(transform(im, size, Image.Transform.AFFINE, a, f,
                                                fillcolor=c)),
                           np.asarray(PILLOWS(im, size, Image.Transform.AFFINE, a, f,
                                              fillcolor=c)))
            for im, size, a, c in _probe_cases() for f in _FILTERS)
    except Exception:  # an unexpected Pillow: its own transform stays
        return False
