"""Lowering a classification transform into the ops the C core runs.

A registry keyed by transform class turns each recognised torchvision transform
(v1 or v2) into a frozen op (ops.py); transforms from other libraries that real
recipes use (timm's, torchvision's reference presets and weight transforms) are
recognised by class name and structure, as users' copies are.  The tensor stage
(ToTensor / PILToTensor + ConvertImageDtype / ToImage + ToDtype, Normalize) is
kept as the user's own objects and run on a 0..255 ramp: its result is a
256-entry table per channel (float output, reproduced bit for bit) or the
levels themselves (uint8 output).

Lowering never stops at the first problem: every transform that cannot run
natively, and every order the fused pipeline cannot reproduce, becomes one
failed check naming it, so a user sees all the blockers at once.  Hints never
ask to change the recipe: they say what runs instead.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from PIL import Image
from torchvision import transforms as T
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode
from torchvision.transforms import v2 as T2

from ...decoders.jpeg import BLUR_MAX_KERNEL, COLOUR_STEPS, PAD_MODES
from ..contract import Check, object_name
from ..tensor_backend import antialiases
from ..tensor_stage import TensorStageError, run_on_ramp
from . import ops
from .dry_run import DryRunFailed, dry_run
from .program import ClassificationProgram

RULE = "dataset.transform"
_NATIVE_HINT = ("no change to the recipe makes it native; this loader runs on torch's "
                "DataLoader, with the same results")


class _Blocked(Exception):
    """One transform (or order) the pipeline cannot run natively."""

    def __init__(self, message: str, hint: str = _NATIVE_HINT):
        super().__init__(message)
        self.hint = hint


# -- interpolation ------------------------------------------------------------------------
_PIL_FILTER_NAMES = {Image.Resampling.BILINEAR: "bilinear", Image.Resampling.BICUBIC: "bicubic",
                     Image.Resampling.BOX: "box", Image.Resampling.HAMMING: "hamming",
                     Image.Resampling.LANCZOS: "lanczos"}


def _filter_name(mode) -> str:
    if isinstance(mode, InterpolationMode):
        mode = mode.value
    if isinstance(mode, str):
        if mode in ("bilinear", "bicubic", "box", "hamming", "lanczos"):
            return mode
    elif isinstance(mode, int) and mode in _PIL_FILTER_NAMES:
        return _PIL_FILTER_NAMES[Image.Resampling(mode)]
    raise _Blocked(f"interpolation {mode!r} is not one of Pillow's convolution filters "
                   "(bilinear, bicubic, box, hamming, lanczos): nearest-neighbour "
                   "resampling is not lowered")


def _filters(t) -> tuple[str, ...]:
    """The filter names of a transform's ``interpolation``; several for timm's
    per-sample random choice."""
    mode = getattr(t, "interpolation", InterpolationMode.BILINEAR)
    if isinstance(mode, (tuple, list)):
        return tuple(_filter_name(m) for m in mode)
    return (_filter_name(mode),)


def _describe_filters(filters: tuple[str, ...]) -> str:
    return filters[0] if len(filters) == 1 else "random " + "/".join(filters)


def _pair(size, what: str) -> tuple[int, int]:
    if isinstance(size, int):
        return (size, size)
    size = tuple(int(s) for s in size)
    if len(size) == 1:
        return (size[0], size[0])
    if len(size) == 2:
        return size
    raise _Blocked(f"{what} size {size!r} is not an int or (height, width)")


# -- the walk ------------------------------------------------------------------------------
class _Builder:
    """Accumulates ops while walking the pipeline, checking the order rules."""

    def __init__(self):
        self.geometry: list[ops.GeometricOp] = []
        self.colour: list[ops.ColourOp] = []
        self.tensor_stage: list[Callable] = []
        self.names: list[str] = []
        self.slots = 0
        self.is_tensor = False     # past the tensor conversion
        self.is_float = False      # float pixels (then Normalize is allowed)
        self.resized = False
        self.padded = False        # a padded RandomCrop (the last crop) was seen

    def take_slots(self, count: int) -> int:
        first = self.slots
        self.slots += count
        return first

    def geometric(self, t, op) -> None:
        name = type(t).__name__
        if self.padded and not isinstance(op, ops.HorizontalFlip):
            raise _Blocked(f"{name} after a padded RandomCrop: the padding is lowered in the "
                           "last crop only")
        if self.is_tensor:
            raise _Blocked(f"{name} after the tensor conversion runs on tensors with "
                           "torch's arithmetic, not Pillow's: not lowered")
        if self.colour:
            raise _Blocked(f"{name} after {type(self.colour[-1]).__name__}: colour "
                           "adjustments are lowered only after the crops and resizes (their "
                           "image statistics would differ)")
        self.geometry.append(op)

    def resizing(self, t, op) -> None:
        if self.resized:
            raise _Blocked(f"{type(t).__name__} after another resizing transform: one "
                           "resize per pipeline is fused")
        self.geometric(t, op)
        self.resized = True

    def colour_op(self, t, op) -> None:
        if self.is_tensor:
            raise _Blocked(f"{type(t).__name__} after the tensor conversion runs torch's "
                           "tensor arithmetic, not Pillow's: not lowered")
        self.colour.append(op)

    def tensor(self, t) -> None:
        self.tensor_stage.append(t)


def _center_crop(b: _Builder, t) -> str:
    size = _pair(t.size, "CenterCrop")
    b.geometric(t, ops.CenterCrop(size))
    return f"CenterCrop({size[0]}x{size[1]})"


def _random_crop(b: _Builder, t) -> str:
    size = _pair(t.size, "RandomCrop")
    v2 = isinstance(t, T2.RandomCrop)
    padding = t.padding or 0
    padding = [padding] if isinstance(padding, int) else list(padding)
    if len(padding) not in (1, 2, 4) or any(not isinstance(v, int) or v < 0 for v in padding):
        raise _Blocked(f"RandomCrop(padding={t.padding!r}) is not 1, 2 or 4 non-negative ints")
    if v2 and len(padding) == 4:  # v2 keeps it parsed: left, right, top, bottom
        left, right, top, bottom = padding
    else:
        left, top, right, bottom = (padding * 4)[:4] if len(padding) == 1 else (
            (padding[0], padding[1], padding[0], padding[1]) if len(padding) == 2 else padding)
    fill = t.fill
    if isinstance(fill, int) and 0 <= fill <= 255:
        fill = (fill,) * 3
    if t.padding_mode not in PAD_MODES or t.padding_mode == "none" or not (
            isinstance(fill, (tuple, list)) and len(fill) == 3
            and all(isinstance(v, int) and 0 <= v <= 255 for v in fill)):
        raise _Blocked(f"RandomCrop(fill={t.fill!r}, padding_mode={t.padding_mode!r}): one "
                       "fill byte or three, in a torchvision padding mode, are lowered")
    op = ops.RandomCrop(size, (left, top, right, bottom), bool(t.pad_if_needed), tuple(fill),
                        t.padding_mode, b.take_slots(ops.RandomCrop.uniforms), pad_once=v2)
    if op.pads:
        if any(not isinstance(g, (ops.HorizontalFlip, ops.Resize, ops.ResizeKeepRatio,
                                  ops.RandomResizedCrop)) for g in b.geometry):
            raise _Blocked("a padded RandomCrop after another crop: padded crops are lowered "
                           "after at most one resize")
    b.geometric(t, op)
    b.padded = op.pads
    pad = f", padding={list(op.padding)}, {t.padding_mode}" if any(op.padding) else ""
    return f"RandomCrop({size[0]}x{size[1]}{pad}{', pad_if_needed' * op.pad_if_needed})"


def _random_resized_crop(b: _Builder, t) -> str:
    filters = _filters(t)
    size = _pair(t.size, "RandomResizedCrop")
    op = ops.RandomResizedCrop(size, tuple(float(s) for s in t.scale),
                               tuple(float(r) for r in t.ratio), filters,
                               b.take_slots(ops.RandomResizedCrop.uniforms))
    b.resizing(t, op)
    return f"RandomResizedCrop({size[0]}x{size[1]}, {_describe_filters(filters)})"


def _resize(b: _Builder, t) -> str:
    filters = _filters(t)
    if t.size is None:
        raise _Blocked("Resize(size=None) resizes to max_size alone: not lowered")
    size = (t.size,) if isinstance(t.size, int) else tuple(int(s) for s in t.size)
    if len(size) not in (1, 2):
        raise _Blocked(f"Resize size {t.size!r} is not an int or (height, width)")
    b.resizing(t, ops.Resize(size, t.max_size, filters, b.take_slots(ops.Resize.uniforms)))
    return f"Resize({'x'.join(map(str, size))}, {_describe_filters(filters)})"


def _flip(b: _Builder, t) -> str:
    # A flip commutes with the tensor stage, resizing (the filters are symmetric) and
    # the colour ops, so it may sit anywhere (see draw.py's NOTE [ Flips are applied last ]).
    b.geometry.append(ops.HorizontalFlip(float(t.p), b.take_slots(ops.HorizontalFlip.uniforms)))
    return f"RandomHorizontalFlip(p={float(t.p):g})"


def _jitter_op(b: _Builder, t, p: float) -> ops.ColorJitter:
    ranges = []
    for name in ("brightness", "contrast", "saturation", "hue"):
        r = getattr(t, name)
        ranges.append(None if r is None else (float(r[0]), float(r[1])))
    return ops.ColorJitter(*ranges, p=p, slot=b.take_slots(ops.ColorJitter.uniforms))


def _color_jitter(b: _Builder, t, p: float = 1.0) -> str:
    b.colour_op(t, _jitter_op(b, t, p))
    return "ColorJitter" if p == 1.0 else f"RandomApply(ColorJitter, p={p:g})"


def _gaussian_blur(b: _Builder, t, p: float = 1.0) -> str:
    kernel = tuple(int(k) for k in t.kernel_size)
    sigma = tuple(float(s) for s in t.sigma)
    if len(kernel) != 2 or any(k < 1 or k % 2 == 0 or k > BLUR_MAX_KERNEL for k in kernel):
        raise _Blocked(f"GaussianBlur(kernel_size={kernel}): odd sides up to "
                       f"{BLUR_MAX_KERNEL} are lowered")
    if len(sigma) != 2 or not 0 < sigma[0] <= sigma[1]:
        raise _Blocked(f"GaussianBlur(sigma={sigma}) is not a positive range")
    b.colour_op(t, ops.GaussianBlur(kernel, sigma, p, b.take_slots(ops.GaussianBlur.uniforms)))
    name = f"GaussianBlur({kernel[0]}x{kernel[1]}, sigma={sigma[0]:g}-{sigma[1]:g})"
    return name if p == 1.0 else f"RandomApply({name}, p={p:g})"


_APPLIED = {T.ColorJitter: _color_jitter, T2.ColorJitter: _color_jitter,
            T.GaussianBlur: _gaussian_blur, T2.GaussianBlur: _gaussian_blur}


def _random_apply(b: _Builder, t) -> str:
    inner = list(t.transforms)
    if len(inner) != 1 or type(inner[0]) not in _APPLIED:
        names = ", ".join(type(x).__name__ for x in inner)
        raise _Blocked(f"RandomApply([{names}]) is lowered only around one ColorJitter or "
                       "GaussianBlur")
    return _APPLIED[type(inner[0])](b, inner[0], float(t.p))


def _grayscale(b: _Builder, t) -> str:
    p = float(getattr(t, "p", 1.0))
    if int(getattr(t, "num_output_channels", 3)) != 3:
        raise _Blocked(f"{type(t).__name__}(num_output_channels=1) gives one channel: "
                       "not lowered (3 channels are)")
    b.colour_op(t, ops.Grayscale(p, b.take_slots(ops.Grayscale.uniforms)))
    return f"RandomGrayscale(p={p:g})" if isinstance(t, (T.RandomGrayscale, T2.RandomGrayscale)) \
        else "Grayscale"


def _to_float_tensor(b: _Builder, t) -> str:
    if b.is_tensor:
        raise _Blocked(f"{type(t).__name__} applied to a tensor")
    b.is_tensor = b.is_float = True
    b.tensor(t)
    return type(t).__name__


def _to_uint8_tensor(b: _Builder, t) -> str:
    if b.is_tensor:
        raise _Blocked(f"{type(t).__name__} applied to a tensor")
    b.is_tensor = True
    b.tensor(t)
    return type(t).__name__


def _to_dtype(b: _Builder, t) -> str:
    """ConvertImageDtype(float32) or v2 ToDtype(float32, scale=True) after a uint8
    tensor conversion (= ToTensor)."""
    dtype = getattr(t, "dtype", None)
    if isinstance(dtype, dict):
        dtype = dtype.get(tv_tensors.Image, dtype.get("others"))
    scale = getattr(t, "scale", True)  # ConvertImageDtype always scales
    if not b.is_tensor or b.is_float or dtype != torch.float32 or not scale:
        raise _Blocked(f"{t!r} is lowered only after PILToTensor/ToImage, converting to "
                       "torch.float32 with scaling (= ToTensor)")
    b.is_float = True
    b.tensor(t)
    return type(t).__name__


def _normalize(b: _Builder, t) -> str:
    if not b.is_float:
        raise _Blocked("Normalize before the float tensor conversion (it needs float "
                       "pixels): not lowered")
    b.tensor(t)
    return "Normalize"


def _pure_tensor(b: _Builder, t) -> str:
    if not b.is_tensor:
        raise _Blocked("ToPureTensor before the tensor conversion")
    b.tensor(t)
    return "ToPureTensor"


#: transform class -> lowering function.  Exact classes only: a subclass may
#: change behaviour, so it is reported rather than guessed at.
LOWERINGS: dict[type, Callable[[_Builder, object], str]] = {
    cls: lowering for lowering, names, v2_only in (
        (_center_crop, ("CenterCrop",), ()),
        (_random_crop, ("RandomCrop",), ()),
        (_random_resized_crop, ("RandomResizedCrop",), ()),
        (_resize, ("Resize",), ()),
        (_flip, ("RandomHorizontalFlip",), ()),
        (_color_jitter, ("ColorJitter",), ()),
        (_random_apply, ("RandomApply",), ()),
        (_gaussian_blur, ("GaussianBlur",), ()),
        (_grayscale, ("RandomGrayscale", "Grayscale"), ()),
        (_to_float_tensor, ("ToTensor",), ()),
        (_to_uint8_tensor, ("PILToTensor",), ("ToImage",)),
        (_to_dtype, ("ConvertImageDtype",), ("ToDtype",)),
        (_normalize, ("Normalize",), ()),
        (_pure_tensor, (), ("ToPureTensor",)))
    # each name from v1 (torchvision.transforms) and v2, the v2-only ones from v2
    for cls in [getattr(T, n) for n in names] + [getattr(T2, n) for n in (*names, *v2_only)]
}


# -- other libraries' transforms, by name and structure ------------------------------------
def _has(t, *names: str) -> bool:
    return all(hasattr(t, n) for n in names)


def _timm_rrc(b: _Builder, t) -> str:
    if not _has(t, "size", "scale", "ratio", "interpolation"):
        raise _Blocked(f"{type(t).__name__} lacks size/scale/ratio/interpolation, so it is "
                       "not timm's RandomResizedCropAndInterpolation")
    return _random_resized_crop(b, t)


def _timm_resize_keep_ratio(b: _Builder, t) -> str:
    if not _has(t, "size", "longest", "interpolation", "random_scale_prob",
                "random_aspect_prob"):
        raise _Blocked(f"{type(t).__name__} is not timm's ResizeKeepRatio (attributes differ)")
    if t.random_scale_prob or t.random_aspect_prob:
        raise _Blocked(f"ResizeKeepRatio(random_scale_prob={t.random_scale_prob}, "
                       f"random_aspect_prob={t.random_aspect_prob}) draws random scales: "
                       "lowered only without them")
    filters = _filters(t)
    size = _pair(t.size, "ResizeKeepRatio")
    b.resizing(t, ops.ResizeKeepRatio(size, float(t.longest), filters,
                                      b.take_slots(ops.ResizeKeepRatio.uniforms)))
    return f"ResizeKeepRatio({size[0]}x{size[1]}, longest={float(t.longest):g})"


def _timm_to_tensor(b: _Builder, t) -> str:
    """timm's ToTensor(dtype): pil_to_tensor then .to(dtype), no scaling."""
    if getattr(t, "dtype", None) != torch.float32:
        raise _Blocked(f"timm ToTensor(dtype={getattr(t, 'dtype', None)}) is lowered only "
                       "for torch.float32")
    return _to_float_tensor(b, t)


#: class name -> (lowering, whether a same-named class in the user's own code counts).
#: Distinctive names are recognised in users' copies too, as the SSD classes are;
#: generic ones (ToTensor) only from timm itself.
BY_NAME: dict[str, tuple[Callable[[_Builder, object], str], bool]] = {
    "RandomResizedCropAndInterpolation": (_timm_rrc, True),
    "ResizeKeepRatio": (_timm_resize_keep_ratio, True),
    "MaybeToTensor": (_to_float_tensor, True),
    "MaybePILToTensor": (_to_uint8_tensor, True),
    "ToNumpy": (_to_uint8_tensor, False),
    "ToTensor": (_timm_to_tensor, False),
}


def _by_name(t):
    cls = type(t)
    entry = BY_NAME.get(cls.__name__)
    if entry is None:
        return None
    lowering, copies_ok = entry
    if cls.__module__.startswith("timm.") or \
            (copies_ok and not cls.__module__.startswith(("torch", "torchvision"))):
        return lowering
    return None


# -- containers ----------------------------------------------------------------------------
_COMPOSES = (T.Compose, T2.Compose)
_PRESETS = ("ClassificationPresetTrain", "ClassificationPresetEval")


def _delegates_to_transforms(obj) -> bool:
    """``__call__`` is ``return self.transforms(img)`` (torchvision references' presets)."""
    code = getattr(type(obj).__call__, "__code__", None)
    return code is not None and code.co_argcount == 2 and code.co_names == ("transforms",)


def _expand_image_classification(t) -> list:
    """torchvision's weight transforms (``weights.transforms()``), as the ops its
    forward runs: resize, centre crop, pil_to_tensor, convert_image_dtype, normalize."""
    return [T.Resize(list(t.resize_size), interpolation=t.interpolation,
                     antialias=t.antialias),
            T.CenterCrop(list(t.crop_size)), T.PILToTensor(),
            T.ConvertImageDtype(torch.float), T.Normalize(list(t.mean), list(t.std))]


def _leaves(transform) -> list:
    """The transform as a flat list of leaf transforms."""
    if type(transform) in _COMPOSES:
        return [leaf for t in transform.transforms for leaf in _leaves(t)]
    if type(transform).__name__ in _PRESETS:
        inner = getattr(transform, "transforms", None)
        if type(inner) in _COMPOSES and _delegates_to_transforms(transform):
            return _leaves(inner)
    name = f"{type(transform).__module__}.{type(transform).__name__}"
    if name == "torchvision.transforms._presets.ImageClassification":
        return _expand_image_classification(transform)
    return [transform]


# -- lowering ------------------------------------------------------------------------------
def _output_size(geometry) -> tuple[int, int]:
    """The fixed output size, or _Blocked when it depends on each image."""
    for op in reversed(geometry):
        if isinstance(op, (ops.CenterCrop, ops.RandomCrop, ops.RandomResizedCrop)):
            return op.size
        if isinstance(op, ops.Resize):
            if len(op.size) == 2:
                return op.size
            break
        if isinstance(op, ops.ResizeKeepRatio):
            break
    raise _Blocked("the output size depends on each image (no final crop or (height, width) "
                   "Resize), so the images cannot be stacked into a batch", _NATIVE_HINT)


def _lowering_of(t):
    return LOWERINGS.get(type(t)) or _by_name(t)


def is_transform_pipeline(t) -> bool:
    """A Compose, a torchvision reference preset, or a transform with a native lowering."""
    return type(t) in _COMPOSES or type(t).__name__ in _PRESETS or _lowering_of(t) is not None


def _native_prefix(b: _Builder, leaves: list) -> tuple[int, str | None]:
    """Lowers leaves into ``b`` until one does not lower; returns (how many lowered,
    why the next one did not)."""
    for position, t in enumerate(leaves):
        lowering = _lowering_of(t)
        if lowering is None:
            base = next((k.__name__ for k in LOWERINGS if isinstance(t, k)), None)
            return position, (f"a subclass of {base}" if base else "no native lowering")
        try:
            b.names.append(lowering(b, t))
        except _Blocked as e:
            return position, str(e)
    return len(leaves), None


_CONVERSIONS = (_to_float_tensor, _to_uint8_tensor)
_GEOMETRY = (_random_resized_crop, _resize, _center_crop, _random_crop, _flip)


def _tensor_backend(leaves: list) -> list:
    """NOTE [ The tensor backend ]
    torchvision's references with ``--backend tensor`` convert first (PILToTensor)
    and crop, resize and flip the uint8 tensor.  torch's antialiased uint8 resize
    follows Pillow's separable fixed-point scheme: on real photos its output is
    within a quarter of a level (mean absolute difference, 0-255) of Pillow's
    (docs/experiments.md), far inside the parity tolerance.  So the conversion is
    moved after the leading crops, resizes and flips, which then lower as they do
    on PIL images.  Only antialiased bilinear or bicubic resizes (what torch's
    uint8 kernels implement); anything else stays where it is and is judged as
    before."""
    if len(leaves) < 2 or _lowering_of(leaves[0]) is not _to_uint8_tensor:
        return leaves
    k = 1
    while k < len(leaves) and _like_pillow_on_tensors(leaves[k]):
        k += 1
    return leaves if k == 1 else [*leaves[1:k], leaves[0], *leaves[k:]]


def _like_pillow_on_tensors(t) -> bool:
    """A crop, flip, or antialiased bilinear/bicubic resize: on a uint8 tensor as on PIL."""
    if _lowering_of(t) not in _GEOMETRY or not antialiases(t):
        return False
    try:
        return set(_filters(t)) <= {"bilinear", "bicubic"}
    except _Blocked:
        return False


def _native_tail(leaves: list) -> tuple[_Builder, int]:
    """After the user's PIL-stage objects: the leading tensor conversion (and the
    tensor stage after it) that can run natively over the batch; (builder, count)."""
    tail = _Builder()
    count = 0
    if leaves and _lowering_of(leaves[0]) in _CONVERSIONS:
        for t in leaves:
            lowering = _lowering_of(t)
            if lowering not in (*_CONVERSIONS, _to_dtype, _normalize, _pure_tensor):
                break
            try:
                tail.names.append(lowering(tail, t))
            except _Blocked:
                break
            count += 1
    return tail, count


def lower_transform(transform) -> tuple[ClassificationProgram | None, list[Check]]:
    """Lowers ``transform``: natively as far as it can, then the user's own objects
    (a hybrid).  Returns (program or None, checks: one passing check, or one failed
    check naming the blocker)."""
    if transform is None:
        return None, [Check(RULE, False, "the dataset has no transform, so it yields PIL "
                                         "images that default_collate cannot batch",
                            "give the dataset a transform that ends in a tensor")]
    leaves = _tensor_backend(_leaves(transform))
    b = _Builder()
    lowered, why = _native_prefix(b, leaves)
    yours = leaves[lowered:]
    try:
        steps = sum(4 if isinstance(op, ops.ColorJitter) else 1 for op in b.colour)
        if steps > COLOUR_STEPS:
            raise _Blocked(f"{steps} colour steps (a ColorJitter is four): the fused "
                           f"pipeline runs at most {COLOUR_STEPS}")
        resizes = [op for op in b.geometry if not isinstance(op, ops.HorizontalFlip)]
        if yours and not resizes:
            name = type(yours[0]).__name__
            raise _Blocked(f"the native part would be the decode alone (it stops at "
                           f"transform {lowered} {name}: {why}) and the rest per-sample "
                           "Python, where acceleration does not pay")
        size = _output_size(b.geometry)
        for op in b.colour:
            if isinstance(op, ops.GaussianBlur) and (op.kernel[0] // 2 >= size[1]
                                                     or op.kernel[1] // 2 >= size[0]):
                raise _Blocked(f"GaussianBlur's {op.kernel[0]}x{op.kernel[1]} kernel is "
                               f"too large for {size[1]}x{size[0]} images (torch's "
                               "reflection padding fails on them too)")
        handover = "slot" if b.is_tensor else "pil"
        tail, tail_count, yours_pil = _Builder(), 0, []
        if handover == "pil":
            # the user's PIL-stage objects: up to the tail's tensor conversion (or all)
            first_conversion = next((i for i, t in enumerate(yours)
                                     if _lowering_of(t) in _CONVERSIONS), len(yours))
            yours_pil = yours[:first_conversion]
            tail, tail_count = _native_tail(yours[first_conversion:])
            yours_tensor = yours[first_conversion + tail_count:]
        else:
            yours_tensor = yours
        stage = tuple(b.tensor_stage) if handover == "slot" else tuple(tail.tensor_stage)
        if stage:
            try:
                output_dtype, lut = run_on_ramp(stage)
            except TensorStageError as e:
                raise _Blocked(str(e)) from None
        else:
            output_dtype, lut = "uint8", None
        try:
            sample = dry_run(size, yours_pil, stage, yours_tensor, handover)
        except DryRunFailed as e:
            raise _Blocked(str(e)) from None
    except _Blocked as e:
        return None, [Check(RULE, False, str(e), e.hint)]
    split = [("native", tuple(["decode", *b.names]))]
    if yours_pil:
        split.append(("yours", tuple(object_name(t) for t in yours_pil)))
    if handover == "pil" and tail_count:
        split.append(("native", tuple(tail.names)))
    if yours_tensor:
        split.append(("yours", tuple(object_name(t) for t in yours_tensor)))
    program = ClassificationProgram(
        tuple(b.geometry), tuple(b.colour), size, output_dtype, lut, b.slots, stage,
        tuple(b.names + tail.names), handover, tuple(yours_pil), bool(tail_count),
        tuple(yours_tensor), tuple(repr(t) for t in yours), sample, tuple(split))
    shape = "x".join(map(str, sample.shape))
    what = f"{sample.kind} {sample.dtype}[{shape}]".replace(" [", "[")
    if not yours:
        return program, [Check(RULE, True, " -> ".join(program.names) + f" ({what})")]
    text = "; ".join(f"{who}: {', '.join(names)}" for who, names in split)
    return program, [Check(RULE, True, f"{text} (yours run in the workers, seeded per "
                                       f"sample; {what})")]
