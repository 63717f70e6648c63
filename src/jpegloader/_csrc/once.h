/* Work done once per process, whichever thread gets there first; the others wait.
 * Atomics rather than pthread_once: glibc 2.34 gave pthread_once a new symbol
 * version, and a reference to it raises a wheel's manylinux floor to 2.34. */
#ifndef JL_ONCE_H
#define JL_ONCE_H

#include <sched.h>

/* Runs fill() if *state (static, 0 at first) says nobody has; returns once it has run. */
static inline void jl_once(int *state, void (*fill)(void))
{
    int expected = 0; /* 0: not run, 1: running, 2: done */
    if (__atomic_load_n(state, __ATOMIC_ACQUIRE) == 2)
        return;
    if (__atomic_compare_exchange_n(state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        fill();
        __atomic_store_n(state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(state, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
}

#endif
