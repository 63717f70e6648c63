/* The one AVX-512 switch (avx512.h). */
#include "avx512.h"

static int allowed = 1;

int jl_allow_avx512(int allow)
{
    int before = allowed;
    allowed = allow != 0;
    return before;
}

int jl_cpu_has_avx512(int needs)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")))
        return 0;
    if ((needs & (JL_AVX512_BW | JL_AVX512_VBMI)) && !__builtin_cpu_supports("avx512bw"))
        return 0;
    return !(needs & JL_AVX512_VBMI) ||
           (__builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi"));
#else
    (void)needs;
    return 0;
#endif
}

int jl_avx512_on(int needs)
{
    return allowed && jl_cpu_has_avx512(needs);
}
