"""RandomPerspective's warped segments with their boxes, and Format's instance masks,
computed over all of a sample's polygons at once (for the Ultralytics whose functions
in_place.py verified).

NOTE [ A sample's polygons at once ]
Ultralytics boxes and rasterises a sample's polygons one Python call at a time (1000
points each, about 30 a Mosaic sample: 2.6 of the 9.5 ms a segment photo costs in one
process).  For a batch, the user's RandomPerspective and Format get ``apply_segments``
and ``_format_segments`` from here as instance attributes: numpy's own product by the
matrix, then segment2box's float32 operations in C, one at a time in its order
(csrc/polygons.c; its corner test OpenCV's pointPolygonTest); each polygon filled,
as OpenCV's fillPoly fills (csrc/fill.c, where the self-check agrees), on the window
of mask-ratio blocks it covers, the windows packed into one canvas, then OpenCV's
one resize of it (a fill moved by whole pixels is the fill moved; a resize by a
whole ratio reads each output pixel from its own block).
"""
from __future__ import annotations

import numpy as np

from ._opencv import (block_areas, fill_polygons, points_clipped, ranked_blocks,
                      rows_divided, rows_xy1, segment_boxes)
from .opencv import opencv_match

#: A polygon point further from the image than this is left to the user's objects
#: (int32 points shifted by OpenCV's 16 fraction bits would overflow).
_FAR = 1 << 14


# -- RandomPerspective ---------------------------------------------------------------
def warped_segments(step, segments: np.ndarray, M: np.ndarray, size) -> tuple:
    """RandomPerspective.apply_segments: the (n, k, 2) polygons moved by M (a 3 x 3
    matrix, the third coordinate divided out; numpy's product, as the step's), each
    one's box of what lies in the ``size`` (w, h) image, and, unless
    ``preserve_obb``, the points held to it."""
    own = type(step).apply_segments
    if not (isinstance(segments, np.ndarray) and segments.ndim == 3 and segments.shape[0]
            and segments.shape[1] and segments.shape[2] == 2 and segments.dtype == np.float32
            and isinstance(M, np.ndarray) and M.dtype == np.float32 and M.shape == (3, 3)):
        return own(step, segments, M, size)
    n, k = segments.shape[:2]
    rows = np.empty((n * k, 3), np.float32)
    rows_xy1(np.ascontiguousarray(segments), n * k, rows)
    moved = rows @ M.T
    points = np.empty((n, k, 2), np.float32)
    rows_divided(np.ascontiguousarray(moved), n * k, points)
    boxes = polygon_boxes(points, size[0], size[1], own.__globals__["segment2box"])
    if not step.preserve_obb:
        points_clipped(points, n, k, boxes)
    return boxes, points


def extremes(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each polygon's (min x, min y) and (max x, max y): (n, 2) each.  (Reducing the
    middle axis of (n, k, 2) directly is ten times slower.)"""
    by_axis = np.ascontiguousarray(points.transpose(0, 2, 1))
    return by_axis.min(2), by_axis.max(2)


def polygon_boxes(points: np.ndarray, w, h, one_box) -> np.ndarray:
    """segment2box of every polygon of ``points`` (n, k, 2; float32) in a w x h image:
    its extremes where it lies inside, zeros where it lies outside, else the extremes
    of its part inside (in C, but for the corners: ``crossing_corners``);
    ``one_box`` (segment2box) for a polygon with NaN or infinity."""
    n, k = points.shape[:2]
    points = np.ascontiguousarray(points, np.float32)
    boxes = np.empty((n, 4), np.float32)
    kinds = np.empty(n, np.uint8)
    segment_boxes(points, n, k, float(w), float(h), boxes, kinds)
    for i in np.flatnonzero(kinds == _ODD):
        boxes[i] = one_box(points[i], w, h)
    crossing = np.flatnonzero(kinds == _CROSSING)
    if len(crossing):
        boxes[crossing] = crossing_corners(points[crossing], w, h, boxes[crossing])
    return boxes


#: segment_boxes' kinds of polygon that take more than its answer.
_CROSSING, _ODD = 2, 3
#: How far beyond a polygon's extremes, relative to its coordinates, a corner is
#: clearly outside it.
_NEAR = 1e-3


def crossing_corners(points: np.ndarray, w, h, boxes: np.ndarray) -> np.ndarray:
    """The boxes of polygons crossing the border of a w x h image, given ``boxes``
    of what lies inside but the corners: each widened to the image corners the
    polygon covers (cv2.pointPolygonTest, as segment2box asks it); zeros where
    nothing lies inside."""
    import cv2

    boxes = boxes.copy()
    corners = np.array(((0, 0), (w, 0), (0, h), (w, h)), dtype=np.float32)
    low, high = extremes(points)
    # a corner clearly beyond a polygon's extremes is outside it (far enough that
    # rounding in pointPolygonTest's cross products cannot say otherwise): not asked
    slack = _NEAR * (1 + np.abs(low) + np.abs(high))
    near = ((corners[None] >= (low - slack)[:, None]) &
            (corners[None] <= (high + slack)[:, None])).all(2)
    for i, j in zip(*np.nonzero(near)):
        polygon, corner = points[i], corners[j]
        if cv2.pointPolygonTest(polygon, (float(corner[0]), float(corner[1])), False) >= 0:
            boxes[i, :2] = np.minimum(boxes[i, :2], corner)
            boxes[i, 2:] = np.maximum(boxes[i, 2:], corner)
    boxes[~np.isfinite(boxes).all(1)] = 0
    return boxes


# -- Format ----------------------------------------------------------------------------
def formatted_masks(step, instances, cls, w: int, h: int) -> tuple:
    """Format._format_segments: the instances' polygons as masks downsampled by
    ``mask_ratio``; overlapped (one mask, each pixel the number of the smallest
    instance covering it, instances and classes reordered largest first) or one
    mask per instance."""
    own = type(step)._format_segments
    segments = instances.segments
    ratio = step.mask_ratio
    if not (isinstance(segments, np.ndarray) and segments.ndim == 3 and len(segments)
            and segments.shape[1] and isinstance(ratio, int) and ratio >= 1
            and h % ratio == 0 and w % ratio == 0):
        return own(step, instances, cls, w, h)
    points = segments.astype(np.int32)
    low, high = extremes(points)
    if (low < -_FAR).any() or (high > max(w, h) + _FAR).any():
        return own(step, instances, cls, w, h)
    small, blocks = _filled(points, low, high, w, h, ratio)
    n, shape = len(points), (h // ratio, w // ratio)
    if not step.mask_overlap:
        every = np.zeros((n, *shape), np.uint8)
        for i, (row, column, tall, wide, y, x) in enumerate(blocks.tolist()):
            if tall:
                every[i, y:y + tall, x:x + wide] = small[row:row + tall, column:column + wide]
        return every, instances, cls
    areas = np.zeros(n, np.uint64)
    overlap = np.zeros(shape, np.int32 if n > 255 else np.uint8)
    if small is not None:
        block_areas(small, small.shape[1], blocks, n, areas)
    # the largest instance first; uint64 areas negated, as Ultralytics sorts them
    order = np.argsort(-areas)
    if small is not None:
        ranked_blocks(small, small.shape[1], blocks, n, order.astype(np.int64), overlap,
                      shape[1], overlap.itemsize)
    return overlap[None], instances[order], cls[order]


def _filled(points, low, high, w: int, h: int, ratio: int) -> tuple:
    """Each polygon filled with 1 and downsampled by ``ratio`` on the window of whole
    blocks it covers, the windows packed into one canvas (``_shelves``): one fill
    (``fill_polygons``; cv2.fillPoly, polygon by polygon, where the self-check found
    the C fill unlike the installed OpenCV's) and one resize.  (The downsampled
    canvas, None where no polygon covers a pixel; each polygon's block of it, n x 6
    int32: row, column, height, width, and its place in the mask, y, x; an empty one
    all 0.)"""
    import cv2

    n, k = points.shape[:2]
    start = np.maximum(low // ratio * ratio, 0)
    size = np.maximum(np.minimum((high // ratio + 1) * ratio, (w, h)) - start, 0)
    size[(size == 0).any(1)] = 0
    blocks = np.zeros((n, 6), np.int32)
    drawn = np.flatnonzero(size[:, 0] > 0)
    if not len(drawn):
        return None, blocks
    places, (height, width) = _shelves(size, w)
    windows = np.column_stack((start, size, places)).astype(np.int32)
    canvas = np.zeros((height, width), np.uint8)
    if opencv_match().fill:
        fill_polygons(np.ascontiguousarray(points), n, k, windows, canvas, width, 1)
    else:
        for i in drawn:
            x0, y0, wide, tall, row, column = (int(v) for v in windows[i])
            cv2.fillPoly(canvas[row:row + tall, column:column + wide], [points[i]], 1,
                         offset=(-x0, -y0))
    small = cv2.resize(canvas, (width // ratio, height // ratio))
    blocks[drawn] = np.column_stack((places[drawn], size[drawn, ::-1], start[drawn, ::-1])) \
        // ratio
    return small, blocks


def _shelves(size: np.ndarray, width: int) -> tuple[np.ndarray, tuple[int, int]]:
    """Windows of ``size`` (n x 2: width, height; empty ones left at 0, 0) packed on
    shelves of ``width`` (at least the widest), tallest first: each one's (row,
    column), and the canvas's (height, width)."""
    width = max(width, int(size[:, 0].max()))
    places = np.zeros((len(size), 2), np.int64)
    top = x = shelf = 0
    for i in np.argsort(-size[:, 1], kind="stable"):
        wide, tall = int(size[i, 0]), int(size[i, 1])
        if not wide:
            continue
        if x + wide > width:
            top, x, shelf = top + shelf, 0, 0
        places[i] = top, x
        x, shelf = x + wide, max(shelf, tall)
    return places, (top + shelf, width)
