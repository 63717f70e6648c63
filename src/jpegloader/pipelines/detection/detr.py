"""DETR's own data pipeline (facebookresearch/detr ``datasets/coco.py`` and
``datasets/transforms.py``, copied almost unchanged by Deformable-DETR, DINO-DETR,
Conditional/DAB/DN-DETR and their forks), recognised by name and attributes in users'
copies: their dataset, their transforms' draws and their arithmetic on targets.

Their transforms draw from Python's ``random`` and torch's generator: here both are
seeded once per sample from the (seed, index) stream and the draws are made in step
order with the same calls (NOTE [ Draws by the transforms' own make_params ] in
draw.py), so the user's objects, seeded the same way, replay a sample exactly.

NOTE [ DETR's geometry in one plan ]
Every lowered DETR pipeline is a flip, at most one resize of the photo, at most one
crop of that, and at most one resize of the crop (the train recipe's RandomSelect
takes one of ``resize`` or ``resize, crop, resize``).  The C core resizes the whole
photo, keeps the window (mirrored where a flip came before it: Pillow's resize and
a mirror commute bit for bit) and flips; the resize of the crop then runs on that
window with Pillow's arithmetic (decoders.resize_hwc), into the tensor table.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import ClassVar

import torch
from torchvision import datasets
from torchvision.transforms import RandomCrop

from ..stand_ins import canvas
from .family import Family
from .steps import Flip, Group, Normalize, OnImage, Resize, Step, ToTensor

#: DETR's classes (datasets/transforms.py) that lower, and the attributes each reads.
ATTRIBUTES = {"RandomHorizontalFlip": ("p",), "RandomResize": ("sizes", "max_size"),
              "RandomSelect": ("transforms1", "transforms2", "p"),
              "RandomSizeCrop": ("min_size", "max_size"), "ToTensor": (),
              "Normalize": ("mean", "std")}


def coco_base(dataset) -> bool:
    """torchvision's CocoDetection, or Deformable-DETR's own copy of it
    (``datasets/torchvision_datasets/coco.py``: a VisionDataset with ``coco``, ``ids``
    and ``get_image``, its images cached in memory or not)."""
    return isinstance(dataset, datasets.CocoDetection) or (
        isinstance(dataset, datasets.VisionDataset) and hasattr(dataset, "coco") and
        hasattr(dataset, "ids") and callable(getattr(dataset, "get_image", None)))


def is_dataset(dataset) -> bool:
    """DETR's CocoDetection: their subclass of torchvision's (or of Deformable-DETR's
    copy of it), with their ConvertCocoPolysToMask as ``prepare`` and their transforms
    as ``_transforms``."""
    return coco_base(dataset) and type(dataset).__name__ == "CocoDetection" and \
        type(dataset) is not datasets.CocoDetection and \
        type(getattr(dataset, "prepare", None)).__name__ == "ConvertCocoPolysToMask" and \
        hasattr(dataset, "_transforms")


def steps_of(transforms) -> list:
    """Their Compose (a class of that name holding a list), flattened."""
    if transforms is None:
        return []
    inner = getattr(transforms, "transforms", None)
    if type(transforms).__name__ == "Compose" and isinstance(inner, (list, tuple)):
        return [s for t in inner for s in steps_of(t)]
    return [transforms]


def is_theirs(t) -> bool:
    name = type(t).__name__
    return name in ATTRIBUTES and not type(t).__module__.startswith("torchvision.") and \
        all(hasattr(t, a) for a in ATTRIBUTES[name])


# -- sizes and draws ----------------------------------------------------------------------
def resized_size(h: int, w: int, size, max_size) -> tuple[int, int]:
    """(height, width) their ``resize`` gives an h x w image for a drawn ``size``."""
    if isinstance(size, (list, tuple)):  # (w, h)
        return int(size[1]), int(size[0])
    if max_size is not None:
        small, large = float(min(w, h)), float(max(w, h))
        if large / small * size > max_size:
            size = int(round(max_size * small / large))
    if (w <= h and w == size) or (h <= w and h == size):
        return h, w
    if w < h:
        return int(size * h / w), size
    return size, int(size * w / h)


def crop_region(obj, h: int, w: int) -> tuple[int, int, int, int]:
    """RandomSizeCrop's draws for an h x w image: (top, left, height, width)."""
    cw = random.randint(obj.min_size, min(w, obj.max_size))
    ch = random.randint(obj.min_size, min(h, obj.max_size))
    return tuple(int(v) for v in RandomCrop.get_params(canvas(h, w), [ch, cw]))


# -- their arithmetic on targets -----------------------------------------------------------
def flip_target(target: dict, w: int) -> dict:
    target = target.copy()
    if "boxes" in target:
        target["boxes"] = target["boxes"][:, [2, 1, 0, 3]] * torch.as_tensor(
            [-1, 1, -1, 1]) + torch.as_tensor([w, 0, w, 0])
    if "masks" in target:
        target["masks"] = target["masks"].flip(-1)
    return target


def resize_target(target: dict, h: int, w: int, oh: int, ow: int) -> dict:
    rw, rh = float(ow) / float(w), float(oh) / float(h)
    target = target.copy()
    if "boxes" in target:
        target["boxes"] = target["boxes"] * torch.as_tensor([rw, rh, rw, rh])
    if "area" in target:
        target["area"] = target["area"] * (rw * rh)
    target["size"] = torch.tensor([oh, ow])
    if "masks" in target:
        target["masks"] = torch.nn.functional.interpolate(
            target["masks"][:, None].float(), (oh, ow), mode="nearest")[:, 0] > 0.5
    return target


def crop_target(target: dict, region) -> dict:
    i, j, h, w = region
    target = target.copy()
    target["size"] = torch.tensor([h, w])
    fields = ["labels", "area", "iscrowd"]
    if "boxes" in target:
        boxes = target["boxes"] - torch.as_tensor([j, i, j, i])
        boxes = torch.min(boxes.reshape(-1, 2, 2), torch.as_tensor([w, h], dtype=torch.float32))
        boxes = boxes.clamp(min=0)
        target["area"] = (boxes[:, 1, :] - boxes[:, 0, :]).prod(dim=1)
        target["boxes"] = boxes.reshape(-1, 4)
        fields.append("boxes")
    if "masks" in target:
        target["masks"] = target["masks"][:, i:i + h, j:j + w]
        fields.append("masks")
    if "boxes" in target or "masks" in target:
        if "boxes" in target:
            corners = target["boxes"].reshape(-1, 2, 2)
            keep = torch.all(corners[:, 1, :] > corners[:, 0, :], dim=1)
        else:
            keep = target["masks"].flatten(1).any(1)
        for name in fields:
            target[name] = target[name][keep]
    return target


def normalize_target(target: dict, h: int, w: int) -> dict:
    """Their Normalize on the target: boxes to (cx, cy, w, h) over the image's size."""
    target = target.copy()
    if "boxes" in target:
        x0, y0, x1, y1 = target["boxes"].unbind(-1)
        boxes = torch.stack([(x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0), (y1 - y0)], dim=-1)
        target["boxes"] = boxes / torch.tensor([w, h, w, h], dtype=torch.float32)
    return target


# -- the native steps ---------------------------------------------------------------------
@dataclass
class Shape:
    """What the steps have done to an h x w photo (NOTE [ DETR's geometry in one plan ]):
    its first resize, the window kept of that (left, top, width, height; of the
    unmirrored image), the resize of the window after, the flip."""

    height: int
    width: int
    scaled: tuple[int, int] | None = None
    window: tuple[int, int, int, int] | None = None
    then: tuple[int, int] | None = None
    flip: bool = False

    def resize(self, oh: int, ow: int) -> None:
        if self.window is None and self.scaled is None:
            self.scaled = (oh, ow)
        else:  # lower.py lets no third resize through
            self.then = (oh, ow)
        self.height, self.width = oh, ow

    def crop(self, region) -> None:
        top, left, h, w = region
        if self.scaled is None:
            self.scaled = (self.height, self.width)
        if self.flip:  # the C core mirrors last
            left = self.width - left - w
        self.window = (left, top, w, h)
        self.height, self.width = h, w


def run(steps, size: tuple[int, int], target: dict) -> tuple[Shape, dict]:
    """The native steps on a target, drawing as their objects draw (the generators
    seeded by the caller)."""
    shape = Shape(*size)
    for step in steps:  # each step's move (families.py)
        target = step.move(shape, target)
    return shape, target


# -- their steps ---------------------------------------------------------------------------
# Each runs on a target through ``move`` (run, above), drawing from Python's random as
# their forwards do; the geometry is one plan (NOTE [ DETR's geometry in one plan ]).
@dataclass(frozen=True, kw_only=True)
class DetrFlip(Flip):
    slot: int = -1
    family: ClassVar[Family] = Family.DETR

    @classmethod
    def lowered(cls, t, prefix):
        return cls(name=f"RandomHorizontalFlip(p={t.p})", obj=t, p=float(t.p))

    def move(self, shape, target):
        if random.random() < self.p:
            shape.flip = not shape.flip
            target = flip_target(target, shape.width)
        return target


@dataclass(frozen=True, kw_only=True)
class DetrResize(Resize):
    sizes: tuple = ()
    family: ClassVar[Family] = Family.DETR

    @classmethod
    def admit(cls, t, prefix):
        if prefix.tensor or prefix.then:
            return "on a tensor, or a third resize"
        return None if t.sizes else "no sizes"

    @classmethod
    def lowered(cls, t, prefix):
        # a resize of the window: of the C core's output (NOTE [ DETR's geometry in one
        # plan ]), as their run draws it (move); a third would not fit the plan
        prefix.then = prefix.then or prefix.resized or prefix.cropped
        prefix.resized = True
        return cls(name=f"RandomResize({list(t.sizes)}, max_size={t.max_size})",
                   obj=t)

    def move(self, shape, target):
        oh, ow = resized_size(shape.height, shape.width, random.choice(self.obj.sizes),
                              self.obj.max_size)
        target = resize_target(target, shape.height, shape.width, oh, ow)
        shape.resize(oh, ow)
        return target

    def sizes_of(self, h: int, w: int) -> list[tuple[int, int]]:
        """Every (height, width) it may give an h x w photo."""
        return [resized_size(h, w, c, self.obj.max_size) for c in self.obj.sizes]


@dataclass(frozen=True, kw_only=True)
class DetrSizeCrop(Step):
    family: ClassVar[Family] = Family.DETR
    moves_masks: ClassVar[bool] = False
    pads: ClassVar[bool] = True  # the C core keeps a window of the resized photo

    @classmethod
    def admit(cls, t, prefix):
        if prefix.tensor or prefix.cropped or prefix.then:
            return "on a tensor, a second crop, or after the second resize"
        return None

    @classmethod
    def lowered(cls, t, prefix):
        prefix.cropped = True
        return cls(name=f"RandomSizeCrop({t.min_size}, {t.max_size})", obj=t)

    def move(self, shape, target):
        region = crop_region(self.obj, shape.height, shape.width)
        target = crop_target(target, region)
        shape.crop(region)
        return target


@dataclass(frozen=True, kw_only=True)
class Select(Group):
    """DETR's RandomSelect: transforms1 when ``random.random() < p``, else transforms2."""

    draw: str = "select"
    family: ClassVar[Family] = Family.DETR

    @classmethod
    def lowered(cls, t, prefix):
        branches = tuple(prefix.alternatives([steps_of(t.transforms1),
                                              steps_of(t.transforms2)]))
        names = " | ".join(", ".join(s.name for s in b) for b in branches)
        return cls(name=f"RandomSelect(p={t.p}: {names})", obj=t,
                   alternatives=branches, p=(float(t.p),))

    describe = Step.describe  # its name holds the branches

    def move(self, shape, target):
        for inner in self.alternatives[0 if random.random() < self.p[0] else 1]:
            target = inner.move(shape, target)
        return target


@dataclass(frozen=True, kw_only=True)
class DetrToTensor(ToTensor):
    family: ClassVar[Family] = Family.DETR

    @classmethod
    def admit(cls, t, prefix):
        return "a second conversion to a tensor" if prefix.tensor else None

    @classmethod
    def lowered(cls, t, prefix):
        prefix.tensor = prefix.float = True
        prefix.stage.append(OnImage(t))
        prefix.image_type = "tensor"
        return cls(name="ToTensor", obj=t)

    def move(self, shape, target):
        return target


@dataclass(frozen=True, kw_only=True)
class DetrNormalize(Normalize):
    """The image in the table; the boxes to (cx, cy, w, h) over the image's size."""

    family: ClassVar[Family] = Family.DETR
    staged = OnImage

    def move(self, shape, target):
        return normalize_target(target, shape.height, shape.width)
