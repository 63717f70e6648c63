/* Buffer-protocol helpers shared by the Python bindings of the C parts
 * (decoders/csrc/module.c, pipelines/ssd/csrc/module.c,
 * pipelines/detection/csrc/module.c, pipelines/classification/csrc/module.c,
 * dataloader/csrc/module.c).  Include after
 * Python.h. */
#ifndef JL_BUFFER_CHECKS_H
#define JL_BUFFER_CHECKS_H

/* Releases the buffers of the first `count` entries that hold one. */
static inline void jl_release_all(Py_buffer *bufs, int count)
{
    int i;
    for (i = 0; i < count; i++)
        if (bufs[i].obj)
            PyBuffer_Release(&bufs[i]);
}

/* 0 when the buffer has `expected` bytes; otherwise -1 with a ValueError
 * naming it. */
static inline int jl_check_size(Py_buffer *b, Py_ssize_t expected, const char *name)
{
    if (b->len != expected) {
        PyErr_Format(PyExc_ValueError, "%s is a %zd-byte buffer, expected %zd bytes",
                     name, b->len, expected);
        return -1;
    }
    return 0;
}

#endif
