"""Oriented boxes (``task=obb``): a sample's quadrilaterals held to its image with
their direction kept (Instances.clip's ``preserve_obb``), and Format's rotated boxes
(centre, size, angle), computed here for the Ultralytics whose functions in_place.py
verified, value for value.

NOTE [ Oriented boxes held to the image ]
An oriented box is a polygon (its four corners resampled to the dataset's length,
100 points).  Where all of a sample's polygons lie inside the image nothing moves,
not even the axis-aligned boxes; each polygon crossing the border becomes the
rectangle, in its own direction (OpenCV's minAreaRect of the whole polygon), that
bounds the part inside (OpenCV's intersection of its convex hull with the image),
resampled to its length, and its box the bounds of that part; one wholly outside
becomes zeros.  The crossing ones are OpenCV's calls per polygon, as Ultralytics
makes them; the rest is array arithmetic over all polygons.
"""
from __future__ import annotations

import functools
import math

import cv2
import numpy as np

from .polygons import extremes


def held(boxes: np.ndarray, segments: np.ndarray, w, h) -> tuple[np.ndarray, np.ndarray]:
    """Instances.clip's oriented path for xyxy ``boxes`` (n x 4) and ``segments``
    (n x k x 2, n >= 1), both float32, in a w x h image: the same arrays where every
    polygon lies inside, else copies with the crossing rows remade."""
    low, high = extremes(segments)
    crossing = np.flatnonzero(~((low >= 0) & (high <= (w, h))).all(1))
    if not len(crossing):
        return boxes, segments
    image = np.array(((0, 0), (w, 0), (w, h), (0, h)), np.float32)
    boxes, remade = boxes.copy(), segments.copy()
    for i in crossing:
        polygon = segments[i].astype(np.float32)
        area, part = cv2.intersectConvexConvex(cv2.convexHull(polygon), image)
        if part is None or area <= 0:
            boxes[i] = 0
            remade[i] = 0
            continue
        part = part.reshape(-1, 2)
        boxes[i] = np.concatenate((part.min(0), part.max(0)))
        remade[i] = _bounding_rectangle(polygon, part, len(polygon))
    return boxes, remade


def _bounding_rectangle(polygon: np.ndarray, part: np.ndarray, k: int) -> np.ndarray:
    """The rectangle in ``polygon``'s direction (its longer side's, from minAreaRect)
    bounding ``part``: its corners turned by that angle, (far, far), (far, near),
    (near, near), (near, far) in the turned frame, resampled to k points."""
    _, (across, along), degrees = cv2.minAreaRect(polygon)
    turn = np.deg2rad(degrees + 90 if across < along else degrees)
    c, s = np.cos(turn), np.sin(turn)
    frame = np.array(((c, -s), (s, c)), np.float32)
    turned = part @ frame
    near, far = turned.min(0), turned.max(0)
    corners = np.array(((far[0], far[1]), (far[0], near[1]), (near[0], near[1]),
                        (near[0], far[1])), np.float32)
    return _closed_resampled(corners @ frame.T, k)


def _closed_resampled(points: np.ndarray, k: int) -> np.ndarray:
    """A closed polygon of m points as k float32 points by linear interpolation along
    its outline (the first point repeated at the end): k - (m + 1) evenly spaced
    positions with the m + 1 vertices slotted in where k > m + 1, else k evenly
    spaced positions; unchanged where m is k already."""
    if len(points) == k:
        return points
    ring = np.concatenate((points, points[:1]))
    vertices, at = _positions(len(ring), k)
    out = np.empty((len(at), 2), np.float32)
    for axis in (0, 1):
        out[:, axis] = np.interp(at, vertices, ring[:, axis])
    return out


@functools.lru_cache(maxsize=8)
def _positions(m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The m vertices' positions along a closed outline and the k positions
    ``_closed_resampled`` reads at (the same for every rectangle of a dataset)."""
    vertices = np.arange(m)
    if m < k:
        at = np.linspace(0, m - 1, k - m)
        at = np.insert(at, np.searchsorted(at, vertices), vertices)
    else:
        at = np.linspace(0, m - 1, k)
    vertices.flags.writeable = at.flags.writeable = False
    return vertices, at


def rotated_boxes(segments: np.ndarray) -> np.ndarray:
    """xyxyxyxy2xywhr: each polygon of ``segments`` (n x k x 2) as OpenCV's
    minAreaRect of its float32 points, in float64: centre, the longer side first,
    and the angle in radians (the other side's plus pi / 2 where that side is the
    longer) brought into [-pi / 4, 3 pi / 4) by steps of pi; n x 5."""
    points = np.asarray(segments, np.float32)
    rects = np.empty((len(points), 5), np.float64)
    for row, polygon in zip(rects, points):
        (cx, cy), (a, b), degrees = cv2.minAreaRect(polygon.reshape(-1, 2))
        row[:] = cx, cy, a, b, degrees
    turn = rects[:, 4] / 180 * math.pi
    swap = rects[:, 2] < rects[:, 3]
    rects[swap, 2:4] = rects[swap, 3:1:-1]
    turn[swap] += math.pi / 2
    for past, step in ((lambda t: t >= 3 * math.pi / 4, -math.pi),
                       (lambda t: t < -math.pi / 4, math.pi)):
        while (over := past(turn)).any():
            turn[over] += step
    rects[:, 4] = turn
    return rects
