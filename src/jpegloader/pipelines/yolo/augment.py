"""A training sample as the user's own Ultralytics transforms make it, with the
pixels of RandomPerspective's affine warp, of RandomHSV and of Format computed in C.

NOTE [ YOLO training samples ]
A sample is ``dataset.transforms(dataset.get_image_and_label(index))`` in the
worker, the generators seeded from (epoch seed, batch number, place in batch): the
same for any num_workers, new on every pass of Ultralytics' endless loader.  Every
step is the user's object, but for three (affine RandomPerspective, RandomHSV,
Format) ``apply_image`` is done in C with OpenCV's arithmetic, between the step's
own get_params and apply_instances/semantic/depth, its draws made as it makes
them.  The batch's photos are cached in the dataset first with the epoch's photos
before it, its ``buffer`` their indices: Mosaic's partners come from the epoch's
last photos, each decoded once (NOTE [ Mosaic's partners across workers ] in
partners.py).  Every draw is Ultralytics' own; so are labels, boxes and masks, value
for value, where native label methods stand in (NOTE [ Label arithmetic in place ]).
"""
from __future__ import annotations

import random

import numpy as np
import torch

from ._opencv import bgr_to_planes, hsv_lut, warp_affine, warp_mosaic
from .opencv import opencv_match

#: RandomPerspective.apply_image's border (it passes four 114s to cv2.warpAffine)
_BORDER = (114, 114, 114)


def called(step, labels: dict, apply_image) -> dict:
    """BaseTransform.__call__: the parameters, then the image, instances, semantic
    mask and depth map."""
    params = step.get_params(labels)
    labels = apply_image(step, labels, params)
    labels = step.apply_instances(labels, params)
    labels = step.apply_semantic(labels, params)
    if hasattr(step, "apply_depth"):
        labels = step.apply_depth(labels, params)
    return labels


# NOTE [ A Mosaic never built ]
# Ultralytics' Mosaic fills a 2s x 2s canvas with 114 and copies its four photos'
# rectangles in; RandomPerspective then reads a third of it on average.  Where only
# the warp reads the canvas (steps.planned_steps), Mosaic's apply_image leaves a
# MosaicCanvas, the rectangles as they would be placed, and the C warp samples the
# photos through them, 114 elsewhere: bit for bit the warp of the built canvas, as
# the border is 114 too.  OpenCV's own warp gets a canvas drawn only around what it
# samples: an output pixel reads the 2 x 2 pixels at its point, and no point falls
# beyond the inverse-warped output corners.  Whatever else reads it builds it all.
_FILL = 114
#: Pixels drawn past where the warp's points fall (it reads one more; rounding moves
#: a point by less than one).
_MARGIN = 4


class MosaicCanvas:
    """Mosaic's canvas as its tiles (src, h, w, x0, y0, x1, y1, sx, sy); built whole on
    first use by anything but a warp."""

    dtype = np.dtype(np.uint8)
    ndim = 3

    def __init__(self, size: int, tiles: list):
        self.shape = (size, size, 3)
        self.tiles = tiles
        self.built: np.ndarray | None = None

    def build(self) -> np.ndarray:
        if self.built is None:
            self.built = self._drawn(0, 0, self.shape[1], self.shape[0])
        return self.built

    def read_by(self, matrix: np.ndarray, size) -> np.ndarray:
        """The canvas as an affine warp by ``matrix`` (3 x 3) to ``size`` (w, h) reads
        it: drawn within ``read_rectangle`` (NOTE [ A Mosaic never built ])."""
        if self.built is not None:
            return self.built
        rectangle = self.read_rectangle(matrix, size)
        return self.build() if rectangle is None else self._drawn(*rectangle)

    def read_rectangle(self, matrix: np.ndarray, size) -> tuple[int, int, int, int] | None:
        """(x0, y0, x1, y1): the part of the canvas an affine warp by ``matrix`` to
        ``size`` (w, h) samples, with a margin; None where it cannot be inverted."""
        w, h = size
        m = np.asarray(matrix, np.float64)
        try:
            inverse = np.linalg.inv(m[:2, :2])
        except np.linalg.LinAlgError:
            return None
        corners = np.array(((0, 0), (w, 0), (0, h), (w, h)), np.float64) - m[:2, 2]
        read = corners @ inverse.T
        if not np.isfinite(read).all():
            return None
        x0, y0 = (max(int(np.floor(v)) - _MARGIN, 0) for v in read.min(0))
        x1, y1 = (min(int(np.ceil(v)) + _MARGIN, n)
                  for v, n in zip(read.max(0), self.shape[1::-1]))
        return x0, y0, max(x1, x0), max(y1, y0)

    def _drawn(self, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
        """A canvas whose rectangle (x0, y0) to (x1, y1) is Mosaic's; the rest of it
        left as allocated."""
        canvas = np.empty(self.shape, np.uint8)
        canvas[y0:y1, x0:x1] = _FILL
        for src, _, _, tx0, ty0, tx1, ty1, sx, sy in self.tiles:
            ax, ay, bx, by = max(tx0, x0), max(ty0, y0), min(tx1, x1), min(ty1, y1)
            if ax < bx and ay < by:
                canvas[ay:by, ax:bx] = src[sy + ay - ty0:sy + by - ty0,
                                           sx + ax - tx0:sx + bx - tx0]
        return canvas

    def __array__(self, dtype=None, copy=None):
        return self.build() if dtype is None else self.build().astype(dtype)

    def __getattr__(self, name):
        # dunders (copy's and pickle's probes) and its own fields are not the canvas's
        if name.startswith("__") or name in ("built", "tiles", "shape"):
            raise AttributeError(name)
        return getattr(self.build(), name)

    def __getitem__(self, key):
        return self.build()[key]

    def __setitem__(self, key, value):
        self.build()[key] = value

    def __len__(self) -> int:
        return self.shape[0]


def mosaic_called(step, labels: dict) -> dict:
    """BaseMixTransform.__call__ with Mosaic's apply_image leaving its canvas unbuilt
    (NOTE [ A Mosaic never built ])."""
    if random.uniform(0, 1) > step.p:
        return labels
    labels = called(step, labels, _mosaic)
    labels.pop("mix_labels", None)
    return labels


def _mosaic(step, labels: dict, params: dict) -> dict:
    """Mosaic.apply_image (n=4) as a MosaicCanvas where its photos are BGR arrays and
    its rectangles fit them and do not overlap; else the step's own."""
    size, tiles = 2 * step.imgsz, []
    for item in params["layout"]:
        src = item["labels_patch"]["img"]
        x0, y0, x1, y1 = (int(item[k]) for k in ("x1a", "y1a", "x2a", "y2a"))
        sx, sy, ex, ey = (int(item[k]) for k in ("x1b", "y1b", "x2b", "y2b"))
        if not (_is_bgr(src) and src.flags.c_contiguous and 0 <= x0 <= x1 <= size
                and 0 <= y0 <= y1 <= size and 0 <= sx and 0 <= sy and ex - sx == x1 - x0
                and ey - sy == y1 - y0 and ex <= src.shape[1] and ey <= src.shape[0]):
            return step.apply_image(labels, params)
        tiles.append((src, src.shape[0], src.shape[1], x0, y0, x1, y1, sx, sy))
    for k, a in enumerate(tiles):
        for b in tiles[k + 1:]:
            if max(a[3], b[3]) < min(a[5], b[5]) and max(a[4], b[4]) < min(a[6], b[6]):
                return step.apply_image(labels, params)  # overlapping: the later wins there
    labels["img"] = MosaicCanvas(size, tiles)
    return labels


def _is_bgr(img) -> bool:
    return isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.ndim == 3 and \
        img.shape[2] == 3


def warp(step, labels: dict, params: dict) -> dict:
    """RandomPerspective.apply_image without a perspective: cv2.warpAffine of the
    image by M's top rows to ``size`` (w, h), bordered with 114."""
    img = labels["img"]
    if isinstance(img, MosaicCanvas) and img.built is not None:
        img = img.built
    if not (_is_bgr(img) or isinstance(img, MosaicCanvas)):
        return step.apply_image(labels, params)
    w, h = (int(v) for v in params["size"])
    out = np.empty((h, w, 3), np.uint8)
    matrix = tuple(float(v) for v in np.asarray(params["M"], np.float64)[:2].reshape(-1))
    arithmetic = opencv_match().warp  # never None here: steps.Warp.claims
    if isinstance(img, MosaicCanvas):  # NOTE [ A Mosaic never built ]
        warp_mosaic(img.tiles, out, h, w, matrix, _BORDER, arithmetic)
    else:
        warp_affine(np.ascontiguousarray(img), img.shape[0], img.shape[1], out, h, w, matrix,
                    _BORDER, arithmetic)
    labels["img"] = out
    labels["resized_shape"] = out.shape[:2]
    return labels


def cv2_warp(step, labels: dict, params: dict) -> dict:
    """RandomPerspective.apply_image as the step's own, an unbuilt Mosaic canvas drawn
    where the warp reads it (NOTE [ A Mosaic never built ])."""
    img = labels["img"]
    if isinstance(img, MosaicCanvas):
        labels["img"] = img.read_by(params["M"], params["size"])
    return step.apply_image(labels, params)


def hsv(step, labels: dict, params: dict) -> dict:
    """RandomHSV.apply_image: gains drawn in [-1, 1) times (hgain, sgain, vgain); the
    hue shifted by gain * 180 modulo 180, saturation and value scaled by 1 + gain
    and clipped, saturation 0 kept 0; the image converted to HSV, mapped and back,
    in place."""
    img = labels["img"]
    if not (_is_bgr(img) and img.flags.c_contiguous and img.flags.writeable):
        return step.apply_image(labels, params)
    if not (step.hgain or step.sgain or step.vgain):
        return labels
    gains = np.random.uniform(-1, 1, 3) * [step.hgain, step.sgain, step.vgain]
    levels = np.arange(256, dtype=np.float64)
    hue = np.remainder(levels + gains[0] * 180, 180)
    saturation, value = (np.clip(levels * (1 + g), 0, 255) for g in gains[1:])
    table = np.stack([hue, saturation, value], axis=1).astype(np.uint8)
    table[0, 1] = 0  # grey stays grey
    hsv_lut(img, img.shape[1], table.tobytes(), opencv_match().hsv_block)
    return labels


def _unflipped(img: np.ndarray):
    """(a C-contiguous array, flipped top to bottom, flipped left to right) that
    ``img`` views (np.flipud, np.fliplr), or None."""
    fy, fx = img.strides[0] < 0, img.strides[1] < 0
    base = img[::-1 if fy else 1, ::-1 if fx else 1]
    return (base, fy, fx) if base.flags.c_contiguous else None


def format_image(step, labels: dict, params: dict, out: np.ndarray) -> dict:
    """Format.apply_image: the image as a 3 x h x w tensor, its channels reversed
    (BGR to RGB) when a uniform draw exceeds ``bgr``; written into ``out``."""
    img = labels.get("img")
    unflipped = _unflipped(img) if _is_bgr(img) else None
    if unflipped is None or out.shape != (3, *img.shape[:2]):
        return step.apply_image(labels, params)
    base, fy, fx = unflipped
    reverse = random.uniform(0, 1) > step.bgr
    bgr_to_planes(base, img.shape[0], img.shape[1], fy, fx, reverse, out)
    labels.pop("img")
    labels["img"] = torch.from_numpy(out)
    return labels
