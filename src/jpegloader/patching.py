"""Accelerating code that is not edited: every ``torch.utils.data.DataLoader`` it
builds is a ``jpegloader.DataLoader``.

    python -m jpegloader run [--decode exact] [--on-error skip] train.py ARGS...
    jpegloader.patch()          # in a notebook, before the loaders are built

Each loader built while patched says on stderr, in one line, where it was built and
whether it is accelerated (and if not, why).  A loader is what the code would have
had otherwise, plus the acceleration: the same arguments, the same batches.
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.utils.data
import torch.utils.data.dataloader

from .dataloader.loader import DataLoader, TorchDataLoader

#: Where code finds torch's class: ``torch.utils.data.DataLoader`` and the module
#: that defines it (``from torch.utils.data.dataloader import DataLoader``).
TORCH_NAMES = ((torch.utils.data, "DataLoader"), (torch.utils.data.dataloader, "DataLoader"))
_OWN_FILES = tuple(str(Path(p).resolve()) for p in (
    Path(torch.__file__).parent, Path(__file__).parent,
    Path(__file__).parent.parent / "habana_dataloader"))


def call_site(skip: int = 1) -> str:
    """file:line of the innermost frame outside torch and this package (the user's
    code that built a loader)."""
    frame = sys._getframe(skip)
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith("<frozen") and not str(Path(path).resolve()).startswith(
                _OWN_FILES):
            return f"{path}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def verdict_line(loader: DataLoader, index: int, where: str) -> str:
    """One line: where the loader was built, and accelerated or why not."""
    v = loader.eligibility
    if v.accelerated:
        return (f"jpegloader: loader {index} built at {where}: accelerated ({v.pipeline} "
                f"pipeline; {'; '.join(v.split_text().splitlines())})")
    return (f"jpegloader: loader {index} built at {where}: runs on torch's DataLoader: "
            f"{v.summary()}")


class Patch:
    """The replacement in force; ``undo()`` (or leaving a ``with`` block) puts torch's
    class back.  ``loaders`` lists the loaders built meanwhile."""

    def __init__(self, stream=None):
        self.stream = stream
        self.loaders: list[DataLoader] = []
        self._saved = [(module, name, getattr(module, name)) for module, name in TORCH_NAMES]
        patch = self

        class PatchedDataLoader(DataLoader):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                patch._built(self)

        PatchedDataLoader.__name__ = PatchedDataLoader.__qualname__ = "DataLoader"
        PatchedDataLoader.__module__ = DataLoader.__module__
        self.cls = PatchedDataLoader
        for module, name in TORCH_NAMES:
            setattr(module, name, PatchedDataLoader)

    def _built(self, loader: DataLoader) -> None:
        self.loaders.append(loader)
        if self.stream is not None:
            print(verdict_line(loader, len(self.loaders) - 1, call_site()), file=self.stream,
                  flush=True)

    def undo(self) -> None:
        for module, name, original in self._saved:
            if getattr(module, name) is self.cls:
                setattr(module, name, original)

    def __enter__(self) -> Patch:
        return self

    def __exit__(self, *exc) -> None:
        self.undo()


def patch(announce: bool = True) -> Patch:
    """Makes every ``torch.utils.data.DataLoader`` built from now on a
    ``jpegloader.DataLoader`` (code that imported the name before keeps torch's:
    call this first).  With ``announce``, each loader says in one line on stderr
    whether it is accelerated.  Returns the Patch; ``undo()`` reverts it."""
    return Patch(sys.stderr if announce else None)


__all__ = ["Patch", "TorchDataLoader", "call_site", "patch", "verdict_line"]
