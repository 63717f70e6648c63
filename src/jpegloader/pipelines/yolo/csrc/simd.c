/* Which vector loops YOLO's C core runs. */
#include "simd.h"

static int avx512_allowed = 1;

int jl_yolo_allow_avx512(int allow)
{
    int before = avx512_allowed;
    avx512_allowed = allow != 0;
    return before;
}

int jl_yolo_avx512_on(void)
{
    return avx512_allowed && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("fma");
}
