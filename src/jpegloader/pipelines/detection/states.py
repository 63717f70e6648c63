"""What a detection step reads: the Prefix (the steps lowered so far, at lowering
time) and a sample's SampleState (at run time), and the small geometry both use."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, ClassVar

import numpy as np
import torch
from PIL import Image
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode

from ..tensor_backend import antialiases
from ..stand_ins import canvas


class Split(Exception):
    """This transform (and every one after it) runs as the user's own object; the
    message says why."""


@dataclass
class Prefix:
    """What the native steps lowered so far do, as the next step's ``admit`` reads it."""

    #: a transform -> its step class (families.py), or Split with the reason there is none
    resolve: Callable = field(repr=False, default=None)
    steps: list = field(default_factory=list)
    stage: list = field(default_factory=list)  # the tensor stage's objects (the table)
    tensor: bool = False       # converted to a tensor
    float: bool = False        # ... of floats
    resized: bool = False
    cropped: bool = False
    padded: bool = False       # a zoom-out or a photometric distortion (padded plans)
    flipped: bool = False      # a flip: a padding after it would be mirrored
    then: bool = False         # DETR: a resize after the first resize or the crop
    image_type: str = "pil"
    slots: int = 0

    #: What a step may change (a group's alternatives: the union).
    FLAGS: ClassVar[tuple] = ("resized", "cropped", "padded", "flipped", "then")

    def slot(self) -> int:
        """A new uniform of the (seed, index) stream for each sample."""
        self.slots += 1
        return self.slots - 1

    def not_geometry(self, resize=None) -> bool:
        """Whether geometry here is not the C core's: on a float image (torch's float
        arithmetic), or a resize of a uint8 tensor that does not antialias.  On a uint8
        tensor torch moves pixels as Pillow does, its antialiased resize within a level
        of Pillow's (NOTE [ The tensor backend ] in classification/lower.py)."""
        return self.float or (self.tensor and resize is not None and not antialiases(resize))

    def add(self, t) -> None:
        """Lowers ``t`` after the steps so far, or raises Split with the reason."""
        cls = self.resolve(t)
        reason = cls.admit(t, self)
        if reason:
            raise Split(reason)
        self.steps.append(cls.lowered(t, self))

    def alternatives(self, alternatives: list[list], allowed=lambda new: None
                     ) -> list[tuple]:
        """The steps of each alternative (transforms that run instead of each other),
        lowered from the prefix before them; the prefix after is what any of them may
        have done.  A tensor conversion in one of them, or steps ``allowed`` gives a
        reason against, runs them all as yours (the prefix left as it was)."""
        before, lowered = len(self.steps), []
        for alternative in alternatives:
            b = Prefix(self.resolve, list(self.steps), list(self.stage),
                       **{k: getattr(self, k) for k in (
                           "tensor", "float", "image_type", "slots", *self.FLAGS)})
            for t in alternative:
                b.add(t)
            if len(b.stage) != len(self.stage) or b.image_type != self.image_type:
                raise Split("it converts the image inside")
            reason = allowed(b.steps[before:])
            if reason:
                raise Split(reason)
            lowered.append(b)
        for flag in self.FLAGS:
            setattr(self, flag, any(getattr(b, flag) for b in lowered) or getattr(self, flag))
        self.slots = max(b.slots for b in lowered)
        return [tuple(b.steps[before:]) for b in lowered]

    def has(self, cls: type) -> bool:
        return any(isinstance(s, cls) for s in flattened(self.steps))


@dataclass
class SampleState:
    """One sample on its way through the native steps: its size so far, the window of
    the photo it keeps (left, top, width, height), the zoom-out's canvas, the flip,
    the masks' maps, its target, and its image where the reference's own result is
    made (the Python path; None on the C core's)."""

    h: int
    w: int
    target: object
    image: object = None
    #: the masks' stand-in, left alone by the geometry (NOTE [ Masks painted into the
    #: slot ] in masks.py); None: the masks move with the target
    skip: str | None = None
    crop: tuple = ()
    pad: tuple | None = None
    scaled: tuple | None = None
    flip: bool = False
    maps: tuple | None = None
    distort: dict | None = None
    #: a resize of the C core's output: the window's (height, width) before it
    core: tuple | None = None
    #: resized or windowed so far (DETR's resize after either resizes the C core's
    #: output: NOTE [ DETR's geometry in one plan ] in detr.py)
    reshaped: bool = False

    def geometric(self, fn) -> None:
        """``fn`` on every tv_tensor of the target (boxes, masks) but the skipped one,
        as a v2 transform applies a geometric kernel beside an image; labels and plain
        values pass."""
        if isinstance(self.target, dict):
            self.target = {k: fn(v) if isinstance(v, tv_tensors.TVTensor) and k != self.skip
                           else v for k, v in self.target.items()}

    def window(self, params: dict | None) -> None:
        """A crop to ``params``' window (None: none), mirrored where it was flipped
        before (the C core flips last)."""
        if not params:
            return
        left = self.w - params["left"] - params["width"] if self.flip else params["left"]
        self.crop = (left, params["top"], params["width"], params["height"])
        self.h, self.w = params["height"], params["width"]

    def stand_in(self):
        """The image, or a stand-in of its size."""
        return self.image if self.image is not None else canvas(self.h, self.w)


def flattened(steps) -> list:
    """The steps, with each group's alternatives' steps after it."""
    return [t for s in steps for t in [s, *flattened(s.inner())]]


def image_size(image) -> tuple[int, int]:
    """(height, width) of a PIL image or a tensor."""
    return (image.height, image.width) if isinstance(image, Image.Image) else \
        tuple(image.shape[-2:])


def bilinear(t) -> bool:
    mode = getattr(t, "interpolation", InterpolationMode.BILINEAR)
    return mode in (InterpolationMode.BILINEAR, "bilinear", 2)


def callable_params(t) -> bool:
    return callable(getattr(t, "make_params", getattr(t, "_get_params", None)))


def window_map(index: np.ndarray, start: int, count: int, length: int) -> np.ndarray:
    """A map cropped to [start, start + count) and padded (-1) to ``length``."""
    return np.concatenate([index[start:start + count],
                           np.full(length - count, -1, index.dtype)])


@functools.lru_cache(maxsize=4096)
def nearest(n: int, m: int) -> np.ndarray:
    """Which of n pixels each of m takes in a nearest-neighbour resize, as torch's
    interpolate(mode="nearest") picks them (the masks' resize in v1 and v2)."""
    ramp = torch.arange(n, dtype=torch.float32).view(1, 1, n)
    return torch.nn.functional.interpolate(ramp, size=m, mode="nearest").view(-1).long().numpy()
