"""Your PIL-stage objects' work in C while they run in a worker.

NOTE [ Your objects' work in C ]
While hybrid.py runs your PIL-stage objects, Pillow's ``Image.Image.transform`` (NOTE
[ Your affine warps in C ] in pil_affine.py), torchvision's policies' ``forward``
(NOTE [ Your RandAugment in C ] in auto_augment.py) and timm's RandAugment.__call__
(NOTE [ Your timm RandAugment in C ] in timm_augment.py) are ours: the policies only
for objects that are one, each only where its probe gives the library's own results
and the name still holds the library's own (a patch of yours stays yours), all put
back when the stage ends, error or not.  Your objects, their draws and their pixels
are unchanged.
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

from PIL import Image

from . import auto_augment, pil_affine, timm_augment


def _replacements(objects) -> list[tuple[object, str, object, object]]:
    """(owner, name, the library's, ours) for every name this copy replaces for
    ``objects`` (the probes' verdicts are cached; the policies' probe runs only for
    objects that are one)."""
    out = []
    if pil_affine.usable():
        out.append((Image.Image, "transform", pil_affine.PILLOWS, pil_affine.transform))
    if any(isinstance(t, tuple(auto_augment.TORCHVISIONS)) for t in objects) \
            and auto_augment.usable():
        out += [(cls, "forward", theirs, auto_augment.forward)
                for cls, theirs in auto_augment.TORCHVISIONS.items()]
    if any(map(timm_augment.is_timms, objects)) and timm_augment.usable():
        out.append((timm_augment.timms().RandAugment, "__call__", timm_augment.theirs(),
                    timm_augment.call))
    return out


def bytes_steps(t) -> Callable | None:
    """``t``'s steps taking an RGB image's bytes (``pixels=``), where hybrid.py may hand
    them over: torchvision's policies and timm's RandAugment, as they stand."""
    if auto_augment.takes_bytes(t):
        return functools.partial(auto_augment.steps, t)
    if timm_augment.takes_bytes(t):
        return functools.partial(timm_augment.steps, t)
    return None


@contextlib.contextmanager
def yours_in_c(objects=()):
    """Within: the work of your ``objects`` named in the NOTE above runs in C."""
    replaced = [(owner, name, theirs, ours)
                for owner, name, theirs, ours in _replacements(objects)
                if getattr(owner, name) is theirs]
    for owner, name, _, ours in replaced:
        setattr(owner, name, ours)
    try:
        yield
    finally:
        for owner, name, theirs, _ in replaced:
            setattr(owner, name, theirs)
