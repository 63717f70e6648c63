"""The classification pipeline's vocabulary: what a lowered transform becomes.

Each op is a frozen value (so two lowerings compare equal when they would run
the same way).  ``slot`` is the first of the op's uniforms in the per-sample
counter stream (random_stream.py); ``filters`` names Pillow's resampling
filters, one (fixed) or several (one drawn per sample with equal chances, as
timm's ``interpolation="random"``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CenterCrop:
    size: tuple[int, int]  # (height, width)


@dataclass(frozen=True)
class RandomResizedCrop:
    size: tuple[int, int]  # (height, width)
    scale: tuple[float, float]
    ratio: tuple[float, float]
    filters: tuple[str, ...]
    slot: int  # 10 attempts x 4 uniforms, then one for the filter choice

    ATTEMPTS = 10
    uniforms = 4 * ATTEMPTS + 1


@dataclass(frozen=True)
class Resize:
    size: tuple[int, ...]  # (short side,) or (height, width), torchvision's forms
    max_size: int | None
    filters: tuple[str, ...]
    slot: int  # the filter choice

    uniforms = 1


@dataclass(frozen=True)
class ResizeKeepRatio:
    """timm's ResizeKeepRatio without its random scale and aspect: each side
    becomes round(side / ratio), ratio = the larger side ratio x longest + the
    smaller x (1 - longest)."""

    size: tuple[int, int]  # (height, width) target
    longest: float
    filters: tuple[str, ...]
    slot: int

    uniforms = 1


@dataclass(frozen=True)
class RandomCrop:
    """torchvision's RandomCrop: padding (left, top, right, bottom) and, with
    pad_if_needed, whatever a side lacks on both of its ends, in ``mode`` (a
    decoders.jpeg.PAD_MODES name; constant: ``fill``, RGB), then a uniformly placed
    crop of ``size``.  v1 pads the padded image again for pad_if_needed; v2 pads once
    (``pad_once``), by both amounts together."""

    size: tuple[int, int]  # (height, width)
    padding: tuple[int, int, int, int]
    pad_if_needed: bool
    fill: tuple[int, int, int]
    mode: str
    slot: int  # top, left
    pad_once: bool = False

    uniforms = 2

    @property
    def pads(self) -> bool:
        return any(self.padding) or self.pad_if_needed


@dataclass(frozen=True)
class Chance:
    """An op applied with probability p, which its one uniform decides."""

    p: float
    slot: int

    uniforms = 1


class HorizontalFlip(Chance):
    """RandomHorizontalFlip(p)."""


@dataclass(frozen=True)
class ColorJitter:
    """torchvision's ColorJitter (a random order of the four adjustments, each
    factor uniform in its range, None: absent), applied with probability p
    (RandomApply)."""

    brightness: tuple[float, float] | None
    contrast: tuple[float, float] | None
    saturation: tuple[float, float] | None
    hue: tuple[float, float] | None
    p: float
    slot: int  # apply?, 3 for the order, 4 factors

    uniforms = 8


class Grayscale(Chance):
    """RandomGrayscale(p) (p = 1: Grayscale(num_output_channels=3))."""


@dataclass(frozen=True)
class GaussianBlur:
    """torchvision's GaussianBlur (one sigma per image, uniform in its range),
    applied with probability p (RandomApply)."""

    kernel: tuple[int, int]  # (width, height), odd
    sigma: tuple[float, float]
    p: float
    slot: int  # apply?, sigma

    uniforms = 2


GeometricOp = (CenterCrop | RandomCrop | RandomResizedCrop | Resize | ResizeKeepRatio
               | HorizontalFlip)
ColourOp = ColorJitter | Grayscale | GaussianBlur
