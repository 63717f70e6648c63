"""The transform vocabulary the C core executes, as plain frozen values."""
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
    slot: int  # first of the 40 uniforms this op draws (10 attempts x 4)

    ATTEMPTS = 10


@dataclass(frozen=True)
class Resize:
    size: tuple[int, ...]  # (short side,) or (height, width), torchvision's forms
    max_size: int | None


@dataclass(frozen=True)
class HorizontalFlip:
    p: float
    slot: int  # the uniform this op draws


GeometricOp = CenterCrop | RandomResizedCrop | Resize | HorizontalFlip
