/* BGR rows to and from planes. */
#include "bgr.h"

#include <immintrin.h>

void jl_planes_to_bgr(const uint8_t *planes, int h, int w, uint8_t *bgr)
{
    const size_t plane = (size_t)h * w;
    const uint8_t *r = planes, *g = planes + plane, *b = planes + 2 * plane;
    for (size_t i = 0; i < plane; i++) {
        bgr[3 * i] = b[i];
        bgr[3 * i + 1] = g[i];
        bgr[3 * i + 2] = r[i];
    }
}

/* 16 BGR pixels (48 bytes at p) split into their three channels. */
__attribute__((target("ssse3"))) static inline void split16(const uint8_t *p, __m128i *c0,
                                                            __m128i *c1, __m128i *c2)
{
    const __m128i a = _mm_loadu_si128((const __m128i *)p),
                  b = _mm_loadu_si128((const __m128i *)(p + 16)),
                  c = _mm_loadu_si128((const __m128i *)(p + 32));
#define PICK(v, ...) _mm_shuffle_epi8(v, _mm_setr_epi8(__VA_ARGS__))
    *c0 = _mm_or_si128(_mm_or_si128(
        PICK(a, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        PICK(b, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1)),
        PICK(c, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13));
    *c1 = _mm_or_si128(_mm_or_si128(
        PICK(a, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        PICK(b, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1)),
        PICK(c, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14));
    *c2 = _mm_or_si128(_mm_or_si128(
        PICK(a, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        PICK(b, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1)),
        PICK(c, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15));
#undef PICK
}

__attribute__((target("ssse3"))) static int row_ssse3(const uint8_t *row, int w, int flip_x,
                                                      uint8_t *o0, uint8_t *o1, uint8_t *o2)
{
    const __m128i reverse = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    int x = 0;
    for (; x + 16 <= w; x += 16) {
        __m128i c0, c1, c2;
        if (flip_x) { /* output x..x+15 reads source w-16-x..w-1-x, backwards */
            split16(row + 3 * (size_t)(w - 16 - x), &c0, &c1, &c2);
            c0 = _mm_shuffle_epi8(c0, reverse);
            c1 = _mm_shuffle_epi8(c1, reverse);
            c2 = _mm_shuffle_epi8(c2, reverse);
        } else {
            split16(row + 3 * (size_t)x, &c0, &c1, &c2);
        }
        _mm_storeu_si128((__m128i *)(o0 + x), c0);
        _mm_storeu_si128((__m128i *)(o1 + x), c1);
        _mm_storeu_si128((__m128i *)(o2 + x), c2);
    }
    return x;
}

void jl_bgr_to_planes(const uint8_t *bgr, int h, int w, int flip_y, int flip_x, int reverse,
                      uint8_t *planes)
{
    const size_t plane = (size_t)h * w;
    const int ssse3 = __builtin_cpu_supports("ssse3");
    uint8_t *out[3];
    for (int c = 0; c < 3; c++)
        out[c] = planes + (size_t)(reverse ? 2 - c : c) * plane;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = bgr + (size_t)(flip_y ? h - 1 - y : y) * w * 3;
        uint8_t *o0 = out[0] + (size_t)y * w, *o1 = out[1] + (size_t)y * w,
                *o2 = out[2] + (size_t)y * w;
        int x = ssse3 ? row_ssse3(row, w, flip_x, o0, o1, o2) : 0;
        for (; x < w; x++) {
            const uint8_t *p = row + 3 * (size_t)(flip_x ? w - 1 - x : x);
            o0[x] = p[0], o1[x] = p[1], o2[x] = p[2];
        }
    }
}
