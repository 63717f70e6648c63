/* Which vector loops YOLO's C core runs: AVX-512 where the processor has it and the
 * tests have not turned it off.  No Python here. */
#ifndef JL_YOLO_SIMD_H
#define JL_YOLO_SIMD_H

#include <immintrin.h>

/* The loops' target: AVX-512 F, BW, VL and VBMI (byte permutes), and FMA. */
#define JL_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,fma")))

/* The low byte of each of 16 int32 lanes, in the result's low 16 bytes: byte
 * indices for the VBMI permutes. */
JL_AVX512 static inline __m512i jl_low_bytes16(__m512i v)
{
    return _mm512_castsi128_si512(_mm512_cvtepi32_epi8(v));
}

/* Whether they run: jl_avx512_on(JL_AVX512_VBMI), the one switch (avx512.h): allowed,
 * and the processor has every extension JL_AVX512 names.  They give the AVX2 loops'
 * results. */
#include "avx512.h"

#endif
