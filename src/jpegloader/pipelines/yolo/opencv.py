"""Which of the C core's copies of OpenCV's arithmetic equal the installed OpenCV's.

NOTE [ OpenCV's arithmetic, version by version ]
OpenCV's releases round differently: ``warpAffine`` samples in fixed point in 4.x
(4.7 to 4.14), in float in 5.0, through Intel IPP in 5.1's wheels; the HSV -> BGR
vector loop takes 32 pixels a pass, or 64 where 4.14 and 5.1 run AVX-512; fillPoly
cuts lines and edges at the canvas as 4.12 to 5.1 do.  The C core keeps each
arithmetic it reproduces (``warp_affine``'s ``arithmetic``, ``hsv_lut``'s ``block``,
``fill_polygons``), ordered by ``cv2.__version__``, each held once per process at
first use to the installed ``cv2`` on a fixed set of random cases.  The first that
gives OpenCV's bytes on every case is taken; where none does, that step runs on
the user's own OpenCV in the workers and the verdict names it and why (not Format's
masks: cv2.fillPoly gives the same masks).  Nothing is silently different.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import _opencv

#: _opencv.warp_affine's ``arithmetic``: OpenCV 5.0's float sampling, 4.x's fixed point
WARP_FLOAT, WARP_FIXED = 0, 1
_WARP_NAMES = {WARP_FLOAT: "OpenCV 5.0's float sampling", WARP_FIXED: "OpenCV 4.x's fixed point"}
_HSV_BLOCKS = (32, 64)


@dataclass(frozen=True)
class OpenCVMatch:
    """The installed OpenCV and the C core's arithmetic that equals it: ``warp`` an
    ``arithmetic`` for the warps and ``hsv_block`` a ``block`` for ``hsv_lut``, or
    None where no copy does (that step then runs on cv2)."""

    version: str
    warp: int | None
    hsv_block: int | None
    #: whether fill_polygons gives cv2.fillPoly's bytes (Format's masks; else cv2 fills)
    fill: bool = True

    @property
    def on_cv2(self) -> list[str]:
        """The training steps whose pixels stay on the user's OpenCV."""
        return [name for name, kept in (("RandomPerspective warp", self.warp),
                                        ("RandomHSV", self.hsv_block)) if kept is None]

    def describe(self) -> str:
        if not self.on_cv2:
            return (f"OpenCV {self.version}: the C warp ({_WARP_NAMES[self.warp]}) and "
                    f"RandomHSV ({self.hsv_block}-pixel passes) give its bytes")
        return (f"OpenCV {self.version}: {' and '.join(self.on_cv2)} run on your cv2 in the "
                "workers (no C copy of its arithmetic gave the same bytes on the self-check)")


@functools.cache
def opencv_match() -> OpenCVMatch:
    """The self-check of NOTE [ OpenCV's arithmetic, version by version ], once per
    process (a few milliseconds)."""
    import cv2

    version = cv2.__version__
    major = _major(version)
    order = (WARP_FIXED, WARP_FLOAT) if major is not None and major < 5 else \
        (WARP_FLOAT, WARP_FIXED)
    warp = next((a for a in order if _warp_equal(cv2, a)), None)
    hsv = next((b for b in _HSV_BLOCKS if _hsv_equal(cv2, b)), None)
    return OpenCVMatch(version, warp, hsv, _fill_equal(cv2))


def _major(version: str) -> int | None:
    try:
        return int(version.split(".")[0])
    except ValueError:
        return None


def warp_cases(seed: int = 0, count: int = 8):
    """(src, matrix, (dh, dw), border) as RandomPerspective's affine warps make them:
    scale and translation, rotation and shear on some, float32 as Ultralytics builds
    them; widths on and off OpenCV's 16-pixel passes, taps across every edge."""
    rng = np.random.default_rng(seed)
    for t in range(count):
        h, w = (int(v) for v in rng.integers(60, 160, 2))
        src = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        angle = np.deg2rad(rng.uniform(-30, 30)) if t % 2 else 0.0
        scale = rng.uniform(0.5, 1.5)
        shear = rng.uniform(-0.2, 0.2) if t % 3 == 0 else 0.0
        m = np.array([[scale * np.cos(angle), -scale * np.sin(angle) + shear,
                       rng.uniform(-40, 40)],
                      [scale * np.sin(angle), scale * np.cos(angle), rng.uniform(-40, 40)]],
                     np.float32)
        size = (int(rng.integers(100, 200)), 160 if t % 2 else 160 + t + 1)
        yield src, m, size, tuple(int(v) for v in rng.integers(0, 256, 3))


def warp(src: np.ndarray, m: np.ndarray, size: tuple[int, int], border, arithmetic: int):
    """``_opencv.warp_affine`` of ``src`` by ``m`` to ``size`` (dh, dw)."""
    dh, dw = size
    out = np.empty((dh, dw, 3), np.uint8)
    _opencv.warp_affine(np.ascontiguousarray(src), *src.shape[:2], out, dh, dw,
                        tuple(float(v) for v in np.asarray(m, np.float64).reshape(-1)),
                        tuple(border), arithmetic)
    return out


def _warp_equal(cv2, arithmetic: int) -> bool:
    for src, m, (dh, dw), border in warp_cases():
        ref = cv2.warpAffine(src, m, dsize=(dw, dh), borderValue=(*border, 0))
        if not np.array_equal(warp(src, m, (dh, dw), border, arithmetic), ref):
            return False
    return True


def hsv_table(rng) -> np.ndarray:
    """A 256 x 3 table as RandomHSV's gains make them."""
    r = rng.uniform(-1, 1, 3) * [0.015, 0.7, 0.4]
    x = np.arange(256, dtype=np.float64)
    table = np.stack([(x + r[0] * 180) % 180, np.clip(x * (r[1] + 1), 0, 255),
                      np.clip(x * (r[2] + 1), 0, 255)], -1).astype(np.uint8)
    table[0, 1] = 0
    return table


def _hsv_equal(cv2, block: int) -> bool:
    rng = np.random.default_rng(1)
    tables = [np.repeat(np.arange(256, dtype=np.uint8)[:, None], 3, 1), hsv_table(rng)]
    for width in (48, 100, 160):  # a row in OpenCV's scalar tail, partly, not at all
        image = rng.integers(0, 256, (64, width, 3), dtype=np.uint8)
        for table in tables:
            ref = cv2.cvtColor(cv2.LUT(cv2.cvtColor(image, cv2.COLOR_BGR2HSV),
                                       table.reshape(1, 256, 3)), cv2.COLOR_HSV2BGR)
            ours = image.copy()
            _opencv.hsv_lut(ours, width, table.tobytes(), block)
            if not np.array_equal(ours, ref):
                return False
    return True


def fill_cases(count: int, reach: int):
    """(h, w, polygon): int32 points up to ``reach`` pixels beyond an h x w canvas, so
    that lines and edges are cut at its border (0: none); random (crossing
    themselves), round as resampled outlines are, on few rows (horizontal edges,
    repeated points), and a zigzag down every row."""
    rng = np.random.default_rng(reach)
    for t in range(count):
        h, w = (int(v) for v in rng.integers(1, 72, 2))
        k = int(rng.integers(1, 14)) if t % 4 else int(rng.integers(50, 1000))
        low, high = -reach, np.array((w, h)) + reach
        if t % 4 == 0:
            turn = np.sort(rng.uniform(0, 2 * np.pi, k))
            radius = rng.uniform(0.5, 1.3) * min(w, h) / 2
            middle = rng.uniform(0, (w, h))
            points = np.round(middle + radius * np.stack([np.cos(turn), np.sin(turn)], 1))
        elif t % 4 == 1:
            points = rng.integers(low, high + 1, (k, 2))
        elif t % 4 == 2:
            points = np.stack([rng.integers(low, high[0] + 1, k),
                               rng.choice(rng.integers(low, high[1] + 1, 3), k)], 1)
        else:
            points = np.stack([rng.integers(low, high[0] + 1, k), np.arange(k) % (h + 1)], 1)
        yield h, w, np.ascontiguousarray(np.clip(points, low, high), np.int32)


def fill(h: int, w: int, polygon: np.ndarray) -> np.ndarray:
    """``_opencv.fill_polygons`` of one polygon on an h x w canvas, filled with 1."""
    canvas = np.zeros((h, w), np.uint8)
    _opencv.fill_polygons(np.ascontiguousarray(polygon, np.int32), 1, len(polygon),
                          np.array([0, 0, w, h, 0, 0], np.int32), canvas, w, 1)
    return canvas


def _fill_equal(cv2) -> bool:
    # inside the canvas, to the pixel past it (RandomPerspective's segments), across it
    cases = (case for reach in (0, 1, 40) for case in fill_cases(24, reach))
    for h, w, polygon in cases:
        ref = np.zeros((h, w), np.uint8)
        cv2.fillPoly(ref, [polygon], 1)
        if not np.array_equal(fill(h, w, polygon), ref):
            return False
    return True
