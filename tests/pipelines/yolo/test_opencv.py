"""The YOLO pipeline's C copies of OpenCV's arithmetic, held to the installed
OpenCV (Ultralytics' dependency, a test dependency here) bit for bit: the copy the
self-check chose for it (NOTE [ OpenCV's arithmetic, version by version ]), and where
it chose none, no copy gives OpenCV's bytes.  tests/test_packaging.py runs this file
against OpenCV 4.12, 5.0 and 5.1 installed into folders of their own (fillPoly
included)."""
from __future__ import annotations

import numpy as np
import pytest

from jpegloader.pipelines.yolo import _opencv
from jpegloader.pipelines.yolo.opencv import (WARP_FIXED, WARP_FLOAT, fill, fill_cases,
                                              hsv_table, opencv_match)
from tests.conftest import shared

cv2 = pytest.importorskip("cv2", reason="OpenCV comes with Ultralytics (the test extra)")


@pytest.fixture(params=["avx512", "avx2"])
def vector_loop(request):
    """The C core with its AVX-512 loops (where the processor has them) and without:
    the AVX2 loops, or the scalar code where those do not run."""
    avx512 = request.param == "avx512"
    before = _opencv.allow_avx512(avx512)
    try:
        if avx512 and not _opencv.avx512_on():
            pytest.skip("this processor has no AVX-512 (F, BW, VL, VBMI) for the C core")
        yield request.param
    finally:
        _opencv.allow_avx512(before)


def _chosen_warp() -> int:
    """The warp's arithmetic the self-check chose for the installed OpenCV; the test
    skips where it chose none (test_the_self_check_agrees_with_400_warps holds that)."""
    arithmetic = opencv_match().warp
    if arithmetic is None:
        pytest.skip(f"OpenCV {cv2.__version__}: no C copy of its warp; it runs on cv2")
    return arithmetic


def _warp(src: np.ndarray, m: np.ndarray, dh: int, dw: int, border,
          arithmetic: int | None = None) -> np.ndarray:
    out = np.empty((dh, dw, 3), np.uint8)
    _opencv.warp_affine(np.ascontiguousarray(src), *src.shape[:2], out, dh, dw,
                        tuple(float(v) for v in m.reshape(-1)), tuple(border),
                        _chosen_warp() if arithmetic is None else arithmetic)
    return out


def _random_matrix(rng, t: int) -> np.ndarray:
    """RandomPerspective's kinds: scale and translation, with rotation and shear on
    some, as float32 as Ultralytics builds them."""
    a = np.deg2rad(rng.uniform(-30, 30)) if t % 2 else 0.0
    s = rng.uniform(0.2, 2.0)
    shear = rng.uniform(-0.2, 0.2) if t % 3 == 0 else 0.0
    return np.array([[s * np.cos(a), -s * np.sin(a) + shear, rng.uniform(-80, 80)],
                     [s * np.sin(a), s * np.cos(a), rng.uniform(-80, 80)]], np.float32)


def _warp_cases(count: int):
    rng = np.random.default_rng(1)
    for t in range(count):
        h, w = (int(v) for v in rng.integers(1, 300, 2))
        src = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        m = _random_matrix(rng, t)
        dw, dh = (int(v) for v in rng.integers(1, 340, 2))
        yield t, src, m, dh, dw, tuple(int(v) for v in rng.integers(0, 256, 3))


def test_warp_affine_equals_opencv_on_random_matrices_and_sizes(vector_loop):
    arithmetic = _chosen_warp()
    for t, src, m, dh, dw, border in _warp_cases(400):
        ref = cv2.warpAffine(src, m, dsize=(dw, dh), borderValue=(*border, 0))
        np.testing.assert_array_equal(_warp(src, m, dh, dw, border, arithmetic), ref,
                                      err_msg=f"case {t}: {src.shape[:2]} -> {dh}x{dw}")


def test_the_self_check_agrees_with_400_warps():
    # the arithmetic the self-check chose equals OpenCV on 400 random warps (above);
    # where it chose none, neither copy does
    if opencv_match().warp is not None:
        return
    for arithmetic in (WARP_FLOAT, WARP_FIXED):
        assert any(not np.array_equal(
            _warp(src, m, dh, dw, border, arithmetic),
            cv2.warpAffine(src, m, dsize=(dw, dh), borderValue=(*border, 0)))
            for _, src, m, dh, dw, border in _warp_cases(400)), arithmetic


def test_the_self_check_picks_each_version_s_warp():
    major = int(cv2.__version__.split(".")[0])
    if major == 4:
        assert opencv_match().warp == WARP_FIXED
    elif cv2.__version__.startswith("5.0."):
        assert opencv_match().warp == WARP_FLOAT


def test_warp_affine_equals_opencv_on_a_mosaic_sized_photo(vector_loop):
    photo = shared("coco-sample") / "val2017"
    image = cv2.imread(str(sorted(photo.glob("*.jpg"))[0]))
    canvas = np.full((1280, 1280, 3), 114, np.uint8)
    canvas[:image.shape[0], :image.shape[1]] = image
    rng = np.random.default_rng(2)
    for t in range(8):
        m = _random_matrix(rng, t)
        ref = cv2.warpAffine(canvas, m, dsize=(640, 640), borderValue=(114, 114, 114, 114))
        np.testing.assert_array_equal(_warp(canvas, m, 640, 640, (114,) * 3), ref)


def _mosaic_tiles(photos: list, s: int, xc: int, yc: int) -> list:
    """Mosaic's four rectangles (n=4, its layout's arithmetic) as warp_mosaic takes
    them: (src, h, w, x0, y0, x1, y1, sx, sy)."""
    tiles = []
    for i, img in enumerate(photos):
        h, w = img.shape[:2]
        x0, x1 = (max(xc - w, 0), xc) if i in (0, 2) else (xc, min(xc + w, 2 * s))
        y0, y1 = (max(yc - h, 0), yc) if i < 2 else (yc, min(2 * s, yc + h))
        sx = w - (x1 - x0) if i in (0, 2) else 0
        sy = h - (y1 - y0) if i < 2 else 0
        tiles.append((img, h, w, x0, y0, x1, y1, sx, sy))
    return tiles


def test_warp_of_a_mosaic_never_built_equals_opencv_on_the_built_canvas(vector_loop):
    # NOTE [ A Mosaic never built ]: four coco photos (some larger than imgsz, so
    # rectangles cut from them) around random centres, warped by random matrices to
    # widths on and off OpenCV's 16-column blocks, against cv2.warpAffine of the canvas
    # built as Mosaic builds it
    photos = [cv2.imread(str(p)) for p in sorted(
        (shared("coco-sample") / "val2017").glob("*.jpg"))[:12]]
    rng = np.random.default_rng(4)
    for t in range(24):
        s = (320, 640)[t % 2]
        four = [photos[k] for k in rng.choice(len(photos), 4, replace=False)]
        four = [np.ascontiguousarray(p[:s + 64, :s + 64]) if t % 3 else
                cv2.resize(p, None, fx=s / 640, fy=s / 640) for p in four]
        tiles = _mosaic_tiles(four, s, *(int(rng.uniform(s // 2, 3 * s // 2)) for _ in "xy"))
        canvas = np.full((2 * s, 2 * s, 3), 114, np.uint8)
        for img, _, _, x0, y0, x1, y1, sx, sy in tiles:
            canvas[y0:y1, x0:x1] = img[sy:sy + y1 - y0, sx:sx + x1 - x0]
        m = _random_matrix(rng, t)
        m[:, 2] -= s * np.asarray(rng.uniform(0.3, 0.7, 2), np.float32)
        dw = (s, s - 5, s + 16)[t % 3]
        out = np.empty((s, dw, 3), np.uint8)
        _opencv.warp_mosaic(tiles, out, s, dw, tuple(float(v) for v in m.reshape(-1)),
                            (114, 114, 114), _chosen_warp())
        ref = cv2.warpAffine(canvas, m, dsize=(dw, s), borderValue=(114, 114, 114, 114))
        np.testing.assert_array_equal(out, ref, err_msg=f"mosaic {t}")


def test_warp_mosaic_refuses_tiles_that_do_not_fit():
    img, out = np.zeros((4, 5, 3), np.uint8), np.zeros((2, 2, 3), np.uint8)
    m, fill = (1.0, 0, 0, 0, 1, 0), (114, 114, 114)
    with pytest.raises(ValueError, match="tile 0 does not fit its 4 x 5 image"):
        _opencv.warp_mosaic([(img, 4, 5, 0, 0, 6, 2, 0, 0)], out, 2, 2, m, fill, 0)
    with pytest.raises(ValueError, match="a tile's src is a 60-byte buffer"):
        _opencv.warp_mosaic([(img, 5, 5, 0, 0, 1, 1, 0, 0)], out, 2, 2, m, fill, 0)
    with pytest.raises(ValueError, match="tile 0's 30000 x 30000 image is too large"):
        _opencv.warp_mosaic([(img, 30000, 30000, 0, 0, 1, 1, 0, 0)], out, 2, 2, m, fill, 0)
    with pytest.raises(ValueError, match="at most 9 tiles"):
        _opencv.warp_mosaic([(img, 4, 5, 0, 0, 1, 1, 0, 0)] * 10, out, 2, 2, m, fill, 0)
    with pytest.raises(ValueError, match="arithmetic 2 is neither"):
        _opencv.warp_mosaic([(img, 4, 5, 0, 0, 1, 1, 0, 0)], out, 2, 2, m, fill, 2)


def test_warp_affine_refuses_wrong_buffers():
    src = np.zeros((4, 5, 3), np.uint8)
    with pytest.raises(ValueError, match="src is a 60-byte buffer"):
        _opencv.warp_affine(src, 5, 5, np.zeros(12, np.uint8), 2, 2, (1.0, 0, 0, 0, 1, 0),
                            (0, 0, 0), 0)
    for arithmetic in (WARP_FLOAT, WARP_FIXED):
        with pytest.raises(ValueError, match="not finite"):
            _opencv.warp_affine(src, 4, 5, np.zeros(12, np.uint8), 2, 2,
                                (float("nan"), 0, 0, 0, 1, 0), (0, 0, 0), arithmetic)


def _every_colour() -> np.ndarray:
    b, g, r = np.meshgrid(np.arange(256), np.arange(256), np.arange(256), indexing="ij")
    return np.stack([b, g, r], -1).astype(np.uint8).reshape(4096, 4096, 3)


def _chosen_block() -> int:
    block = opencv_match().hsv_block
    if block is None:
        pytest.skip(f"OpenCV {cv2.__version__}: no C copy of its HSV round trip; it runs on cv2")
    return block


def test_hsv_round_trip_equals_opencv_on_every_colour(vector_loop):
    # all 2^24 BGR colours, rows of 4096 pixels (OpenCV's vector loop throughout),
    # through the identity table and random gains; once as one image (the C core's
    # vector code) and once as 32 x 32 images (without AVX-512, its scalar code: too
    # small to build the AVX2 loop's saturation table for; with 64-pixel passes,
    # OpenCV's scalar code too)
    block = _chosen_block()
    colours = _every_colour()
    rng = np.random.default_rng(0)
    tables = [np.repeat(np.arange(256, dtype=np.uint8)[:, None], 3, 1)]
    tables += [hsv_table(rng) for _ in range(2)]
    for lut in tables:
        ref = cv2.cvtColor(cv2.LUT(cv2.cvtColor(colours, cv2.COLOR_BGR2HSV),
                                   lut.reshape(1, 256, 3)), cv2.COLOR_HSV2BGR)
        ours = colours.copy()
        _opencv.hsv_lut(ours, 4096, lut.tobytes(), block)
        np.testing.assert_array_equal(ours, ref)
        # OpenCV converts row by row: rows of 32 in one image are its 32 x 32 images'
        rows = colours.reshape(-1, 32, 3)
        ref = cv2.cvtColor(cv2.LUT(cv2.cvtColor(rows, cv2.COLOR_BGR2HSV),
                                   lut.reshape(1, 256, 3)), cv2.COLOR_HSV2BGR)
        small = colours.copy().reshape(-1, 32, 32, 3)
        for image in small:
            _opencv.hsv_lut(image, 32, lut.tobytes(), block)
        np.testing.assert_array_equal(small.reshape(rows.shape), ref)


def test_hsv_round_trip_equals_opencv_where_rows_end_between_its_blocks(vector_loop):
    # OpenCV converts HSV -> BGR 32 (or 64) pixels at a time and a row's last
    # (width mod block) pixels with its scalar code (rounded, not truncated): every
    # colour in rows of 16, and a photo cut to widths around the blocks
    block = _chosen_block()
    rng = np.random.default_rng(3)
    lut = hsv_table(rng)
    colours = _every_colour().reshape(-1, 16, 3)
    ref = cv2.cvtColor(cv2.LUT(cv2.cvtColor(colours, cv2.COLOR_BGR2HSV),
                               lut.reshape(1, 256, 3)), cv2.COLOR_HSV2BGR)
    ours = colours.copy()
    _opencv.hsv_lut(ours, 16, lut.tobytes(), block)
    np.testing.assert_array_equal(ours, ref)
    photo = cv2.imread(str(sorted((shared("coco-sample") / "val2017").glob("*.jpg"))[1]))
    for width in (1, 7, 31, 33, 40, 63, 77, 100, 130):
        image = np.ascontiguousarray(photo[:50, :width])
        ref = cv2.cvtColor(cv2.LUT(cv2.cvtColor(image, cv2.COLOR_BGR2HSV),
                                   lut.reshape(1, 256, 3)), cv2.COLOR_HSV2BGR)
        ours = image.copy()
        _opencv.hsv_lut(ours, width, lut.tobytes(), block)
        np.testing.assert_array_equal(ours, ref, err_msg=f"width {width}")


def test_the_self_check_agrees_with_every_colour():
    # where the self-check chose no HSV copy, no block gives OpenCV's bytes on the
    # colours in rows of 48 and 100 (the tests above hold a chosen one)
    if opencv_match().hsv_block is not None:
        return
    lut = hsv_table(np.random.default_rng(5))
    for block in (32, 64):
        differs = False
        for width in (48, 100):
            colours = _every_colour().reshape(-1, width * 4, 3)[:2000].reshape(-1, width, 3)
            ref = cv2.cvtColor(cv2.LUT(cv2.cvtColor(colours, cv2.COLOR_BGR2HSV),
                                       lut.reshape(1, 256, 3)), cv2.COLOR_HSV2BGR)
            ours = colours.copy()
            _opencv.hsv_lut(ours, width, lut.tobytes(), block)
            differs |= not np.array_equal(ours, ref)
        assert differs, block


def test_hsv_lut_refuses_wrong_buffers():
    img = np.zeros((2, 5, 3), np.uint8)
    with pytest.raises(ValueError, match="lut is a 10-byte buffer"):
        _opencv.hsv_lut(img, 5, b"0123456789", 32)
    with pytest.raises(ValueError, match="not whole rows of 4"):
        _opencv.hsv_lut(img, 4, bytes(768), 32)
    with pytest.raises(ValueError, match="block 24 is not a multiple of 16"):
        _opencv.hsv_lut(img, 5, bytes(768), 24)


def test_bgr_rows_to_and_from_planes_equal_numpys_transposes():
    # decode's planes to OpenCV's BGR rows; Format's transpose and channel order of a
    # RandomFlip'd image, at widths around the 16-pixel vector loop
    rng = np.random.default_rng(4)
    for h, w in [(1, 1), (3, 15), (5, 16), (7, 33), (64, 640)]:
        planes = rng.integers(0, 256, (3, h, w), dtype=np.uint8)
        bgr = np.empty((h, w, 3), np.uint8)
        _opencv.planes_to_bgr(planes, h, w, bgr)
        np.testing.assert_array_equal(bgr, planes[::-1].transpose(1, 2, 0))
        for flip_y in (False, True):
            for flip_x in (False, True):
                for reverse in (False, True):
                    out = np.empty((3, h, w), np.uint8)
                    _opencv.bgr_to_planes(bgr, h, w, flip_y, flip_x, reverse, out)
                    seen = bgr[::-1 if flip_y else 1, ::-1 if flip_x else 1].transpose(2, 0, 1)
                    np.testing.assert_array_equal(out, seen[::-1] if reverse else seen)
    with pytest.raises(ValueError, match="planes is a 3-byte buffer"):
        _opencv.planes_to_bgr(b"abc", 2, 2, np.empty(12, np.uint8))


@pytest.mark.parametrize("reach", [0, 1, 40])
def test_fill_polygons_equals_fillpoly_on_polygons_in_and_across_the_canvas(reach):
    # every point inside (reach 0), up to the pixel past the last as RandomPerspective
    # leaves segments (1), and far across the borders (40: lines and edges cut)
    if not opencv_match().fill:
        pytest.skip(f"OpenCV {cv2.__version__}: its fillPoly runs (the self-check differed)")
    for h, w, polygon in fill_cases(3000, reach):
        ref = np.zeros((h, w), np.uint8)
        cv2.fillPoly(ref, [polygon], 1)
        np.testing.assert_array_equal(fill(h, w, polygon), ref, err_msg=f"{h}x{w} {polygon}")


def test_fill_polygons_fills_each_window_of_a_shared_canvas_as_its_own():
    # several polygons, each filled into its own block of one canvas, offset by its
    # window's corner: each block as cv2.fillPoly fills a canvas of its own; nothing
    # outside the blocks is written
    rng = np.random.default_rng(5)
    cases = list(fill_cases(12, 3))
    k = 6
    points, windows, expected = [], [], np.zeros((80 * 12, 90), np.uint8)
    for i, (h, w, polygon) in enumerate(cases):
        polygon = polygon[rng.integers(0, len(polygon), k)]
        x0, y0 = (int(v) for v in rng.integers(-50, 50, 2))
        row, column = 80 * i, int(rng.integers(0, 90 - w + 1))
        points.append(polygon + (x0, y0))
        windows.append((x0, y0, w, h, row, column))
        cv2.fillPoly(expected[row:row + h, column:column + w], [polygon], 7)
    canvas = np.zeros_like(expected)
    _opencv.fill_polygons(np.ascontiguousarray(points, np.int32), len(cases), k,
                          np.array(windows, np.int32), canvas, canvas.shape[1], 7)
    if opencv_match().fill:
        np.testing.assert_array_equal(canvas, expected)
    assert set(np.unique(canvas)) <= {0, 7} and canvas.any()


def test_the_fill_self_check_agrees_with_the_polygons_above():
    # where the self-check found the C fill unlike the installed fillPoly, the
    # polygons above find it unlike too
    if opencv_match().fill:
        return
    assert any(not np.array_equal(fill(h, w, p), cv2.fillPoly(np.zeros((h, w), np.uint8),
                                                               [p], 1))
               for h, w, p in fill_cases(3000, 40))


def test_fill_polygons_refuses_wrong_windows_and_buffers():
    points = np.zeros((2, 3, 2), np.int32)
    windows = np.array([[0, 0, 4, 4, 0, 0], [0, 0, 4, 4, 4, 2]], np.int32)
    canvas = np.zeros((8, 6), np.uint8)
    _opencv.fill_polygons(points, 2, 3, windows, canvas, 6, 1)
    with pytest.raises(ValueError, match="window 1 does not fit the 8 x 6 canvas"):
        _opencv.fill_polygons(points, 2, 3, windows + np.int32([0, 0, 0, 0, 0, 1]), canvas, 6, 1)
    with pytest.raises(ValueError, match="window 0 does not fit"):
        _opencv.fill_polygons(points, 2, 3, windows - np.int32([0, 0, 0, 0, 1, 0]), canvas, 6, 1)
    far = points.copy()
    far[1, 2] = (1 << 21, 0)
    with pytest.raises(ValueError, match="polygon 1's point 2 lies more than 2\\^20"):
        _opencv.fill_polygons(far, 2, 3, windows, canvas, 6, 1)
    with pytest.raises(ValueError, match="not rows of 5 bytes"):
        _opencv.fill_polygons(points, 2, 3, windows, canvas, 5, 1)
    with pytest.raises(ValueError, match="windows"):
        _opencv.fill_polygons(points, 2, 3, windows[:1], canvas, 6, 1)
    with pytest.raises(ValueError, match="value 256"):
        _opencv.fill_polygons(points, 2, 3, windows, canvas, 6, 256)


def test_the_self_check_finds_the_fill_of_each_verified_version():
    # OpenCV 4.12, 5.0 and 5.1 fill as fill_polygons does (tests/test_opencv_versions.py
    # runs this file against each); another version may or may not
    version = tuple(int(v) for v in cv2.__version__.split(".")[:2])
    if version in ((4, 12), (5, 0), (5, 1)):
        assert opencv_match().fill
