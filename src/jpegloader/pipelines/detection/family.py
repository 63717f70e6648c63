"""Whose code a detection dataset and its steps are: the family the recogniser
names, the lowering asks (``families.resolver``) and each step class declares."""
from __future__ import annotations

import enum


class Family(enum.Enum):
    """torchvision's v2 (its wrapper builds the targets), the detection references'
    v1 classes in users' copies (their ConvertCocoPolysToMask), DETR's or RT-DETR's
    own CocoDetection (its ``prepare`` builds them) and transforms."""

    V2 = ("torchvision", "")
    V1 = ("the references", " (references)")
    DETR = ("DETR", " (DETR)")
    RTDETR = ("RT-DETR", " (RT-DETR)")

    def __init__(self, title: str, tag: str):
        #: its name in the verdict ("DETR's CocoDetection")
        self.title = title
        #: what the verdict says after the name of one of its steps
        self.tag = tag

    @property
    def own_dataset(self) -> bool:
        """A CocoDetection of its own, recognised by name, whose ``prepare`` builds
        the targets."""
        return self in (Family.DETR, Family.RTDETR)
