"""The tensor stage (ToTensor / PILToTensor + ConvertImageDtype / Normalize ...),
reproduced by running the user's own objects once on a 0..255 ramp.

Each of those transforms maps every channel's 8-bit level to one value, so a
256-entry table per channel holds the whole stage, bit for bit; a stage that
keeps the levels (PILToTensor) gives uint8 output instead.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from PIL import Image


class TensorStageError(ValueError):
    """The stage cannot be a table; the message says why."""


def through(steps: Sequence[Callable], x):
    """``x`` through the user's steps, one after another."""
    for t in steps:
        x = t(x)
    return x


def run_on_ramp(tensor_stage: Sequence[Callable]) -> tuple[str, bytes | None]:
    """("float32", float32[3, 256] table bytes) or ("uint8", None)."""
    ramp = np.repeat(np.arange(256, dtype=np.uint8)[None, :, None], 3, axis=2)
    try:
        out = through(tensor_stage, Image.fromarray(ramp, "RGB"))
    except Exception as e:  # noqa: BLE001 - the user's objects; their error is the reason
        raise TensorStageError(f"the tensor stage fails on a 3x1x256 image: "
                               f"{type(e).__name__}: {e}") from None
    if isinstance(out, np.ndarray):
        out = torch.as_tensor(out)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (3, 1, 256):
        raise TensorStageError(f"the tensor stage gives {type(out).__name__} "
                               f"{tuple(getattr(out, 'shape', ()))} for a 3x1x256 image "
                               "instead of a 3-channel tensor")
    out = out.as_subclass(torch.Tensor)
    if out.dtype == torch.float32:
        return "float32", np.ascontiguousarray(out[:, 0, :].numpy()).tobytes()
    levels = torch.arange(256, dtype=torch.uint8).expand(3, 256)
    if out.dtype == torch.uint8 and torch.equal(out[:, 0, :], levels):
        return "uint8", None
    raise TensorStageError(f"the tensor stage gives {out.dtype} pixels: lowered are float32 "
                           "and uint8 (the levels unchanged)")


def lut_array(lut: bytes | None) -> np.ndarray | None:
    return None if lut is None else np.frombuffer(lut, np.float32).reshape(3, 256)


def division_form(tensor_stage: Sequence[Callable], lut: np.ndarray | None
                  ) -> np.ndarray | None:
    """NOTE [ Levels by division ]
    Reading the table costs the C core eight scalar loads per eight outputs; the
    arithmetic torch runs for ToTensor and Normalize, ((level / 255) - mean) / std
    in float32, costs two vector divisions, each correctly rounded as torch's are,
    and less time (docs/experiments.md).  So where the stage has
    at most one Normalize (mean and std as torch makes them, float32) and that
    arithmetic gives the table bit for bit on every level of every channel, this
    returns float32[3, 2] (mean, std per channel) for the C core to compute with;
    otherwise None and the table is read.  The table stays the reference: the
    check is against what the user's own objects produced on the ramp."""
    if lut is None:
        return None
    normalizes = [t for t in tensor_stage if hasattr(t, "mean") and hasattr(t, "std")]
    if len(normalizes) > 1:
        return None
    mean, std = np.zeros(3, np.float32), np.ones(3, np.float32)
    if normalizes:
        try:
            mean = np.broadcast_to(np.asarray(normalizes[0].mean, np.float32), 3)
            std = np.broadcast_to(np.asarray(normalizes[0].std, np.float32), 3)
        except (TypeError, ValueError):
            return None
    levels = np.arange(256, dtype=np.float32)
    with np.errstate(all="ignore"):
        computed = (levels[None, :] / np.float32(255) - mean[:, None]) / std[:, None]
    if computed.dtype != np.float32 or \
            not np.array_equal(computed.view(np.int32), np.asarray(lut, np.float32).view(np.int32)):
        return None
    return np.ascontiguousarray(np.stack([mean, std], axis=1), dtype=np.float32)
