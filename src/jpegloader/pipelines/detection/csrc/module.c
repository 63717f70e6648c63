/* Python binding of the COCO mask painting in C: buffer checks, the GIL
 * released around the painting.  Built against the stable ABI (3.11+). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "buffer_checks.h"
#include "py_module.h"
#include "masks.h"

/* The masks' counts: a tuple of bytes, read under the GIL into pointers and
 * lengths the painting uses without it (the tuple keeps them alive). */
typedef struct {
    Py_ssize_t n;
    const char **strings;
    Py_ssize_t *lengths;
} Counts;

static void counts_free(Counts *c)
{
    PyMem_Free(c->strings);
    PyMem_Free(c->lengths);
}

/* 0, or -1 with an exception set. */
static int counts_read(PyObject *tuple, Counts *c)
{
    Py_ssize_t i;
    c->n = PyTuple_Size(tuple);
    c->strings = PyMem_Calloc((size_t)c->n + 1, sizeof(*c->strings));
    c->lengths = PyMem_Calloc((size_t)c->n + 1, sizeof(*c->lengths));
    if (!c->strings || !c->lengths) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < c->n; i++) {
        char *s;
        if (PyBytes_AsStringAndSize(PyTuple_GetItem(tuple, i), &s, &c->lengths[i]) < 0)
            return -1;
        c->strings[i] = s;
    }
    return 0;
}

/* 1 when n planes of h x w masks (plane bytes each) can be addressed, else 0 with a
 * ValueError. */
static int sizes_fit(Py_ssize_t h, Py_ssize_t w, Py_ssize_t plane, Py_ssize_t n)
{
    if (h < 0 || w < 0 || (h && w > PY_SSIZE_T_MAX / h) ||
        (plane != 0 && n > PY_SSIZE_T_MAX / plane)) {
        PyErr_SetString(PyExc_ValueError, "mask size out of range");
        return 0;
    }
    return 1;
}

/* None, or (bad >= 0: the mask that failed) NULL with a ValueError naming it. */
static PyObject *painted(int bad, Py_ssize_t h, Py_ssize_t w)
{
    if (bad < 0)
        return Py_NewRef(Py_None);
    PyErr_Format(PyExc_ValueError, "mask %d: RLE counts malformed or not covering %zd x %zd "
                 "pixels", bad, h, w);
    return NULL;
}

PyDoc_STRVAR(paint_doc,
"paint(counts, h, w, flip, out) -> None\n\n"
"Paints masks given as compressed RLE counts (a tuple of bytes, one per mask)\n"
"into out, a writable uint8 buffer of len(counts) * h * w bytes: each mask an\n"
"h x w plane, row-major, mirrored left to right when flip is true.");

static PyObject *py_paint(PyObject *self, PyObject *args)
{
    PyObject *tuple, *result = NULL;
    Py_ssize_t h, w, i;
    int flip, bad = -1;
    Py_buffer out = {0};
    Counts c = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nnpw*:paint", &PyTuple_Type, &tuple, &h, &w, &flip, &out))
        return NULL;
    if (sizes_fit(h, w, h * w, PyTuple_Size(tuple)) &&
        !jl_check_size(&out, PyTuple_Size(tuple) * h * w, "out") && !counts_read(tuple, &c)) {
        Py_BEGIN_ALLOW_THREADS
        for (i = 0; i < c.n && bad < 0; i++)
            if (jl_paint_rle(c.strings[i], (size_t)c.lengths[i], h, w, flip,
                             (uint8_t *)out.buf + i * h * w))
                bad = (int)i;
        Py_END_ALLOW_THREADS
        result = painted(bad, h, w);
    }
    counts_free(&c);
    PyBuffer_Release(&out);
    return result;
}

PyDoc_STRVAR(paint_mapped_doc,
"paint_mapped(counts, h, w, rows, cols, out) -> None\n\n"
"Paints masks given as compressed RLE counts of h x w masks (a tuple of bytes)\n"
"sampled by index maps: rows int64[nh] in [-1, h), cols int64[nw] in [-1, w);\n"
"out, a writable uint8 buffer of len(counts) * nh * nw bytes, gets\n"
"out[m][i][j] = mask_m[rows[i]][cols[j]], or 0 where an index is -1 (padding).");

/* 0 when every index is in -1..limit-1, else -1 with a ValueError naming it. */
static int indices_in(const int64_t *index, Py_ssize_t n, Py_ssize_t limit, const char *name)
{
    Py_ssize_t i;
    for (i = 0; i < n; i++)
        if (index[i] < -1 || index[i] >= limit) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] is outside -1..%zd", name, i, limit - 1);
            return -1;
        }
    return 0;
}

static PyObject *py_paint_mapped(PyObject *self, PyObject *args)
{
    PyObject *tuple, *result = NULL;
    Py_ssize_t h, w, nh, nw, i;
    int bad = -1;
    Py_buffer b[3] = {{0}};
    Counts c = {0};
    uint8_t *scratch = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nny*y*w*:paint_mapped", &PyTuple_Type, &tuple, &h, &w,
                          &b[0], &b[1], &b[2]))
        return NULL;
    nh = b[0].len / (Py_ssize_t)sizeof(int64_t);
    nw = b[1].len / (Py_ssize_t)sizeof(int64_t);
    if (h <= 0 || w <= 0)
        PyErr_SetString(PyExc_ValueError, "mask size out of range");
    else if (sizes_fit(h, w, h * w, 1) && sizes_fit(nh, nw, nh * nw, PyTuple_Size(tuple)) &&
             !jl_check_size(&b[0], nh * (Py_ssize_t)sizeof(int64_t), "rows") &&
             !jl_check_size(&b[1], nw * (Py_ssize_t)sizeof(int64_t), "cols") &&
             !jl_check_size(&b[2], PyTuple_Size(tuple) * nh * nw, "out") &&
             !indices_in(b[0].buf, nh, h, "rows") && !indices_in(b[1].buf, nw, w, "cols") &&
             !counts_read(tuple, &c)) {
        scratch = PyMem_Malloc((size_t)(h * w));
        if (!scratch) {
            PyErr_NoMemory();
        } else {
            Py_BEGIN_ALLOW_THREADS
            for (i = 0; i < c.n && bad < 0; i++)
                if (jl_paint_rle_mapped(c.strings[i], (size_t)c.lengths[i], h, w, b[0].buf, nh,
                                        b[1].buf, nw, scratch, (uint8_t *)b[2].buf + i * nh * nw))
                    bad = (int)i;
            Py_END_ALLOW_THREADS
            result = painted(bad, h, w);
        }
    }
    PyMem_Free(scratch);
    counts_free(&c);
    jl_release_all(b, 3);
    return result;
}

static PyMethodDef methods[] = {
    {"paint", py_paint, METH_VARARGS, paint_doc},
    {"paint_mapped", py_paint_mapped, METH_VARARGS, paint_mapped_doc},
    {NULL, NULL, 0, NULL},
};

JL_PLAIN_MODULE(_masks, "COCO instance masks painted in C (see _masks.pyi).", methods)
