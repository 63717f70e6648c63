"""The C arithmetic of OpenCV's (and of Ultralytics' label steps) that YOLO's training uses (see
csrc/module.c)."""
from collections.abc import Buffer

def warp_affine(src: Buffer, h: int, w: int, dst: Buffer, dh: int, dw: int,
                matrix: tuple[float, float, float, float, float, float],
                border: tuple[int, int, int], arithmetic: int, /) -> None:
    """``cv2.warpAffine(src, matrix, (dw, dh), flags=INTER_LINEAR,
    borderMode=BORDER_CONSTANT, borderValue=border)`` into ``dst``, bit for bit
    with the OpenCV whose ``arithmetic`` it is: 0 OpenCV 5.0's float sampling, 1
    the 4.x releases' fixed point (pipelines/yolo/opencv.py chooses): ``src`` a
    C-contiguous h x w x 3 uint8 buffer, ``dst`` a writable dh x dw x 3 one,
    ``matrix`` the forward 2x3 matrix row-major.  Runs without the GIL.  Raises
    ValueError for wrong buffers or sizes, a matrix that is not finite or another
    arithmetic."""

def warp_mosaic(tiles: list[tuple[Buffer, int, int, int, int, int, int, int, int]],
                dst: Buffer, dh: int, dw: int,
                matrix: tuple[float, float, float, float, float, float],
                fill: tuple[int, int, int], arithmetic: int, /) -> None:
    """``warp_affine`` of a canvas that is never built, bit for bit: each tile (src,
    h, w, x0, y0, x1, y1, sx, sy) places the C-contiguous h x w x 3 uint8 ``src``'s
    pixels from (sx, sy) at canvas [x0, x1) x [y0, y1) (up to 9, disjoint); every
    other canvas pixel, and the border, is ``fill``.  Runs without the GIL.  Raises
    ValueError for tiles that do not fit their image, wrong buffers or a matrix that
    is not finite."""

def hsv_lut(img: Buffer, width: int, lut: Buffer, block: int, /) -> None:
    """In place, bit for bit: ``cv2.cvtColor(cv2.LUT(cv2.cvtColor(img,
    COLOR_BGR2HSV), lut), COLOR_HSV2BGR, dst=img)``, ``img`` a writable
    C-contiguous uint8 buffer of rows of ``width`` BGR pixels, ``lut`` 768 bytes
    (value x channel), ``block`` the pixels a pass of the installed OpenCV's
    vector loop takes (32, or 64 for 4.14 and 5.1 on AVX-512).
    Runs without the GIL.  Raises ValueError for wrong buffers."""

def allow_avx512(allow: bool, /) -> bool:
    """Whether ``hsv_lut``'s and the warps' AVX-512 loops may run where the processor
    has them (the default); returns the previous setting.  They give the AVX2 loops'
    results."""

def avx512_on() -> bool:
    """Whether the AVX-512 loops run: allowed, and the processor has AVX-512 F, BW,
    VL and VBMI, and FMA."""

def planes_to_bgr(planes: Buffer, h: int, w: int, bgr: Buffer, /) -> None:
    """R, G, B uint8 planes of h x w into ``bgr``, a writable h x w x 3 uint8
    buffer of BGR pixels (what ``cv2.imread`` gives).  Runs without the GIL."""

def bgr_to_planes(bgr: Buffer, h: int, w: int, flip_y: bool, flip_x: bool, reverse: bool,
                  planes: Buffer, /) -> None:
    """``bgr``, a C-contiguous h x w x 3 uint8 buffer, read mirrored top to bottom
    (``flip_y``) and left to right (``flip_x``), into 3 x h x w ``planes``: B, G, R,
    or R, G, B with ``reverse`` (Format's transpose and channel order).  Runs
    without the GIL."""

def rows_xy1(xy: Buffer, count: int, rows: Buffer, /) -> None:
    """``rows`` (count x 3 float32, writable): each point (x, y) of ``xy`` (count x 2
    float32) as (x, y, 1), the rows RandomPerspective multiplies by its matrix."""

def rows_divided(rows: Buffer, count: int, xy: Buffer, /) -> None:
    """``xy`` (count x 2 float32, writable): each row (x, y, z) of ``rows`` (count x 3
    float32) as (x / z, y / z)."""

def segment_boxes(points: Buffer, n: int, k: int, w: float, h: float, boxes: Buffer,
                  kinds: Buffer, /) -> None:
    """For ``n`` polygons of ``k`` points (``points``: n x k x 2 float32) in a w x h
    image, each one's box as Ultralytics' segment2box computes it in float32
    (``boxes``: n x 4, writable) and what it is (``kinds``: n bytes, writable): 0
    inside, 1 outside, 2 crossing the border (its box without the image corners it
    covers, +inf/-inf where nothing lies inside), 3 crossing with a NaN or infinite
    extreme (its box left to segment2box)."""

def points_clipped(points: Buffer, n: int, k: int, boxes: Buffer, /) -> None:
    """In place: each of ``n`` polygons of ``k`` points (``points``: n x k x 2 float32,
    writable) held to its box (``boxes``: n x 4 float32), as numpy's clip does."""

def fill_polygons(points: Buffer, n: int, k: int, windows: Buffer, canvas: Buffer, stride: int,
                  value: int, /) -> None:
    """``cv2.fillPoly(window, [polygon], value, offset=(-x0, -y0))`` for each of ``n``
    polygons of ``k`` int32 points (``points``: n x k x 2), bit for bit with OpenCV
    4.12 to 5.1 (lines and edges cut to the window as they cut them): ``windows``
    n x 6 int32 (x0, y0, width, height, row, column), each the width x height
    block of ``canvas`` (a writable uint8 buffer of rows of ``stride`` bytes) from
    (row, column); an empty window is skipped.  Runs without the GIL.  Raises
    ValueError for a point more than 2^20 from its window's corner, a window off
    the canvas or wrong buffers."""

def points_placed(points: Buffer, n: int, k: int, planar: bool,
                  move: tuple[float, float, float, float], hi: float, out: Buffer, /) -> None:
    """``out`` (n x k x 2 float32, writable): each point of ``n`` polygons of ``k``
    points (``points``: n x k x 2 float32, or n x 2 x k with ``planar``, as
    Ultralytics' resampling lays them out) as (x * sx + dx, y * sy + dy) for ``move`` =
    (sx, sy, dx, dy), each operation rounded to float32, then held to [0, hi] as
    numpy's clip does: Mosaic moving a photo's polygons onto its canvas."""

def block_areas(canvas: Buffer, stride: int, blocks: Buffer, n: int, areas: Buffer, /) -> None:
    """``areas`` (n uint64, writable): the nonzero bytes of each of ``n`` blocks of
    ``canvas`` (rows of ``stride`` bytes); ``blocks`` n x 6 int32: row, column, height,
    width, and where the block lands in a mask, y, x.  Raises ValueError for a block
    that does not fit the canvas or buffers of the wrong size."""

def ranked_blocks(canvas: Buffer, stride: int, blocks: Buffer, n: int, order: Buffer,
                  mask: Buffer, width: int, item: int, /) -> None:
    """For r = 1 .. n, block ``order[r - 1]``'s nonzero pixels written as r at its
    (y, x) of ``mask`` (rows of ``width`` items of ``item`` bytes: 1 for uint8, 4 for
    int32), later ranks over earlier ones: Format's overlapped mask.  ``order``: n
    int64.  Raises ValueError for a block past the canvas or the mask, an order entry
    that names no block, or another item size."""
