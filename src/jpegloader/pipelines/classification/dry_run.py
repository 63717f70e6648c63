"""What one sample becomes: the transform after the native geometry, run once on a
synthetic image of the native output's size (the user's objects included)."""
from __future__ import annotations

import numpy as np
import torch
from PIL import Image

from ..random_stream import generators_kept
from ..tensor_stage import through
from .program import Sample
from .yours_in_c import yours_in_c


class DryRunFailed(Exception):
    """The transform fails on the synthetic image, or gives what cannot be batched."""


def sample_of(x) -> Sample | None:
    """The Sample an object is, or None when default_collate could not batch it."""
    if isinstance(x, torch.Tensor):
        return Sample("tensor", tuple(x.shape), str(x.dtype).removeprefix("torch."))
    if isinstance(x, np.ndarray):
        return Sample("ndarray", tuple(x.shape), str(x.dtype))
    if isinstance(x, Image.Image):
        return Sample("pil", (x.height, x.width), x.mode)
    return None


_DRY_RUNS: dict[tuple, Sample] = {}  # the same objects need no second dry run


def dry_run(size, yours_pil, stage, yours_tensor, handover) -> Sample:
    """Runs the transform after the native geometry once on a synthetic image of its
    output size (generators saved and restored): what one sample becomes.  Remembered
    for the same objects in the same state (by identity and repr), so renewing the
    verdict each epoch does not call the user's objects again."""
    key = (tuple(size), handover, len(yours_pil), len(stage),
           tuple((type(t), id(t), repr(t)) for t in (*yours_pil, *stage, *yours_tensor)))
    if key in _DRY_RUNS:
        return _DRY_RUNS[key]
    sample = _dry_run_once(size, yours_pil, stage, yours_tensor, handover)
    if len(_DRY_RUNS) > 256:
        _DRY_RUNS.clear()
    _DRY_RUNS[key] = sample
    return sample


def _dry_run_once(size, yours_pil, stage, yours_tensor, handover) -> Sample:
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, size=(*size, 3), dtype=np.uint8)
    # in C as in the workers (NOTE [ Your objects' work in C ]): its probes run here
    # once, and forked workers inherit their verdicts
    with generators_kept(), yours_in_c(yours_pil if handover == "pil" else ()):
        try:
            first = (*yours_pil, *stage) if handover == "pil" else stage
            x = through(yours_tensor, through(first, Image.fromarray(pixels, "RGB")))
        except Exception as e:  # noqa: BLE001 - the user's objects; their error is the reason
            raise DryRunFailed(f"the transform fails on a {size[1]}x{size[0]} image: "
                               f"{type(e).__name__}: {e}") from None
    if isinstance(x, torch.Tensor):
        x = x.as_subclass(torch.Tensor)
    sample = sample_of(x)
    if sample is None:
        raise DryRunFailed(f"the transform returns {type(x).__name__}, which cannot be batched")
    return sample
