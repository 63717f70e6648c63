/* What every extension's Python binding repeats, written once.  Include after
 * Python.h. */
#ifndef JL_PY_MODULE_H
#define JL_PY_MODULE_H

#include "avx512.h"

/* A module of `methods` and nothing else: its definition and its PyInit_<name>. */
#define JL_PLAIN_MODULE(name, doc, methods)                                        \
    static struct PyModuleDef name##_module = {                                    \
        PyModuleDef_HEAD_INIT, #name, doc, -1, methods, NULL, NULL, NULL, NULL,    \
    };                                                                             \
    PyMODINIT_FUNC PyInit_##name(void) { return PyModule_Create(&name##_module); }

/* A switch's binding: `allow`'s truth handed to `set`, the previous setting back. */
static inline PyObject *jl_py_switch(PyObject *allow, int (*set)(int))
{
    int truth = PyObject_IsTrue(allow);
    if (truth < 0)
        return NULL;
    return PyBool_FromLong(set(truth));
}

/* allow_avx512(allow) -> bool: the one switch (avx512.h), the previous setting back. */
static inline PyObject *jl_py_allow_avx512(PyObject *allow)
{
    return jl_py_switch(allow, jl_allow_avx512);
}

#endif
