/* Python binding of Pillow's operations in C (the affine transform, the
 * enhancements, histograms and look-up tables): buffer checks, the GIL released
 * around each call.  Built against the stable ABI (3.11+). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>

#include "buffer_checks.h"
#include "pil_affine.h"
#include "pil_enhance.h"
#include "py_module.h"

PyDoc_STRVAR(affine_doc,
"affine(src, sw, sh, dst, dw, dh, coefficients, filter, fill) -> None\n\n"
"Pillow's Image.transform(..., Transform.AFFINE, coefficients, filter,\n"
"fillcolor=fill) of an RGB image: src uint8[sh, sw, 3] into dst uint8[dh, dw, 3];\n"
"filter 2 (bilinear) or 3 (bicubic); fill three bytes.");

static PyObject *py_affine(PyObject *self, PyObject *args)
{
    Py_buffer b[2] = {{0}};
    int sw, sh, dw, dh, filter, rc = -1;
    unsigned char fill[3];
    double a[6];
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiw*ii(dddddd)i(bbb):affine", &b[0], &sw, &sh, &b[1], &dw,
                          &dh, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &filter, &fill[0],
                          &fill[1], &fill[2]))
        return NULL;
    if (sw < 1 || sh < 1 || dw < 1 || dh < 1 ||
        (filter != JL_PIL_BILINEAR && filter != JL_PIL_BICUBIC)) {
        PyErr_Format(PyExc_ValueError, "need sizes of at least 1 and filter 2 or 3, got "
                     "%dx%d -> %dx%d, filter %d", sw, sh, dw, dh, filter);
    } else if (!jl_check_size(&b[0], (Py_ssize_t)sw * sh * 3, "src") &&
               !jl_check_size(&b[1], (Py_ssize_t)dw * dh * 3, "dst")) {
        Py_BEGIN_ALLOW_THREADS
        jl_pil_affine(b[0].buf, sw, sh, b[1].buf, dw, dh, a, filter, fill);
        Py_END_ALLOW_THREADS
        rc = 0;
    }
    jl_release_all(b, 2);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(allow_avx2_doc,
"allow_avx2(allow) -> bool\n\n"
"Whether the AVX2 loops (the warp's and the enhancements') may run where the\n"
"processor has it; the previous setting.");

static int allow_every_avx2(int allow)
{
    jl_pil_enhance_allow_avx2(allow);
    return jl_pil_affine_allow_avx2(allow);
}

static PyObject *py_allow_avx2(PyObject *self, PyObject *allow)
{
    (void)self;
    return jl_py_switch(allow, allow_every_avx2);
}

PyDoc_STRVAR(enhance_doc,
"enhance(src, w, h, dst, kind, factor) -> None\n\n"
"ImageEnhance's Brightness (0), Color (1), Contrast (2) or Sharpness (3) of an RGB\n"
"image,"
" .enhance(factor): src uint8[h, w, 3] into dst uint8[h, w, 3], apart.");

static PyObject *py_enhance(PyObject *self, PyObject *args)
{
    Py_buffer b[2] = {{0}};
    int w, h, kind, rc = -1;
    double factor;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiw*id:enhance", &b[0], &w, &h, &b[1], &kind, &factor))
        return NULL;
    if (w < 1 || h < 1 || kind < JL_PIL_BRIGHTNESS || kind > JL_PIL_SHARPNESS ||
        !isfinite(factor)) {
        PyErr_Format(PyExc_ValueError, "need sizes of at least 1, kind 0-3 and a finite "
                     "factor, got %dx%d, kind %d", w, h, kind);
    } else if (b[0].buf == b[1].buf) {
        PyErr_SetString(PyExc_ValueError, "src and dst must be apart");
    } else if (!jl_check_size(&b[0], (Py_ssize_t)w * h * 3, "src") &&
               !jl_check_size(&b[1], (Py_ssize_t)w * h * 3, "dst")) {
        Py_BEGIN_ALLOW_THREADS
        rc = jl_pil_enhance(b[0].buf, w, h, b[1].buf, kind, (float)factor);
        Py_END_ALLOW_THREADS
        if (rc)
            PyErr_NoMemory();
    }
    jl_release_all(b, 2);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

/* 0 when src holds whole RGB pixels; otherwise -1 with a ValueError set. */
static int whole_pixels(const Py_buffer *src)
{
    if (src->len % 3 == 0)
        return 0;
    PyErr_Format(PyExc_ValueError, "src: need whole RGB pixels, got %zd bytes", src->len);
    return -1;
}

PyDoc_STRVAR(histograms_doc,
"histograms(src, counts) -> None\n\n"
"Image.histogram() of an RGB image: src uint8[..., 3] counted into counts,\n"
"int64[3, 256] (written whole).");

static PyObject *py_histograms(PyObject *self, PyObject *args)
{
    Py_buffer b[2] = {{0}};
    int rc = -1;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*:histograms", &b[0], &b[1]))
        return NULL;
    if (!whole_pixels(&b[0]) &&
        !jl_check_size(&b[1], 3 * 256 * (Py_ssize_t)sizeof(int64_t), "counts")) {
        Py_BEGIN_ALLOW_THREADS
        jl_pil_histograms(b[0].buf, (size_t)b[0].len / 3, b[1].buf);
        Py_END_ALLOW_THREADS
        rc = 0;
    }
    jl_release_all(b, 2);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(apply_luts_doc,
"apply_luts(src, dst, luts) -> None\n\n"
"Image.point(luts) of an RGB image: each channel of src uint8[..., 3] through its\n"
"table of luts, uint8[3, 256], into dst (as many bytes; may be src).");

static PyObject *py_apply_luts(PyObject *self, PyObject *args)
{
    Py_buffer b[3] = {{0}};
    int rc = -1;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*y*:apply_luts", &b[0], &b[1], &b[2]))
        return NULL;
    if (!whole_pixels(&b[0]) && !jl_check_size(&b[1], b[0].len, "dst") &&
        !jl_check_size(&b[2], 3 * 256, "luts")) {
        Py_BEGIN_ALLOW_THREADS
        jl_pil_apply_luts(b[0].buf, (size_t)b[0].len / 3, b[1].buf, b[2].buf);
        Py_END_ALLOW_THREADS
        rc = 0;
    }
    jl_release_all(b, 3);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"histograms", py_histograms, METH_VARARGS, histograms_doc},
    {"apply_luts", py_apply_luts, METH_VARARGS, apply_luts_doc},
    {"enhance", py_enhance, METH_VARARGS, enhance_doc},
    {"affine", py_affine, METH_VARARGS, affine_doc},
    {"allow_avx2", py_allow_avx2, METH_O, allow_avx2_doc},
    {NULL, NULL, 0, NULL},
};

JL_PLAIN_MODULE(_pillow,
                "Pillow's affine transforms, enhancements and look-up tables of RGB "
                "images in C (see _pillow.pyi).",
                methods)
