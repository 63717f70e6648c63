/* Moving 8-bit pixels between layouts: interleaved RGB rows split into planes (and
 * transposed, for the horizontal pass on a transposed plane), planes interleaved
 * back, and 8-bit transposes; SSSE3 and AVX2 paths picked at run time.  No Python
 * here. */
#include "layout.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
#define JL_HAVE_SSSE3_PATH 1
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define JL_HAVE_AVX2_PATH 1
#endif
#include <string.h>

void jl_planes_interleave(const uint8_t *planes, size_t plane_size, int rows, int cols,
                          int flip, uint8_t *dst)
{
    int y, x;
    for (y = 0; y < rows; y++) {
        const uint8_t *r = planes + (size_t)y * cols, *g = r + plane_size,
                      *b = g + plane_size;
        uint8_t *o = dst + (size_t)y * cols * 3;
        for (x = 0; x < cols; x++) {
            int d = flip ? cols - 1 - x : x;
            o[3 * d] = r[x];
            o[3 * d + 1] = g[x];
            o[3 * d + 2] = b[x];
        }
    }
}

/* Blocked so that both sides stay in cache for large images. */
enum { JL_BLOCK = 32 };

/* Where the chunk of `width` due at `next` of `len` (>= width) starts: a ragged
 * end is done as the last full chunk again, overlapping the one before it, whose
 * bytes are rewritten with the same values. */
static inline int chunk_start(int next, int len, int width)
{
    return next + width > len ? len - width : next;
}

static void deinterleave_scalar(const uint8_t *s, int cols, uint8_t *r,
                                uint8_t *g, uint8_t *b)
{
    int x;
    for (x = 0; x < cols; x++) {
        r[x] = s[3 * x];
        g[x] = s[3 * x + 1];
        b[x] = s[3 * x + 2];
    }
}

#ifdef JL_HAVE_SSSE3_PATH
/* The byte shuffles that take one channel's bytes out of 16 RGB pixels (48 bytes
 * loaded as three 16-byte blocks): channel ch's bytes of block b land in place. */
#define Z -1
#define JL_RGB_MASKS(set) \
    {{set(0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 1, 4, 7, 10, 13)},                         \
     {set(1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14)},                         \
     {set(2, 5, 8, 11, 14, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, 1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15)}}
#define JL_SET128(...) _mm_setr_epi8(__VA_ARGS__)

/* 16 RGB pixels (48 bytes) into 16 R, 16 G and 16 B bytes with byte shuffles. */
__attribute__((target("ssse3"))) static void
deinterleave_ssse3(const uint8_t *s, int cols, uint8_t *r, uint8_t *g, uint8_t *b)
{
    const __m128i m[3][3] = JL_RGB_MASKS(JL_SET128);
    uint8_t *out[3] = {r, g, b};
    int next, x, ch;
    for (next = 0; next < cols; next += 16) {
        const uint8_t *p;
        __m128i v[3];
        x = chunk_start(next, cols, 16);
        p = s + 3 * x;
        v[0] = _mm_loadu_si128((const __m128i *)p);
        v[1] = _mm_loadu_si128((const __m128i *)(p + 16));
        v[2] = _mm_loadu_si128((const __m128i *)(p + 32));
        for (ch = 0; ch < 3; ch++)
            _mm_storeu_si128((__m128i *)(out[ch] + x),
                             _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(v[0], m[ch][0]),
                                                       _mm_shuffle_epi8(v[1], m[ch][1])),
                                          _mm_shuffle_epi8(v[2], m[ch][2])));
    }
}
#endif

#ifdef JL_HAVE_AVX2_PATH
#define JL_SET256(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)

/* 32 RGB pixels at a time: each 128-bit lane does deinterleave_ssse3's 16 (the
 * first 16 pixels in the low lanes, the next 16 in the high ones), so one
 * shuffle does the work of two.  Rows of at least 32 pixels. */
__attribute__((target("avx2"))) static void
deinterleave_avx2(const uint8_t *s, int cols, uint8_t *r, uint8_t *g, uint8_t *b)
{
    const __m256i m[3][3] = JL_RGB_MASKS(JL_SET256);
    uint8_t *out[3] = {r, g, b};
    int next, x, ch, k;
    for (next = 0; next < cols; next += 32) {
        const uint8_t *p;
        __m256i v[3];
        x = chunk_start(next, cols, 32);
        p = s + 3 * x;
        for (k = 0; k < 3; k++)
            v[k] = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p + 16 * k))),
                _mm_loadu_si128((const __m128i *)(p + 48 + 16 * k)), 1);
        for (ch = 0; ch < 3; ch++)
            _mm256_storeu_si256(
                (__m256i *)(out[ch] + x),
                _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(v[0], m[ch][0]),
                                                _mm256_shuffle_epi8(v[1], m[ch][1])),
                                _mm256_shuffle_epi8(v[2], m[ch][2])));
    }
}
#endif
#undef Z
#undef JL_RGB_MASKS
#undef JL_SET128
#undef JL_SET256

static void deinterleave_row(const uint8_t *s, int cols, uint8_t *r, uint8_t *g, uint8_t *b)
{
#ifdef JL_HAVE_AVX2_PATH
    if (cols >= 32 && __builtin_cpu_supports("avx2")) {
        deinterleave_avx2(s, cols, r, g, b);
        return;
    }
#endif
#ifdef JL_HAVE_SSSE3_PATH
    if (cols >= 16 && __builtin_cpu_supports("ssse3")) {
        deinterleave_ssse3(s, cols, r, g, b);
        return;
    }
#endif
    deinterleave_scalar(s, cols, r, g, b);
}

void jl_split_rgb(const uint8_t *src, size_t src_stride, int rows, int cols,
                  uint8_t *planes, size_t plane_size)
{
    int y;
    for (y = 0; y < rows; y++) {
        uint8_t *r = planes + (size_t)y * cols;
        deinterleave_row(src + (size_t)y * src_stride, cols, r, r + plane_size,
                         r + 2 * plane_size);
    }
}

void jl_split_transpose_rgb(const uint8_t *src, size_t src_stride, int rows,
                            int cols, uint8_t *planes, size_t plane_stride,
                            size_t plane_size, uint8_t *strip)
{
    /* Per strip of 16 rows: deinterleave into three planar strips (sequential
     * reads and writes), then transpose each with the 16x16 kernel.  A ragged
     * last strip is the last 16 rows, overlapping the strip before. */
    int y0, y, ch, strip_start;
    size_t ss = jl_padded(cols);
    for (strip_start = 0; strip_start < rows; strip_start += 16) {
        int n = rows < 16 ? rows : 16;
        y0 = rows >= 16 ? chunk_start(strip_start, rows, 16) : strip_start;
        for (y = 0; y < n; y++) {
            uint8_t *r = strip + (size_t)y * ss;
            deinterleave_row(src + (size_t)(y0 + y) * src_stride, cols, r,
                             r + (size_t)16 * ss, r + (size_t)32 * ss);
        }
        for (ch = 0; ch < 3; ch++)
            jl_transpose_u8(strip + (size_t)ch * 16 * ss, ss, n, cols,
                            planes + ch * plane_size + y0, plane_stride);
    }
}

#if defined(__SSE2__)
/* 16x16 byte transpose in registers: four rounds of interleaving. */
static void transpose16(const uint8_t *src, size_t ss, uint8_t *dst, size_t ds)
{
    __m128i a[16], b[16], c[16], d[16];
    int i;
    for (i = 0; i < 16; i++)
        a[i] = _mm_loadu_si128((const __m128i *)(src + i * ss));
    for (i = 0; i < 8; i++) {
        b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
        b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
    }
    for (i = 0; i < 4; i++) { /* groups of four rows */
        int g = 4 * i;
        c[g] = _mm_unpacklo_epi16(b[g], b[g + 2]);
        c[g + 1] = _mm_unpackhi_epi16(b[g], b[g + 2]);
        c[g + 2] = _mm_unpacklo_epi16(b[g + 1], b[g + 3]);
        c[g + 3] = _mm_unpackhi_epi16(b[g + 1], b[g + 3]);
    }
    for (i = 0; i < 2; i++) { /* groups of eight rows */
        int g = 8 * i, k;
        for (k = 0; k < 4; k++) {
            d[g + 2 * k] = _mm_unpacklo_epi32(c[g + k], c[g + 4 + k]);
            d[g + 2 * k + 1] = _mm_unpackhi_epi32(c[g + k], c[g + 4 + k]);
        }
    }
    for (i = 0; i < 8; i++) {
        _mm_storeu_si128((__m128i *)(dst + (2 * i) * ds), _mm_unpacklo_epi64(d[i], d[i + 8]));
        _mm_storeu_si128((__m128i *)(dst + (2 * i + 1) * ds), _mm_unpackhi_epi64(d[i], d[i + 8]));
    }
}
#endif

#ifdef JL_HAVE_AVX2_PATH
/* Two 16x16 transposes at once (16 rows of 32 bytes into 32 rows of 16): the
 * same four rounds of interleaving, each 128-bit lane holding one block, for
 * two thirds of transpose16's instructions per byte. */
__attribute__((target("avx2"))) static void
transpose16x32_avx2(const uint8_t *src, size_t ss, uint8_t *dst, size_t ds)
{
    __m256i a[16], b[16], c[16], d[16];
    int i;
    for (i = 0; i < 16; i++)
        a[i] = _mm256_loadu_si256((const __m256i *)(src + i * ss));
    for (i = 0; i < 8; i++) {
        b[2 * i] = _mm256_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
        b[2 * i + 1] = _mm256_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
    }
    for (i = 0; i < 4; i++) {
        int g = 4 * i;
        c[g] = _mm256_unpacklo_epi16(b[g], b[g + 2]);
        c[g + 1] = _mm256_unpackhi_epi16(b[g], b[g + 2]);
        c[g + 2] = _mm256_unpacklo_epi16(b[g + 1], b[g + 3]);
        c[g + 3] = _mm256_unpackhi_epi16(b[g + 1], b[g + 3]);
    }
    for (i = 0; i < 2; i++) {
        int g = 8 * i, k;
        for (k = 0; k < 4; k++) {
            d[g + 2 * k] = _mm256_unpacklo_epi32(c[g + k], c[g + 4 + k]);
            d[g + 2 * k + 1] = _mm256_unpackhi_epi32(c[g + k], c[g + 4 + k]);
        }
    }
    for (i = 0; i < 8; i++) {
        __m256i lo = _mm256_unpacklo_epi64(d[i], d[i + 8]);
        __m256i hi = _mm256_unpackhi_epi64(d[i], d[i + 8]);
        _mm_storeu_si128((__m128i *)(dst + (2 * i) * ds), _mm256_castsi256_si128(lo));
        _mm_storeu_si128((__m128i *)(dst + (2 * i + 1) * ds), _mm256_castsi256_si128(hi));
        _mm_storeu_si128((__m128i *)(dst + (16 + 2 * i) * ds), _mm256_extracti128_si256(lo, 1));
        _mm_storeu_si128((__m128i *)(dst + (17 + 2 * i) * ds), _mm256_extracti128_si256(hi, 1));
    }
}
#endif

void jl_transpose_u8(const uint8_t *src, size_t src_stride, int rows, int cols,
                     uint8_t *dst, size_t dst_stride)
{
    int y0, x0, y, x;
#if defined(__SSE2__)
    /* Ragged edges as overlapping full blocks (chunk_start): byte by byte they
     * cost 6% of the resampler. */
    if (rows >= 16 && cols >= 16) {
#ifdef JL_HAVE_AVX2_PATH
        int pairs = __builtin_cpu_supports("avx2") ? cols & ~31 : 0;
#endif
        for (y = 0; y < rows; y += 16) {
            const uint8_t *s;
            uint8_t *d;
            y0 = chunk_start(y, rows, 16);
            s = src + (size_t)y0 * src_stride;
            d = dst + y0;
            x = 0;
#ifdef JL_HAVE_AVX2_PATH
            for (; x < pairs; x += 32)
                transpose16x32_avx2(s + x, src_stride, d + (size_t)x * dst_stride, dst_stride);
#endif
            for (; x < cols; x += 16) {
                x0 = chunk_start(x, cols, 16);
                transpose16(s + x0, src_stride, d + (size_t)x0 * dst_stride, dst_stride);
            }
        }
        return;
    }
    for (y = 0; y < rows; y++)
        for (x = 0; x < cols; x++)
            dst[(size_t)x * dst_stride + y] = src[(size_t)y * src_stride + x];
#else
    for (y0 = 0; y0 < rows; y0 += JL_BLOCK) {
        int y1 = y0 + JL_BLOCK < rows ? y0 + JL_BLOCK : rows;
        for (x0 = 0; x0 < cols; x0 += JL_BLOCK) {
            int x1 = x0 + JL_BLOCK < cols ? x0 + JL_BLOCK : cols;
            for (y = y0; y < y1; y++)
                for (x = x0; x < x1; x++)
                    dst[(size_t)x * dst_stride + y] = src[(size_t)y * src_stride + x];
        }
    }
#endif
}
