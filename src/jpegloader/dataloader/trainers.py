"""Trainers that rebuild a loader as torch's: one WARNING when one did.

NOTE [ A loader a trainer threw away ]
``accelerator.prepare()`` and Ray Train's ``prepare_data_loader()`` build a torch
DataLoader from a loader's attributes and drop the loader; neither offers a hook
to keep its class (accelerate#3322), and nothing of ours runs when they do.  So
each loader carries a finalizer: dropped without ever being iterated while
Accelerate is set up in the process or Ray Train's torch module is imported, and
neither handed to the adapters (integrations/) nor built under ``patch()`` (which
makes the rebuilt loader ours), it logs one WARNING naming the trainer and the
one-line way to keep the loader.  Once per process; never at interpreter exit.
"""
from __future__ import annotations

import logging
import sys
import weakref

import torch.utils.data

_LG = logging.getLogger("jpegloader")
_said = False

#: trainer -> the one line that keeps a jpegloader.DataLoader under it
KEEP = {
    "Accelerate": ("accelerator.prepare() rebuilt it as torch's DataLoader; keep it with "
                   "jpegloader.integrations.accelerate.prepare(accelerator, ...) or run the "
                   "script under python -m jpegloader run"),
    "Ray Train": ("ray.train.torch.prepare_data_loader() rebuilt it as torch's DataLoader; "
                  "keep it with jpegloader.integrations.ray.prepare_data_loader(loader)"),
}


class Use:
    """What became of one loader: iterated, or handed to an adapter."""

    __slots__ = ("iterated", "handed_over")

    def __init__(self):
        self.iterated = self.handed_over = False


def watch(loader, torch_class: type) -> Use:
    """A Use for ``loader``, checked when it is dropped (NOTE [ A loader a trainer threw
    away ]); ``torch_class`` is torch's own DataLoader, to tell whether the patch is on."""
    use = Use()
    finalizer = weakref.finalize(loader, _dropped, use, torch_class)
    finalizer.atexit = False
    return use


def trainer_in_use() -> str | None:
    """The trainer that rebuilds loaders, if one is set up in this process."""
    state = sys.modules.get("accelerate.state")
    if state is not None and getattr(getattr(state, "AcceleratorState", None),
                                     "_shared_state", None):
        return "Accelerate"
    if "ray.train.torch" in sys.modules:
        return "Ray Train"
    return None


def _dropped(use: Use, torch_class: type) -> None:
    global _said
    if _said or use.iterated or use.handed_over or \
            torch.utils.data.DataLoader is not torch_class:  # patched: the rebuild is ours
        return
    trainer = trainer_in_use()
    if trainer is None:
        return
    _said = True
    _LG.warning("jpegloader: a jpegloader.DataLoader was dropped without being iterated "
                "while %s is in use: %s, so its batches come without acceleration "
                "(jpegloader's options too)", trainer, KEEP[trainer])


__all__ = ["KEEP", "Use", "trainer_in_use", "watch"]
