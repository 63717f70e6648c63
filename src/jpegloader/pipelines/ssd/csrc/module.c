/* Python binding of the SSD box arithmetic in C: buffer checks, the GIL released
 * around the call.  Built against the stable ABI (3.11+). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "boxes.h"
#include "buffer_checks.h"
#include "py_module.h"

PyDoc_STRVAR(encode_doc,
"encode(boxes, labels, dboxes, criteria, out_boxes, out_labels) -> None\n\n"
"SSD Encoder.encode for one image: boxes float32[n, 4] and labels int64[n]\n"
"(n >= 1) against dboxes float32[m, 4] (all ltrb); writes out_boxes\n"
"float32[m, 4] (xywh) and out_labels int64[m].");

static PyObject *py_encode(PyObject *self, PyObject *args)
{
    Py_buffer b[5] = {{0}};
    double criteria;
    Py_ssize_t n, m;
    int rc = -1;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*dw*w*:encode", &b[0], &b[1], &b[2], &criteria, &b[3],
                          &b[4]))
        return NULL;
    n = b[0].len / (Py_ssize_t)(4 * sizeof(float));
    m = b[2].len / (Py_ssize_t)(4 * sizeof(float));
    if (n < 1 || n > INT32_MAX || m < 1 || m > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "need at least one box and one default box, got %zd "
                     "and %zd", n, m);
    } else if (!jl_check_size(&b[0], n * 4 * (Py_ssize_t)sizeof(float), "boxes") &&
               !jl_check_size(&b[1], n * (Py_ssize_t)sizeof(int64_t), "labels") &&
               !jl_check_size(&b[2], m * 4 * (Py_ssize_t)sizeof(float), "dboxes") &&
               !jl_check_size(&b[3], m * 4 * (Py_ssize_t)sizeof(float), "out_boxes") &&
               !jl_check_size(&b[4], m * (Py_ssize_t)sizeof(int64_t), "out_labels")) {
        Py_BEGIN_ALLOW_THREADS
        rc = jl_encode_boxes(b[0].buf, b[1].buf, (int)n, b[2].buf, (int)m, (float)criteria,
                             b[3].buf, b[4].buf);
        Py_END_ALLOW_THREADS
        if (rc)
            PyErr_NoMemory();
    }
    jl_release_all(b, 5);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(crop_doc,
"crop(boxes, left, top, w, h, out, kept) -> int\n\n"
"SSD crop_boxes for one image: of boxes float32[n, 4] (ltrb), those whose\n"
"centre is strictly inside the window, clamped and renormalised, into out\n"
"float32[n, 4], their indices into kept int64[n]; returns how many.");

static PyObject *py_crop(PyObject *self, PyObject *args)
{
    Py_buffer b[3] = {{0}};
    double left, top, w, h;
    Py_ssize_t n;
    int m = -1;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ddddw*w*:crop", &b[0], &left, &top, &w, &h, &b[1], &b[2]))
        return NULL;
    n = b[0].len / (Py_ssize_t)(4 * sizeof(float));
    if (n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many boxes");
    } else if (!jl_check_size(&b[0], n * 4 * (Py_ssize_t)sizeof(float), "boxes") &&
               !jl_check_size(&b[1], n * 4 * (Py_ssize_t)sizeof(float), "out") &&
               !jl_check_size(&b[2], n * (Py_ssize_t)sizeof(int64_t), "kept")) {
        m = jl_crop_boxes(b[0].buf, (int)n, left, top, w, h, b[1].buf, b[2].buf);
    }
    jl_release_all(b, 3);
    if (m < 0)
        return NULL;
    return PyLong_FromLong(m);
}

static PyMethodDef methods[] = {
    {"encode", py_encode, METH_VARARGS, encode_doc},
    {"crop", py_crop, METH_VARARGS, crop_doc},
    {NULL, NULL, 0, NULL},
};

JL_PLAIN_MODULE(_boxes, "SSD box cropping and encoding in C (see _boxes.pyi).", methods)
