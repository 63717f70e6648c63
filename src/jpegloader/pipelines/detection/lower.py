"""Lowering a detection transform (torchvision v2, as ``references/detection/
presets.py`` builds it) into a program: the native steps in order, then the
user's own objects from the first step that is not lowered.

Lowered:
- geometry, on the image natively and on the boxes and masks with torchvision's
  own kernels (``F.horizontal_flip``, ``F.resize``): ``RandomHorizontalFlip``,
  ``RandomZoomOut`` and ``RandomIoUCrop`` (their own ``make_params`` and
  ``transform`` on the target: draw.py), and one resize before the tensor
  conversion (``RandomShortestSize``, ``Resize``, bilinear: Pillow's arithmetic,
  which the C core reproduces; not after a zoom-out or a distortion);
- ``RandomPhotometricDistort`` on the photo first (the ssd policy): its draws by its
  own ``make_params``, its steps by the C core's colour program on the whole photo
  before the zoom-out's padding (Pillow's arithmetic on a PIL image, torchvision's
  float32 tensor arithmetic on a uint8 tensor: csrc/colour_tensor.h);
- the geometry above after ``PILToTensor`` / ``ToImage`` too (``--backend tensor``):
  on a uint8 tensor torch moves pixels as Pillow does, and its antialiased resize is
  within a level of Pillow's (_Builder._not_geometry);
- the tensor stage (``ToImage`` / ``PILToTensor``, ``ToDtype`` /
  ``ConvertImageDtype``, ``Normalize``), a table run on a 0..255 ramp
  (tensor_stage.py);
- ``RandomApply`` and ``RandomChoice`` of native steps (no flip or tensor conversion
  inside): each alternative lowered, the gate drawn as theirs draws (draw.gated_out);
- target steps that draw nothing and leave the pixels alone
  (``ConvertBoundingBoxFormat``, ``ClampBoundingBoxes``,
  ``SanitizeBoundingBoxes``, ``ToPureTensor``): the user's own objects, run on
  the target beside a stand-in image of the right size.

Everything from the first other step on (geometry or a distortion of a float image,
a second resize ...) runs as the user's objects in the workers on what the
native part gives (NOTE [ Hybrid pipelines ] in classification/hybrid.py), and the
verdict names the split; when the native part would hold no crop, resize or
padding (the decode alone), it does not pay and the loader is torch's, saying so.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

import torch
from torchvision.transforms import InterpolationMode
from torchvision.transforms import v2 as T2

from ..contract import Check, check, object_name
from ..tensor_backend import antialiases
from ..tensor_stage import TensorStageError, lut_array, run_on_ramp
from . import detr, fills, iou_crop, references_v1, rtdetr

RULE = "dataset.transforms"
#: Why a transform the verdict stops at is not native, where it is not said elsewhere.
WHY_NOT = {"Mosaic": ", which pastes other samples of the dataset into each one (DEIM's, "
                     "YOLO's): the C core decodes one photo per sample"}
#: The references' preset classes (presets.py), recognised by name in users' copies:
#: their __call__ is ``self.transforms(img, target)``.
PRESETS = ("DetectionPresetTrain", "DetectionPresetEval")


@dataclass(frozen=True)
class Step:
    """One native step.  ``kind``: "flip" (p), "resize" (sizes to draw from, or one
    size, and max_size), "jitter" (ScaleJitter: a resize its own make_params
    draws), "ioucrop", "distort" (RandomPhotometricDistort), "zoomout" (RandomZoomOut:
    the photo padded into a canvas), "fixedcrop" (the references' FixedSizeCrop: a
    window of the resized photo, padded to its size), "tensor" (in the table),
    "target" (the user's object, run on the target)."""

    kind: str
    name: str
    obj: object = field(compare=False, default=None)
    fill: int = 0            # "zoomout", "fixedcrop": the fill's bytes, R | G << 8 | B << 16
    size: tuple = ()         # "fixedcrop": (height, width)
    fast: bool = False       # "ioucrop": its draws by iou_crop.params (it agrees)
    moves_masks: bool = False  # "fixedcrop": masks as the references' (painted through)
    p: float = 0.0
    sizes: tuple = ()
    max_size: int | None = None
    shortest: bool = False   # RandomShortestSize's rule; else Resize's
    slot: int = -1           # its uniform in the (seed, index) stream; -1: draws none
    v1: bool = False         # the references' own v1 class (transforms.py): its arithmetic
    detr: bool = False       # DETR's own class (detr.py): its draws and arithmetic
    gated: bool = False      # "ioucrop": RT-DETR's, ``torch.rand(1) >= p`` first
    #: the first step of a RandomApply ("apply", (p,), (steps,)) or RandomChoice
    #: ("choice", p, steps of each alternative): its steps follow (_Builder._group)
    gate: tuple = ()
    then: bool = False       # "resize" after padding: of the C core's output (resize_hwc)
    branches: tuple = ()     # "select" (DETR's RandomSelect): the two branches' steps
    #: "distort": Pillow's arithmetic ("pil") or, on a uint8 tensor, torchvision's v2
    #: kernels' or v1's functional ops' ("v2", "v1": csrc/colour_tensor.h)
    arithmetic: str = "pil"


@dataclass(frozen=True)
class DetectionProgram:
    steps: tuple[Step, ...]
    #: the native output: "pil" (no tensor conversion before the split or the end),
    #: "uint8" or "float32" (CHW through ``lut``)
    output: str
    #: the image's type after the native part: "pil", "image" (tv_tensors.Image), "tensor"
    image_type: str
    lut: bytes | None = field(repr=False, default=None)
    tensor_stage: tuple = field(compare=False, default=())
    yours: tuple = field(compare=False, default=())   # the user's objects after the split
    yours_names: tuple[str, ...] = ()
    slots: int = 0
    key: str = ""
    collate_fn: object = field(compare=False, default=None)  # None: default_collate
    detr: bool = False  # DETR's steps (detr.py)

    @property
    def padded(self) -> bool:
        """Whether the C core pads each photo (NOTE [ Colour before the padding ] in
        csrc/pipeline.c): the photometric distortion runs on the whole photo, and the
        zoom-out's canvas is the padding; or resizes it whole and keeps a window of it
        (NOTE [ DETR's geometry in one plan ] in detr.py)."""
        return any(s.kind in PADDED for s in flattened(self.steps))

    @property
    def fill(self) -> int:
        return next((s.fill for s in self.steps if s.kind in ("zoomout", "fixedcrop")), 0)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.steps]

    @property
    def lut_array(self):
        return lut_array(self.lut)


#: The steps after which the C core pads each photo.
PADDED = ("distort", "zoomout", "fixedcrop", "sizecrop")


def flattened(steps) -> list[Step]:
    """The steps, with those of every branch of a "select" in place of it."""
    return [t for s in steps for t in ([s] if not s.branches else
                                       [s, *(u for b in s.branches for u in flattened(b))])]


class _Split(Exception):
    """This step (and every one after it) runs as the user's own objects."""


class OnImage:
    """A references' v1 transform, which takes (image, target), on the image alone (for
    the tensor stage's table)."""

    def __init__(self, t):
        self.t = t

    def __call__(self, image):
        return self.t(image, None)[0]

    def __repr__(self) -> str:
        return f"OnImage({self.t!r})"


#: The references' own v1 classes (references/detection/transforms.py), by name in users'
#: copies: they take and return (image, target).
V1_CLASSES = ("RandomHorizontalFlip", "RandomShortestSize", "PILToTensor", "ToDtype",
              "ConvertImageDtype", "ScaleJitter", "RandomPhotometricDistort",
              "RandomZoomOut", "RandomIoUCrop")
#: The attributes each v1 class draws with (references_v1.py).
V1_ATTRIBUTES = {"ScaleJitter": ("target_size", "scale_range"),
                 "RandomPhotometricDistort": ("_brightness", "_contrast", "_saturation",
                                              "_hue", "p"),
                 "RandomZoomOut": ("fill", "side_range", "p"),
                 "RandomIoUCrop": ("min_scale", "max_scale", "min_aspect_ratio",
                                   "max_aspect_ratio", "options", "trials")}


def _is_v1(t) -> bool:
    return type(t).__name__ in V1_CLASSES and \
        not type(t).__module__.startswith("torchvision.")


def transform_list(transforms) -> tuple[list | None, str]:
    """The v2 steps of a dataset's ``transforms`` (unwrapping a Compose and the
    references' presets), or None and why not."""
    if transforms is None:
        return [], "no transforms"
    if type(transforms).__name__ in PRESETS and isinstance(
            getattr(transforms, "transforms", None), T2.Transform):
        transforms = transforms.transforms
    if not isinstance(transforms, T2.Transform):
        return None, (f"transforms is {type(transforms).__qualname__}, not torchvision v2 "
                      "transforms (or the references' DetectionPresetTrain/Eval)")
    out: list = []

    def walk(t):
        if type(t) is T2.Compose:
            for s in t.transforms:
                walk(s)
        else:
            out.append(t)
    walk(transforms)
    return out, f"{len(out)} v2 transforms"


def _bilinear(t) -> bool:
    mode = getattr(t, "interpolation", InterpolationMode.BILINEAR)
    return mode in (InterpolationMode.BILINEAR, "bilinear", 2)


class _Builder:
    def __init__(self, detr: bool = False, rtdetr: bool = False):
        self.detr = detr         # DETR's classes are what lower
        self.rtdetr = rtdetr     # RT-DETR's own classes lower too
        self.then = False        # DETR: a resize after the first resize or the crop
        self.steps: list[Step] = []
        self.stage: list = []
        self.tensor = False
        self.float = False
        self.resized = False
        self.cropped = False
        self.padded = False      # a zoom-out or a photometric distortion (padded plans)
        self.flipped = False     # a flip: a padding after it would be mirrored
        self.image_type = "pil"
        self.slots = 0

    def _not_geometry(self, resize=None) -> bool:
        """Whether geometry here is not the C core's: on a float image (torch's float
        arithmetic), or a resize of a uint8 tensor that does not antialias.  On a uint8
        tensor torch moves pixels as Pillow does, its antialiased resize within a level
        of Pillow's (NOTE [ The tensor backend ] in classification/lower.py)."""
        return self.float or (self.tensor and resize is not None and not antialiases(resize))

    def slot(self) -> int:
        self.slots += 1
        return self.slots - 1

    def add(self, t) -> None:
        if self.detr:
            if not detr.is_theirs(t):
                raise _Split
            self._add_detr(t)
            return
        if self.rtdetr and self._add_rtdetr(t):
            return
        if type(t).__name__ == "FixedSizeCrop" and \
                not type(t).__module__.startswith("torchvision."):
            self._fixed_size_crop(t)
            return
        if _is_v1(t):
            self._add_v1(t)
            return
        cls = type(t)
        name = cls.__name__
        if cls is T2.RandomHorizontalFlip:
            self.flipped = True
            self.steps.append(Step("flip", f"RandomHorizontalFlip(p={t.p})", t, p=float(t.p),
                                   slot=self.slot()))
        elif cls is T2.RandomIoUCrop:
            # a crop of the decoded image, drawn by its own make_params from the boxes
            # (draw.py); before any resize, as the C core crops and then resizes
            if self.resized or self.cropped or not callable(
                    getattr(t, "make_params", getattr(t, "_get_params", None))):
                raise _Split
            self.cropped = True
            self.steps.append(Step("ioucrop", "RandomIoUCrop", t, fast=iou_crop.agrees(t)))
        elif cls is T2.RandomPhotometricDistort:
            # on the photo before any geometry: the C core runs it on the whole photo
            # before padding (NOTE [ Colour before the padding ] in csrc/pipeline.c)
            if self.float or self.resized or self.cropped or self.padded or \
                    not callable(getattr(t, "make_params", None)):
                raise _Split
            self.padded = True
            self.steps.append(Step("distort", "RandomPhotometricDistort", t,
                                   arithmetic="v2" if self.tensor else "pil"))
        elif cls is T2.RandomZoomOut:
            fill = fills.zoom_out_fill(t, self.image_type)
            if self._not_geometry() or self.resized or self.cropped or fill is None or any(
                    s.kind == "zoomout" for s in self.steps) or \
                    not callable(getattr(t, "make_params", None)):
                raise _Split
            self.padded = True
            self.steps.append(Step("zoomout", f"RandomZoomOut(side_range={t.side_range}, "
                                              f"p={t.p})", t, fill=fill))
        elif cls in (T2.RandomShortestSize, T2.Resize):
            self._resize(t)
        elif cls is T2.ScaleJitter:
            if self._not_geometry(t) or self.resized or self.padded or self.cropped or \
                    not _bilinear(t) or not callable(getattr(t, "make_params", None)):
                raise _Split
            self.resized = True
            self.steps.append(Step("jitter", f"ScaleJitter({list(t.target_size)}, "
                                             f"scale_range={t.scale_range})", t))
        elif cls in (T2.ToImage, T2.PILToTensor):
            if not self.tensor:
                self.tensor = True
                self.stage.append(t)
            self.image_type = "image" if cls is T2.ToImage else "tensor"
            self.steps.append(Step("tensor", name, t))
        elif cls in (T2.ToDtype, T2.ConvertImageDtype):
            if not self.tensor or not isinstance(getattr(t, "dtype", None), torch.dtype):
                raise _Split
            self.stage.append(t)
            self.float = t.dtype.is_floating_point
            self.steps.append(Step("tensor", f"{name}({t.dtype})", t))
        elif cls is T2.Normalize:
            if not self.float:
                raise _Split
            self.stage.append(t)
            self.steps.append(Step("tensor", name, t))
        elif cls in (T2.ConvertBoundingBoxFormat, T2.ClampBoundingBoxes,
                     T2.SanitizeBoundingBoxes):
            self.steps.append(Step("target", name, t))
        elif cls is T2.ToPureTensor:
            if self.image_type == "image":
                self.image_type = "tensor"
            self.steps.append(Step("target", name, t))
        elif cls is T2.RandomApply:
            self._group("apply", [list(t.transforms)], (float(t.p),), f"RandomApply(p={t.p})")
        elif cls is T2.RandomChoice:
            self._group("choice", [[x] for x in t.transforms], tuple(float(p) for p in t.p),
                        "RandomChoice")
        else:
            raise _Split

    #: What a step may change in the builder (a group's alternatives: the union).
    _FLAGS = ("resized", "cropped", "padded", "flipped", "then")

    def _group(self, kind: str, alternatives: list[list], p: tuple, name: str) -> None:
        """RandomApply (``kind`` "apply": its transforms or none) and RandomChoice
        ("choice": one of them): each alternative lowered from the state before it,
        their steps laid out one after another, the first carrying the gate that
        draws which run (draw.run_steps).  A flip or a tensor conversion inside runs
        the whole group as yours."""
        lowered = self._alternatives(alternatives, lambda new: bool(new) and not any(
            s.kind == "flip" or s.gate for s in new))
        steps = [s for new in lowered for s in new]
        steps[0] = replace(steps[0], name=f"{name}: {steps[0].name}",
                           gate=(kind, p, tuple(len(new) for new in lowered)))
        self.steps += steps

    def _alternatives(self, alternatives: list[list], allowed=lambda new: True
                      ) -> list[list[Step]]:
        """The steps of each alternative (transforms that run instead of each other),
        lowered from the state before them; the state after is what any of them may
        have done.  A tensor conversion in one of them, or steps not ``allowed``, runs
        them all as yours (the state left as it was)."""
        before, lowered = len(self.steps), []
        for alternative in alternatives:
            b = copy.copy(self)
            b.steps, b.stage = list(self.steps), list(self.stage)
            for t in alternative:
                b.add(t)
            if len(b.stage) != len(self.stage) or b.image_type != self.image_type or \
                    not allowed(b.steps[before:]):
                raise _Split
            lowered.append(b)
        for flag in self._FLAGS:
            setattr(self, flag, any(getattr(b, flag) for b in lowered) or getattr(self, flag))
        self.slots = max(b.slots for b in lowered)
        return [b.steps[before:] for b in lowered]

    def _fixed_size_crop(self, t) -> None:
        """The references' FixedSizeCrop (transforms.py), by name and attributes: a
        window of the (resized) photo, padded right and bottom to its size with the
        fill its own forward gives a probe image."""
        size = (getattr(t, "crop_height", None), getattr(t, "crop_width", None))
        # its padding is right and bottom: mirrored by the C core's last flip
        if self._not_geometry() or self.padded or self.cropped or self.flipped or \
                getattr(t, "padding_mode", "constant") != "constant" or \
                not all(isinstance(v, int) and v > 0 for v in size):
            raise _Split
        fill = fills.probed_fill(t, size, self.image_type)
        if fill is None:
            raise _Split
        self.padded = True
        self.steps.append(Step("fixedcrop", f"FixedSizeCrop({list(size)}) (references)", t,
                               fill=fill, size=size,
                               moves_masks=references_v1.fixed_crop_moves_masks(t, size)))

    def _add_v1(self, t) -> None:
        """The references' v1 classes, recognised by name and attributes."""
        name = type(t).__name__
        if not all(hasattr(t, a) for a in V1_ATTRIBUTES.get(name, ())):
            raise _Split
        if name == "RandomHorizontalFlip":
            self.flipped = True
            self.steps.append(Step("flip", f"RandomHorizontalFlip(p={t.p}) (references)", t,
                                   p=float(t.p), slot=self.slot(), v1=True))
        elif name == "ScaleJitter":
            if self._not_geometry(t) or self.resized or self.padded or self.cropped or \
                    not _bilinear(t):
                raise _Split
            self.resized = True
            self.steps.append(Step("jitter", f"ScaleJitter({list(t.target_size)}, scale_range="
                                             f"{t.scale_range}) (references)", t, v1=True))
        elif name == "RandomPhotometricDistort":
            if self.float or self.resized or self.cropped or self.padded:
                raise _Split
            self.padded = True
            self.steps.append(Step("distort", "RandomPhotometricDistort (references)", t,
                                   v1=True, arithmetic="v1" if self.tensor else "pil"))
        elif name == "RandomZoomOut":
            fill = fills.rgb([int(x) for x in t.fill]) if len(t.fill) == 3 else None
            if self._not_geometry() or self.resized or self.cropped or fill is None or any(
                    s.kind == "zoomout" for s in self.steps):
                raise _Split
            self.padded = True
            self.steps.append(Step("zoomout", f"RandomZoomOut(side_range={t.side_range}, "
                                              f"p={t.p}) (references)", t, fill=fill, v1=True))
        elif name == "RandomIoUCrop":
            if self.resized or self.cropped:
                raise _Split
            self.cropped = True
            self.steps.append(Step("ioucrop", "RandomIoUCrop (references)", t, v1=True))
        elif name == "RandomShortestSize":
            if self._not_geometry(t) or self.resized or self.padded or not _bilinear(t) or \
                    getattr(t, "max_size", None) is None:
                raise _Split
            sizes = tuple(int(s) for s in t.min_size)
            self.resized = True
            self.steps.append(Step("resize", f"RandomShortestSize({list(sizes)}, max_size="
                                             f"{t.max_size}) (references)", t, sizes=sizes,
                                   max_size=int(t.max_size), shortest=True,
                                   slot=self.slot() if len(sizes) > 1 else -1, v1=True))
        elif name == "PILToTensor":
            if self.tensor:
                raise _Split
            self.tensor = True
            self.stage.append(OnImage(t))
            self.image_type = "tensor"
            self.steps.append(Step("tensor", "PILToTensor (references)", t, v1=True))
        else:  # ToDtype, ConvertImageDtype
            dtype = getattr(t, "dtype", None)
            if not self.tensor or not isinstance(dtype, torch.dtype):
                raise _Split
            self.stage.append(OnImage(t))
            self.float = dtype.is_floating_point
            self.steps.append(Step("tensor", f"{name}({dtype}) (references)", t, v1=True))

    def _add_rtdetr(self, t) -> bool:
        """RT-DETR's own classes (rtdetr.py), by name and attributes; False for others."""
        if rtdetr.is_gated_iou_crop(t):
            if self.resized or self.cropped:
                raise _Split
            self.cropped = True
            self.steps.append(Step("ioucrop", f"RandomIoUCrop(p={t.p}) (RT-DETR)", t,
                                   p=float(t.p), gated=True, fast=iou_crop.agrees(t)))
        elif rtdetr.is_theirs(t, "ConvertPILImage"):
            if self.tensor or t.dtype not in ("float32", "uint8"):
                raise _Split
            self.tensor, self.float = True, t.dtype == "float32" or bool(t.scale)
            self.stage.append(t)
            self.image_type = "image"
            self.steps.append(Step("tensor", f"ConvertPILImage({t.dtype}, scale={t.scale}) "
                                             "(RT-DETR)", t))
        elif rtdetr.is_theirs(t, "ConvertBoxes"):
            self.steps.append(Step("target", f"ConvertBoxes({t.fmt!r}, normalize="
                                             f"{t.normalize}) (RT-DETR)", t))
        else:
            return False
        return True

    def _add_detr(self, t) -> None:
        """DETR's classes, by name and attributes (NOTE [ DETR's geometry in one plan ]
        in detr.py)."""
        name = type(t).__name__
        if name == "RandomHorizontalFlip":
            self.steps.append(Step("flip", f"RandomHorizontalFlip(p={t.p}) (DETR)", t,
                                   p=float(t.p), detr=True))
        elif name == "RandomResize":
            if self.tensor or self.then or not t.sizes:
                raise _Split
            if self.resized or self.cropped:
                self.then = True
            self.resized = True
            self.steps.append(Step("resize", f"RandomResize({list(t.sizes)}, max_size="
                                             f"{t.max_size}) (DETR)", t, detr=True))
        elif name == "RandomSizeCrop":
            if self.tensor or self.cropped or self.then:
                raise _Split
            self.cropped = True
            self.steps.append(Step("sizecrop", f"RandomSizeCrop({t.min_size}, {t.max_size}) "
                                               "(DETR)", t, detr=True))
        elif name == "RandomSelect":
            branches = [tuple(b) for b in self._alternatives(
                [detr.steps_of(t.transforms1), detr.steps_of(t.transforms2)])]
            names = " | ".join(", ".join(s.name.removesuffix(" (DETR)") for s in b)
                               for b in branches)
            self.steps.append(Step("select", f"RandomSelect(p={t.p}: {names}) (DETR)", t,
                                   p=float(t.p), branches=tuple(branches), detr=True))
        elif name == "ToTensor":
            if self.tensor:
                raise _Split
            self.tensor = self.float = True
            self.stage.append(OnImage(t))
            self.image_type = "tensor"
            self.steps.append(Step("tensor", "ToTensor (DETR)", t, detr=True))
        else:  # Normalize: the image in the table, the boxes by detr.normalize_target
            if not self.float:
                raise _Split
            self.stage.append(OnImage(t))
            self.steps.append(Step("tensor", "Normalize (DETR)", t, detr=True))

    def _resize(self, t) -> None:
        # A second resize would resample twice: yours.  After a zoom-out or a distortion
        # the C core would resize before padding and colour: its output is resized
        # instead ("then", with Pillow's arithmetic), as the user's object would.
        if self._not_geometry(t) or self.resized or not _bilinear(t):
            raise _Split
        then = self.padded
        if type(t) is T2.RandomShortestSize:
            sizes = tuple(int(s) for s in t.min_size)
            step = Step("resize", f"RandomShortestSize({list(sizes)}, max_size={t.max_size})",
                        t, sizes=sizes, max_size=t.max_size, shortest=True,
                        slot=self.slot() if len(sizes) > 1 else -1, then=then)
        else:
            size = t.size
            if size is None:
                raise _Split
            size = (int(size),) if isinstance(size, int) else tuple(int(s) for s in size)
            step = Step("resize", f"Resize({list(size)}, max_size={t.max_size})", t,
                        sizes=size, max_size=t.max_size, then=then)
        self.resized = True
        self.steps.append(step)


def lower(transforms, family: str = "") -> tuple[DetectionProgram | None, list[Check]]:
    """``transforms``: the v2 dataset's ``transforms``, the steps after a v1 dataset's
    ConvertCocoPolysToMask (a list), a DETR dataset's ``_transforms`` (``family``
    "detr") or the steps an RT-DETR dataset's Compose runs this epoch ("rtdetr")."""
    detr_steps = family == "detr"
    if detr_steps:
        steps, what = detr.steps_of(transforms), "DETR's steps"
    else:
        steps, what = (list(transforms), "v1 steps") if isinstance(transforms, list) else \
            transform_list(transforms)
    if steps is None:
        return None, [Check(RULE, False, what, "use torchvision.transforms.v2 objects (as "
                            "references/detection/presets.py builds them with --use-v2); "
                            "this loader runs on torch's DataLoader")]
    b = _Builder(detr_steps, rtdetr=family == "rtdetr")
    split = len(steps)
    for k, t in enumerate(steps):
        try:
            b.add(t)
        except _Split:
            split = k
            break
    if split < len(steps) and not (b.resized or b.cropped or b.padded):
        name = type(steps[split]).__name__
        return None, [Check(RULE, False,
                            f"the native part would be the decode alone (it stops at "
                            f"transform {split} {name}{WHY_NOT.get(name, '')}) and the rest "
                            "per-sample Python, where acceleration does not pay",
                            "this loader runs on torch's DataLoader, with the same results")]
    try:
        output, lut = run_on_ramp(b.stage) if b.stage else ("pil", None)
    except TensorStageError as e:
        return None, [Check(RULE, False, f"the tensor stage cannot be a table: {e}",
                            "this loader runs on torch's DataLoader")]
    yours = tuple(steps[split:])
    yours_names = tuple(object_name(t) for t in yours)
    program = DetectionProgram(tuple(b.steps), output, b.image_type, lut, tuple(b.stage),
                               yours, yours_names, b.slots,
                               key=repr(transforms), detr=detr_steps)
    native = ", ".join(["decode", *program.names])
    message = f"native: {native}" + (f"; yours, in the workers: {', '.join(yours_names)}"
                                     if yours else "")
    return program, [check(RULE, True, message, "", "")]
