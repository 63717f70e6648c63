"""Lowering a detection transform (torchvision v2, as ``references/detection/
presets.py`` builds it, and the families users copy: families.py) into a program:
the native steps in order (one class per kind of step: steps.py), then the user's
own objects from the first step that is not lowered, with the reason its class
gave.

Lowered:
- geometry, on the image natively and on the boxes and masks with torchvision's
  own kernels (``F.horizontal_flip``, ``F.resize``): ``RandomHorizontalFlip``,
  ``RandomZoomOut`` and ``RandomIoUCrop`` (their own ``make_params`` and
  ``transform`` on the target: draw.py), and one resize before the tensor
  conversion (``RandomShortestSize``, ``Resize``, bilinear: Pillow's arithmetic,
  which the C core reproduces; not after a zoom-out or a distortion);
- ``RandomPhotometricDistort`` on the photo first (the ssd policy): its draws by its
  own ``make_params``, its steps by the C core's colour program on the whole photo
  before the zoom-out's padding (Pillow's arithmetic on a PIL image, torchvision's
  float32 tensor arithmetic on a uint8 tensor: csrc/colour_tensor.h);
- the geometry above after ``PILToTensor`` / ``ToImage`` too (``--backend tensor``):
  on a uint8 tensor torch moves pixels as Pillow does, and its antialiased resize is
  within a level of Pillow's (states.Prefix.not_geometry);
- the tensor stage (``ToImage`` / ``PILToTensor``, ``ToDtype`` /
  ``ConvertImageDtype``, ``Normalize``), a table run on a 0..255 ramp
  (tensor_stage.py);
- ``RandomApply`` and ``RandomChoice`` of native steps (no flip or tensor conversion
  inside): each alternative lowered, the gate drawn as theirs draws (steps.Group);
- target steps that draw nothing and leave the pixels alone
  (``ConvertBoundingBoxFormat``, ``ClampBoundingBoxes``,
  ``SanitizeBoundingBoxes``, ``ToPureTensor``): the user's own objects, run on
  the target beside a stand-in image of the right size.

Everything from the first other step on (geometry or a distortion of a float image,
a second resize ...) runs as the user's objects in the workers on what the
native part gives (NOTE [ Hybrid pipelines ] in classification/hybrid.py), and the
verdict names the split; when the native part would hold no crop, resize or
padding (the decode alone), it does not pay and the loader is torch's, saying so.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from torchvision.transforms import v2 as T2

from ..contract import Check, check, object_name
from ..tensor_stage import TensorStageError, lut_array, run_on_ramp
from . import detr
from .families import lower_all
from .family import Family
from .states import flattened
from .steps import Step

RULE = "dataset.transforms"
#: The references' preset classes (presets.py), recognised by name in users' copies:
#: their __call__ is ``self.transforms(img, target)``.
PRESETS = ("DetectionPresetTrain", "DetectionPresetEval")


@dataclass(frozen=True)
class DetectionProgram:
    steps: tuple[Step, ...]
    #: the native output: "pil" (no tensor conversion before the split or the end),
    #: "uint8" or "float32" (CHW through ``lut``)
    output: str
    #: the image's type after the native part: "pil", "image" (tv_tensors.Image), "tensor"
    image_type: str
    lut: bytes | None = field(repr=False, default=None)
    tensor_stage: tuple = field(compare=False, default=())
    yours: tuple = field(compare=False, default=())   # the user's objects after the split
    yours_names: tuple[str, ...] = ()
    slots: int = 0
    key: str = ""
    collate_fn: object = field(compare=False, default=None)  # None: default_collate
    #: why the first of ``yours`` is not native ("" when all are)
    why_yours: str = ""

    @functools.cached_property  # asked per sample (draw.run_steps)
    def padded(self) -> bool:
        """Whether the C core pads each photo (NOTE [ Colour before the padding ] in
        csrc/pipeline.c): the photometric distortion runs on the whole photo, and the
        zoom-out's canvas is the padding; or resizes it whole and keeps a window of it
        (NOTE [ DETR's geometry in one plan ] in detr.py)."""
        return any(s.pads for s in flattened(self.steps))

    @functools.cached_property
    def fill(self) -> int:
        return next((s.fill for s in flattened(self.steps) if s.fill is not None), 0)

    @property
    def names(self) -> list[str]:
        return [s.describe() for s in self.steps]

    @functools.cached_property  # asked per sample (draw.run_steps)
    def draws_own(self) -> bool:
        """Whether a step draws with torch's or Python's generators (seeded per sample:
        NOTE [ Draws by the transforms' own make_params ] in draw.py)."""
        return any(s.draws_own for s in flattened(self.steps))

    @property
    def lut_array(self):
        return lut_array(self.lut)


def transform_list(transforms) -> tuple[list | None, str]:
    """The v2 steps of a dataset's ``transforms`` (unwrapping a Compose and the
    references' presets), or None and why not."""
    if transforms is None:
        return [], "no transforms"
    if type(transforms).__name__ in PRESETS and isinstance(
            getattr(transforms, "transforms", None), T2.Transform):
        transforms = transforms.transforms
    if not isinstance(transforms, T2.Transform):
        return None, (f"transforms is {type(transforms).__qualname__}, not torchvision v2 "
                      "transforms (or the references' DetectionPresetTrain/Eval)")
    out: list = []

    def walk(t):
        if type(t) is T2.Compose:
            for s in t.transforms:
                walk(s)
        else:
            out.append(t)
    walk(transforms)
    return out, f"{len(out)} v2 transforms"


def lower(transforms, family: Family = Family.V2
          ) -> tuple[DetectionProgram | None, list[Check]]:
    """``transforms``: the v2 dataset's ``transforms``, the steps after a v1 dataset's
    ConvertCocoPolysToMask (a list), a DETR dataset's ``_transforms`` (``family``
    DETR) or the steps an RT-DETR dataset's Compose runs this epoch (RT-DETR)."""
    detr_steps = family is Family.DETR
    if detr_steps:
        steps, what = detr.steps_of(transforms), "DETR's steps"
    else:
        steps, what = (list(transforms), "v1 steps") if isinstance(transforms, list) else \
            transform_list(transforms)
    if steps is None:
        return None, [Check(RULE, False, what, "use torchvision.transforms.v2 objects (as "
                            "references/detection/presets.py builds them with --use-v2); "
                            "this loader runs on torch's DataLoader")]
    b, split, why = lower_all(steps, family)
    if split < len(steps) and not (b.resized or b.cropped or b.padded):
        name = type(steps[split]).__name__
        return None, [Check(RULE, False,
                            f"the native part would be the decode alone (it stops at "
                            f"transform {split} {name}: {why}) and the rest per-sample "
                            "Python, where acceleration does not pay",
                            "this loader runs on torch's DataLoader, with the same results")]
    try:
        output, lut = run_on_ramp(b.stage) if b.stage else ("pil", None)
    except TensorStageError as e:
        return None, [Check(RULE, False, f"the tensor stage cannot be a table: {e}",
                            "this loader runs on torch's DataLoader")]
    yours = tuple(steps[split:])
    yours_names = tuple(object_name(t) for t in yours)
    program = DetectionProgram(tuple(b.steps), output, b.image_type, lut, tuple(b.stage),
                               yours, yours_names, b.slots,
                               key=repr(transforms), why_yours=why)
    native = ", ".join(["decode", *program.names])
    message = f"native: {native}"
    if yours:
        message += (f"; yours, in the workers: {', '.join(yours_names)} ({yours_names[0]} "
                    f"is not native here: {why}" +
                    (", and the rest follow it)" if len(yours) > 1 else ")"))
    return program, [check(RULE, True, message, "", "")]
