"""YOLO training's steps whose pixels the C core does, one class each, as detection's
steps are: what each claims (``claims``), how it applies (``apply``: the user's object
runs all but its ``apply_image``), how it describes itself (``describes``, the
verdict's words).  ``IN_C`` is the table: adding a step is a class here and a line
there (docs/design.md).  NOTE [ YOLO training samples ] in augment.py says what
stays the user's.
"""
from __future__ import annotations

import functools
from typing import ClassVar

from . import augment
from .opencv import opencv_match
from .recognise import _REPLAYED, _is_ultralytics, flat_steps


class InC:
    """A user's training step with its pixels done in C."""

    describes: ClassVar[str]

    @classmethod
    def claims(cls, step) -> bool:
        raise NotImplementedError

    @classmethod
    def apply(cls, step, labels: dict, out) -> dict:
        """BaseTransform.__call__ with ``apply_image`` in C; ``out`` is the slot's place
        for the sample's image (3 x h x w), for a step that writes it there."""
        return augment.called(step, labels, cls.apply_image)

    @staticmethod
    def apply_image(step, labels: dict, params: dict) -> dict:
        raise NotImplementedError


def _split(step) -> bool:
    return all(hasattr(step, m) for m in _REPLAYED)


class Warp(InC):
    """RandomPerspective without a perspective: cv2.warpAffine's arithmetic, where the
    installed OpenCV's is one the C core has (NOTE [ OpenCV's arithmetic, version by
    version ] in opencv.py)."""
    describes = "RandomPerspective warp"
    apply_image = staticmethod(augment.warp)

    @classmethod
    def claims(cls, step) -> bool:
        return _is_ultralytics(step, "RandomPerspective") and \
            not getattr(step, "perspective", 1) and _split(step) and \
            opencv_match().warp is not None


class Hsv(InC):
    """RandomHSV: its table drawn as it draws it, the HSV round trip in C."""
    describes = "RandomHSV"
    apply_image = staticmethod(augment.hsv)

    @classmethod
    def claims(cls, step) -> bool:
        return _is_ultralytics(step, "RandomHSV") and \
            all(hasattr(step, g) for g in ("hgain", "sgain", "vgain")) and \
            opencv_match().hsv_block is not None


class FormatImage(InC):
    """Format's image: BGR rows to RGB planes, written into the slot."""
    describes = "Format image"

    @classmethod
    def claims(cls, step) -> bool:
        return _is_ultralytics(step, "Format") and hasattr(step, "bgr") and _split(step)

    @classmethod
    def apply(cls, step, labels: dict, out) -> dict:
        return augment.called(step, labels, functools.partial(augment.format_image, out=out))


class UnbuiltMosaic(InC):
    """Ultralytics' own 4-photo Mosaic whose canvas only the C warp reads (NOTE [ A
    Mosaic never built ] in augment.py): claimed by its place in the Compose, not
    by the table."""
    describes = "Mosaic image (warped from its photos)"

    @classmethod
    def claims(cls, step) -> bool:
        call = getattr(type(step).__call__, "__qualname__", "")
        return _is_ultralytics(step, "Mosaic") and getattr(step, "n", None) == 4 and \
            getattr(step, "p", 0) > 0 and call == "BaseMixTransform.__call__" and \
            all(hasattr(step, m) for m in (*_REPLAYED, "apply_image"))

    @classmethod
    def apply(cls, step, labels: dict, out) -> dict:
        return augment.mosaic_called(step, labels)


#: The steps the C core may take, each asked in turn (the first that claims a step).
IN_C: tuple[type[InC], ...] = (Warp, Hsv, FormatImage)


def step_in_c(step) -> type[InC] | None:
    """The class that does ``step``'s pixels in C, or None (it runs as your object)."""
    return next((c for c in IN_C if c.claims(step)), None)


def planned_steps(transforms) -> list[tuple[object, type[InC] | None]]:
    """Each step of a training Compose (nested ones opened) with ``step_in_c``'s
    answer, decided once per batch rather than per sample; UnbuiltMosaic for a Mosaic
    whose canvas goes to the C warp untouched."""
    steps = flat_steps(transforms.transforms)
    planned = [(t, step_in_c(t)) for t in steps]
    for k, t in enumerate(steps):
        if UnbuiltMosaic.claims(t) and _warped_next(planned[k + 1:]):
            planned[k] = (t, UnbuiltMosaic)
    return planned


def _warped_next(after: list) -> bool:
    """The C warp is the next step that reads the canvas: only CopyPaste steps with
    p == 0 between (they return at once)."""
    for t, kind in after:
        if kind is Warp:
            return True
        if not (_is_ultralytics(t, "CopyPaste") and getattr(t, "p", None) == 0):
            return False
    return False


def run_steps(planned: list, labels: dict, out) -> dict:
    """The planned steps over a sample's label dict; ``out``, a 3 x h x w uint8 array,
    is where Format writes the image when it is that size."""
    for step, kind in planned:
        labels = step(labels) if kind is None else kind.apply(step, labels, out)
    return labels
