"""Methods of the user's Ultralytics steps replaced for a batch by this package's
arithmetic (polygons.py, instances.py), each only where the installed sources of what
it stands for are the verified ones; the verdict's line on them.

NOTE [ Label arithmetic in place ]
A replacement is an instance attribute set on the user's step for the batch and
removed after it (``replaced_for_batch``), so every other method, and each step's
random draws, stay the user's.  It stands for named functions (the method itself and
what it calls), found from the installed method through globals and class attributes;
a short hash of each one's source (docstrings, comments and blank lines left out) must
be one the test suite verified against Ultralytics' own objects (``_VERIFIED``).
Another version, or a method the user set on the object, runs as the user's, and the
verdict names the version and why.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import inspect
import sys
import textwrap
from typing import ClassVar

from . import instances, polygons
from .recognise import _is_ultralytics

#: The verified sources (Ultralytics 8.4.190) of what each replacement stands for.
_VERIFIED = {
    "Mosaic.apply_instances": {"0825bdcde7de7420"},
    "Mosaic._update_labels": {"fd3cfcda9959799d"},
    "Mosaic._cat_labels": {"580de9252f821891"},
    "Instances.denormalize": {"21d437e89ccab162"},
    "Instances.add_padding": {"79c4dde58226953c"},
    "Instances.concatenate": {"4be0aa0a4799b2c9"},
    "Instances.clip": {"c4022262566f5309"},
    "Instances.remove_zero_area_boxes": {"5ec3973750fa9d76"},
    "Instances.bbox_areas": {"f7fd114e2c190acc"},
    "Bboxes.mul": {"d21aa91dbc000d19"},
    "Bboxes.add": {"755d47125867d4ce"},
    "Bboxes.areas": {"40d6778b415aa93e"},
    "Format.apply_instances": {"3de02fa9ad8d3b26"},
    "RandomPerspective.apply_instances": {"75880352c153ae14"},
    "Instances.scale": {"61ce303245cce741"},
    "Instances.__getitem__": {"1bed5465f3300b80"},
    "RandomPerspective.apply_segments": {"5ff5cd312a2effd8"},
    "segment2box": {"d242c3eb3f4aaefa"},
    "Format._format_segments": {"ce44237b5efc0cec"},
    "polygons2masks_overlap": {"948db0c35533d914"},
    "polygons2masks": {"7bed17674c07cd5f"},
    "polygon2mask": {"08d4db536a57c9ef"},
    "RandomFlip.apply_instances": {"01db4eb76394dace"},
    "Instances.fliplr": {"740d9adb5e5a919b"},
    "Instances.flipud": {"8c79bb961d40ba47"},
    "LetterBox.apply_instances": {"e60a919ddca3f7fd"},
    "LetterBox._update_labels": {"e6bf6f7f73855fb3"},
    "MixUp.apply_instances": {"02f230e62809bafb"},
    "CutMix.apply_instances": {"664a4743e51334ed"},
    "CopyPaste.apply_instances": {"c7205f6bf83a62f1"},
    "resample_segments": {"a7431a4ff1513b99"},
    "xyxyxyxy2xywhr": {"bea2ce36a2f7a24b"},
}


def source_key(fn) -> str | None:
    """A short hash of a function's source without its docstring, comments and blank
    lines (None where Python cannot read its source)."""
    try:
        text = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(text)
    except (OSError, TypeError, SyntaxError):
        return None
    lines = text.splitlines()
    body = getattr(tree.body[0], "body", []) if tree.body else []
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        del lines[body[0].lineno - 1:body[0].end_lineno]
    kept = [line.rstrip() for line in lines
            if line.strip() and not line.strip().startswith("#")]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()[:16]


def ultralytics_version() -> str:
    return str(getattr(sys.modules.get("ultralytics"), "__version__", "unknown"))


class InPlace:
    """A method of the user's step replaced for a batch by ``computes`` (a function
    of ``module`` taking the step first, looked up at each batch), standing for the
    ``sources``: (name, the names that lead to it from the method: a function's
    global, or a class's attribute)."""

    step: ClassVar[str]
    attribute: ClassVar[str]
    describes: ClassVar[str]
    module: ClassVar[object]
    computes: ClassVar[str]
    sources: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]]

    @classmethod
    def functions(cls, step) -> dict:
        """What the replacement stands for: name -> the installed function (or None)."""
        found = {}
        for name, path in cls.sources:
            fn = getattr(step, cls.attribute, None)
            for part in path:
                fn = getattr(fn, part, None) if isinstance(fn, type) else \
                    getattr(fn, "__globals__", {}).get(part)
            found[name] = fn
        return found

    @classmethod
    def unverified(cls, step) -> list[str]:
        """The functions whose installed source is not a verified one."""
        return _unverified(type(step), cls)

    @classmethod
    def claims(cls, step) -> bool:
        return _is_ultralytics(step, cls.step) and cls.attribute not in vars(step) and \
            not cls.unverified(step)

    @classmethod
    def runs_for(cls, step, dataset) -> bool:
        """Whether ``step`` computes this on the dataset's samples at all."""
        return True

    @classmethod
    def method(cls, step):
        return functools.partial(getattr(cls.module, cls.computes), step)


@functools.lru_cache(maxsize=None)
def _unverified(step_type: type, kind: type[InPlace]) -> list[str]:
    found = kind.functions(step_type)
    return [name for name, fn in found.items()
            if fn is None or source_key(getattr(fn, "fget", fn)) not in _VERIFIED.get(name, ())]


def _instances(*names: str) -> tuple:
    """Sources for methods of Ultralytics' Instances, found from the method's globals."""
    return tuple((f"Instances.{n}", ("Instances", n)) for n in names)


def _bboxes(*names: str) -> tuple:
    """Sources for methods of the Bboxes an Instances holds (its __init__'s global)."""
    return tuple((f"Bboxes.{n}", ("Instances", "__init__", "Bboxes", n)) for n in names)


#: What Instances.clip's oriented path calls to resample a rectangle (oriented.py).
_RESAMPLED = (("resample_segments", ("Instances", "clip", "resample_segments")),)


class PerspectiveSegments(InPlace):
    step, attribute, describes = "RandomPerspective", "apply_segments", \
        "RandomPerspective segments and their boxes"
    module, computes = polygons, "warped_segments"
    sources = (("RandomPerspective.apply_segments", ()), ("segment2box", ("segment2box",)))

    @classmethod
    def runs_for(cls, step, dataset) -> bool:
        return bool(getattr(dataset, "use_segments", False) or getattr(dataset, "use_obb", False))


class FormatMasks(InPlace):
    step, attribute, describes = "Format", "_format_segments", "Format masks"
    module, computes = polygons, "formatted_masks"
    sources = (("Format._format_segments", ()),
               ("polygons2masks_overlap", ("polygons2masks_overlap",)),
               ("polygons2masks", ("polygons2masks",)),
               ("polygon2mask", ("polygons2masks", "polygon2mask")))

    @classmethod
    def runs_for(cls, step, dataset) -> bool:
        return bool(getattr(step, "return_mask", False))


class MosaicLabels(InPlace):
    step, attribute, describes = "Mosaic", "apply_instances", "Mosaic labels"
    module, computes = instances, "mosaic_instances"
    sources = (("Mosaic.apply_instances", ()),
               ("Mosaic._update_labels", ("Mosaic", "_update_labels")),
               ("Mosaic._cat_labels", ("Mosaic", "_cat_labels"))) + \
        _instances("denormalize", "add_padding", "concatenate", "clip",
                   "remove_zero_area_boxes", "bbox_areas") + _bboxes("mul", "add", "areas") + \
        _RESAMPLED


class PerspectiveLabels(InPlace):
    step, attribute, describes = "RandomPerspective", "apply_instances", \
        "RandomPerspective labels"
    module, computes = instances, "perspective_instances"
    sources = (("RandomPerspective.apply_instances", ()),) + \
        _instances("clip", "scale", "__getitem__") + _bboxes("mul") + _RESAMPLED


class FormatLabels(InPlace):
    step, attribute, describes = "Format", "apply_instances", "Format labels"
    module, computes = instances, "formatted_labels"
    sources = (("Format.apply_instances", ()), ("xyxyxyxy2xywhr", ("xyxyxyxy2xywhr",)))


class FlipLabels(InPlace):
    step, attribute, describes = "RandomFlip", "apply_instances", "RandomFlip labels"
    module, computes = instances, "flipped_instances"
    sources = (("RandomFlip.apply_instances", ()),) + _instances("fliplr", "flipud")


class LetterBoxLabels(InPlace):
    step, attribute, describes = "LetterBox", "apply_instances", "LetterBox labels"
    module, computes = instances, "letterboxed_instances"
    sources = (("LetterBox.apply_instances", ()),
               ("LetterBox._update_labels", ("LetterBox", "_update_labels"))) + \
        _instances("denormalize", "scale", "add_padding") + _bboxes("mul", "add")


class _Mixing(InPlace):
    """A mixing step's labels: computed only where the step runs (its ``p`` > 0)."""

    @classmethod
    def runs_for(cls, step, dataset) -> bool:
        return getattr(step, "p", 0) > 0


class MixUpLabels(_Mixing):
    step, attribute, describes = "MixUp", "apply_instances", "MixUp labels"
    module, computes = instances, "mixed_instances"
    sources = (("MixUp.apply_instances", ()),) + _instances("concatenate")


class CutMixLabels(_Mixing):
    step, attribute, describes = "CutMix", "apply_instances", "CutMix labels"
    module, computes = instances, "cut_instances"
    sources = (("CutMix.apply_instances", ()),) + \
        _instances("denormalize", "add_padding", "clip", "concatenate",
                   "remove_zero_area_boxes", "bbox_areas") + _bboxes("mul", "add", "areas") + \
        _RESAMPLED


class CopyPasteLabels(_Mixing):
    step, attribute, describes = "CopyPaste", "apply_instances", "CopyPaste labels"
    module, computes = instances, "pasted_instances"
    sources = (("CopyPaste.apply_instances", ()),) + _instances("concatenate")

    @classmethod
    def runs_for(cls, step, dataset) -> bool:
        return super().runs_for(step, dataset) and bool(  # polygons, or oriented boxes
            getattr(dataset, "use_segments", False) or getattr(dataset, "use_obb", False))


#: The replacements, each asked of every step.
IN_PLACE: tuple[type[InPlace], ...] = (MosaicLabels, MixUpLabels, CutMixLabels, CopyPasteLabels,
                                       PerspectiveSegments, PerspectiveLabels, FlipLabels,
                                       LetterBoxLabels, FormatMasks, FormatLabels)


def _applying(planned, dataset):
    """(step, kind) for each replacement that would run on the dataset's samples,
    claimed or not."""
    for step, _ in planned:
        for kind in IN_PLACE:
            if _is_ultralytics(step, kind.step) and kind.runs_for(step, dataset):
                yield step, kind


def described(planned, dataset) -> tuple[list[str], str | None]:
    """The replacements the dataset's samples take (their descriptions) and the
    verdict's line on them, naming the Ultralytics version (None: none applies)."""
    taken, left = [], []
    for step, kind in _applying(planned, dataset):
        if kind.claims(step):
            taken.append(kind.describes)
        elif kind.attribute in vars(step):
            left.append(f"{kind.describes} ({kind.step}.{kind.attribute} is set on your "
                        "object)")
        else:
            left.append(f"{kind.describes} ({', '.join(kind.unverified(step))} not as "
                        "verified)")
    taken, left = list(dict.fromkeys(taken)), list(dict.fromkeys(left))  # two flips: once
    if not taken and not left:
        return [], None
    version = ultralytics_version()
    said = [f"{', '.join(taken)} computed natively"] if taken else []
    if left:
        said.append(f"your objects compute {'; '.join(left)}")
    return taken, f"Ultralytics {version}: " + "; ".join(said)


def labels_replaced(planned, dataset) -> set[int]:
    """The ids of the steps whose whole ``apply_instances`` is this package's."""
    return {id(step) for step, kind in _applying(planned, dataset)
            if kind.attribute == "apply_instances" and kind.claims(step)}


@contextlib.contextmanager
def replaced_for_batch(planned):
    """For the batch, each claimed step of ``planned`` (steps.planned_steps) takes
    this package's arithmetic (NOTE [ Label arithmetic in place ])."""
    placed = []
    try:
        for step, _ in planned:
            for kind in IN_PLACE:
                if kind.claims(step):
                    setattr(step, kind.attribute, kind.method(step))
                    placed.append((step, kind.attribute))
        yield
    finally:
        for step, attribute in placed:
            vars(step).pop(attribute, None)
