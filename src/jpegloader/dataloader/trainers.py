"""Trainers that rebuild a loader: the user's options kept, or one WARNING at once.

NOTE [ A loader a trainer threw away ]
``accelerator.prepare()`` and Ray Train's ``prepare_data_loader()`` build a torch
DataLoader from a loader's attributes, with no hook to keep its class
(accelerate#3322).  Where the rebuilt loader is torch's (torch's name not patched),
each imported trainer's ``prepare_data_loader`` method is wrapped, once, when a
jpegloader.DataLoader is built: one WARNING per loader, at the rebuild, names the
loader that lost its acceleration and the one line that keeps it.  A loader built
before the trainer was imported has only the backstop: dropped without being
iterated while the trainer is in use, one WARNING per process (never at exit).
Where the rebuilt loader is ours (under ``run`` or ``patch()``), see the next NOTE.

NOTE [ A trainer's rebuild keeps the user's options ]
Every jpegloader.DataLoader remembers the keyword-only options its caller passed
(``decode``, ``on_error``, ``device``, ...).  A loader built from inside a trainer's
rebuild (a frame of one of REBUILDS on the stack) over the same dataset object as a
live loader takes the options that loader was given, where it was not given them
itself: the rebuilt loader decodes, skips and delivers as the user's did.
"""
from __future__ import annotations

import functools
import logging
import sys
import weakref

import torch.utils.data

from .origin import dataset_text

_LG = logging.getLogger("jpegloader")
_said = False

#: trainer -> the one line that keeps a jpegloader.DataLoader under it
KEEP = {
    "Accelerate": ("accelerator.prepare() rebuilt it as torch's DataLoader; keep it with "
                   "jpegloader.integrations.accelerate.prepare(accelerator, ...) or run the "
                   "script under python -m jpegloader run"),
    "Ray Train": ("ray.train.torch.prepare_data_loader() rebuilt it as torch's DataLoader; "
                  "keep it with jpegloader.integrations.ray.prepare_data_loader(loader) or "
                  "run the script under python -m jpegloader run"),
}
#: (module prefix, function) of trainers' code that rebuilds a loader it was given
REBUILDS = (("accelerate.", "prepare_data_loader"), ("accelerate.", "skip_first_batches"),
            ("ray.train.", "prepare_data_loader"), ("lightning.", "_update_dataloader"),
            ("lightning_fabric.", "_update_dataloader"),
            ("pytorch_lightning.", "_update_dataloader"))
#: (module, class, trainer) whose ``prepare_data_loader`` method rebuilds a loader
_PREPARERS = (("accelerate.accelerator", "Accelerator", "Accelerate"),
              ("ray.train.torch.train_loop_utils", "_TorchAccelerator", "Ray Train"))
#: the jpegloader loaders built so far, latest last (dead references pruned)
_BUILT: list[weakref.ref] = []


class Use:
    """What became of one loader: iterated, handed to an adapter, its loss said."""

    __slots__ = ("iterated", "handed_over", "said", "where", "__weakref__")

    def __init__(self):
        self.iterated = self.handed_over = self.said = False
        self.where = "<unknown>"


def watch(loader, torch_class: type, where: str) -> Use:
    """A Use for ``loader`` (built at ``where``), checked when a trainer rebuilds it
    and when it is dropped (NOTE [ A loader a trainer threw away ]); ``torch_class``
    is torch's own DataLoader, to tell whether the patch is on."""
    use = Use()
    use.where = where
    finalizer = weakref.finalize(loader, _dropped, use, torch_class)
    finalizer.atexit = False
    _announce_rebuilds()
    return use


def remember(loader, options: dict) -> None:
    """Notes ``loader`` and the options its caller gave it, for a trainer's rebuild
    over the same dataset (NOTE [ A trainer's rebuild keeps the user's options ])."""
    loader._options_given = dict(options)
    _BUILT[:] = [ref for ref in _BUILT if ref() is not None]
    _BUILT.append(weakref.ref(loader))


def inherited_options(dataset, given: dict) -> dict:
    """The options a loader built now over ``dataset`` takes from the user's loader
    it rebuilds (empty unless a trainer is rebuilding one)."""
    users = (ref() for ref in reversed(_BUILT))
    user = next((loader for loader in users
                 if loader is not None and loader.dataset is dataset), None)
    if user is None or not _in_rebuild():  # the stack is walked only where one may be
        return {}
    return {k: v for k, v in user._options_given.items() if k not in given}


def _in_rebuild() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if any(module.startswith(prefix) and frame.f_code.co_name == name
               for prefix, name in REBUILDS):
            return True
        frame = frame.f_back
    return False


def trainer_in_use() -> str | None:
    """The trainer that rebuilds loaders, if one is set up in this process."""
    state = sys.modules.get("accelerate.state")
    if state is not None and getattr(getattr(state, "AcceleratorState", None),
                                     "_shared_state", None):
        return "Accelerate"
    if "ray.train.torch" in sys.modules:
        return "Ray Train"
    return None


def _announce_rebuilds() -> None:
    """Wraps each imported trainer's ``prepare_data_loader`` once (NOTE [ A loader a
    trainer threw away ])."""
    for module_name, class_name, trainer in _PREPARERS:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        method = getattr(cls, "prepare_data_loader", None)
        if method is None or getattr(method, "_jpegloader_announces", False):
            continue
        wrapper = _announcing(method, trainer)
        wrapper._jpegloader_announces = True
        cls.prepare_data_loader = wrapper


def _announcing(prepare, trainer: str):
    @functools.wraps(prepare)
    def prepare_data_loader(self, data_loader, *args, **kwargs):
        prepared = prepare(self, data_loader, *args, **kwargs)
        use = getattr(data_loader, "_use", None)
        if isinstance(use, Use) and not use.handed_over and not use.said:
            inner = prepared
            for attribute in ("base_dataloader", "_dataloader"):  # Accelerate's, Ray's
                inner = getattr(inner, attribute, inner)
            if inner is not data_loader and getattr(inner, "_use", None) is None:
                use.said = True
                _LG.warning("jpegloader.DataLoader built at %s over %s: %s, so its batches "
                            "come without acceleration and without its options (decode, "
                            "on_error, device, ...)", use.where,
                            dataset_text(data_loader.dataset), KEEP[trainer])
        return prepared
    return prepare_data_loader


def _dropped(use: Use, torch_class: type) -> None:
    global _said
    if _said or use.said or use.iterated or use.handed_over or \
            torch.utils.data.DataLoader is not torch_class:  # patched: the rebuild is ours
        return
    trainer = trainer_in_use()
    if trainer is None:
        return
    _said = True
    _LG.warning("jpegloader.DataLoader built at %s was dropped without being iterated "
                "while %s is in use: if %s, its batches come without acceleration "
                "(jpegloader's options too)", use.where, trainer, KEEP[trainer])


__all__ = ["KEEP", "REBUILDS", "Use", "inherited_options", "remember", "trainer_in_use",
           "watch"]
