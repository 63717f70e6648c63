"""Recognising a user's transform pipeline and lowering it to native ops.

A registry keyed by transform class turns each recognised torchvision
transform (v1 or v2) into a frozen op from ``ops``; the tensor stage
(ToTensor / ToImage+ToDtype, Normalize) is kept as the user's own objects and
folded into a 256-entry lookup table per channel, computed by running those
very objects, so ToTensor + Normalize are reproduced bit for bit.

Anything outside the vocabulary raises ``NotLowerable`` with a message naming
the transform and what to use instead; the eligibility layer turns that into
a fallback reason.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image
from torchvision import transforms as T
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode
from torchvision.transforms import v2 as T2

from . import ops


class NotLowerable(Exception):
    """The pipeline cannot run natively; the message says why and ``hint``, when
    given, the change that would make it run."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class LoweredPipeline:
    """A transform pipeline the C core reproduces."""

    geometry: tuple[ops.GeometricOp, ...]  # PIL-stage ops, flips included, in order
    tensor_stage: tuple[Callable, ...]     # the user's ToTensor/Normalize objects
    output_size: tuple[int, int]           # (height, width), the same for every image
    uniforms_per_sample: int
    lut: np.ndarray                        # float32[3, 256]

    @property
    def names(self) -> list[str]:
        return [type(op).__name__ for op in self.geometry] + \
               [type(t).__name__ for t in self.tensor_stage]


def _pair(size, what: str) -> tuple[int, int]:
    if isinstance(size, int):
        return (size, size)
    size = tuple(int(s) for s in size)
    if len(size) == 1:
        return (size[0], size[0])
    if len(size) == 2:
        return size
    raise NotLowerable(f"{what} size {size!r} is not an int or (height, width)")


def _check_bilinear(t) -> None:
    mode = getattr(t, "interpolation", InterpolationMode.BILINEAR)
    # v1 keeps an InterpolationMode, v2 may keep its string value or a PIL constant
    if mode not in (InterpolationMode.BILINEAR, InterpolationMode.BILINEAR.value,
                    Image.BILINEAR):
        raise NotLowerable(
            f"{type(t).__name__}(interpolation={mode}) is not lowered: only bilinear "
            "(torchvision's default) is; drop the interpolation argument")


class _Builder:
    """Accumulates ops while walking the pipeline, checking the order rules."""

    def __init__(self):
        self.geometry: list[ops.GeometricOp] = []
        self.tensor_stage: list[Callable] = []
        self.slots = 0
        self.is_tensor = False     # past ToTensor
        self.is_float = False      # float pixels in [0, 1] (then Normalize is allowed)
        self.resized = False

    def take_slots(self, count: int) -> int:
        first = self.slots
        self.slots += count
        return first

    def geometric(self, t, op) -> None:
        if self.is_tensor:
            raise NotLowerable(f"{type(t).__name__} after the tensor conversion runs on "
                               "tensors, not PIL images; move it before ToTensor")
        self.geometry.append(op)

    def resizing(self, t, op) -> None:
        if self.resized:
            raise NotLowerable(f"{type(t).__name__} after another resizing transform: only "
                               "one resize per pipeline is fused; remove one of them")
        self.geometric(t, op)
        self.resized = True


def _center_crop(b: _Builder, t) -> None:
    b.geometric(t, ops.CenterCrop(_pair(t.size, "CenterCrop")))


def _random_resized_crop(b: _Builder, t) -> None:
    _check_bilinear(t)
    b.resizing(t, ops.RandomResizedCrop(
        _pair(t.size, "RandomResizedCrop"), tuple(float(s) for s in t.scale),
        tuple(float(r) for r in t.ratio), b.take_slots(4 * ops.RandomResizedCrop.ATTEMPTS)))


def _resize(b: _Builder, t) -> None:
    _check_bilinear(t)
    if t.size is None:
        raise NotLowerable("Resize(size=None) is not lowered; give an explicit size")
    size = (t.size,) if isinstance(t.size, int) else tuple(int(s) for s in t.size)
    if len(size) not in (1, 2):
        raise NotLowerable(f"Resize size {t.size!r} is not an int or (height, width)")
    b.resizing(t, ops.Resize(size, t.max_size))


def _flip(b: _Builder, t) -> None:
    # A flip commutes with the tensor conversion and Normalize, so it may sit
    # on either side of ToTensor.
    b.geometry.append(ops.HorizontalFlip(float(t.p), b.take_slots(1)))


def _to_tensor(b: _Builder, t) -> None:
    if b.is_tensor:
        raise NotLowerable(f"{type(t).__name__} applied twice")
    b.is_tensor = b.is_float = True
    b.tensor_stage.append(t)


def _to_image(b: _Builder, t) -> None:
    if b.is_tensor:
        raise NotLowerable(f"{type(t).__name__} applied twice")
    b.is_tensor = True
    b.tensor_stage.append(t)


def _to_dtype(b: _Builder, t) -> None:
    dtype = t.dtype
    if isinstance(dtype, dict):
        dtype = dtype.get(tv_tensors.Image, dtype.get("others"))
    if not b.is_tensor or b.is_float or dtype != torch.float32 or not t.scale:
        raise NotLowerable(f"{t!r} is lowered only as ToImage() followed by "
                           "ToDtype(torch.float32, scale=True)")
    b.is_float = True
    b.tensor_stage.append(t)


def _normalize(b: _Builder, t) -> None:
    if not b.is_float:
        raise NotLowerable("Normalize before the float tensor conversion; put ToTensor() "
                           "(or ToImage(), ToDtype(torch.float32, scale=True)) first")
    b.tensor_stage.append(t)


#: transform class -> lowering function.  Exact classes only: a subclass may
#: change behaviour, so it is reported rather than guessed at.
LOWERINGS: dict[type, Callable[[_Builder, object], None]] = {
    T.CenterCrop: _center_crop, T2.CenterCrop: _center_crop,
    T.RandomResizedCrop: _random_resized_crop, T2.RandomResizedCrop: _random_resized_crop,
    T.Resize: _resize, T2.Resize: _resize,
    T.RandomHorizontalFlip: _flip, T2.RandomHorizontalFlip: _flip,
    T.ToTensor: _to_tensor, T2.ToTensor: _to_tensor,
    T2.ToImage: _to_image, T2.ToDtype: _to_dtype,
    T.Normalize: _normalize, T2.Normalize: _normalize,
}
_COMPOSES = (T.Compose, T2.Compose)


def _flatten(transform) -> list:
    if type(transform) in _COMPOSES:
        return [leaf for t in transform.transforms for leaf in _flatten(t)]
    return [transform]


def _output_size(geometry: Sequence[ops.GeometricOp]) -> tuple[int, int]:
    """The fixed output size, or NotLowerable when it depends on each image."""
    for op in reversed(geometry):
        if isinstance(op, (ops.CenterCrop, ops.RandomResizedCrop)):
            return op.size
        if isinstance(op, ops.Resize):
            if len(op.size) == 2:
                return op.size
            break
    raise NotLowerable("the output size depends on each image (no final crop or "
                       "(height, width) Resize), so images cannot be batched; end the "
                       "geometric transforms with CenterCrop or RandomResizedCrop")


def _lookup_table(tensor_stage: Sequence[Callable]) -> np.ndarray:
    """Runs the user's own tensor-stage transforms on a 0..255 ramp."""
    ramp = np.repeat(np.arange(256, dtype=np.uint8)[None, :, None], 3, axis=2)
    out = Image.fromarray(ramp, "RGB")
    for t in tensor_stage:
        out = t(out)
    out = torch.as_tensor(out)
    if out.dtype != torch.float32 or tuple(out.shape) != (3, 1, 256):
        raise NotLowerable(f"the tensor stage gives {out.dtype} {tuple(out.shape)} for a "
                           "3x1x256 image instead of float32 pixels")
    return np.ascontiguousarray(out[:, 0, :].numpy())


def lower(transform) -> LoweredPipeline:
    """Lowers ``transform`` (a Compose or a single transform) or raises NotLowerable."""
    if transform is None:
        raise NotLowerable("the dataset has no transform, so it yields PIL images that "
                           "default_collate cannot batch; add ToTensor()")
    b = _Builder()
    for t in _flatten(transform):
        lowering = LOWERINGS.get(type(t))
        if lowering is None:
            base = next((k.__name__ for k in LOWERINGS if isinstance(t, k)), None)
            what = f"a subclass of {base}" if base else "not in the supported set"
            raise NotLowerable(
                f"transform {type(t).__name__} has no native lowering ({what}); supported: "
                "RandomResizedCrop, Resize, CenterCrop, RandomHorizontalFlip, ToTensor, "
                "Normalize and their transforms.v2 forms",
                hint=f"remove {type(t).__name__} from the dataset's transform and apply it to "
                     "each batch after loading (for example on the GPU), or keep the native "
                     "loader for this dataset")
        lowering(b, t)
    if not b.is_float:
        raise NotLowerable("the pipeline does not end in a float tensor; add ToTensor()")
    return LoweredPipeline(tuple(b.geometry), tuple(b.tensor_stage), _output_size(b.geometry),
                           b.slots, _lookup_table(b.tensor_stage))
