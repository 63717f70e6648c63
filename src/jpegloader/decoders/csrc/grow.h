#ifndef JL_GROW_H
#define JL_GROW_H

#include <stdlib.h>

/* Grows a reused buffer to at least `need` bytes (never shrinks it): 0, or -1
 * when out of memory (the buffer is then unchanged). */
static inline int jl_grow(void **p, size_t *have, size_t need)
{
    void *np;
    if (need <= *have)
        return 0;
    np = realloc(*p, need);
    if (!np)
        return -1;
    *p = np;
    *have = need;
    return 0;
}

#endif
