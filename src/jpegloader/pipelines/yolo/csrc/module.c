/* Python binding of the YOLO pipeline's OpenCV (and segment2box) arithmetic in C:
 * buffer checks, the GIL released around the work.  Built against the stable ABI
 * (3.11+). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "buffer_checks.h"
#include "py_module.h"
#include "bgr.h"
#include "hsv.h"
#include "fill.h"
#include "overlap.h"
#include "polygons.h"
#include "simd.h"
#include "warp.h"

/* The warp's inverse map and fill from the Python arguments: 0, or -1 with a
 * ValueError when the matrix is not finite.  The fill is clamped to 0..255. */
static int warp_arguments(const double m[6], const int fill_in[3], int arithmetic,
                          double inv[6], uint8_t fill[3])
{
    if (arithmetic != JL_WARP_FLOAT && arithmetic != JL_WARP_FIXED) {
        PyErr_Format(PyExc_ValueError, "arithmetic %d is neither 0 (float) nor 1 (fixed)",
                     arithmetic);
        return -1;
    }
    for (int i = 0; i < 6; i++)
        if (!isfinite(m[i])) {
            PyErr_SetString(PyExc_ValueError, "the matrix is not finite");
            return -1;
        }
    for (int i = 0; i < 3; i++)
        fill[i] = (uint8_t)(fill_in[i] < 0 ? 0 : fill_in[i] > 255 ? 255 : fill_in[i]);
    jl_warp_inverse(m, inv);
    return 0;
}

PyDoc_STRVAR(warp_affine_doc,
"warp_affine(src, h, w, dst, dh, dw, matrix, border, arithmetic) -> None\n\n"
"cv2.warpAffine(src, matrix, (dw, dh), flags=INTER_LINEAR,\n"
"borderMode=BORDER_CONSTANT, borderValue=border) into dst: src a C-contiguous\n"
"h x w x 3 uint8 buffer, dst a writable dh x dw x 3 one, matrix the forward 2x3\n"
"matrix as six floats (row-major), border three ints, arithmetic 0 (OpenCV 5.0's\n"
"float sampling) or 1 (the 4.x releases' fixed point).");

static PyObject *py_warp_affine(PyObject *self, PyObject *args)
{
    Py_ssize_t h, w, dh, dw;
    double m[6], inv[6];
    int border[3], arithmetic, failed = 0;
    uint8_t fill[3];
    Py_buffer b[2] = {{0}};
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnw*nn(dddddd)(iii)i:warp_affine", &b[0], &h, &w, &b[1],
                          &dh, &dw, &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &border[0],
                          &border[1], &border[2], &arithmetic))
        return NULL;
    if (h <= 0 || w <= 0 || dh <= 0 || dw <= 0 || h > INT_MAX / 4 || w > INT_MAX / 4 ||
        dh > INT_MAX / 4 || dw > INT_MAX / 4 || h * w > INT_MAX / 4 || dh * dw > PY_SSIZE_T_MAX / 4)
        PyErr_SetString(PyExc_ValueError, "image size out of range");
    else if (!jl_check_size(&b[0], h * w * 3, "src") && !jl_check_size(&b[1], dh * dw * 3, "dst")
             && !warp_arguments(m, border, arithmetic, inv, fill)) {
        Py_BEGIN_ALLOW_THREADS
        failed = jl_warp_affine_u8c3(b[0].buf, (int)h, (int)w, (ptrdiff_t)w * 3, b[1].buf,
                                     (int)dh, (int)dw, (ptrdiff_t)dw * 3, inv, fill, arithmetic);
        Py_END_ALLOW_THREADS
        result = failed ? PyErr_NoMemory() : Py_NewRef(Py_None);
    }
    jl_release_all(b, 2);
    return result;
}

/* 0 when h and w are positive and an h x w x 3 image's bytes fit, else -1 with a
 * ValueError. */
static int image_size_ok(Py_ssize_t h, Py_ssize_t w)
{
    if (h <= 0 || w <= 0 || h > INT_MAX / 4 || w > INT_MAX / 4 || h > PY_SSIZE_T_MAX / 3 / w) {
        PyErr_SetString(PyExc_ValueError, "image size out of range");
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(warp_mosaic_doc,
"warp_mosaic(tiles, dst, dh, dw, matrix, fill, arithmetic) -> None\n\n"
"warp_affine of a canvas that is never built: tiles, up to 9 tuples (src, h, w,\n"
"x0, y0, x1, y1, sx, sy), each placing src's (a C-contiguous h x w x 3 uint8\n"
"buffer) pixels from (sx, sy) at canvas [x0, x1) x [y0, y1), disjoint; every\n"
"other pixel, and the border, is fill (three ints).");

enum { MAX_TILES = 9 };

static PyObject *py_warp_mosaic(PyObject *self, PyObject *args)
{
    PyObject *seq, *items = NULL, *result = NULL;
    Py_ssize_t dh, dw, count = 0;
    double m[6], inv[6];
    int fill_in[3], arithmetic, failed = 0;
    uint8_t fill[3];
    Py_buffer b[MAX_TILES + 1] = {{0}};
    jl_warp_tile tiles[MAX_TILES];
    int used = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "Ow*nn(dddddd)(iii)i:warp_mosaic", &seq, &b[MAX_TILES], &dh,
                          &dw, &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &fill_in[0],
                          &fill_in[1], &fill_in[2], &arithmetic))
        return NULL;
    if (!(items = PySequence_Tuple(seq)))
        goto done;
    count = PyTuple_Size(items);
    if (count > MAX_TILES) {
        PyErr_Format(PyExc_ValueError, "at most %d tiles, not %zd", MAX_TILES, count);
        goto done;
    }
    if (image_size_ok(dh, dw) || jl_check_size(&b[MAX_TILES], dh * dw * 3, "dst"))
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t h, w, x0, y0, x1, y1, sx, sy;
        if (!PyArg_ParseTuple(PyTuple_GetItem(items, i), "y*nnnnnnnn:a tile", &b[used],
                              &h, &w, &x0, &y0, &x1, &y1, &sx, &sy))
            goto done;
        used++;
        if (image_size_ok(h, w))
            goto done;
        if (h * w > INT_MAX / 4) { /* warp_affine's bound: taps' offsets are int32 lanes */
            PyErr_Format(PyExc_ValueError, "tile %zd's %zd x %zd image is too large", i, h, w);
            goto done;
        }
        if (jl_check_size(&b[used - 1], h * w * 3, "a tile's src"))
            goto done;
        if (x0 < 0 || y0 < 0 || x1 > INT_MAX / 4 || y1 > INT_MAX / 4 || sx < 0 || sy < 0 ||
            x1 < x0 || y1 < y0 || sx + (x1 - x0) > w || sy + (y1 - y0) > h) {
            PyErr_Format(PyExc_ValueError, "tile %zd does not fit its %zd x %zd image", i, h, w);
            goto done;
        }
        tiles[used - 1] = (jl_warp_tile){(const uint8_t *)b[used - 1].buf + (sy * w + sx) * 3,
                                         (ptrdiff_t)w * 3, (int)x0, (int)y0, (int)x1, (int)y1,
                                         (int)(h - sy)};
    }
    if (!warp_arguments(m, fill_in, arithmetic, inv, fill)) {
        Py_BEGIN_ALLOW_THREADS
        failed = jl_warp_tiles_u8c3(tiles, used, b[MAX_TILES].buf, (int)dh, (int)dw,
                                    (ptrdiff_t)dw * 3, inv, fill, arithmetic);
        Py_END_ALLOW_THREADS
        result = failed ? PyErr_NoMemory() : Py_NewRef(Py_None);
    }
done:
    Py_XDECREF(items);
    jl_release_all(b, used);
    jl_release_all(&b[MAX_TILES], 1);
    return result;
}

PyDoc_STRVAR(hsv_lut_doc,
"hsv_lut(img, width, lut, block) -> None\n\n"
"In place: cv2.cvtColor(cv2.LUT(cv2.cvtColor(img, COLOR_BGR2HSV), lut),\n"
"COLOR_HSV2BGR, dst=img) for img a writable C-contiguous uint8 buffer of BGR\n"
"rows of width pixels, lut a 768-byte buffer (256 x 3: value, channel), block\n"
"the pixels a pass of OpenCV's HSV -> BGR vector loop takes (a multiple of 16).");

static PyObject *py_hsv_lut(PyObject *self, PyObject *args)
{
    Py_buffer b[2] = {{0}};
    Py_ssize_t width, block;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*ny*n:hsv_lut", &b[0], &width, &b[1], &block))
        return NULL;
    if (block <= 0 || block % 16 || block > 4096)
        PyErr_Format(PyExc_ValueError, "block %zd is not a multiple of 16 up to 4096", block);
    else if (width <= 0 || b[0].len % (3 * width))
        PyErr_Format(PyExc_ValueError, "img is a %zd-byte buffer, not whole rows of %zd BGR "
                     "pixels", b[0].len, width);
    else if (!jl_check_size(&b[1], 256 * 3, "lut")) {
        Py_BEGIN_ALLOW_THREADS
        jl_hsv_lut_u8c3(b[0].buf, (size_t)(b[0].len / (3 * width)), (size_t)width, b[1].buf,
                        (size_t)block);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 2);
    return result;
}

PyDoc_STRVAR(allow_avx512_doc,
"allow_avx512(allow) -> bool\n\n"
"Whether hsv_lut's and the warps' AVX-512 loops may run where the processor has\n"
"them (the default); returns the previous setting.  They give the AVX2 loops'\n"
"results; the tests compare both with OpenCV.");

static PyObject *py_allow_avx512(PyObject *self, PyObject *allow)
{
    (void)self;
    return jl_py_allow_avx512(allow);
}

PyDoc_STRVAR(avx512_on_doc,
"avx512_on() -> bool\n\n"
"Whether the AVX-512 loops run: allowed, and the processor has AVX-512 F, BW, VL and\n"
"VBMI, and FMA.");

static PyObject *py_avx512_on(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyBool_FromLong(jl_avx512_on(JL_AVX512_VBMI));
}

PyDoc_STRVAR(planes_to_bgr_doc,
"planes_to_bgr(planes, h, w, bgr) -> None\n\n"
"planes, uint8 R, G, B planes of h x w, into bgr, a writable h x w x 3 uint8\n"
"buffer of BGR pixels (OpenCV's order).");

static PyObject *py_planes_to_bgr(PyObject *self, PyObject *args)
{
    Py_ssize_t h, w;
    Py_buffer b[2] = {{0}};
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnw*:planes_to_bgr", &b[0], &h, &w, &b[1]))
        return NULL;
    if (!image_size_ok(h, w) && !jl_check_size(&b[0], h * w * 3, "planes") &&
        !jl_check_size(&b[1], h * w * 3, "bgr")) {
        Py_BEGIN_ALLOW_THREADS
        jl_planes_to_bgr(b[0].buf, (int)h, (int)w, b[1].buf);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 2);
    return result;
}

PyDoc_STRVAR(bgr_to_planes_doc,
"bgr_to_planes(bgr, h, w, flip_y, flip_x, reverse, planes) -> None\n\n"
"bgr, a C-contiguous h x w x 3 uint8 buffer, read mirrored top to bottom\n"
"(flip_y) and left to right (flip_x), into planes (3 x h x w, writable): B, G, R,\n"
"or R, G, B with reverse.");

static PyObject *py_bgr_to_planes(PyObject *self, PyObject *args)
{
    Py_ssize_t h, w;
    int flip_y, flip_x, reverse;
    Py_buffer b[2] = {{0}};
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnpppw*:bgr_to_planes", &b[0], &h, &w, &flip_y, &flip_x,
                          &reverse, &b[1]))
        return NULL;
    if (!image_size_ok(h, w) && !jl_check_size(&b[0], h * w * 3, "bgr") &&
        !jl_check_size(&b[1], h * w * 3, "planes")) {
        Py_BEGIN_ALLOW_THREADS
        jl_bgr_to_planes(b[0].buf, (int)h, (int)w, flip_y, flip_x, reverse, b[1].buf);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 2);
    return result;
}

/* 0 when n polygons of k points fit a buffer of floats, else -1 with a ValueError. */
static int polygons_ok(Py_ssize_t n, Py_ssize_t k)
{
    if (n < 0 || k < 1 || n > PY_SSIZE_T_MAX / 16 / k) {
        PyErr_SetString(PyExc_ValueError, "polygon count or length out of range");
        return -1;
    }
    return 0;
}

/* A call of fn on count rows of ``in`` floats each into rows of ``out`` floats, the
 * arguments (a buffer, count, a writable buffer) parsed with ``format``. */
static PyObject *rows_to_rows(PyObject *args, const char *format, int in, int out,
                              const char *in_name, const char *out_name,
                              void (*fn)(const float *, size_t, float *))
{
    Py_buffer b[2] = {{0}};
    Py_ssize_t count;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, format, &b[0], &count, &b[1]))
        return NULL;
    if (!polygons_ok(count, 1) && !jl_check_size(&b[0], count * 4 * in, in_name) &&
        !jl_check_size(&b[1], count * 4 * out, out_name)) {
        fn(b[0].buf, (size_t)count, b[1].buf);
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 2);
    return result;
}

PyDoc_STRVAR(rows_xy1_doc,
"rows_xy1(xy, count, rows) -> None\n\n"
"rows (count x 3 float32, writable): each point (x, y) of xy (count x 2 float32)\n"
"as (x, y, 1).");

static PyObject *py_rows_xy1(PyObject *self, PyObject *args)
{
    (void)self;
    return rows_to_rows(args, "y*nw*:rows_xy1", 2, 3, "xy", "rows", jl_rows_xy1);
}

PyDoc_STRVAR(rows_divided_doc,
"rows_divided(rows, count, xy) -> None\n\n"
"xy (count x 2 float32, writable): each row (x, y, z) of rows (count x 3 float32)\n"
"as (x / z, y / z).");

static PyObject *py_rows_divided(PyObject *self, PyObject *args)
{
    (void)self;
    return rows_to_rows(args, "y*nw*:rows_divided", 3, 2, "rows", "xy", jl_rows_divided);
}

PyDoc_STRVAR(segment_boxes_doc,
"segment_boxes(points, n, k, w, h, boxes, kinds) -> None\n\n"
"For n polygons of k points (points: n x k x 2 float32) in a w x h image, each\n"
"one's box as Ultralytics' segment2box computes it (boxes: n x 4 float32,\n"
"writable) and what it is (kinds: n bytes, writable): 0 inside, 1 outside, 2\n"
"crossing the border (its box without the image corners it covers, +inf/-inf\n"
"where nothing lies inside), 3 crossing with a NaN or infinite extreme.");

static PyObject *py_segment_boxes(PyObject *self, PyObject *args)
{
    Py_buffer b[3] = {{0}};
    Py_ssize_t n, k;
    double w, h;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnddw*w*:segment_boxes", &b[0], &n, &k, &w, &h, &b[1],
                          &b[2]))
        return NULL;
    if (!polygons_ok(n, k) && !jl_check_size(&b[0], n * k * 8, "points") &&
        !jl_check_size(&b[1], n * 16, "boxes") && !jl_check_size(&b[2], n, "kinds")) {
        jl_segment_boxes(b[0].buf, (size_t)n, (size_t)k, (float)w, (float)h, b[1].buf,
                         b[2].buf);
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 3);
    return result;
}

PyDoc_STRVAR(points_clipped_doc,
"points_clipped(points, n, k, boxes) -> None\n\n"
"In place: each of n polygons of k points (points: n x k x 2 float32, writable)\n"
"held to its box (boxes: n x 4 float32), as numpy's clip does.");

static PyObject *py_points_clipped(PyObject *self, PyObject *args)
{
    Py_buffer b[2] = {{0}};
    Py_ssize_t n, k;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*nny*:points_clipped", &b[0], &n, &k, &b[1]))
        return NULL;
    if (!polygons_ok(n, k) && !jl_check_size(&b[0], n * k * 8, "points") &&
        !jl_check_size(&b[1], n * 16, "boxes")) {
        jl_points_clipped(b[0].buf, (size_t)n, (size_t)k, b[1].buf);
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 2);
    return result;
}

enum { FILL_REACH = 1 << 20 };

/* Whether the width x height rectangle from (column, row) lies on a surface of
 * ``rows`` rows of ``columns`` items. */
static int fits(int32_t column, int32_t row, int32_t width, int32_t height,
                Py_ssize_t columns, Py_ssize_t rows)
{
    return width >= 0 && height >= 0 && row >= 0 && column >= 0 &&
           (Py_ssize_t)column + width <= columns && (Py_ssize_t)row + height <= rows;
}

/* 0 when every window fits the canvas of rows x stride bytes and every point of
 * each polygon with a window lies within 2^20 of its corner, else -1 with a
 * ValueError. */
static int windows_ok(const int32_t *points, Py_ssize_t n, Py_ssize_t k,
                      const jl_fill_window *windows, Py_ssize_t stride, Py_ssize_t rows)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        const jl_fill_window *w = &windows[i];
        if (!fits(w->column, w->row, w->width, w->height, stride, rows)) {
            PyErr_Format(PyExc_ValueError, "window %zd does not fit the %zd x %zd canvas", i,
                         rows, stride);
            return -1;
        }
        if (!w->width || !w->height)
            continue;
        for (Py_ssize_t j = 0; j < k; j++) {
            int64_t x = (int64_t)points[2 * (i * k + j)] - w->x0;
            int64_t y = (int64_t)points[2 * (i * k + j) + 1] - w->y0;
            if (x < -FILL_REACH || y < -FILL_REACH || x > FILL_REACH || y > FILL_REACH) {
                PyErr_Format(PyExc_ValueError, "polygon %zd's point %zd lies more than 2^20 "
                             "from its window", i, j);
                return -1;
            }
        }
    }
    return 0;
}

PyDoc_STRVAR(points_placed_doc,
"points_placed(points, n, k, planar, move, hi, out) -> None\n\n"
"out (n x k x 2 float32, writable): each point of n polygons of k points (points:\n"
"n x k x 2 float32, or n x 2 x k with planar) as (x * sx + dx, y * sy + dy) for\n"
"move = (sx, sy, dx, dy), each operation rounded to float32, held to [0, hi] as\n"
"numpy's clip does.");

static PyObject *py_points_placed(PyObject *self, PyObject *args)
{
    Py_buffer b[2] = {{0}};
    Py_ssize_t n, k;
    int planar;
    double sx, sy, dx, dy, hi;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnp(dddd)dw*:points_placed", &b[0], &n, &k, &planar, &sx,
                          &sy, &dx, &dy, &hi, &b[1]))
        return NULL;
    if (!polygons_ok(n, k) && !jl_check_size(&b[0], n * k * 8, "points") &&
        !jl_check_size(&b[1], n * k * 8, "out")) {
        const float move[4] = {(float)sx, (float)sy, (float)dx, (float)dy};
        jl_points_placed(b[0].buf, (size_t)n, (size_t)k, planar, move, (float)hi, b[1].buf);
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 2);
    return result;
}

/* The canvas's rows: its length must be whole rows of stride bytes. */
static int canvas_rows(const Py_buffer *canvas, Py_ssize_t stride, Py_ssize_t *rows)
{
    if (stride <= 0 || canvas->len % stride) {
        PyErr_Format(PyExc_ValueError, "canvas is a %zd-byte buffer, not rows of %zd bytes",
                     canvas->len, stride);
        return -1;
    }
    *rows = canvas->len / stride;
    return 0;
}

PyDoc_STRVAR(fill_polygons_doc,
"fill_polygons(points, n, k, windows, canvas, stride, value) -> None\n\n"
"cv2.fillPoly(window, [polygon], value, offset=(-x0, -y0)) for each of n polygons\n"
"of k int32 points (points: n x k x 2) into its window (windows: n x 6 int32, x0\n"
"y0 width height row column: the window is the width x height block of canvas\n"
"from there), canvas a writable uint8 buffer of rows of stride bytes.  Every\n"
"point must lie within 2^20 of its window's corner; an empty window is skipped.");

static PyObject *py_fill_polygons(PyObject *self, PyObject *args)
{
    Py_buffer b[3] = {{0}};
    Py_ssize_t n, k, stride, rows;
    int value, failed = 0;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nny*w*ni:fill_polygons", &b[0], &n, &k, &b[1], &b[2],
                          &stride, &value))
        return NULL;
    if (value < 0 || value > 255)
        PyErr_Format(PyExc_ValueError, "value %d is not a byte", value);
    else if (!canvas_rows(&b[2], stride, &rows) && !polygons_ok(n, k) &&
             !jl_check_size(&b[0], n * k * 8, "points") &&
             !jl_check_size(&b[1], n * (Py_ssize_t)sizeof(jl_fill_window), "windows") &&
             !windows_ok(b[0].buf, n, k, b[1].buf, stride, rows)) {
        Py_BEGIN_ALLOW_THREADS
        failed = jl_fill_polygons(b[0].buf, (size_t)n, (size_t)k, b[1].buf, b[2].buf, stride,
                                  (uint8_t)value);
        Py_END_ALLOW_THREADS
        result = failed ? PyErr_NoMemory() : Py_NewRef(Py_None);
    }
    jl_release_all(b, 3);
    return result;
}

/* 0 when ``blocks`` holds n blocks (jl_mask_block) that each fit the canvas (rows of
 * stride bytes) and, with a mask (mask_rows > 0), land inside the mask; else -1 with
 * a ValueError. */
static int blocks_ok(Py_buffer *blocks, Py_ssize_t n, Py_ssize_t stride,
                     Py_ssize_t rows, Py_ssize_t mask_width, Py_ssize_t mask_rows)
{
    if (n < 0 || n > PY_SSIZE_T_MAX / 32) {
        PyErr_SetString(PyExc_ValueError, "block count out of range");
        return -1;
    }
    if (jl_check_size(blocks, n * (Py_ssize_t)sizeof(jl_mask_block), "blocks"))
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const jl_mask_block *b = (const jl_mask_block *)blocks->buf + i;
        if (!fits(b->column, b->row, b->width, b->height, stride, rows)) {
            PyErr_Format(PyExc_ValueError, "block %zd does not fit the %zd x %zd canvas", i,
                         rows, stride);
            return -1;
        }
        if (mask_rows && !fits(b->x, b->y, b->width, b->height, mask_width, mask_rows)) {
            PyErr_Format(PyExc_ValueError, "block %zd does not land inside the %zd x %zd mask",
                         i, mask_rows, mask_width);
            return -1;
        }
    }
    return 0;
}

PyDoc_STRVAR(block_areas_doc,
"block_areas(canvas, stride, blocks, n, areas) -> None\n\n"
"areas (n uint64, writable): the nonzero bytes of each of n blocks (blocks: n x 6\n"
"int32, row column height width y x) of canvas, rows of stride bytes.");

static PyObject *py_block_areas(PyObject *self, PyObject *args)
{
    Py_buffer b[3] = {{0}};
    Py_ssize_t stride, n, rows;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ny*nw*:block_areas", &b[0], &stride, &b[1], &n, &b[2]))
        return NULL;
    if (!canvas_rows(&b[0], stride, &rows) && !blocks_ok(&b[1], n, stride, rows, 0, 0) &&
        !jl_check_size(&b[2], n * 8, "areas")) {
        jl_block_areas(b[0].buf, stride, b[1].buf, (size_t)n, b[2].buf);
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 3);
    return result;
}

PyDoc_STRVAR(ranked_blocks_doc,
"ranked_blocks(canvas, stride, blocks, n, order, mask, width, item) -> None\n\n"
"For r = 1 .. n, the nonzero pixels of block order[r - 1] (blocks as block_areas\n"
"takes them; order: n int64) written as r at (y, x) of mask, a writable buffer of\n"
"rows of width items of item bytes (1: uint8, 4: int32).");

static PyObject *py_ranked_blocks(PyObject *self, PyObject *args)
{
    Py_buffer b[4] = {{0}};
    Py_ssize_t stride, n, width, rows;
    int item;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ny*ny*w*ni:ranked_blocks", &b[0], &stride, &b[1], &n, &b[2],
                          &b[3], &width, &item))
        return NULL;
    if (item != 1 && item != 4)
        PyErr_Format(PyExc_ValueError, "item %d is neither 1 (uint8) nor 4 (int32)", item);
    else if (width <= 0 || b[3].len % (width * item))
        PyErr_Format(PyExc_ValueError, "mask is a %zd-byte buffer, not rows of %zd items",
                     b[3].len, width);
    else if (!canvas_rows(&b[0], stride, &rows) &&
             !blocks_ok(&b[1], n, stride, rows, width, b[3].len / (width * item)) &&
             !jl_check_size(&b[2], n * 8, "order")) {
        const int64_t *order = b[2].buf;
        for (Py_ssize_t r = 0; r < n; r++)
            if (order[r] < 0 || order[r] >= n) {
                PyErr_Format(PyExc_ValueError, "order[%zd] = %lld is not a block", r,
                             (long long)order[r]);
                jl_release_all(b, 4);
                return NULL;
            }
        jl_ranked_blocks(b[0].buf, stride, b[1].buf, order, (size_t)n, b[3].buf, width, item);
        result = Py_NewRef(Py_None);
    }
    jl_release_all(b, 4);
    return result;
}

static PyMethodDef methods[] = {
    {"planes_to_bgr", py_planes_to_bgr, METH_VARARGS, planes_to_bgr_doc},
    {"bgr_to_planes", py_bgr_to_planes, METH_VARARGS, bgr_to_planes_doc},
    {"hsv_lut", py_hsv_lut, METH_VARARGS, hsv_lut_doc},
    {"allow_avx512", py_allow_avx512, METH_O, allow_avx512_doc},
    {"avx512_on", py_avx512_on, METH_NOARGS, avx512_on_doc},
    {"warp_affine", py_warp_affine, METH_VARARGS, warp_affine_doc},
    {"warp_mosaic", py_warp_mosaic, METH_VARARGS, warp_mosaic_doc},
    {"rows_xy1", py_rows_xy1, METH_VARARGS, rows_xy1_doc},
    {"rows_divided", py_rows_divided, METH_VARARGS, rows_divided_doc},
    {"segment_boxes", py_segment_boxes, METH_VARARGS, segment_boxes_doc},
    {"points_clipped", py_points_clipped, METH_VARARGS, points_clipped_doc},
    {"points_placed", py_points_placed, METH_VARARGS, points_placed_doc},
    {"fill_polygons", py_fill_polygons, METH_VARARGS, fill_polygons_doc},
    {"block_areas", py_block_areas, METH_VARARGS, block_areas_doc},
    {"ranked_blocks", py_ranked_blocks, METH_VARARGS, ranked_blocks_doc},
    {NULL, NULL, 0, NULL},
};

JL_PLAIN_MODULE(_opencv, "OpenCV's arithmetic for YOLO training, in C (see _opencv.pyi).",
                methods)
