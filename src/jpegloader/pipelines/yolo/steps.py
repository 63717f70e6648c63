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
    native: ClassVar[bool] = True      # False: the pixels stay OpenCV's, read differently

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


class CvWarp(InC):
    """RandomPerspective without a perspective whose warp stays OpenCV's, where the C
    core lacks its arithmetic: Mosaic's canvas drawn only where it reads (NOTE [ A
    Mosaic never built ]).  Planned after an UnbuiltMosaic only."""
    describes = "RandomPerspective warp (on your cv2)"
    native = False
    apply_image = staticmethod(augment.cv2_warp)

    @classmethod
    def claims(cls, step) -> bool:
        return _is_ultralytics(step, "RandomPerspective") and \
            not getattr(step, "perspective", 1) and _split(step) and \
            hasattr(step, "apply_image") and opencv_match().warp is None


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
    """Ultralytics' own 4-photo Mosaic whose canvas only a warp reads (NOTE [ A Mosaic
    never built ] in augment.py): claimed by its place in the Compose, not by the
    table."""
    describes = "Mosaic image (drawn only where the warp reads it)"

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
    whose canvas goes to a warp untouched (CvWarp then, where that warp is OpenCV's)."""
    steps = flat_steps(transforms.transforms)
    planned = [(t, step_in_c(t)) for t in steps]
    for k, t in enumerate(steps):
        warp = _warped_next(planned, k + 1) if UnbuiltMosaic.claims(t) else None
        if warp is not None:
            planned[k] = (t, UnbuiltMosaic)
            if planned[warp][1] is None:
                planned[warp] = (planned[warp][0], CvWarp)
    return planned


def _warped_next(planned: list, start: int) -> int | None:
    """Where the warp that reads the canvas next is, from ``start`` on (the C warp,
    or OpenCV's with the C core lacking it): only CopyPaste steps with p == 0 between
    (they return at once); None if another step reads it first."""
    for at in range(start, len(planned)):
        t, kind = planned[at]
        if kind is Warp or (kind is None and CvWarp.claims(t)):
            return at
        if not (_is_ultralytics(t, "CopyPaste") and getattr(t, "p", None) == 0):
            return None
    return None


def run_steps(planned: list, labels: dict, out) -> dict:
    """The planned steps over a sample's label dict; ``out``, a 3 x h x w uint8 array,
    is where Format writes the image when it is that size."""
    for step, kind in planned:
        labels = step(labels) if kind is None else kind.apply(step, labels, out)
    return labels
