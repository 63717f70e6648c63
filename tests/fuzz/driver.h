/* What the fuzz drivers of one C file (fuzz_pil_affine.c, fuzz_pil_enhance.c) share:
 * their arguments (ITERATIONS SEED), their failure line, and memory between two
 * unreadable pages, so that an input placed flush against either end faults on the
 * first byte read past it (the sanitizers do not see inside a vector load or a
 * gather).  Define _DEFAULT_SOURCE before any include (MAP_ANONYMOUS under -std=c11). */
#ifndef JL_FUZZ_DRIVER_H
#define JL_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* "FAIL: ..." and exit status 1: how test_fuzz_*.py learn of a breach. */
static inline void fail(const char *what, long it)
{
    printf("FAIL: %s at iteration %ld\n", what, it);
    exit(1);
}

/* The iterations asked for (100000 by default); rand() seeded with SEED (1). */
static inline long driver_arguments(int argc, char **argv)
{
    srand(argc > 2 ? (unsigned)atol(argv[2]) : 1);
    return argc > 1 ? atol(argv[1]) : 100000;
}

/* At least `bytes` between two PROT_NONE pages; its size (whole pages) in *room. */
static inline uint8_t *guarded_room(size_t bytes, size_t *room)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    *room = (bytes + page - 1) / page * page;
    uint8_t *map = mmap(NULL, *room + 2 * page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        fail("mmap", 0);
    mprotect(map, page, PROT_NONE);
    mprotect(map + page + *room, page, PROT_NONE);
    return map + page;
}

#endif
