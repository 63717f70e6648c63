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
from .states import SampleState, image_size
from .steps import Flip, Group, Normalize, OnImage, OwnToTensor, Resize, Step

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


# -- their steps ---------------------------------------------------------------------------
class Theirs:
    """DETR's steps as the one interpreter runs every step (``run`` on a SampleState,
    draw.run_steps): on an image (the Python path, a replay), their own object; on a
    target, ``move``: their draws (Python's random, seeded per sample, as their
    forwards draw) and arithmetic, and the geometry of one plan (NOTE [ DETR's
    geometry in one plan ]: a resize after a resize or a window resizes the C core's
    output, ``core``)."""

    draws_own: ClassVar[bool] = True
    family: ClassVar[Family] = Family.DETR

    def run(self, state: SampleState, draws, k: int) -> None:
        if state.image is None:
            self.move(state)
            return
        state.image, state.target = self.obj(state.image, state.target)
        state.h, state.w = image_size(state.image)
        state.crop, state.pad, state.scaled, state.flip = (0, 0, state.w, state.h), None, \
            None, False

    def move(self, state: SampleState) -> None:
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class DetrFlip(Theirs, Flip):
    slot: int = -1

    @classmethod
    def lowered(cls, t, prefix):
        return cls(name=f"RandomHorizontalFlip(p={t.p})", obj=t, p=float(t.p))

    def move(self, state):
        if random.random() < self.p:
            state.flip = not state.flip
            state.target = flip_target(state.target, state.w)


@dataclass(frozen=True, kw_only=True)
class DetrResize(Theirs, Resize):
    sizes: tuple = ()

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

    def move(self, state):
        oh, ow = resized_size(state.h, state.w, random.choice(self.obj.sizes),
                              self.obj.max_size)
        state.target = resize_target(state.target, state.h, state.w, oh, ow)
        if state.reshaped:  # lower.py lets no third resize through
            state.core = (state.h, state.w)
        elif state.pad is not None:  # the whole photo, which a window is kept of
            state.scaled, state.pad, state.crop = (oh, ow), (0, 0, ow, oh), (0, 0, ow, oh)
        state.h, state.w, state.reshaped = oh, ow, True

    def sizes_of(self, h: int, w: int) -> list[tuple[int, int]]:
        """Every (height, width) it may give an h x w photo."""
        return [resized_size(h, w, c, self.obj.max_size) for c in self.obj.sizes]

    def largest(self, areas, h, w):  # every size it draws, of the photo
        return [*areas, *(a * b for a, b in self.sizes_of(h, w))]


@dataclass(frozen=True, kw_only=True)
class DetrSizeCrop(Theirs, Step):
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

    def move(self, state):
        top, left, h, w = region = crop_region(self.obj, state.h, state.w)
        state.target = crop_target(state.target, region)
        state.window({"top": top, "left": left, "height": h, "width": w})
        state.reshaped = True


@dataclass(frozen=True, kw_only=True)
class Select(Theirs, Group):
    """DETR's RandomSelect: transforms1 when ``random.random() < p``, else transforms2."""

    draw: str = "select"

    @classmethod
    def lowered(cls, t, prefix):
        branches = tuple(prefix.alternatives([steps_of(t.transforms1),
                                              steps_of(t.transforms2)]))
        names = " | ".join(", ".join(s.name for s in b) for b in branches)
        return cls(name=f"RandomSelect(p={t.p}: {names})", obj=t,
                   alternatives=branches, p=(float(t.p),))

    describe = Step.describe  # its name holds the branches

    def chosen(self) -> int:
        return 0 if random.random() < self.p[0] else 1

    def move(self, state):
        Group.run(self, state, None, -1)


@dataclass(frozen=True, kw_only=True)
class DetrToTensor(Theirs, OwnToTensor):
    @classmethod
    def lowered(cls, t, prefix):
        prefix.float = True  # F.to_tensor's float32 in [0, 1]
        return super().lowered(t, prefix)

    def move(self, state):
        pass


@dataclass(frozen=True, kw_only=True)
class DetrNormalize(Theirs, Normalize):
    """The image in the table; the boxes to (cx, cy, w, h) over the image's size."""

    staged = OnImage

    def move(self, state):
        state.target = normalize_target(state.target, state.h, state.w)
