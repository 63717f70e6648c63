"""Accelerating code that is not edited: every ``torch.utils.data.DataLoader`` it
builds is a ``jpegloader.DataLoader``.

    python -m jpegloader run [--decode exact] [--on-error skip] train.py ARGS...
    jpegloader.patch()          # in a notebook, before the loaders are built

Each loader built while patched says on stderr, in one line, where it was built and
whether it is accelerated (and if not, why).  A loader is what the code would have
had otherwise, plus the acceleration: the same arguments, the same batches.
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import torch
import torch.utils.data
import torch.utils.data.dataloader

from .dataloader.loader import BUILT_HOOKS, T_co, DataLoader, TorchDataLoader
from .dataloader.origin import call_site, dataset_text

#: Where code finds torch's class: ``torch.utils.data.DataLoader`` and the module
#: that defines it (``from torch.utils.data.dataloader import DataLoader``).
TORCH_NAMES = ((torch.utils.data, "DataLoader"), (torch.utils.data.dataloader, "DataLoader"))


def verdict_line(loader: DataLoader, index: int, where: str) -> str:
    """One line: which loader (where it was built, over what), and accelerated or why
    not."""
    v = loader.eligibility
    which = f"jpegloader: loader {index} built at {where} over {dataset_text(loader.dataset)}"
    if v.accelerated:
        return (f"{which}: accelerated ({v.pipeline} pipeline; "
                f"{'; '.join(v.split_text().splitlines())})")
    return f"{which}: runs on torch's DataLoader: {v.summary()}"


class _TorchDataLoaderType(type):
    """The patched class's type: every torch DataLoader (torch's own, ours built
    before the patch or by name, a trainer's subclass) is an instance of the patched
    ``torch.utils.data.DataLoader``, as it was of torch's class.  Trainers decide
    with ``isinstance`` whether to shard a loader (Accelerate, Lightning)."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TorchDataLoader)

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, TorchDataLoader)


class Patch:
    """The replacement in force; ``undo()`` (or leaving a ``with`` block) puts torch's
    class back.  ``loaders`` lists the loaders built meanwhile."""

    def __init__(self, stream=None):
        self.stream = stream
        self.loaders: list[DataLoader] = []
        self._saved = [(module, name, getattr(module, name)) for module, name in TORCH_NAMES]

        # generic as torch's class is: code imported under the patch subclasses
        # DataLoader[T] (torchdata's StatefulDataLoader does)
        class PatchedDataLoader(DataLoader[T_co], metaclass=_TorchDataLoaderType):
            # wraps: the real signature shows through (inspect follows __wrapped__), for
            # trainers that rebuild a loader from its arguments by name (Lightning)
            @functools.wraps(DataLoader.__init__)
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)

        PatchedDataLoader.__name__ = PatchedDataLoader.__qualname__ = "DataLoader"
        PatchedDataLoader.__module__ = DataLoader.__module__
        self.cls = PatchedDataLoader
        for module, name in TORCH_NAMES:
            setattr(module, name, PatchedDataLoader)
        # every jpegloader.DataLoader says what it does, the script's own included
        BUILT_HOOKS.append(self._built)

    def _built(self, loader: DataLoader) -> None:
        self.loaders.append(loader)
        if self.stream is not None:
            # where the loader recorded it was built (origin.call_site, walked once)
            print(verdict_line(loader, len(self.loaders) - 1, loader._use.where),
                  file=self.stream,
                  flush=True)

    def undo(self) -> None:
        if self._built in BUILT_HOOKS:
            BUILT_HOOKS.remove(self._built)
        for module, name, original in self._saved:
            if getattr(module, name) is self.cls:
                setattr(module, name, original)

    def __enter__(self) -> Patch:
        return self

    def __exit__(self, *exc) -> None:
        self.undo()


# NOTE [ The patch follows the script's processes ]
# Trainers start processes of their own: Lightning's ddp launches the script again,
# ddp_spawn and multiprocessing's spawn start fresh interpreters, torchrun runs one per
# rank.  Each would import torch's class unpatched and train on torch's loader in
# silence.  ``run`` therefore sets JPEGLOADER_PATCH=1 and puts the package's
# _autopatch/ folder first on PYTHONPATH: its sitecustomize patches every Python
# process started below the script when it first imports torch (then runs any
# sitecustomize it shadows), and each loader a rank builds says so on stderr, as the
# script's own do.  Processes that never import torch (Ray's daemons and idle workers)
# start as fast as without the patch.
PATCH_ENV = "JPEGLOADER_PATCH"
AUTOPATCH_DIR = str(Path(__file__).parent / "_autopatch")
_this_process: Patch | None = None


def carry_into_children() -> None:
    """Makes the processes this one starts patch themselves (NOTE [ The patch follows
    the script's processes ])."""
    os.environ[PATCH_ENV] = "1"
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if AUTOPATCH_DIR not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([AUTOPATCH_DIR, *paths])


def patch_this_process() -> Patch | None:
    """What the _autopatch sitecustomize runs: one patch for the process's life."""
    global _this_process
    if _this_process is None:
        _this_process = patch()
    return _this_process


def patch(announce: bool = True) -> Patch:
    """Makes every ``torch.utils.data.DataLoader`` built from now on a
    ``jpegloader.DataLoader`` (code that imported the name before keeps torch's:
    call this first).  With ``announce``, each loader says in one line on stderr
    whether it is accelerated.  Returns the Patch; ``undo()`` reverts it."""
    return Patch(sys.stderr if announce else None)


__all__ = ["Patch", "TorchDataLoader", "call_site", "carry_into_children", "dataset_text",
           "patch", "patch_this_process", "verdict_line"]
