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
        (h * w && n > PY_SSIZE_T_MAX / (h * w))) {
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

static PyMethodDef methods[] = {
    {"paint", py_paint, METH_VARARGS, paint_doc},
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
