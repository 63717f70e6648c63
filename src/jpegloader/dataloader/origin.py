"""Where a loader comes from, in words: the line of the user's code that built it,
and the dataset it reads (for the lines that say what each loader does)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import torch

_PACKAGE = Path(__file__).parent.parent
_OWN_FILES = tuple(str(Path(p).resolve()) for p in (
    Path(torch.__file__).parent, _PACKAGE, _PACKAGE.parent / "habana_dataloader"))


#: Trainers' wrappers around every DataLoader's __init__ (Lightning records the
#: arguments there): the loader was built by the code that called them.
_INIT_WRAPPERS = ("lightning/fabric/utilities/data.py", "lightning_fabric/utilities/data.py")


def call_site(skip: int = 1) -> str:
    """file:line of the innermost frame outside torch, this package and trainers'
    __init__ wrappers (the user's code that built a loader)."""
    frame = sys._getframe(skip)
    while frame is not None:
        path = frame.f_code.co_filename
        resolved = str(Path(path).resolve()) if not path.startswith("<") else path
        if not path.startswith("<frozen") and not resolved.startswith(_OWN_FILES) and \
                not resolved.endswith(_INIT_WRAPPERS):
            return f"{path}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def dataset_text(dataset) -> str:
    """The dataset in a few words: its class, its folder or first file (which tell a
    train split from a val one where one factory builds both), its length."""
    where = next((getattr(dataset, a) for a in ("img_folder", "root", "urls")
                  if getattr(dataset, a, None) is not None), None)
    if isinstance(where, (list, tuple)) and where:
        where = where[0] if len(where) == 1 else f"{where[0]} and {len(where) - 1} more"
    parts = [os.fspath(where)] if isinstance(where, (str, os.PathLike)) else []
    try:
        parts.append(f"{len(dataset)} samples")
    except TypeError:
        pass
    return f"{type(dataset).__name__}({', '.join(parts)})"


__all__ = ["call_site", "dataset_text"]
