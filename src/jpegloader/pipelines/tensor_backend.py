"""Geometry of a uint8 tensor (torchvision's references with ``--backend tensor``), which
the pipelines lower as on a PIL image where torch's arithmetic follows Pillow's (NOTE
[ The tensor backend ] in classification/lower.py): whether a resize antialiases."""
from __future__ import annotations

import inspect

from torchvision.transforms import functional as F


def antialiases(t) -> bool:
    """Whether ``t`` resizes a tensor with antialiasing: its own ``antialias`` (None, as
    False, is torch's plain interpolation), or, for a class that passes none (the
    references' v1 classes, timm's), torchvision's functional default."""
    if not hasattr(t, "antialias"):
        return inspect.signature(F.resize).parameters["antialias"].default is True
    return t.antialias is True
