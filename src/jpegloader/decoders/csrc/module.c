/* The only file that includes Python.h: argument parsing, buffer checks,
 * and the GIL released around each whole-batch call.  Built against the
 * stable ABI (3.11+), so one build serves every later CPython. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "jpeg_region.h"
#include "colour.h"
#include "dc_scans.h"
#include "pipeline.h"
#include "plan.h"
#include "resample.h"
#include "resize_image.h"
#include "tensor_stage.h"
#include "buffer_checks.h"
#include "py_module.h"

#define STR2(x) #x
#define STR(x) STR2(x)

/* Validates the concatenated-bytes input shared by both calls and returns the
 * sample count, or -1 with an exception set. */
static Py_ssize_t check_inputs(Py_buffer *data, Py_buffer *offsets)
{
    const int64_t *off = (const int64_t *)offsets->buf;
    Py_ssize_t n, i;
    if (offsets->len % (Py_ssize_t)sizeof(int64_t) != 0 ||
        offsets->len < (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError,
                        "offsets must be a non-empty int64 buffer of n + 1 entries");
        return -1;
    }
    n = offsets->len / (Py_ssize_t)sizeof(int64_t) - 1;
    for (i = 0; i <= n; i++) {
        if (off[i] < 0 || off[i] > data->len || (i > 0 && off[i] < off[i - 1])) {
            PyErr_Format(PyExc_ValueError,
                         "offsets[%zd] = %lld is outside the %zd-byte data buffer "
                         "or not increasing",
                         i, (long long)off[i], data->len);
            return -1;
        }
    }
    return n;
}

PyDoc_STRVAR(probe_doc,
"probe(data, offsets, info, status, messages) -> None\n\n"
"Reads the JPEG header of each sample data[offsets[i]:offsets[i+1]].\n"
"Fills info int32[n, 4] (width, height, components, progressive),\n"
"status int32[n] and messages uint8[n, MESSAGE_LENGTH].");

static PyObject *py_probe(PyObject *self, PyObject *args)
{
    Py_buffer b[5] = {{0}};
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*w*w*:probe", &b[0], &b[1], &b[2], &b[3], &b[4]))
        return NULL;
    n = check_inputs(&b[0], &b[1]);
    if (n < 0 || jl_check_size(&b[2], n * 4 * (Py_ssize_t)sizeof(int32_t), "info") ||
        jl_check_size(&b[3], n * (Py_ssize_t)sizeof(int32_t), "status") ||
        jl_check_size(&b[4], n * JL_MSG_LEN, "messages")) {
        jl_release_all(b, 5);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    jl_probe_batch(b[0].buf, b[1].buf, (int)n, b[2].buf, b[3].buf, b[4].buf);
    Py_END_ALLOW_THREADS
    jl_release_all(b, 5);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(decode_batch_doc,
"decode_batch(data, offsets, plans, out, out_type, out_h, out_w, lut, norm,\n"
"             max_pixels, status, messages, seconds) -> None\n\n"
"Decodes, resamples, colours, flips and writes n samples into out,\n"
"Tensor[n, 3, out_h, out_w] of float32 (out_type 0: levels through lut,\n"
"float32[3, 256], or computed as ((level / 255) - mean) / std where norm,\n"
"float32[3, 2] or empty, holds a mean and std that give the table exactly)\n"
"or uint8 (out_type 1: the levels), or uint8[n, out_h,\n"
"out_w, 3] (out_type 2: interleaved, as a PIL image; 3: B, G, R, as OpenCV\n"
"holds it, for whole images at their own size only).  plans holds n\n"
"PLAN_DTYPE records.  A sample that fails gets a non-zero status, a\n"
"message, and zeroed pixels; the call raises only when its buffers are\n"
"wrong.  seconds, float64[2], is increased by the time spent decoding and\n"
"augmenting.");

static PyObject *py_decode_batch(PyObject *self, PyObject *args)
{
    Py_buffer b[9] = {{0}};
    int out_type, out_h, out_w;
    long long max_pixels;
    Py_ssize_t n, item;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*w*iiiy*y*Lw*w*w*:decode_batch", &b[0], &b[1], &b[2],
                          &b[3], &out_type, &out_h, &out_w, &b[4], &b[8], &max_pixels, &b[5],
                          &b[6], &b[7]))
        return NULL;
    n = check_inputs(&b[0], &b[1]);
    if (n >= 0 && (out_h <= 0 || out_w <= 0 || max_pixels <= 0 ||
                   (out_type != JL_OUT_FLOAT32 && out_type != JL_OUT_UINT8 &&
                    out_type != JL_OUT_UINT8_HWC && out_type != JL_OUT_BGR_HWC))) {
        PyErr_Format(PyExc_ValueError,
                     "out_h, out_w and max_pixels must be positive and out_type 0 to 3, got "
                     "%d, %d, %lld, %d", out_h, out_w, max_pixels, out_type);
        n = -1;
    }
    item = out_type == JL_OUT_FLOAT32 ? (Py_ssize_t)sizeof(float) : 1;
    if (n < 0 || jl_check_size(&b[2], n * (Py_ssize_t)sizeof(jl_plan), "plans") ||
        jl_check_size(&b[3], n * 3 * (Py_ssize_t)out_h * out_w * item, "out") ||
        jl_check_size(&b[4], 3 * 256 * (Py_ssize_t)sizeof(float), "lut") ||
        jl_check_size(&b[5], n * (Py_ssize_t)sizeof(int32_t), "status") ||
        jl_check_size(&b[6], n * JL_MSG_LEN, "messages") ||
        jl_check_size(&b[7], 2 * (Py_ssize_t)sizeof(double), "seconds") ||
        (b[8].len != 0 && jl_check_size(&b[8], 6 * (Py_ssize_t)sizeof(float), "norm"))) {
        jl_release_all(b, 9);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    jl_decode_batch(b[0].buf, b[1].buf, b[2].buf, (int)n, b[3].buf, out_type, out_h, out_w,
                    b[4].buf, b[8].len ? b[8].buf : NULL, (int64_t)max_pixels, b[5].buf,
                    b[6].buf, b[7].buf);
    Py_END_ALLOW_THREADS
    jl_release_all(b, 9);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(decode_views_doc,
"decode_views(data, offsets, plans, views, max_pixels, status, messages,\n"
"             seconds) -> None\n\n"
"Several views of each of n samples, each JPEG decoded once.  plans holds\n"
"n x V PLAN_DTYPE records (sample-major) that share a DCT scale and an image\n"
"size per sample; views is a tuple of V tuples (out, out_type, out_h,\n"
"out_w, lut, norm), each as decode_batch takes them.  One status and message\n"
"per sample; a failed sample's views are zeroed.");

/* An output's buffers: out, lut, norm. */
enum { VIEW_BUFFERS = 3 };

/* Reads the tuple of output tuples (out, out_type, out_h, out_w, lut, norm) into
 * outs, each out holding `samples` samples, out_type at most `last_type`; their
 * buffers into vb (VIEW_BUFFERS each), *taken counting those to release.  0, or -1
 * with an exception set. */
static int parse_outputs(PyObject *tuple, Py_ssize_t samples, int last_type, jl_view_out *outs,
                         Py_buffer *vb, Py_ssize_t *taken)
{
    Py_ssize_t v, count = PyTuple_Size(tuple), item;
    for (v = 0; v < count; v++) {
        PyObject *t = PyTuple_GetItem(tuple, v); /* borrowed */
        jl_view_out *o = &outs[v];
        Py_buffer *ob = &vb[VIEW_BUFFERS * v];
        if (!PyArg_ParseTuple(t, "w*iiiy*y*:an output", &ob[0], &o->out_type, &o->out_h,
                              &o->out_w, &ob[1], &ob[2]))
            return -1;
        *taken = VIEW_BUFFERS * (v + 1);
        if (o->out_h <= 0 || o->out_w <= 0 || o->out_type < 0 || o->out_type > last_type) {
            PyErr_Format(PyExc_ValueError, "output %zd: out_h and out_w must be positive and "
                         "out_type 0 to %d", v, last_type);
            return -1;
        }
        item = o->out_type == JL_OUT_FLOAT32 ? (Py_ssize_t)sizeof(float) : 1;
        if (jl_check_size(&ob[0], samples * 3 * (Py_ssize_t)o->out_h * o->out_w * item,
                          "an output's out") ||
            jl_check_size(&ob[1], 3 * 256 * (Py_ssize_t)sizeof(float), "an output's lut") ||
            (ob[2].len != 0 && jl_check_size(&ob[2], 6 * (Py_ssize_t)sizeof(float),
                                             "an output's norm")))
            return -1;
        o->out = ob[0].buf;
        o->lut = ob[1].buf;
        o->norm = ob[2].len ? ob[2].buf : NULL;
    }
    return 0;
}

/* The checks both calls with a tuple of outputs share: the samples, the plans (per
 * sample, `per_sample` of them), status, messages and seconds.  n, or -1 with an
 * exception set. */
static Py_ssize_t check_batch(Py_buffer *b, Py_ssize_t per_sample, long long max_pixels)
{
    Py_ssize_t n = check_inputs(&b[0], &b[1]);
    if (n < 0)
        return -1;
    if (max_pixels <= 0) {
        PyErr_Format(PyExc_ValueError, "a positive max_pixels expected, got %lld", max_pixels);
        return -1;
    }
    if (jl_check_size(&b[2], n * per_sample * (Py_ssize_t)sizeof(jl_plan), "plans") ||
        jl_check_size(&b[3], n * (Py_ssize_t)sizeof(int32_t), "status") ||
        jl_check_size(&b[4], n * JL_MSG_LEN, "messages") ||
        jl_check_size(&b[5], 2 * (Py_ssize_t)sizeof(double), "seconds"))
        return -1;
    return n;
}

static PyObject *py_decode_views(PyObject *self, PyObject *args)
{
    Py_buffer b[6] = {{0}}, vb[JL_MAX_VIEWS * VIEW_BUFFERS];
    jl_view_out outs[JL_MAX_VIEWS];
    PyObject *views;
    long long max_pixels;
    Py_ssize_t n, nviews, taken = 0;
    int ok = 0;
    (void)self;
    memset(vb, 0, sizeof(vb));
    if (!PyArg_ParseTuple(args, "y*y*y*O!Lw*w*w*:decode_views", &b[0], &b[1], &b[2],
                          &PyTuple_Type, &views, &max_pixels, &b[3], &b[4], &b[5]))
        return NULL;
    nviews = PyTuple_Size(views);
    if (nviews < 1 || nviews > JL_MAX_VIEWS) {
        PyErr_Format(PyExc_ValueError, "1 to %d views expected, got %zd", (int)JL_MAX_VIEWS,
                     nviews);
        goto out;
    }
    n = check_batch(b, nviews, max_pixels);
    if (n < 0 || parse_outputs(views, n, JL_OUT_UINT8_HWC, outs, vb, &taken))
        goto out;
    Py_BEGIN_ALLOW_THREADS
    jl_decode_views(b[0].buf, b[1].buf, b[2].buf, (int)n, (int)nviews, outs,
                    (int64_t)max_pixels, b[3].buf, b[4].buf, b[5].buf);
    Py_END_ALLOW_THREADS
    ok = 1;
out:
    jl_release_all(vb, (int)taken);
    jl_release_all(b, 6);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(decode_each_doc,
"decode_each(data, offsets, plans, outputs, max_pixels, status, messages,\n"
"            seconds) -> None\n\n"
"n samples, each into an output of its own: outputs is a tuple of n tuples\n"
"(out, out_type, out_h, out_w, lut, norm) as decode_views takes them (out_type\n"
"0 to 3, as decode_batch's), each out holding its one sample; plans holds n\n"
"PLAN_DTYPE records.  A failed sample's output is zeroed.");

static PyObject *py_decode_each(PyObject *self, PyObject *args)
{
    Py_buffer b[6] = {{0}}, *vb = NULL;
    jl_view_out *outs = NULL;
    PyObject *outputs;
    long long max_pixels;
    Py_ssize_t n, taken = 0;
    int ok = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*O!Lw*w*w*:decode_each", &b[0], &b[1], &b[2],
                          &PyTuple_Type, &outputs, &max_pixels, &b[3], &b[4], &b[5]))
        return NULL;
    n = check_batch(b, 1, max_pixels);
    if (n < 0)
        goto out;
    if (PyTuple_Size(outputs) != n) {
        PyErr_Format(PyExc_ValueError, "%zd outputs for %zd samples", PyTuple_Size(outputs), n);
        goto out;
    }
    vb = PyMem_Calloc((size_t)n * VIEW_BUFFERS + 1, sizeof(Py_buffer));
    outs = PyMem_Calloc((size_t)n + 1, sizeof(jl_view_out));
    if (!vb || !outs) {
        PyErr_NoMemory();
        goto out;
    }
    if (parse_outputs(outputs, 1, JL_OUT_BGR_HWC, outs, vb, &taken))
        goto out;
    Py_BEGIN_ALLOW_THREADS
    jl_decode_each(b[0].buf, b[1].buf, b[2].buf, (int)n, outs, (int64_t)max_pixels, b[3].buf,
                   b[4].buf, b[5].buf);
    Py_END_ALLOW_THREADS
    ok = 1;
out:
    if (vb)
        jl_release_all(vb, (int)taken);
    PyMem_Free(vb);
    PyMem_Free(outs);
    jl_release_all(b, 6);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(tensor_stage_doc,
"tensor_stage(src, out, n, h, w, out_type, lut, planar) -> None\n\n"
"n images of uint8 levels, [n, h, w, 3] interleaved or [n, 3, h, w] (planar), to\n"
"out [n, 3, h, w]: float32 lut[ch][level] (out_type 0; from planes written with\n"
"streaming stores on x86-64, lut float32[3, 256]) or the levels (out_type 1).");

static PyObject *py_tensor_stage(PyObject *self, PyObject *args)
{
    Py_buffer b[3] = {{0}};
    int n, h, w, out_type, planar, k;
    Py_ssize_t item;
    size_t image;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*iiiiy*p:tensor_stage", &b[0], &b[1], &n, &h, &w,
                          &out_type, &b[2], &planar))
        return NULL;
    item = out_type == JL_OUT_FLOAT32 ? (Py_ssize_t)sizeof(float) : 1;
    if (n < 0 || h <= 0 || w <= 0 || (out_type != JL_OUT_FLOAT32 && out_type != JL_OUT_UINT8)) {
        PyErr_SetString(PyExc_ValueError, "n >= 0, h, w > 0 and out_type 0 or 1 expected");
        jl_release_all(b, 3);
        return NULL;
    }
    if (jl_check_size(&b[0], (Py_ssize_t)n * 3 * h * w, "src") ||
        jl_check_size(&b[1], (Py_ssize_t)n * 3 * h * w * item, "out") ||
        jl_check_size(&b[2], 3 * 256 * (Py_ssize_t)sizeof(float), "lut")) {
        jl_release_all(b, 3);
        return NULL;
    }
    image = (size_t)3 * h * w;
    Py_BEGIN_ALLOW_THREADS
    if (!planar)
        jl_hwc_to_chw(b[0].buf, n, h, w, out_type, b[2].buf, b[1].buf);
    else if (out_type == JL_OUT_UINT8)
        memcpy(b[1].buf, b[0].buf, (size_t)n * image);
    else
        for (k = 0; k < n; k++)
            jl_planes_to_float((const uint8_t *)b[0].buf + k * image, h, w, b[2].buf,
                               (float *)b[1].buf + k * image);
    Py_END_ALLOW_THREADS
    jl_release_all(b, 3);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(resize_hwc_doc,
"resize_hwc(src, out, h, w, oh, ow, vertical_first, out_type, lut, norm) -> None\n\n"
"src: uint8[h, w, 3] resized as Pillow's Image.resize (bilinear) into out: float32\n"
"(out_type 0: each level through lut, float32[3, 256], computed by division when\n"
"norm, float32[3, 2], is not empty) or uint8 (out_type 1) [3, oh, ow].");

static PyObject *py_resize_hwc(PyObject *self, PyObject *args)
{
    Py_buffer b[4] = {{0}};
    int h, w, oh, ow, vertical_first, out_type, status;
    Py_ssize_t item;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*iiiiiiy*y*:resize_hwc", &b[0], &b[1], &h, &w, &oh, &ow,
                          &vertical_first, &out_type, &b[2], &b[3]))
        return NULL;
    item = out_type == JL_OUT_FLOAT32 ? (Py_ssize_t)sizeof(float) : 1;
    if (h <= 0 || w <= 0 || oh <= 0 || ow <= 0 ||
        (out_type != JL_OUT_FLOAT32 && out_type != JL_OUT_UINT8)) {
        PyErr_SetString(PyExc_ValueError, "h, w, oh, ow > 0 and out_type 0 or 1 expected");
        jl_release_all(b, 4);
        return NULL;
    }
    if (jl_check_size(&b[0], (Py_ssize_t)3 * h * w, "src") ||
        jl_check_size(&b[1], (Py_ssize_t)3 * oh * ow * item, "out") ||
        jl_check_size(&b[2], 3 * 256 * (Py_ssize_t)sizeof(float), "lut") ||
        (b[3].len != 0 && jl_check_size(&b[3], 3 * 2 * (Py_ssize_t)sizeof(float), "norm"))) {
        jl_release_all(b, 4);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    status = jl_resize_hwc(b[0].buf, h, w, oh, ow, vertical_first,
                           out_type == JL_OUT_FLOAT32, b[2].buf, b[3].len ? b[3].buf : NULL,
                           b[1].buf);
    Py_END_ALLOW_THREADS
    jl_release_all(b, 4);
    if (status)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *py_libjpeg_turbo_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
#ifdef LIBJPEG_TURBO_VERSION
    return PyUnicode_FromString(STR(LIBJPEG_TURBO_VERSION));
#else
    return PyUnicode_FromString("unknown");
#endif
}

static PyObject *py_hue_selfcheck(PyObject *self, PyObject *arg)
{
    long shift = PyLong_AsLong(arg);
    int bad;
    (void)self;
    if (shift == -1 && PyErr_Occurred())
        return NULL;
    if (shift < 0 || shift > 255) {
        PyErr_SetString(PyExc_ValueError, "shift must be in 0..255");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    bad = jl_colour_hue_selfcheck((int)shift);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(bad);
}

static PyObject *py_allow_avx512(PyObject *self, PyObject *arg)
{
    (void)self;
    return jl_py_allow_avx512(arg);
}

static PyObject *py_cpu_has_avx512(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyBool_FromLong(jl_cpu_has_avx512(JL_AVX512_BW));
}

static PyObject *py_dc_scans(PyObject *self, PyObject *arg)
{
    Py_buffer in;
    PyObject *out;
    uint8_t *buf;
    size_t n;
    (void)self;
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0)
        return NULL;
    buf = malloc(in.len > 0 ? (size_t)in.len : 1);
    if (!buf) {
        PyBuffer_Release(&in);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    n = jl_jpeg_dc_scans(in.buf, (size_t)in.len, buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    if (n == 0) {
        free(buf);
        Py_RETURN_NONE;
    }
    out = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)n);
    free(buf);
    return out;
}

static PyMethodDef methods[] = {
    {"probe", py_probe, METH_VARARGS, probe_doc},
    {"decode_batch", py_decode_batch, METH_VARARGS, decode_batch_doc},
    {"decode_views", py_decode_views, METH_VARARGS, decode_views_doc},
    {"decode_each", py_decode_each, METH_VARARGS, decode_each_doc},
    {"tensor_stage", py_tensor_stage, METH_VARARGS, tensor_stage_doc},
    {"resize_hwc", py_resize_hwc, METH_VARARGS, resize_hwc_doc},
    {"hue_selfcheck", py_hue_selfcheck, METH_O,
     "hue_selfcheck(shift) -> int: RGB values where the fast hue step differs from\n"
     "the per-pixel Pillow reference (all 2**24 are tried; 0 expected)."},
    {"allow_avx512", py_allow_avx512, METH_O,
     "allow_avx512(allow) -> bool: whether the resampler's 512-bit loops may run where\n"
     "the processor has AVX-512 (the default); returns the previous setting.  They give\n"
     "the AVX2 loops' results; the tests compare them."},
    {"cpu_has_avx512", py_cpu_has_avx512, METH_NOARGS,
     "Whether this processor runs the 512-bit loops (AVX-512F, AVX-512BW and FMA)."},
    {"dc_scans", py_dc_scans, METH_O,
     "dc_scans(data) -> bytes | None: a progressive JPEG without its AC scans (what a\n"
     "1/8 decode reads; NOTE [ DC scans only ] in dc_scans.h), or None when the data\n"
     "is not a progressive JPEG with AC scans."},
    {"libjpeg_turbo_version", py_libjpeg_turbo_version, METH_NOARGS,
     "The libjpeg-turbo version this module was built against."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_jpeg",
    "C decode core of jpegloader (see _jpeg.pyi for the contract).", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* NOTE [ One source of truth across the C boundary ]
 * The plan record's field offsets and sizes (offsetof, sizeof) and every enum
 * Python passes or reads (status codes, filters, colour ops, output types) are
 * exported from here; decoders/jpeg.py builds PLAN_DTYPE and its constants from
 * them at import and refuses to load on any mismatch with what it expects. */
typedef struct {
    const char *name;
    long value;
} named_value;

/* {name: value, ...} from a table ending in a NULL name; NULL on error. */
static PyObject *dict_of(const named_value *items)
{
    PyObject *d = PyDict_New(), *v;
    if (!d)
        return NULL;
    for (; items->name; items++) {
        v = PyLong_FromLong(items->value);
        if (!v || PyDict_SetItemString(d, items->name, v)) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

#define FIELD(type, member) {#member, (long)offsetof(type, member)}
#define FIELD_SIZE(type, member) {#member, (long)sizeof(((type *)0)->member)}

static const named_value plan_offsets[] = {
    FIELD(jl_plan, skip), FIELD(jl_plan, scale_denom), FIELD(jl_plan, flip),
    FIELD(jl_plan, filter), FIELD(jl_plan, vertical_first), FIELD(jl_plan, image_w),
    FIELD(jl_plan, image_h), FIELD(jl_plan, pad_mode), FIELD(jl_plan, pad_fill),
    FIELD(jl_plan, colour_first), FIELD(jl_plan, x), FIELD(jl_plan, y),
    FIELD(jl_plan, colour), {NULL, 0}};
static const named_value plan_sizes[] = {
    FIELD_SIZE(jl_plan, skip), FIELD_SIZE(jl_plan, scale_denom), FIELD_SIZE(jl_plan, flip),
    FIELD_SIZE(jl_plan, filter), FIELD_SIZE(jl_plan, vertical_first),
    FIELD_SIZE(jl_plan, image_w), FIELD_SIZE(jl_plan, image_h), FIELD_SIZE(jl_plan, pad_mode),
    FIELD_SIZE(jl_plan, pad_fill), FIELD_SIZE(jl_plan, colour_first),
    FIELD_SIZE(jl_plan, x), FIELD_SIZE(jl_plan, y), FIELD_SIZE(jl_plan, colour), {NULL, 0}};
static const named_value axis_offsets[] = {
    FIELD(jl_axis, in0), FIELD(jl_axis, in1), FIELD(jl_axis, src_lo), FIELD(jl_axis, src_size),
    FIELD(jl_axis, out_size), FIELD(jl_axis, out_start), FIELD(jl_axis, pad_start),
    FIELD(jl_axis, pad_lo), FIELD(jl_axis, pad_len), {NULL, 0}};
static const named_value axis_sizes[] = {
    FIELD_SIZE(jl_axis, in0), FIELD_SIZE(jl_axis, in1), FIELD_SIZE(jl_axis, src_lo),
    FIELD_SIZE(jl_axis, src_size), FIELD_SIZE(jl_axis, out_size),
    FIELD_SIZE(jl_axis, out_start), FIELD_SIZE(jl_axis, pad_start),
    FIELD_SIZE(jl_axis, pad_lo), FIELD_SIZE(jl_axis, pad_len), {NULL, 0}};
static const named_value colour_offsets[] = {
    FIELD(jl_colour, op), FIELD(jl_colour, value), FIELD(jl_colour, arg), {NULL, 0}};
static const named_value colour_sizes[] = {
    FIELD_SIZE(jl_colour, op), FIELD_SIZE(jl_colour, value), FIELD_SIZE(jl_colour, arg),
    {NULL, 0}};
static const named_value statuses[] = {
    {"OK", JL_OK}, {"SKIPPED", JL_SKIPPED}, {"UNSUPPORTED", JL_UNSUPPORTED},
    {"ERROR", JL_ERROR}, {"WARNING", JL_WARNING}, {"TOO_LARGE", JL_TOO_LARGE},
    {"NO_MEMORY", JL_NO_MEMORY}, {"CHANGED", JL_CHANGED}, {NULL, 0}};
static const named_value filters[] = {
    {"bilinear", JL_FILTER_BILINEAR}, {"bicubic", JL_FILTER_BICUBIC}, {"box", JL_FILTER_BOX},
    {"hamming", JL_FILTER_HAMMING}, {"lanczos", JL_FILTER_LANCZOS}, {NULL, 0}};
static const named_value colour_ops[] = {
    {"NONE", JL_COLOUR_NONE}, {"BRIGHTNESS", JL_COLOUR_BRIGHTNESS},
    {"CONTRAST", JL_COLOUR_CONTRAST}, {"SATURATION", JL_COLOUR_SATURATION},
    {"HUE", JL_COLOUR_HUE}, {"GRAYSCALE", JL_COLOUR_GRAYSCALE}, {"BLUR", JL_COLOUR_BLUR},
    {"PERMUTE", JL_COLOUR_PERMUTE}, {"TORCH_V2", JL_COLOUR_TORCH_V2},
    {"TORCH_V1", JL_COLOUR_TORCH_V1}, {"STEPS", JL_COLOUR_STEPS},
    {"BLUR_MAX_KERNEL", JL_BLUR_MAX_KERNEL}, {NULL, 0}};
static const named_value pad_modes[] = {
    {"none", JL_PAD_NONE}, {"constant", JL_PAD_CONSTANT}, {"edge", JL_PAD_EDGE},
    {"reflect", JL_PAD_REFLECT}, {"symmetric", JL_PAD_SYMMETRIC}, {NULL, 0}};
static const named_value out_types[] = {
    {"FLOAT32", JL_OUT_FLOAT32}, {"UINT8", JL_OUT_UINT8}, {"UINT8_HWC", JL_OUT_UINT8_HWC},
    {"BGR_HWC", JL_OUT_BGR_HWC}, {NULL, 0}};

static int add_dict(PyObject *m, const char *name, const named_value *items)
{
    PyObject *d = dict_of(items);
    if (!d)
        return -1;
    if (PyModule_AddObjectRef(m, name, d) < 0) {
        Py_DECREF(d);
        return -1;
    }
    Py_DECREF(d);
    return 0;
}

PyMODINIT_FUNC PyInit__jpeg(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddIntConstant(m, "MESSAGE_LENGTH", JL_MSG_LEN) ||
        PyModule_AddIntConstant(m, "PLAN_SIZE", (long)sizeof(jl_plan)) ||
        PyModule_AddIntConstant(m, "FILTER_OPENCV_LINEAR", JL_FILTER_OPENCV_LINEAR) ||
        PyModule_AddIntConstant(m, "AXIS_SIZE", (long)sizeof(jl_axis)) ||
        PyModule_AddIntConstant(m, "COLOUR_SIZE", (long)sizeof(jl_colour)) ||
        add_dict(m, "PLAN_OFFSETS", plan_offsets) || add_dict(m, "PLAN_SIZES", plan_sizes) ||
        add_dict(m, "AXIS_OFFSETS", axis_offsets) || add_dict(m, "AXIS_SIZES", axis_sizes) ||
        add_dict(m, "COLOUR_OFFSETS", colour_offsets) ||
        add_dict(m, "COLOUR_SIZES", colour_sizes) || add_dict(m, "STATUS", statuses) ||
        add_dict(m, "FILTERS", filters) || add_dict(m, "COLOUR_OPS", colour_ops) ||
        add_dict(m, "OUT_TYPES", out_types) || add_dict(m, "PAD_MODES", pad_modes)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
