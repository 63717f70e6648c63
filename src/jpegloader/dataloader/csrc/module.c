/* Python binding of the host copy in C: buffer checks, the GIL released around the
 * copy.  Built against the stable ABI (3.11+). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "buffer_checks.h"
#include "host_copy.h"
#include "py_module.h"

PyDoc_STRVAR(stream_copy_doc,
"stream_copy(dst, src) -> None\n\n"
"Copies src's bytes into dst (a writable buffer of the same length), with stores\n"
"that bypass the caches where the CPU has them; the GIL is released meanwhile.");

static PyObject *py_stream_copy(PyObject *self, PyObject *args)
{
    Py_buffer b[2] = {{0}};
    int rc = -1;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*y*:stream_copy", &b[0], &b[1]))
        return NULL;
    if (!jl_check_size(&b[1], b[0].len, "src")) {
        Py_BEGIN_ALLOW_THREADS
        jl_stream_copy(b[0].buf, b[1].buf, (size_t)b[0].len);
        Py_END_ALLOW_THREADS
        rc = 0;
    }
    jl_release_all(b, 2);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"stream_copy", py_stream_copy, METH_VARARGS, stream_copy_doc},
    {NULL, NULL, 0, NULL},
};

JL_PLAIN_MODULE(_host_copy, "Copies into memory a device reads next (see _host_copy.pyi).",
                methods)
