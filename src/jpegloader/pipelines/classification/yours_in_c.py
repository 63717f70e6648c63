"""Your PIL-stage objects' work in C while they run in a worker.

NOTE [ Your objects' work in C ]
While hybrid.py runs your PIL-stage objects, Pillow's ``Image.Image.transform`` (NOTE
[ Your affine warps in C ] in pil_affine.py) and torchvision's RandAugment's and
TrivialAugmentWide's ``forward`` (NOTE [ Your RandAugment in C ] in auto_augment.py)
are ours: each only where its probe gives the installed library's own results, each
only where the name still holds the library's own (a patch of yours stays yours),
all put back when the stage ends, error or not.  Your objects, their draws and
their pixels are unchanged.
"""
from __future__ import annotations

import contextlib

from PIL import Image

from . import auto_augment, pil_affine


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
    return out


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
