"""Recognising an SSD-300 sample transform (``SSDTransformer``) for the C core.

The reference classes live in users' own code, so they are matched by class
name and structure, as HabanaDataLoader matched them: a transform with
``crop`` (SSDCropping), ``hflip`` (RandomHorizontalFlip), ``img_trans``
(Compose of Resize((h, w)), torchvision's ColorJitter, ToTensor),
``trans_val`` (Compose of Resize((h, w)), ToTensor, Normalize), ``normalize``
(Normalize), ``encoder`` (Encoder with its default boxes) and ``val``.  The
values that matter (size, jitter ranges, flip probability, Normalize's mean
and std, the default boxes, the IoU criterion, the validation box count) are
read from the objects, so any values work; any structural difference raises
``NotLowerable`` naming it.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torchvision import transforms as T

from .lowering import NotLowerable, _check_bilinear, _lookup_table

STANDARD_SAMPLE_OPTIONS = (None, (0.1, None), (0.3, None), (0.5, None), (0.7, None),
                           (0.9, None), (None, None))
MAX_SIZE = 4096  # output side limit of the fused pipeline (a slot holds B x 3 x h x w)


@dataclass(frozen=True)
class LoweredSSD:
    """An SSD sample transform the accelerated COCO pipeline reproduces."""

    val: bool
    size: tuple[int, int]                   # (height, width) of the output image
    lut: np.ndarray                         # float32[3, 256]: ToTensor + Normalize
    tensor_stage: tuple[Callable, ...]      # the user's ToTensor, Normalize objects
    # training only
    flip_p: float = 0.5
    crop_iterations: int = 1                # window attempts per chosen crop mode
    jitter: tuple[tuple[float, float] | None, ...] = (None, None, None, None)  # b, c, s, h
    dboxes_ltrb: torch.Tensor | None = None  # float32[M, 4]
    criteria: float = 0.5
    # validation only
    max_num: int = 200

    @property
    def names(self) -> list[str]:
        if self.val:
            return ["Resize", "ToTensor", "Normalize", f"pad boxes to {self.max_num}"]
        return ["SSDCropping", f"RandomHorizontalFlip(p={self.flip_p})", "Resize",
                "ColorJitter", "ToTensor", "Normalize",
                f"Encoder({self.dboxes_ltrb.shape[0]} default boxes)"]


def _named(obj, name: str, what: str):
    if type(obj).__name__ != name:
        raise NotLowerable(f"{what} is {type(obj).__qualname__}, not the reference {name}")
    return obj


def _members(compose, what: str) -> list:
    if type(compose) is not T.Compose:
        raise NotLowerable(f"{what} is {type(compose).__qualname__}, not a torchvision Compose")
    return list(compose.transforms)


def _expect_types(members: list, expected: tuple[type, ...], what: str) -> None:
    got = [type(t) for t in members]
    if got != list(expected):
        names = ", ".join(t.__qualname__ for t in got)
        want = ", ".join(t.__qualname__ for t in expected)
        raise NotLowerable(f"{what} is Compose([{names}]); the accelerated pipeline needs "
                           f"Compose([{want}]) (torchvision.transforms classes)")


def _resize_size(resize: T.Resize, size: tuple[int, int], what: str) -> None:
    _check_bilinear(resize)
    rsize = resize.size if isinstance(resize.size, int) else tuple(resize.size)
    if rsize != size:
        raise NotLowerable(f"{what} Resize size {resize.size!r} differs from the "
                           f"transform's size {size!r}")
    if resize.max_size is not None or resize.antialias is False:
        raise NotLowerable(f"{what} Resize(max_size={resize.max_size}, "
                           f"antialias={resize.antialias}) is not the reference's Resize")


def _size(transform) -> tuple[int, int]:
    size = getattr(transform, "size", None)
    try:
        h, w = (int(s) for s in size)
    except (TypeError, ValueError):
        raise NotLowerable(f"size {size!r} is not an (height, width) pair; a single int "
                           "keeps the aspect ratio, which the batch cannot hold") from None
    if not (0 < h <= MAX_SIZE and 0 < w <= MAX_SIZE) or (h, w) != tuple(size):
        raise NotLowerable(f"size {size!r} is outside what the C core supports "
                           f"(integers 1..{MAX_SIZE})")
    return (h, w)


def _default(fn: Callable, name: str, fallback):
    try:
        p = inspect.signature(fn).parameters.get(name)
    except (TypeError, ValueError):
        return fallback
    return fallback if p is None or p.default is inspect.Parameter.empty else p.default


def lower_ssd(transform) -> LoweredSSD:
    """Lowers an SSDTransformer-like object or raises NotLowerable."""
    if transform is None:
        raise NotLowerable("the dataset has no transform (the reference SSDTransformer "
                           "is expected)")
    _named(transform, "SSDTransformer", "the transform")
    missing = [a for a in ("crop", "hflip", "img_trans", "trans_val", "normalize", "encoder",
                           "val", "size") if not hasattr(transform, a)]
    if missing:
        raise NotLowerable(f"the SSDTransformer lacks {', '.join(missing)}, so it is not the "
                           "reference's")
    size = _size(transform)
    max_num = _default(type(transform).__call__, "max_num", 200)

    val_members = _members(transform.trans_val, "trans_val")
    _expect_types(val_members, (T.Resize, T.ToTensor, T.Normalize), "trans_val")
    _resize_size(val_members[0], size, "trans_val's")
    if bool(transform.val):
        stage = tuple(val_members[1:])
        return LoweredSSD(True, size, _lookup_table(stage), stage, max_num=int(max_num))

    crop = _named(transform.crop, "SSDCropping", "crop")
    options = tuple(getattr(crop, "sample_options", ()))
    if options != STANDARD_SAMPLE_OPTIONS:
        raise NotLowerable(f"crop.sample_options {options!r} differ from the reference's "
                           f"{STANDARD_SAMPLE_OPTIONS!r}")
    iterations = getattr(crop, "num_cropping_iterations", 1)
    if not isinstance(iterations, int) or not 1 <= iterations <= 1000:
        raise NotLowerable(f"crop.num_cropping_iterations={iterations!r} is not an int "
                           "in 1..1000")
    hflip = _named(transform.hflip, "RandomHorizontalFlip", "hflip")
    p = float(getattr(hflip, "p", 0.5))

    members = _members(transform.img_trans, "img_trans")
    _expect_types(members, (T.Resize, T.ColorJitter, T.ToTensor), "img_trans")
    _resize_size(members[0], size, "img_trans's")
    jitter = members[1]
    ranges = tuple(None if r is None else (float(r[0]), float(r[1]))
                   for r in (jitter.brightness, jitter.contrast, jitter.saturation, jitter.hue))
    if type(transform.normalize) is not T.Normalize:
        raise NotLowerable(f"normalize is {type(transform.normalize).__qualname__}, not "
                           "torchvision's Normalize")

    encoder = _named(transform.encoder, "Encoder", "encoder")
    dboxes = getattr(encoder, "dboxes", None)
    if not (isinstance(dboxes, torch.Tensor) and dboxes.dtype == torch.float32
            and dboxes.ndim == 2 and dboxes.shape[1] == 4 and dboxes.device.type == "cpu"):
        raise NotLowerable("encoder.dboxes is not a float32 [M, 4] CPU tensor of default "
                           "boxes in ltrb order")
    criteria = float(_default(getattr(encoder, "encode", None), "criteria", 0.5))
    stage = (members[2], transform.normalize)
    return LoweredSSD(False, size, _lookup_table(stage), stage, flip_p=p, crop_iterations=iterations, jitter=ranges,
                      dboxes_ltrb=dboxes.clone(), criteria=criteria, max_num=int(max_num))
