"""RT-DETR's own data pipeline (lyuwenyu/RT-DETR ``rtdetrv2_pytorch/src/data``; D-FINE
and DEIM copy it), recognised by name and structure in users' copies: their
CocoDetection (``load_item``: their ConvertCocoPolysToMask as ``prepare``, the sample's
index as ``idx``, boxes as tv_tensors), their Compose of torchvision v2 transforms with
an epoch policy, their RandomIoUCrop (a ``p`` drawn before torchvision's), and their
ConvertPILImage and ConvertBoxes.

The policy ("stop_epoch": the heavy ops left out from an epoch on) is read at each
epoch's verdict, with the dataset's ``epoch``: the loader lowers the transforms that
run that epoch (NOTE [ The pipeline follows the dataset ] in dataloader/loader.py).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import ClassVar

import torch
from torchvision import datasets
from torchvision.transforms import v2 as T2

from . import iou_crop
from .family import Family
from .steps import IoUCrop, Step, TargetOnly, TensorStage

#: Their own classes: what each reads.
ATTRIBUTES = {"RandomIoUCrop": ("p",), "ConvertPILImage": ("dtype", "scale"),
              "ConvertBoxes": ("fmt", "normalize")}


def _module(obj):
    return sys.modules.get(type(obj).__module__)


def is_dataset(dataset) -> bool:
    """Their CocoDetection: torchvision's subclassed, with ``prepare`` (their
    ConvertCocoPolysToMask), ``_transforms`` and ``load_item``, and their module's
    ``convert_to_tv_tensor``."""
    return isinstance(dataset, datasets.CocoDetection) and \
        type(dataset).__name__ == "CocoDetection" and \
        type(getattr(dataset, "prepare", None)).__name__ == "ConvertCocoPolysToMask" and \
        hasattr(dataset, "_transforms") and callable(getattr(dataset, "load_item", None)) \
        and callable(getattr(_module(dataset), "convert_to_tv_tensor", None))


def load_target(ds, index: int, image, annotations) -> dict:
    """The target their ``load_item`` builds for sample ``index`` beside ``image`` (a
    stand-in with the photo's ``size`` will do), with their own functions."""
    module = _module(ds)
    target = {"image_id": ds.ids[index], "annotations": annotations}
    if getattr(ds, "remap_mscoco_category", False):
        _, target = ds.prepare(image, target, category2label=module.mscoco_category2label)
    else:
        _, target = ds.prepare(image, target)
    target["idx"] = torch.tensor([index])
    if "boxes" in target:
        target["boxes"] = module.convert_to_tv_tensor(target["boxes"], key="boxes",
                                                      spatial_size=image.size[::-1])
    if "masks" in target:
        target["masks"] = module.convert_to_tv_tensor(target["masks"], key="masks")
    return target


def active_steps(transforms, epoch: int) -> tuple[list | None, str]:
    """The transforms their Compose runs at ``epoch`` (its policy applied), and what
    the policy left out; None when their Compose is not recognised or its policy
    depends on more than the epoch."""
    if transforms is None:
        return [], ""
    policy = getattr(transforms, "policy", None)
    inner = getattr(transforms, "transforms", None)
    if not isinstance(transforms, T2.Compose) or not isinstance(policy, dict) or \
            not isinstance(inner, (list, tuple)):
        return None, f"transforms is {type(transforms).__qualname__}, not RT-DETR's Compose"
    name = policy.get("name", "default")
    if name == "default":
        return list(inner), ""
    if name != "stop_epoch":
        return None, f"RT-DETR's Compose policy {name!r} depends on the samples seen so far"
    if not isinstance(policy.get("epoch"), int):  # DEIM's stages: Mosaic drawn per sample
        return None, (f"the Compose policy's epochs {policy.get('epoch')!r} are stages "
                      "(DEIM's), not one stop epoch: not followed natively")
    stopped = epoch >= policy["epoch"]
    steps = [t for t in inner if not (stopped and type(t).__name__ in policy["ops"])]
    left = [type(t).__name__ for t in inner if t not in steps]
    return steps, (f"its policy leaves out {', '.join(left)} from epoch {policy['epoch']}"
                   if left else "")


def is_theirs(t, name: str) -> bool:
    return type(t).__name__ == name and not type(t).__module__.startswith("torchvision.") \
        and all(hasattr(t, a) for a in ATTRIBUTES[name])


def is_gated_iou_crop(t) -> bool:
    """Their RandomIoUCrop: torchvision's, after a ``torch.rand(1) >= p`` of its own."""
    return isinstance(t, T2.RandomIoUCrop) and is_theirs(t, "RandomIoUCrop")


# -- their steps ----------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class GatedIoUCrop(IoUCrop):
    """RT-DETR's RandomIoUCrop: ``torch.rand(1) >= p`` skips it, then v2's."""

    p: float = 1.0
    family: ClassVar[Family] = Family.RTDETR

    @classmethod
    def lowered(cls, t, prefix):
        prefix.cropped = True
        return cls(name=f"RandomIoUCrop(p={t.p})", obj=t, p=float(t.p),
                   fast=iou_crop.agrees(t))

    def drawn(self, flat, h, w):
        if torch.rand(1) >= self.p:
            return None
        return super().drawn(flat, h, w)


@dataclass(frozen=True, kw_only=True)
class ConvertPILImage(TensorStage):
    family: ClassVar[Family] = Family.RTDETR

    @classmethod
    def admit(cls, t, prefix):
        if prefix.tensor:
            return "a second conversion to a tensor"
        return None if t.dtype in ("float32", "uint8") else f"dtype {t.dtype!r}"

    @classmethod
    def lowered(cls, t, prefix):
        prefix.tensor, prefix.float = True, t.dtype == "float32" or bool(t.scale)
        prefix.stage.append(t)
        prefix.image_type = "image"
        return cls(name=f"ConvertPILImage({t.dtype}, scale={t.scale})", obj=t)


@dataclass(frozen=True, kw_only=True)
class ConvertBoxes(TargetOnly):
    family: ClassVar[Family] = Family.RTDETR

    @classmethod
    def lowered(cls, t, prefix):
        return cls(name=f"ConvertBoxes({t.fmt!r}, normalize={t.normalize})", obj=t)


def step_class(t) -> type[Step] | None:
    if is_gated_iou_crop(t):
        return GatedIoUCrop
    if is_theirs(t, "ConvertPILImage"):
        return ConvertPILImage
    return ConvertBoxes if is_theirs(t, "ConvertBoxes") else None
