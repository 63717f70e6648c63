/* The one AVX-512 switch: whether a C part's 512-bit loops run.  They run where the
 * processor has the extensions they use and nobody turned them off (the tests turn
 * them off to hold the AVX2 and scalar loops to the same references).  avx512.c is
 * compiled into each extension that has such loops; each keeps its own setting. */
#ifndef JL_AVX512_SWITCH_H
#define JL_AVX512_SWITCH_H

/* What a set of loops needs beyond AVX-512 F and FMA. */
enum {
    JL_AVX512_BW = 1,                  /* byte and word lanes (the resampler) */
    JL_AVX512_VBMI = 2                 /* BW, VL and VBMI byte permutes (YOLO's loops) */
};

/* Whether the 512-bit loops may run (the default); returns the previous setting. */
int jl_allow_avx512(int allow);

/* Whether the processor has AVX-512 F, FMA and what `needs` names. */
int jl_cpu_has_avx512(int needs);

/* Whether they run: allowed, and the processor has what `needs` names. */
int jl_avx512_on(int needs);

#endif
