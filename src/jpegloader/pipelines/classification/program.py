"""What lowering produces: the program the C core runs for a classification
transform (and what of it is the user's own), and what one sample becomes."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ..tensor_stage import lut_array
from . import ops


@dataclass(frozen=True)
class Sample:
    """What one sample is once the whole transform has run: a "tensor" or "ndarray"
    of ``shape`` and ``dtype``, or a "pil" image of ``shape`` (height, width)."""

    kind: str
    shape: tuple[int, ...]
    dtype: str = ""

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(torch, self.dtype)


@dataclass(frozen=True)
class ClassificationProgram:
    """A transform pipeline the C core runs, wholly or as the native part of a hybrid
    (NOTE [ Hybrid pipelines ] in hybrid.py); compares equal when it would run the
    same way."""

    geometry: tuple[ops.GeometricOp, ...]  # crops, resizes and flips, in order
    colour: tuple[ops.ColourOp, ...]       # after the geometry, in order
    output_size: tuple[int, int]           # (height, width) the C core writes
    output_dtype: str                      # "float32" (through the lut) or "uint8"
    lut: bytes | None                      # float32[3, 256] for float output
    uniforms_per_sample: int
    tensor_stage: tuple[Callable, ...] = field(compare=False)  # the user's objects
    names: tuple[str, ...] = field(compare=False, default=())
    # The hybrid part: "slot": the C core writes the sample's tensor (its tensor stage
    # above); "pil": it hands the user's objects an RGB PIL image of output_size.
    handover: str = "slot"
    yours_pil: tuple[Callable, ...] = field(compare=False, default=())
    native_tail: bool = False  # after yours_pil, the tensor stage above runs natively
    yours_tensor: tuple[Callable, ...] = field(compare=False, default=())
    yours_key: tuple[str, ...] = ()  # the user's objects, by repr: a change is a new program
    sample: Sample | None = None
    split: tuple[tuple[str, tuple[str, ...]], ...] = field(compare=False, default=())

    @property
    def lut_array(self) -> np.ndarray | None:
        return lut_array(self.lut)

    @property
    def torch_dtype(self) -> torch.dtype:
        return torch.float32 if self.output_dtype == "float32" else torch.uint8

    @property
    def hybrid(self) -> bool:
        return self.handover == "pil" or bool(self.yours_tensor)
