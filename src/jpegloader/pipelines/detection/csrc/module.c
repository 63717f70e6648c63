/* Python binding of the COCO mask painting in C: buffer checks, the GIL
 * released around the painting.  Built against the stable ABI (3.11+). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "buffer_checks.h"
#include "masks.h"

PyDoc_STRVAR(paint_doc,
"paint(counts, h, w, flip, out) -> None\n\n"
"Paints masks given as compressed RLE counts (a tuple of bytes, one per mask)\n"
"into out, a writable uint8 buffer of len(counts) * h * w bytes: each mask an\n"
"h x w plane, row-major, mirrored left to right when flip is true.");

static PyObject *py_paint(PyObject *self, PyObject *args)
{
    PyObject *counts;
    Py_ssize_t h, w, n, i;
    int flip, bad = -1;
    Py_buffer out = {0};
    const char **strings = NULL;
    Py_ssize_t *lengths = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nnpw*:paint", &PyTuple_Type, &counts, &h, &w, &flip, &out))
        return NULL;
    n = PyTuple_Size(counts);
    if (h < 0 || w < 0 || (h && w > PY_SSIZE_T_MAX / h) ||
        (h * w != 0 && n > PY_SSIZE_T_MAX / (h * w))) {
        PyErr_SetString(PyExc_ValueError, "mask size out of range");
        goto done;
    }
    if (jl_check_size(&out, n * h * w, "out"))
        goto done;
    strings = PyMem_Calloc((size_t)n + 1, sizeof(*strings));
    lengths = PyMem_Calloc((size_t)n + 1, sizeof(*lengths));
    if (!strings || !lengths) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < n; i++) {
        char *s;
        if (PyBytes_AsStringAndSize(PyTuple_GetItem(counts, i), &s, &lengths[i]) < 0)
            goto done;
        strings[i] = s;
    }
    Py_BEGIN_ALLOW_THREADS
    for (bad = -1, i = 0; i < n && bad < 0; i++)
        if (jl_paint_rle(strings[i], (size_t)lengths[i], h, w, flip,
                         (uint8_t *)out.buf + i * h * w))
            bad = (int)i;
    Py_END_ALLOW_THREADS
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "mask %d: RLE counts malformed or not covering %zd x %zd "
                     "pixels", bad, h, w);
        bad = -2;
    }
done:
    PyMem_Free(strings);
    PyMem_Free(lengths);
    PyBuffer_Release(&out);
    if (bad != -1 || PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(paint_mapped_doc,
"paint_mapped(counts, h, w, rows, cols, out) -> None\n\n"
"Paints masks given as compressed RLE counts of h x w masks (a tuple of bytes)\n"
"sampled by index maps: rows int64[nh] in [0, h), cols int64[nw] in [0, w);\n"
"out, a writable uint8 buffer of len(counts) * nh * nw bytes, gets\n"
"out[m][i][j] = mask_m[rows[i]][cols[j]].");

static PyObject *py_paint_mapped(PyObject *self, PyObject *args)
{
    PyObject *counts;
    Py_ssize_t h, w, n, nh, nw, i;
    int bad = -1;
    Py_buffer b[3] = {{0}};
    const char **strings = NULL;
    Py_ssize_t *lengths = NULL;
    uint8_t *scratch = NULL;
    const int64_t *rows, *cols;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nny*y*w*:paint_mapped", &PyTuple_Type, &counts, &h, &w,
                          &b[0], &b[1], &b[2]))
        return NULL;
    n = PyTuple_Size(counts);
    nh = b[0].len / (Py_ssize_t)sizeof(int64_t);
    nw = b[1].len / (Py_ssize_t)sizeof(int64_t);
    rows = b[0].buf;
    cols = b[1].buf;
    if (h <= 0 || w <= 0 || w > PY_SSIZE_T_MAX / h || (nh && nw > PY_SSIZE_T_MAX / nh) ||
        (nh * nw != 0 && n > PY_SSIZE_T_MAX / (nh * nw))) {
        PyErr_SetString(PyExc_ValueError, "mask size out of range");
        goto done;
    }
    if (jl_check_size(&b[0], nh * (Py_ssize_t)sizeof(int64_t), "rows") ||
        jl_check_size(&b[1], nw * (Py_ssize_t)sizeof(int64_t), "cols") ||
        jl_check_size(&b[2], n * nh * nw, "out"))
        goto done;
    for (i = 0; i < nh; i++)
        if (rows[i] < 0 || rows[i] >= h) {
            PyErr_Format(PyExc_ValueError, "rows[%zd] is outside 0..%zd", i, h - 1);
            goto done;
        }
    for (i = 0; i < nw; i++)
        if (cols[i] < 0 || cols[i] >= w) {
            PyErr_Format(PyExc_ValueError, "cols[%zd] is outside 0..%zd", i, w - 1);
            goto done;
        }
    strings = PyMem_Calloc((size_t)n + 1, sizeof(*strings));
    lengths = PyMem_Calloc((size_t)n + 1, sizeof(*lengths));
    scratch = PyMem_Malloc((size_t)(h * w));
    if (!strings || !lengths || !scratch) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < n; i++) {
        char *s;
        if (PyBytes_AsStringAndSize(PyTuple_GetItem(counts, i), &s, &lengths[i]) < 0)
            goto done;
        strings[i] = s;
    }
    Py_BEGIN_ALLOW_THREADS
    for (i = 0; i < n && bad < 0; i++)
        if (jl_paint_rle_mapped(strings[i], (size_t)lengths[i], h, w, rows, nh, cols, nw,
                                scratch, (uint8_t *)b[2].buf + i * nh * nw))
            bad = (int)i;
    Py_END_ALLOW_THREADS
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "mask %d: RLE counts malformed or not covering %zd x %zd "
                     "pixels", bad, h, w);
        bad = -2;
    }
done:
    PyMem_Free(strings);
    PyMem_Free(lengths);
    PyMem_Free(scratch);
    jl_release_all(b, 3);
    if (bad != -1 || PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"paint", py_paint, METH_VARARGS, paint_doc},
    {"paint_mapped", py_paint_mapped, METH_VARARGS, paint_mapped_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_masks", "COCO instance masks painted in C (see _masks.pyi).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__masks(void)
{
    return PyModule_Create(&module);
}
