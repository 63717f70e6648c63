/* Python binding of Pillow's affine transform in C: buffer checks, the GIL
 * released around the call.  Built against the stable ABI (3.11+). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "buffer_checks.h"
#include "pil_affine.h"
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
"Whether the AVX2 loop may run where the processor has it; the previous setting.");

static PyObject *py_allow_avx2(PyObject *self, PyObject *allow)
{
    (void)self;
    return jl_py_switch(allow, jl_pil_affine_allow_avx2);
}

static PyMethodDef methods[] = {
    {"affine", py_affine, METH_VARARGS, affine_doc},
    {"allow_avx2", py_allow_avx2, METH_O, allow_avx2_doc},
    {NULL, NULL, 0, NULL},
};

JL_PLAIN_MODULE(_pil_affine,
                "Pillow's bilinear and bicubic affine transforms of RGB images in C (see "
                "_pil_affine.pyi).",
                methods)
