"""Which step class lowers a transform, family by family: torchvision v2's classes by
exact type (V2_STEPS, as classification's LOWERINGS), and the classes users copy
into their own code, recognised by name and structure (the references' v1
classes and FixedSizeCrop, DETR's, RT-DETR's), each a subclass of the step it
is that overrides only its arithmetic (NOTE [ One class per step ] in steps.py).

Adding a transform is one step class and one line in its family's table.
"""
from __future__ import annotations

from torchvision.transforms import v2 as T2

from . import detr, rtdetr
from . import references_v1 as v1
from .family import Family
from .states import Prefix, Split
from .steps import (Distort, Flip, Group, IoUCrop, Normalize, Resize, ScaleJitter, Step, TargetOnly,
                    ToDtype, ToTensor, ZoomOut)

#: torchvision v2's classes, by exact type (a subclass may do anything).
V2_STEPS: dict[type, type[Step]] = {
    T2.RandomHorizontalFlip: Flip,
    T2.RandomShortestSize: Resize, T2.Resize: Resize,
    T2.ScaleJitter: ScaleJitter,
    T2.RandomIoUCrop: IoUCrop,
    T2.RandomZoomOut: ZoomOut,
    T2.RandomPhotometricDistort: Distort,
    T2.ToImage: ToTensor, T2.PILToTensor: ToTensor,
    T2.ToDtype: ToDtype, T2.ConvertImageDtype: ToDtype,
    T2.Normalize: Normalize,
    T2.ConvertBoundingBoxFormat: TargetOnly, T2.ClampBoundingBoxes: TargetOnly,
    T2.SanitizeBoundingBoxes: TargetOnly, T2.ToPureTensor: TargetOnly,
    T2.RandomApply: Group, T2.RandomChoice: Group,
}

#: Why a transform is not native, where no step class says it.
WHY_NOT = {"Mosaic": "it pastes other samples of the dataset into each one (DEIM's, "
                     "YOLO's): the C core decodes one photo per sample"}

#: The references' own classes, by name in users' copies.
V1_STEPS: dict[str, type[Step]] = {
    "RandomHorizontalFlip": v1.V1Flip,
    "RandomShortestSize": v1.V1ShortestSize,
    "ScaleJitter": v1.V1ScaleJitter,
    "RandomPhotometricDistort": v1.V1Distort,
    "RandomZoomOut": v1.V1ZoomOut,
    "RandomIoUCrop": v1.V1IoUCrop,
    "FixedSizeCrop": v1.FixedSizeCrop,
    "PILToTensor": v1.V1ToTensor,
    "ToDtype": v1.V1ToDtype, "ConvertImageDtype": v1.V1ToDtype,
}

#: DETR's classes (datasets/transforms.py), by name in users' copies.
DETR_STEPS: dict[str, type[Step]] = {
    "RandomHorizontalFlip": detr.DetrFlip,
    "RandomResize": detr.DetrResize,
    "RandomSizeCrop": detr.DetrSizeCrop,
    "RandomSelect": detr.Select,
    "ToTensor": detr.DetrToTensor,
    "Normalize": detr.DetrNormalize,
}


# -- resolving ----------------------------------------------------------------------------
def resolver(family: Family):
    """The ``resolve`` of a Prefix for a dataset of ``family``: DETR's takes only its
    own classes, RT-DETR's its own first; all take torchvision's and the
    references' classes."""
    def resolve(t) -> type[Step]:
        name = type(t).__name__
        theirs = not type(t).__module__.startswith("torchvision.")
        if family is Family.DETR:
            if not detr.is_theirs(t):
                raise Split(WHY_NOT.get(name, "not one of DETR's transforms that lower"))
            return DETR_STEPS[name]
        step = rtdetr.step_class(t) if family is Family.RTDETR else None
        step = step or (V1_STEPS.get(name) if theirs else None) or V2_STEPS.get(type(t))
        if step is not None:
            return step
        if name in WHY_NOT:
            raise Split(WHY_NOT[name])
        base = next((k.__name__ for k in V2_STEPS if isinstance(t, k)), None)
        raise Split(f"a subclass of {base}" if base else "no native lowering")
    return resolve


def lower_all(steps: list, family: Family) -> tuple[Prefix, int, str]:
    """Lowers ``steps`` as far as they go: (the prefix, how many lowered, why the
    next one did not: "" when all did)."""
    prefix = Prefix(resolver(family))
    for k, t in enumerate(steps):
        try:
            prefix.add(t)
        except Split as e:
            return prefix, k, str(e)
    return prefix, len(steps), ""


__all__ = ["DETR_STEPS", "V1_STEPS", "V2_STEPS", "lower_all", "resolver"]
