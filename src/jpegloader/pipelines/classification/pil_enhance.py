"""Pillow's ImageEnhance and ImageOps' tone curves on an RGB image's bytes, in C.

NOTE [ Pillow's enhancements in C ]
torchvision's policies' photometric operations are ImageEnhance's Brightness, Color,
Contrast and Sharpness and ImageOps' posterize, solarize, invert, autocontrast and
equalize: 0.09-0.51 ms each for a 224 x 224 crop in Pillow (Intel Xeon), mostly
Python and the intermediate images they make.  Here each takes and gives uint8[h, w,
3] bytes, one C pass (csrc/pil_enhance.c: Pillow's arithmetic to the bit) and, for
the tone curves, ImageOps' tables computed as it computes them, so a chain of them
makes no image between its steps (auto_augment.py).  Used only where, at first use,
they give the installed Pillow's bytes on a probe.
"""
from __future__ import annotations

import functools

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from . import _pillow

ENHANCEMENTS = ("Brightness", "Color", "Contrast", "Sharpness")  # _pillow's numbering
_LEVELS = np.arange(256)


def plain_rgb(img) -> bool:
    """A PIL image whose RGB bytes are all there is to it (no mode to convert, no info
    that Pillow's operations would keep or drop): one its bytes can stand for."""
    return isinstance(img, Image.Image) and img.mode == "RGB" and not img.info \
        and bool(img.width and img.height)


def as_image(x) -> Image.Image:
    """A PIL image of an RGB image's bytes; an image as it is."""
    return Image.fromarray(x) if isinstance(x, np.ndarray) else x


class BytesOrImage:
    """An RGB image held as its bytes or as a plain PIL image, whichever the last step
    made; the other made from it only when a step asks for it."""

    __slots__ = ("_pixels", "_image")

    def __init__(self, pixels: np.ndarray | None = None, image: Image.Image | None = None):
        self._pixels = None if pixels is None else np.ascontiguousarray(pixels)
        self._image = image

    def size(self) -> tuple[int, int]:
        """(height, width)"""
        return self._pixels.shape[:2] if self._image is None else \
            (self._image.height, self._image.width)

    def pixels(self) -> np.ndarray:
        if self._pixels is None:
            self._pixels = np.asarray(self._image)
        return self._pixels

    def image(self) -> Image.Image:
        if self._image is None:
            self._image = Image.fromarray(self._pixels)
        return self._image

    def made(self, out) -> None:
        """A step's result (bytes or an image) is now the image."""
        if isinstance(out, np.ndarray):
            self._pixels, self._image = out, None
        else:
            self._image, self._pixels = out, None

    def result(self):
        """The image where there is one, else the bytes."""
        return self._pixels if self._image is None else self._image


def enhanced(pixels: np.ndarray, name: str, factor: float) -> np.ndarray:
    """``ImageEnhance.<name>(image).enhance(factor)``'s bytes (factor finite, within a
    float's range)."""
    h, w = pixels.shape[:2]
    out = np.empty_like(pixels)
    _pillow.enhance(pixels, w, h, out, ENHANCEMENTS.index(name), factor)
    return out


def _through(pixels: np.ndarray, luts: np.ndarray) -> np.ndarray:
    """``Image.point``: each channel through its table, clamped to a byte as Pillow
    clamps ImageOps' tables (luts: int[3, 256], or int[256] for all three)."""
    luts = np.ascontiguousarray(np.broadcast_to(np.clip(luts, 0, 255), (3, 256)), np.uint8)
    out = np.empty_like(pixels)
    _pillow.apply_luts(pixels, out, luts)
    return out


def _histograms(pixels: np.ndarray) -> np.ndarray:
    counts = np.empty((3, 256), np.int64)
    _pillow.histograms(pixels, counts)
    return counts


def posterized(pixels: np.ndarray, bits: int) -> np.ndarray:
    """``ImageOps.posterize(image, bits)``'s bytes (1 <= bits <= 8): each level's top
    ``bits`` bits."""
    return _through(pixels, _LEVELS & (0xFF00 >> bits))


def solarized(pixels: np.ndarray, threshold: float) -> np.ndarray:
    """``ImageOps.solarize(image, threshold)``'s bytes: levels at or above the
    threshold inverted."""
    return _through(pixels, np.where(_LEVELS < threshold, _LEVELS, 255 - _LEVELS))


def added_below(pixels: np.ndarray, add: int, threshold: float) -> np.ndarray:
    """timm's ``solarize_add``'s ``Image.point`` table: levels below the threshold
    raised by ``add``, at most 255."""
    return _through(pixels, np.where(_LEVELS < threshold, np.minimum(_LEVELS + add, 255),
                                     _LEVELS))


def inverted(pixels: np.ndarray) -> np.ndarray:
    """``ImageOps.invert(image)``'s bytes."""
    return _through(pixels, 255 - _LEVELS)


def autocontrasted(pixels: np.ndarray) -> np.ndarray:
    """``ImageOps.autocontrast(image)``'s bytes: each channel's darkest level present
    to 0 and its lightest to 255, scaled in double and truncated (int()); a channel
    of one level unchanged."""
    present = _histograms(pixels) != 0
    lo = present.argmax(axis=1)[:, None]
    hi = 255 - present[:, ::-1].argmax(axis=1)[:, None]
    scale = 255.0 / np.maximum(hi - lo, 1)
    stretched = (_LEVELS * scale + (-lo * scale)).astype(np.int64)  # towards zero
    return _through(pixels, np.where(hi > lo, stretched, _LEVELS))


def equalized(pixels: np.ndarray) -> np.ndarray:
    """``ImageOps.equalize(image)``'s bytes: each channel's levels spread by the count
    below them, in steps of its count (less its lightest level's) over 255; a channel
    whose step is 0 unchanged."""
    counts = _histograms(pixels)
    lightest = np.take_along_axis(
        counts, (255 - (counts != 0)[:, ::-1].argmax(axis=1))[:, None], axis=1)
    step = (counts.sum(axis=1, keepdims=True) - lightest) // 255
    below = np.cumsum(counts, axis=1) - counts
    spread = (step // 2 + below) // np.maximum(step, 1)
    return _through(pixels, np.where(step > 0, spread, _LEVELS))


def _oracle_cases():
    """(ours, Pillow's) for every operation on the probe's images."""
    for name in ENHANCEMENTS:
        for factor in (0.0, 0.1, 0.55, 1.0, 1.9, -0.45, 3.0):
            yield (lambda p, n=name, f=factor: enhanced(p, n, f),
                   lambda im, n=name, f=factor: getattr(ImageEnhance, n)(im).enhance(f))
    for bits in (1, 4, 7, 8):
        yield (lambda p, b=bits: posterized(p, b), lambda im, b=bits: ImageOps.posterize(im, b))
    for threshold in (0.0, 77.5, 128.0, 255.0):
        yield (lambda p, t=threshold: solarized(p, t),
               lambda im, t=threshold: ImageOps.solarize(im, t))
    yield inverted, ImageOps.invert
    yield autocontrasted, ImageOps.autocontrast
    yield equalized, ImageOps.equalize


def probe_images() -> list[np.ndarray]:
    """Noise, a narrow range of levels, mostly white, one level, and sizes too small
    for a 3 x 3."""
    rng = np.random.default_rng(20261207)
    noise = rng.integers(0, 256, (29, 37, 3), dtype=np.uint8)
    narrow = rng.integers(90, 140, (13, 17, 3), dtype=np.uint8)
    white = np.where(rng.random((11, 9, 3)) < 0.8, 255, noise[:11, :9]).astype(np.uint8)
    return [np.ascontiguousarray(p) for p in (noise, narrow, white,
                                               np.full((5, 4, 3), 77, np.uint8),
                                               noise[:2, :9], noise[:9, :2])]


@functools.cache
def usable() -> bool:
    """Do these give the installed Pillow's bytes?"""
    try:
        return all(np.array_equal(ours(p), np.asarray(theirs(Image.fromarray(p))))
                   for p in probe_images() for ours, theirs in _oracle_cases())
    except Exception:  # an unexpected Pillow: its own stay
        return False
