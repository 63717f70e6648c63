/* OpenCV's INTER_LINEAR resize for 8-bit images. */
#include "cv_linear.h"

#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* NOTE [ OpenCV's INTER_LINEAR ]
 * cv::resize maps output d to the source at f = (float)((d + 0.5) * scale - 0.5)
 * (scale = 1 / (dst / src), in double), takes floor(f) and the fraction, and
 * rounds the weights 1 - f and f, times 2048, to 16-bit integers, half to
 * even.  The horizontal pass keeps 2048-scaled integer sums (exact, so it may run
 * per plane); the vertical pass computes, for every output byte as its vector
 * loops do, ((s0 >> 4) * b0 >> 16) + ((s1 >> 4) * b1 >> 16), then adds 2 and
 * shifts right by 2.  Held to the installed cv2 as the oracle on real photos at
 * random sizes, up and down (docs/parity.md). */
void jl_cv_linear_axis(int src, int dst, int clamp, int32_t *ofs, int32_t *w0, int32_t *w1)
{
    double scale = 1.0 / ((double)dst / src);
    int d;
    for (d = 0; d < dst; d++) {
        float f = (float)((d + 0.5) * scale - 0.5);
        int s = (int)floorf(f);
        f -= (float)s;
        if (clamp && s < 0) {
            f = 0.f;
            s = 0;
        }
        if (clamp && s >= src - 1) {
            f = 0.f;
            s = src - 1;
        }
        ofs[d] = s;
        w0[d] = (int16_t)lrintf((1.f - f) * 2048.f);
        w1[d] = (int16_t)lrintf(f * 2048.f);
    }
}

static inline int32_t pair(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v)); /* p[0] and p[1] in its two low bytes (little endian) */
    return (int32_t)v;
}

__attribute__((target("avx2"))) static int
row_avx2(const uint8_t *p, const int32_t *ofs, const int32_t *w0, const int32_t *w1, int n,
         int32_t *dst)
{
    const __m256i low = _mm256_set1_epi32(0xFF);
    int x;
    for (x = 0; x + 8 <= n; x += 8) {
        __m256i o = _mm256_loadu_si256((const __m256i *)(ofs + x));
        __m256i v = _mm256_i32gather_epi32((const int *)p, o, 1);
        __m256i a = _mm256_and_si256(v, low);
        __m256i b = _mm256_and_si256(_mm256_srli_epi32(v, 8), low);
        __m256i s = _mm256_add_epi32(
            _mm256_mullo_epi32(a, _mm256_loadu_si256((const __m256i *)(w0 + x))),
            _mm256_mullo_epi32(b, _mm256_loadu_si256((const __m256i *)(w1 + x))));
        _mm256_storeu_si256((__m256i *)(dst + x), s);
    }
    return x;
}

void jl_cv_linear_row(const uint8_t *p, const int32_t *ofs, const int32_t *w0,
                      const int32_t *w1, int n, int32_t *dst)
{
    int x = __builtin_cpu_supports("avx2") ? row_avx2(p, ofs, w0, w1, n, dst) : 0;
    for (; x < n; x++) {
        int32_t v = pair(p + ofs[x]);
        dst[x] = (v & 0xFF) * w0[x] + ((v >> 8) & 0xFF) * w1[x];
    }
}

/* One output byte, as the vector loop below makes it. */
static inline uint8_t column_byte(int32_t s0, int32_t s1, int b0, int b1)
{
    int v = ((((s0 >> 4) * b0) >> 16) + (((s1 >> 4) * b1) >> 16) + 2) >> 2;
    return (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v);
}

/* OpenCV's own vector arithmetic, 16 outputs at a time: (s >> 4) packed to 16 bits
 * with saturation (never reached: s < 2^19), the high half of the 16-bit products,
 * a saturating 16-bit sum, then (t + 2) >> 2 packed to bytes with saturation. */
__attribute__((target("avx2"))) static int
column_avx2(const int32_t *s0, const int32_t *s1, int b0, int b1, int n, uint8_t *dst)
{
    const __m256i v0 = _mm256_set1_epi16((short)b0), v1 = _mm256_set1_epi16((short)b1);
    const __m256i two = _mm256_set1_epi16(2);
    int x;
    for (x = 0; x + 16 <= n; x += 16) {
        __m256i a = _mm256_packs_epi32(
            _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(s0 + x)), 4),
            _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(s0 + x + 8)), 4));
        __m256i b = _mm256_packs_epi32(
            _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(s1 + x)), 4),
            _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(s1 + x + 8)), 4));
        __m256i t = _mm256_adds_epi16(_mm256_mulhi_epi16(a, v0), _mm256_mulhi_epi16(b, v1));
        /* (t + 2) >> 2; the 32-to-16-bit packs interleaved the 128-bit lanes (8 outputs
         * each): the permutes put them back in order around the pack to bytes */
        t = _mm256_permute4x64_epi64(_mm256_srai_epi16(_mm256_add_epi16(t, two), 2), 0xD8);
        __m256i bytes = _mm256_permute4x64_epi64(_mm256_packus_epi16(t, t), 0xD8);
        _mm_storeu_si128((__m128i *)(dst + x), _mm256_castsi256_si128(bytes));
    }
    return x;
}

void jl_cv_linear_column(const int32_t *s0, const int32_t *s1, int b0, int b1, int n,
                         uint8_t *dst)
{
    int x = __builtin_cpu_supports("avx2") ? column_avx2(s0, s1, b0, b1, n, dst) : 0;
    for (; x < n; x++)
        dst[x] = column_byte(s0[x], s1[x], b0, b1);
}
