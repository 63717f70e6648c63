/* Copying a batch out of its ring slot into memory a device reads next. */
#ifndef JL_HOST_COPY_H
#define JL_HOST_COPY_H

#include <stddef.h>

/* Copies n bytes from src to dst (not overlapping) with stores that bypass the
 * caches where the CPU has them (x86-64), memcpy elsewhere. */
void jl_stream_copy(void *dst, const void *src, size_t n);

#endif
