"""Lowering the SSD-300 sample transform (``SSDTransformer``) into what the C core runs.

The reference classes live in users' own code, so they are matched by class
name and structure, as HabanaDataLoader matched them (recognise.py does the
dataset): a transform with
``crop`` (SSDCropping), ``hflip`` (RandomHorizontalFlip), ``img_trans``
(Compose of Resize((h, w)), torchvision's ColorJitter, ToTensor),
``trans_val`` (Compose of Resize((h, w)), ToTensor, Normalize), ``normalize``
(Normalize), ``encoder`` (Encoder with its default boxes) and ``val``.  The
values that matter (size, jitter ranges, flip probability, Normalize's mean
and std, the default boxes, the IoU criterion, the validation box count) are
read from the objects, so any values work; every structural difference is a
failed check naming it.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torchvision import transforms as T
from torchvision.transforms import InterpolationMode

from ..contract import Check
from ..tensor_stage import TensorStageError, lut_array, run_on_ramp

RULE = "dataset.transform"
STANDARD_SAMPLE_OPTIONS = (None, (0.1, None), (0.3, None), (0.5, None), (0.7, None),
                           (0.9, None), (None, None))
MAX_SIZE = 4096  # output side limit of the fused pipeline (a slot holds B x 3 x h x w)
_HINT = "keep the reference structure, or this loader runs on torch's DataLoader"


@dataclass(frozen=True)
class LoweredSSD:
    """An SSD sample transform the accelerated COCO pipeline reproduces."""

    val: bool
    size: tuple[int, int]                   # (height, width) of the output image
    lut: bytes = field(repr=False)          # float32[3, 256]: ToTensor + Normalize
    tensor_stage: tuple[Callable, ...] = field(compare=False, repr=False)
    # training only
    flip_p: float = 0.5
    crop_iterations: int = 1                # window attempts per chosen crop mode
    jitter: tuple[tuple[float, float] | None, ...] = (None, None, None, None)  # b, c, s, h
    dboxes: bytes | None = field(default=None, repr=False)  # float32[M, 4] ltrb
    criteria: float = 0.5
    # validation only
    max_num: int = 200

    @property
    def lut_array(self) -> np.ndarray:
        return lut_array(self.lut)

    @property
    def dboxes_ltrb(self) -> torch.Tensor | None:
        if self.dboxes is None:
            return None
        return torch.from_numpy(np.frombuffer(self.dboxes, np.float32).reshape(-1, 4).copy())

    @property
    def names(self) -> list[str]:
        if self.val:
            return ["Resize", "ToTensor", "Normalize", f"pad boxes to {self.max_num}"]
        return ["SSDCropping", f"RandomHorizontalFlip(p={self.flip_p})", "Resize",
                "ColorJitter", "ToTensor", "Normalize",
                f"Encoder({len(self.dboxes) // 16} default boxes)"]


class _Blocked(Exception):
    pass


def _named(obj, name: str, what: str):
    if type(obj).__name__ != name:
        raise _Blocked(f"{what} is {type(obj).__qualname__}, not the reference {name}")
    return obj


def _members(compose, what: str) -> list:
    if type(compose) is not T.Compose:
        raise _Blocked(f"{what} is {type(compose).__qualname__}, not a torchvision Compose")
    return list(compose.transforms)


def _expect_types(members: list, expected: tuple[type, ...], what: str) -> None:
    got = [type(t) for t in members]
    if got != list(expected):
        names = ", ".join(t.__qualname__ for t in got)
        want = ", ".join(t.__qualname__ for t in expected)
        raise _Blocked(f"{what} is Compose([{names}]); the accelerated pipeline needs "
                       f"Compose([{want}]) (torchvision.transforms classes)")


def _resize_size(resize: T.Resize, size: tuple[int, int], what: str) -> None:
    mode = resize.interpolation
    if mode not in (InterpolationMode.BILINEAR, "bilinear"):
        raise _Blocked(f"{what} Resize(interpolation={mode}) differs from the reference's "
                       "bilinear Resize")
    rsize = resize.size if isinstance(resize.size, int) else tuple(resize.size)
    if rsize != size:
        raise _Blocked(f"{what} Resize size {resize.size!r} differs from the "
                       f"transform's size {size!r}")
    if resize.max_size is not None or resize.antialias is False:
        raise _Blocked(f"{what} Resize(max_size={resize.max_size}, "
                       f"antialias={resize.antialias}) is not the reference's Resize")


def _size(transform) -> tuple[int, int]:
    size = getattr(transform, "size", None)
    try:
        h, w = (int(s) for s in size)
    except (TypeError, ValueError):
        raise _Blocked(f"size {size!r} is not an (height, width) pair; a single int "
                       "keeps the aspect ratio, which the batch cannot hold") from None
    if not (0 < h <= MAX_SIZE and 0 < w <= MAX_SIZE) or (h, w) != tuple(size):
        raise _Blocked(f"size {size!r} is outside what the C core supports "
                       f"(integers 1..{MAX_SIZE})")
    return (h, w)


def _default(fn: Callable, name: str, fallback):
    try:
        p = inspect.signature(fn).parameters.get(name)
    except (TypeError, ValueError):
        return fallback
    return fallback if p is None or p.default is inspect.Parameter.empty else p.default


def _table(stage) -> bytes:
    try:
        kind, lut = run_on_ramp(stage)
    except TensorStageError as e:
        raise _Blocked(str(e)) from None
    if kind != "float32":
        raise _Blocked("the tensor stage does not give float32 pixels")
    return lut


def lower_ssd(transform) -> tuple[LoweredSSD | None, list[Check]]:
    """Lowers an SSDTransformer-like object: (lowered or None, checks), one failed
    check per difference from the reference."""
    if transform is None:
        return None, [Check(RULE, False, "the dataset has no transform (the reference "
                                         "SSDTransformer is expected)", _HINT)]
    blockers: list[str] = []

    def part(fn):
        try:
            return fn()
        except _Blocked as e:
            blockers.append(str(e))
            return None

    if type(transform).__name__ != "SSDTransformer":
        blockers.append(f"the transform is {type(transform).__qualname__}, not the "
                        "reference SSDTransformer")
    missing = [a for a in ("crop", "hflip", "img_trans", "trans_val", "normalize", "encoder",
                           "val", "size") if not hasattr(transform, a)]
    if missing:
        blockers.append(f"the SSDTransformer lacks {', '.join(missing)}, so it is not the "
                        "reference's")
    if blockers:
        return None, [Check(RULE, False, b, _HINT) for b in blockers]
    size = part(lambda: _size(transform))
    max_num = int(_default(type(transform).__call__, "max_num", 200))

    def val_stage():
        members = _members(transform.trans_val, "trans_val")
        _expect_types(members, (T.Resize, T.ToTensor, T.Normalize), "trans_val")
        if size is not None:
            _resize_size(members[0], size, "trans_val's")
        return tuple(members[1:])
    val_members = part(val_stage)
    if bool(transform.val):
        if blockers:
            return None, [Check(RULE, False, b, _HINT) for b in blockers]
        lut = part(lambda: _table(val_members))
        if lut is None:
            return None, [Check(RULE, False, b, _HINT) for b in blockers]
        lowered = LoweredSSD(True, size, lut, val_members, max_num=max_num)
        return lowered, [Check(RULE, True, "SSD validation: " + " -> ".join(lowered.names))]

    def crop():
        c = _named(transform.crop, "SSDCropping", "crop")
        options = tuple(getattr(c, "sample_options", ()))
        if options != STANDARD_SAMPLE_OPTIONS:
            raise _Blocked(f"crop.sample_options {options!r} differ from the reference's "
                           f"{STANDARD_SAMPLE_OPTIONS!r}")
        iterations = getattr(c, "num_cropping_iterations", 1)
        if not isinstance(iterations, int) or not 1 <= iterations <= 1000:
            raise _Blocked(f"crop.num_cropping_iterations={iterations!r} is not an int "
                           "in 1..1000")
        return iterations
    iterations = part(crop)
    flip_p = part(lambda: float(getattr(_named(transform.hflip, "RandomHorizontalFlip",
                                                "hflip"), "p", 0.5)))

    def train_stage():
        members = _members(transform.img_trans, "img_trans")
        _expect_types(members, (T.Resize, T.ColorJitter, T.ToTensor), "img_trans")
        if size is not None:
            _resize_size(members[0], size, "img_trans's")
        if type(transform.normalize) is not T.Normalize:
            raise _Blocked(f"normalize is {type(transform.normalize).__qualname__}, not "
                           "torchvision's Normalize")
        jitter = members[1]
        ranges = tuple(None if r is None else (float(r[0]), float(r[1]))
                       for r in (jitter.brightness, jitter.contrast, jitter.saturation,
                                 jitter.hue))
        return ranges, (members[2], transform.normalize)
    stage = part(train_stage)

    def encoder():
        e = _named(transform.encoder, "Encoder", "encoder")
        dboxes = getattr(e, "dboxes", None)
        if not (isinstance(dboxes, torch.Tensor) and dboxes.dtype == torch.float32
                and dboxes.ndim == 2 and dboxes.shape[1] == 4 and dboxes.device.type == "cpu"):
            raise _Blocked("encoder.dboxes is not a float32 [M, 4] CPU tensor of default "
                           "boxes in ltrb order")
        criteria = float(_default(getattr(e, "encode", None), "criteria", 0.5))
        return np.ascontiguousarray(dboxes.numpy()).tobytes(), criteria
    enc = part(encoder)
    lut = part(lambda: _table(stage[1])) if stage is not None else None
    if blockers:
        return None, [Check(RULE, False, b, _HINT) for b in blockers]
    lowered = LoweredSSD(False, size, lut, stage[1], flip_p=flip_p, crop_iterations=iterations,
                         jitter=stage[0], dboxes=enc[0], criteria=enc[1], max_num=max_num)
    return lowered, [Check(RULE, True, "SSD training: " + " -> ".join(lowered.names))]
