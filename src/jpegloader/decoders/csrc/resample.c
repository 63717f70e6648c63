#include "resample.h"

#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
#define TL_HAVE_SSSE3_PATH 1
#endif
#include <stdlib.h>
#include <string.h>

#define PRECISION_BITS TL_PRECISION_BITS

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Pillow's filter functions, with its constants and their types (hamming's
 * 0.54f and 0.46f are floats in Pillow, so they are here). */
static double box_filter(double x)
{
    return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0;
}

static double bilinear_filter(double x)
{
    if (x < 0.0)
        x = -x;
    if (x < 1.0)
        return 1.0 - x;
    return 0.0;
}

static double hamming_filter(double x)
{
    if (x < 0.0)
        x = -x;
    if (x == 0.0)
        return 1.0;
    if (x >= 1.0)
        return 0.0;
    x = x * M_PI;
    return sin(x) / x * (0.54f + 0.46f * cos(x));
}

static double bicubic_filter(double x)
{
    const double a = -0.5;
    if (x < 0.0)
        x = -x;
    if (x < 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0)
        return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

static double sinc_filter(double x)
{
    if (x == 0.0)
        return 1.0;
    x = x * M_PI;
    return sin(x) / x;
}

static double lanczos_filter(double x)
{
    if (-3.0 <= x && x < 3.0)
        return sinc_filter(x) * sinc_filter(x / 3);
    return 0.0;
}

static const struct {
    double (*fn)(double);
    double support;
} FILTERS[TL_FILTER_COUNT] = {
    [TL_FILTER_BILINEAR] = {bilinear_filter, 1.0},
    [TL_FILTER_BICUBIC] = {bicubic_filter, 2.0},
    [TL_FILTER_BOX] = {box_filter, 0.5},
    [TL_FILTER_HAMMING] = {hamming_filter, 1.0},
    [TL_FILTER_LANCZOS] = {lanczos_filter, 3.0},
};

double tl_filter_support(int filter)
{
    return filter >= 0 && filter < TL_FILTER_COUNT ? FILTERS[filter].support : 0.0;
}

/* Each output's taps, normalised and in fixed point, as Pillow computes them.
 * Always inlined with fn a constant, so that the filter is inlined in the loop
 * over the taps (measured: a call per tap was most of this function's time). */
__attribute__((always_inline)) static inline void
fill_coeffs(tl_coeffs *c, double (*fn)(double), int in_size, double fin0, double scale,
            double support, double ss, int out_start, double *w)
{
    int ksize = c->ksize, i;
    for (i = 0; i < c->n; i++) {
        int xx = out_start + i, xmin, xmax, x;
        double center = fin0 + (xx + 0.5) * scale, ww = 0.0;
        int32_t *k = c->kk + (size_t)i * ksize;

        xmin = (int)(center - support + 0.5);
        if (xmin < 0)
            xmin = 0;
        xmax = (int)(center + support + 0.5);
        if (xmax > in_size)
            xmax = in_size;
        xmax -= xmin;
        if (xmax > ksize)
            xmax = ksize;
        if (xmax < 0) /* an output past the image's end: no taps */
            xmax = 0;
        for (x = 0; x < xmax; x++) {
            w[x] = fn((x + xmin - center + 0.5) * ss);
            ww += w[x];
        }
        for (x = 0; x < xmax; x++) {
            double v = ww != 0.0 ? w[x] / ww : w[x];
            k[x] = v < 0 ? (int32_t)(-0.5 + v * (1 << PRECISION_BITS))
                         : (int32_t)(0.5 + v * (1 << PRECISION_BITS));
        }
        for (x = xmax; x < ksize; x++)
            k[x] = 0;
        c->bounds[2 * i] = xmin;
        c->bounds[2 * i + 1] = xmax;
    }
}

int tl_coeffs_compute(tl_coeffs *c, int filter, int in_size, double in0, double in1,
                      int out_size, int out_start, int n)
{
    /* Pillow receives the box as C floats; keep that rounding. */
    float fin0 = (float)in0, fin1 = (float)in1;
    double scale, filterscale, support, ss;
    double *w;
    int ksize;

    memset(c, 0, sizeof(*c));
    if (filter < 0 || filter >= TL_FILTER_COUNT || in_size <= 0 || out_size <= 0 || n <= 0 ||
        out_start < 0 || out_start + n > out_size)
        return -1;
    filterscale = scale = (double)(fin1 - fin0) / out_size;
    if (filterscale < 1.0)
        filterscale = 1.0;
    support = FILTERS[filter].support * filterscale;
    ksize = (int)ceil(support) * 2 + 1;
    ss = 1.0 / filterscale;

    c->bounds = malloc(sizeof(int) * 2 * (size_t)n);
    c->kk = malloc(sizeof(int32_t) * (size_t)ksize * (size_t)n);
    w = malloc(sizeof(double) * (size_t)ksize);
    if (!c->bounds || !c->kk || !w) {
        free(w);
        tl_coeffs_free(c);
        return -1;
    }
    c->ksize = ksize;
    c->n = n;
    switch (filter) {
    case TL_FILTER_BILINEAR:
        fill_coeffs(c, bilinear_filter, in_size, fin0, scale, support, ss, out_start, w);
        break;
    case TL_FILTER_BICUBIC:
        fill_coeffs(c, bicubic_filter, in_size, fin0, scale, support, ss, out_start, w);
        break;
    default:
        fill_coeffs(c, FILTERS[filter].fn, in_size, fin0, scale, support, ss, out_start, w);
    }
    free(w);
    return 0;
}

void tl_coeffs_free(tl_coeffs *c)
{
    free(c->bounds);
    free(c->kk);
    c->bounds = NULL;
    c->kk = NULL;
}

void tl_coeffs_span(const tl_coeffs *c, int *lo, int *hi)
{
    int i, a = 0x7fffffff, b = 0;
    for (i = 0; i < c->n; i++) {
        int first = c->bounds[2 * i], end = first + c->bounds[2 * i + 1];
        if (first < a)
            a = first;
        if (end > b)
            b = end;
    }
    *lo = a;
    *hi = b;
}

void tl_coeffs_shift(tl_coeffs *c, int delta)
{
    int i;
    for (i = 0; i < c->n; i++)
        c->bounds[2 * i] += delta;
}

/* The hot loop: built for AVX2 and baseline x86-64, picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TL_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define TL_MULTIVERSION
#endif

static inline void accumulate(const uint8_t *src, size_t src_stride, int row_len,
                              const tl_coeffs *c, int o, int32_t *acc)
{
    const int32_t *k = c->kk + (size_t)o * c->ksize;
    int first = c->bounds[2 * o], taps = c->bounds[2 * o + 1], t, i;
    for (i = 0; i < row_len; i++)
        acc[i] = 1 << (PRECISION_BITS - 1);
    for (t = 0; t < taps; t++) {
        const uint8_t *s = src + (size_t)(first + t) * src_stride;
        int32_t w = k[t];
        for (i = 0; i < row_len; i++)
            acc[i] += (int32_t)s[i] * w;
    }
}

/* One output row's sums, as its own multiversioned function so that callers
 * which are not multiversioned still get the AVX2 loop. */
TL_MULTIVERSION
static void accumulate_rows(const uint8_t *src, size_t src_stride, int row_len,
                            const tl_coeffs *c, int o, int32_t *acc)
{
    accumulate(src, src_stride, row_len, c, o, acc);
}

/* Pillow's clip8: the same as clamping the shifted sum to 0..255. */
static inline uint8_t clip8(int32_t sum)
{
    int32_t v = sum >> PRECISION_BITS;
    return (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
}


static int avx512_allowed = 1;

int tl_resample_allow_avx512(int allow)
{
    int before = avx512_allowed;
    avx512_allowed = allow != 0;
    return before;
}

int tl_cpu_has_avx512(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

int tl_avx512_on(void)
{
    return avx512_allowed && tl_cpu_has_avx512();
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define TL_HAVE_AVX2_PATH 1
/* The path's functions also use FMA (divide8); every AVX2 processor we know of
 * has it, but both are checked. */
#define TL_AVX2 __attribute__((target("avx2,fma")))
#define TL_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline))
#define TL_AVX2_ON() (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))

/* 8 * n outputs of one output row from column i: sums[j] holds outputs
 * i + 8j .. i + 8j + 7, shifted (not yet clamped).  The sums stay in registers
 * over the taps (the scalar loop keeps its sums in memory, a load and a store
 * per tap); each tap's bytes are widened as they are loaded, 8 at a time (one
 * 16-byte load split with a shift cost a shuffle more per tap, 12% of the
 * resampler here).  Float rows take n = 4, so that each tap's weight is
 * broadcast once for 32 outputs: measured against n = 2 in the pipeline (one
 * process, alternating batch by batch), eval 0.4-1.9% and train 0.4-1.1%
 * faster. */
TL_AVX2_INLINE static inline void
sum_avx2(const uint8_t *src, size_t src_stride, int first, int taps, const int32_t *k, int i,
         int n, __m256i *sums)
{
    __m256i a[4];
    const uint8_t *s = src + (size_t)first * src_stride + i;
    int t, j;
    for (j = 0; j < n; j++)
        a[j] = _mm256_set1_epi32(1 << (PRECISION_BITS - 1));
    for (t = 0; t < taps; t++, s += src_stride) {
        __m256i w = _mm256_set1_epi32(k[t]);
        for (j = 0; j < n; j++)
            a[j] = _mm256_add_epi32(
                a[j], _mm256_mullo_epi32(
                          _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + 8 * j))), w));
    }
    for (j = 0; j < n; j++)
        sums[j] = _mm256_srai_epi32(a[j], PRECISION_BITS);
}

/* Eight values clamped to 0..255 (clip8 once shifted), as 32-bit lanes. */
TL_AVX2 static inline __m256i clamp8x8_avx2(__m256i v)
{
    return _mm256_min_epi32(_mm256_max_epi32(v, _mm256_setzero_si256()),
                            _mm256_set1_epi32(255));
}

/* clip8 of eight sums. */
TL_AVX2 static inline __m256i clip8x8_avx2(__m256i sum)
{
    return clamp8x8_avx2(_mm256_srai_epi32(sum, PRECISION_BITS));
}

/* Thirty-two outputs of one output row as 32 levels (clip8), in order.  The
 * bytes are widened with shifts and masks inside each 32-bit lane instead of
 * with shuffles (the shuffle unit is what limits sum_avx2): sum m holds the
 * bytes 4j + m, and shifting and or-ing puts the levels back in place. */
TL_AVX2 static inline __m256i
sum32_avx2(const uint8_t *src, size_t src_stride, int first, int taps, const int32_t *k, int i)
{
    const __m256i byte = _mm256_set1_epi32(0xff);
    __m256i a0 = _mm256_set1_epi32(1 << (PRECISION_BITS - 1)), a1 = a0, a2 = a0, a3 = a0;
    const uint8_t *s = src + (size_t)first * src_stride + i;
    int t;
    for (t = 0; t < taps; t++, s += src_stride) {
        __m256i v = _mm256_loadu_si256((const __m256i *)s);
        __m256i w = _mm256_set1_epi32(k[t]);
        a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(_mm256_and_si256(v, byte), w));
        a1 = _mm256_add_epi32(
            a1, _mm256_mullo_epi32(_mm256_and_si256(_mm256_srli_epi32(v, 8), byte), w));
        a2 = _mm256_add_epi32(
            a2, _mm256_mullo_epi32(_mm256_and_si256(_mm256_srli_epi32(v, 16), byte), w));
        a3 = _mm256_add_epi32(a3, _mm256_mullo_epi32(_mm256_srli_epi32(v, 24), w));
    }
    return _mm256_or_si256(
        _mm256_or_si256(clip8x8_avx2(a0), _mm256_slli_epi32(clip8x8_avx2(a1), 8)),
        _mm256_or_si256(_mm256_slli_epi32(clip8x8_avx2(a2), 16),
                        _mm256_slli_epi32(clip8x8_avx2(a3), 24)));
}

/* clip8 of sixteen shifted sums: saturating packs clamp to 0..255 as clip8 does. */
TL_AVX2 static inline __m128i pack16_avx2(__m256i s0, __m256i s1)
{
    __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(s0, s1), 0xD8);
    return _mm_packus_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
}

/* NOTE [ Streaming the float output ]
 * The float batch (600 KB per 224x224 image) is written once and read next by
 * another process: stores that bypass the cache skip reading each line in
 * first and leave the cache to the decoder's working set.  Streaming stores
 * are weakly ordered, so the function that issues them ends with a fence. */
TL_AVX2 static inline void store8_avx2(float *p, __m256 v)
{
    if (((uintptr_t)p & 31) == 0)
        _mm256_stream_ps(p, v);
    else
        _mm256_storeu_ps(p, v);
}

/* lut[level] for eight levels in 0..255.  Eight scalar loads: on the AMD EPYC
 * measured, vgatherdps took 70 us per 224x224 image against 46-53 us. */
TL_AVX2 static inline __m256 lookup8(const float *lut, __m256i levels)
{
    int32_t l[8];
    _mm256_storeu_si256((__m256i *)l, levels);
    return _mm256_setr_ps(lut[l[0]], lut[l[1]], lut[l[2]], lut[l[3]], lut[l[4]], lut[l[5]],
                          lut[l[6]], lut[l[7]]);
}

/* ((level / 255) - mean) / std for eight levels: the operations torch's ToTensor
 * and Normalize run, each correctly rounded as they are in torch.
 *
 * NOTE [ level / 255 without a division ]
 * x = level * 257 / 2^16 is exact in float32 (level * 257 < 2^24), and
 * level / 255 = x * (1 + 2^-16 + 2^-32 + ...); one FMA, x * (2^-16 + 2^-32) + x,
 * rounds to the float32 nearest level / 255 for every level 0..255 (checked
 * exhaustively; the expansion of level / 255 repeats every 8 bits, so it never
 * lies near a rounding midpoint).  The divider bounds the last pass: on this
 * AMD EPYC two divisions per eight outputs take about as long as the whole pass
 * (24 of 28 us a 224x224 plane); with one, the pass took 0.77-0.94 of its time
 * alone and the pipeline was 0.7% (eval) and 1.5% (train) faster, bit for bit
 * the same.  tests/pipelines/test_levels_by_division.py checks all 256 levels. */
#define LEVEL_X (257.0f / 65536.0f)                        /* x = level * LEVEL_X */
#define LEVEL_TAIL (1.0f / 65536.0f + 1.0f / 4294967296.0f) /* x + x * LEVEL_TAIL */
TL_AVX2 static inline __m256 divide8(__m256i levels, const float *ms)
{
    __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(levels), _mm256_set1_ps(LEVEL_X));
    __m256 v = _mm256_fmadd_ps(x, _mm256_set1_ps(LEVEL_TAIL), x);
    return _mm256_div_ps(_mm256_sub_ps(v, _mm256_set1_ps(ms[0])), _mm256_set1_ps(ms[1]));
}

/* What the last pass writes: bytes (clip8), lut[level] floats, or the same floats
 * computed by divide8. */
enum { TL_STORE_BYTES, TL_STORE_LUT, TL_STORE_DIVIDE };

/* Sixteen shifted sums (or levels) as bytes or floats (see above) at chunk i of a
 * row, or mirrored there when flip is set. */
TL_AVX2_INLINE static inline void
store16_avx2(__m256i s0, __m256i s1, int kind, const float *lut, const float *ms, int flip,
             int row_len, int i, void *row)
{
    if (kind == TL_STORE_BYTES) {
        const __m128i reverse = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
                                              1, 0);
        uint8_t *out = row;
        if (flip)
            _mm_storeu_si128((__m128i *)(out + row_len - 16 - i),
                             _mm_shuffle_epi8(pack16_avx2(s0, s1), reverse));
        else
            _mm_storeu_si128((__m128i *)(out + i), pack16_avx2(s0, s1));
    } else {
        const __m256i reverse = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
        float *out = row;
        __m256i l0 = clamp8x8_avx2(s0), l1 = clamp8x8_avx2(s1);
        __m256 f0 = kind == TL_STORE_DIVIDE ? divide8(l0, ms) : lookup8(lut, l0);
        __m256 f1 = kind == TL_STORE_DIVIDE ? divide8(l1, ms) : lookup8(lut, l1);
        if (flip) {
            store8_avx2(out + row_len - 8 - i, _mm256_permutevar8x32_ps(f0, reverse));
            store8_avx2(out + row_len - 16 - i, _mm256_permutevar8x32_ps(f1, reverse));
        } else {
            store8_avx2(out + i, f0);
            store8_avx2(out + i + 8, f1);
        }
    }
}

/* One output row, 16 * halves outputs at a time (halves 1 or 2; the row at
 * least that long), each written as store16_avx2's kind says.  A ragged end is
 * done as the last chunk, again. */
TL_AVX2_INLINE static inline void
filter_row_avx2(const uint8_t *src, size_t src_stride, int row_len, int first, int taps,
                const int32_t *k, int halves, int kind, const float *lut, const float *ms,
                int flip, void *row)
{
    int step = 16 * halves, i, h;
    for (i = 0;; i += step) {
        __m256i s[4];
        if (i + step > row_len)
            i = row_len - step;
        sum_avx2(src, src_stride, first, taps, k, i, 2 * halves, s);
        for (h = 0; h < halves; h++)
            store16_avx2(s[2 * h], s[2 * h + 1], kind, lut, ms, flip, row_len, i + 16 * h, row);
        if (i + step >= row_len)
            break;
    }
}

/* Rows of at least 16 samples, each written as store16_avx2's kind says, mirrored
 * when flip is set; dst_stride counts elements.  Inlined into one function per
 * kind, so that the choice is made at compile time (measured: augment 5% slower
 * otherwise). */
TL_AVX2_INLINE static inline void
filter_rows_avx2(const uint8_t *src, size_t src_stride, int row_len, const tl_coeffs *c,
                 int kind, const float *lut, const float *ms, int flip, void *dst,
                 size_t dst_stride)
{
    int floats = kind != TL_STORE_BYTES;
    size_t row_bytes = dst_stride * (floats ? sizeof(float) : 1);
    int o;
    for (o = 0; o < c->n; o++) {
        const int32_t *k = c->kk + (size_t)o * c->ksize;
        int first = c->bounds[2 * o], taps = c->bounds[2 * o + 1];
        void *row = (uint8_t *)dst + (size_t)o * row_bytes;
        if (floats && row_len >= 32) /* see sum_avx2 */
            filter_row_avx2(src, src_stride, row_len, first, taps, k, 2, kind, lut, ms, flip,
                            row);
        else
            filter_row_avx2(src, src_stride, row_len, first, taps, k, 1, kind, lut, ms, flip,
                            row);
    }
    if (floats)
        _mm_sfence(); /* NOTE [ Streaming the float output ] */
}

/* Rows of at least 32 bytes to bytes, 32 at a time (sum32_avx2), mirrored when
 * flip is set; a ragged end is done as the last 32, again.  Shorter rows go
 * sixteen at a time.  Measured on this AMD EPYC: the horizontal pass of a
 * 336x336 block 54 -> 45 us. */
TL_AVX2 static void
filter_rows_u8_avx2(const uint8_t *src, size_t src_stride, int row_len, const tl_coeffs *c,
                    int flip, uint8_t *dst, size_t dst_stride)
{
    const __m256i reverse = _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
                                             1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4,
                                             3, 2, 1, 0);
    int o, i;
    if (row_len < 32) {
        filter_rows_avx2(src, src_stride, row_len, c, TL_STORE_BYTES, NULL, NULL, flip, dst,
                         dst_stride);
        return;
    }
    for (o = 0; o < c->n; o++) {
        const int32_t *k = c->kk + (size_t)o * c->ksize;
        int first = c->bounds[2 * o], taps = c->bounds[2 * o + 1];
        uint8_t *row = dst + (size_t)o * dst_stride;
        for (i = 0;; i += 32) {
            __m256i levels;
            if (i + 32 > row_len)
                i = row_len - 32;
            levels = sum32_avx2(src, src_stride, first, taps, k, i);
            if (flip) /* bytes reversed in each half, then the halves swapped */
                _mm256_storeu_si256((__m256i *)(row + row_len - 32 - i),
                                    _mm256_permute4x64_epi64(
                                        _mm256_shuffle_epi8(levels, reverse), 0x4E));
            else
                _mm256_storeu_si256((__m256i *)(row + i), levels);
            if (i + 32 >= row_len)
                break;
        }
    }
}

TL_AVX2 static void
filter_rows_lut_avx2(const uint8_t *src, size_t src_stride, int row_len, const tl_coeffs *c,
                     const float *lut, int flip, float *dst, size_t dst_stride)
{
    filter_rows_avx2(src, src_stride, row_len, c, TL_STORE_LUT, lut, NULL, flip, dst,
                     dst_stride);
}

/* Measured against the table's eight scalar loads: augment 0.27 -> 0.22 ms per
 * 224x224 image on this AMD EPYC (train, imagenet-sample). */
TL_AVX2 static void
filter_rows_divide_avx2(const uint8_t *src, size_t src_stride, int row_len,
                        const tl_coeffs *c, const float *ms, int flip, float *dst,
                        size_t dst_stride)
{
    filter_rows_avx2(src, src_stride, row_len, c, TL_STORE_DIVIDE, NULL, ms, flip, dst,
                     dst_stride);
}

/* Levels already in 8 bits to floats, sixteen at a time, as store16_avx2's kind
 * says; rows of at least 16, a ragged end done as the last 16 again.  The
 * vertical-first order ends here (measured: the byte-by-byte table loop took 8%
 * of the resampler on train). */
TL_AVX2_INLINE static inline void
levels_to_float_avx2(const uint8_t *src, int rows, int cols, int kind, const float *lut,
                     const float *ms, int flip, float *dst)
{
    int y, i;
    for (y = 0; y < rows; y++) {
        const uint8_t *in = src + (size_t)y * cols;
        float *row = dst + (size_t)y * cols;
        for (i = 0;; i += 16) {
            if (i + 16 > cols)
                i = cols - 16;
            store16_avx2(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(in + i))),
                         _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(in + i + 8))),
                         kind, lut, ms, flip, cols, i, row);
            if (i + 16 >= cols)
                break;
        }
    }
    _mm_sfence(); /* NOTE [ Streaming the float output ] */
}

TL_AVX2 static void
levels_lut_avx2(const uint8_t *src, int rows, int cols, const float *lut, int flip, float *dst)
{
    levels_to_float_avx2(src, rows, cols, TL_STORE_LUT, lut, NULL, flip, dst);
}

TL_AVX2 static void
levels_divide_avx2(const uint8_t *src, int rows, int cols, const float *ms, int flip,
                   float *dst)
{
    levels_to_float_avx2(src, rows, cols, TL_STORE_DIVIDE, NULL, ms, flip, dst);
}

/* The last pass to floats by division, 32 outputs at a time in two 512-bit
 * halves, on processors with AVX-512: the same sums, clamp and divide8
 * arithmetic as the AVX2 loop (so the same floats), half the instructions.
 * Rows shorter than 32 take the AVX2 loop.  Measured on an AMD EPYC with
 * AVX-512 (Zen 5), one process, eval on the original encoding: augment 64.5 ->
 * 54.5 us per image, the C core 1.5-3% faster. */
#define TL_AVX512 __attribute__((target("avx512f,fma")))

/* clip8 of sixteen sums, then divide8's arithmetic. */
TL_AVX512 static inline __m512 divide16_avx512(__m512i sum, const float *ms)
{
    __m512i levels = _mm512_min_epi32(
        _mm512_max_epi32(_mm512_srai_epi32(sum, PRECISION_BITS), _mm512_setzero_si512()),
        _mm512_set1_epi32(255));
    __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(levels), _mm512_set1_ps(LEVEL_X));
    __m512 v = _mm512_fmadd_ps(x, _mm512_set1_ps(LEVEL_TAIL), x);
    return _mm512_div_ps(_mm512_sub_ps(v, _mm512_set1_ps(ms[0])), _mm512_set1_ps(ms[1]));
}

TL_AVX512 static inline void store16_avx512(float *p, __m512 v)
{
    if (((uintptr_t)p & 63) == 0) /* NOTE [ Streaming the float output ] */
        _mm512_stream_ps(p, v);
    else
        _mm512_storeu_ps(p, v);
}

TL_AVX512 static void
filter_rows_divide_avx512(const uint8_t *src, size_t src_stride, int row_len,
                          const tl_coeffs *c, const float *ms, int flip, float *dst,
                          size_t dst_stride)
{
    const __m512i reverse = _mm512_setr_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3,
                                              2, 1, 0);
    int o, i, t;
    for (o = 0; o < c->n; o++) {
        const int32_t *k = c->kk + (size_t)o * c->ksize;
        int first = c->bounds[2 * o], taps = c->bounds[2 * o + 1];
        float *row = dst + (size_t)o * dst_stride;
        for (i = 0;; i += 32) {
            __m512i a0 = _mm512_set1_epi32(1 << (PRECISION_BITS - 1)), a1 = a0;
            const uint8_t *s;
            __m512 f0, f1;
            if (i + 32 > row_len)
                i = row_len - 32;
            s = src + (size_t)first * src_stride + i;
            for (t = 0; t < taps; t++, s += src_stride) {
                __m512i w = _mm512_set1_epi32(k[t]);
                a0 = _mm512_add_epi32(a0, _mm512_mullo_epi32(
                    _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)s)), w));
                a1 = _mm512_add_epi32(a1, _mm512_mullo_epi32(
                    _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(s + 16))), w));
            }
            f0 = divide16_avx512(a0, ms);
            f1 = divide16_avx512(a1, ms);
            if (flip) {
                store16_avx512(row + row_len - 16 - i, _mm512_permutexvar_ps(reverse, f0));
                store16_avx512(row + row_len - 32 - i, _mm512_permutexvar_ps(reverse, f1));
            } else {
                store16_avx512(row + i, f0);
                store16_avx512(row + i + 16, f1);
            }
            if (i + 32 >= row_len)
                break;
        }
    }
    _mm_sfence();
}
#endif

TL_MULTIVERSION
void tl_filter_rows(const uint8_t *src, size_t src_stride, int row_len,
                    const tl_coeffs *c, int flip, uint8_t *dst, size_t dst_stride,
                    int32_t *acc)
{
    int o, i;
#ifdef TL_HAVE_AVX2_PATH
    if (row_len >= 16 && TL_AVX2_ON()) {
        filter_rows_u8_avx2(src, src_stride, row_len, c, flip, dst, dst_stride);
        return;
    }
#endif
    for (o = 0; o < c->n; o++) {
        uint8_t *out = dst + (size_t)o * dst_stride;
        accumulate(src, src_stride, row_len, c, o, acc);
        for (i = 0; i < row_len; i++)
            out[flip ? row_len - 1 - i : i] = clip8(acc[i]);
    }
}

/* clip8 then table lookup for acc[0..n), mirrored when flip is set. */
static void levels_to_float(const int32_t *acc, int n, const float *lut, int flip, float *out)
{
    int i;
    for (i = 0; i < n; i++)
        out[flip ? n - 1 - i : i] = lut[clip8(acc[i])];
}


void tl_filter_rows_lut(const uint8_t *src, size_t src_stride, int row_len,
                        const tl_coeffs *c, const float *lut, const float *mean_std,
                        int flip, float *dst, size_t dst_stride, int32_t *acc)
{
    int o;
#ifdef TL_HAVE_AVX2_PATH
    if (mean_std && row_len >= 32 && tl_avx512_on()) {
        filter_rows_divide_avx512(src, src_stride, row_len, c, mean_std, flip, dst, dst_stride);
        return;
    }
    if (row_len >= 16 && TL_AVX2_ON()) {
        if (mean_std)
            filter_rows_divide_avx2(src, src_stride, row_len, c, mean_std, flip, dst,
                                    dst_stride);
        else
            filter_rows_lut_avx2(src, src_stride, row_len, c, lut, flip, dst, dst_stride);
        return;
    }
#endif
    /* elsewhere the table: the same values (mean_std only says how to compute them) */
    for (o = 0; o < c->n; o++) {
        float *out = dst + (size_t)o * dst_stride;
        accumulate_rows(src, src_stride, row_len, c, o, acc);
        levels_to_float(acc, row_len, lut, flip, out);
    }
}

void tl_levels_to_float(const uint8_t *src, int rows, int cols, const float *lut,
                        const float *mean_std, int flip, float *dst)
{
    int y, x;
#ifdef TL_HAVE_AVX2_PATH
    if (cols >= 16 && TL_AVX2_ON()) {
        if (mean_std)
            levels_divide_avx2(src, rows, cols, mean_std, flip, dst);
        else
            levels_lut_avx2(src, rows, cols, lut, flip, dst);
        return;
    }
#endif
    /* elsewhere the table: the same values (mean_std only says how to compute them) */
    for (y = 0; y < rows; y++) {
        const uint8_t *in = src + (size_t)y * cols;
        float *out = dst + (size_t)y * cols;
        if (flip)
            for (x = 0; x < cols; x++)
                out[cols - 1 - x] = lut[in[x]];
        else
            for (x = 0; x < cols; x++)
                out[x] = lut[in[x]];
    }
}

void tl_levels_copy(const uint8_t *src, int rows, int cols, int flip, uint8_t *dst)
{
    int y, x;
    if (!flip) {
        memcpy(dst, src, (size_t)rows * cols);
        return;
    }
    for (y = 0; y < rows; y++) {
        const uint8_t *in = src + (size_t)y * cols;
        uint8_t *o = dst + (size_t)y * cols;
        for (x = 0; x < cols; x++)
            o[cols - 1 - x] = in[x];
    }
}

void tl_planes_interleave(const uint8_t *planes, size_t plane_size, int rows, int cols,
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
enum { TL_BLOCK = 32 };

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

#ifdef TL_HAVE_SSSE3_PATH
/* The byte shuffles that take one channel's bytes out of 16 RGB pixels (48 bytes
 * loaded as three 16-byte blocks): channel ch's bytes of block b land in place. */
#define Z -1
#define TL_RGB_MASKS(set) \
    {{set(0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 1, 4, 7, 10, 13)},                         \
     {set(1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14)},                         \
     {set(2, 5, 8, 11, 14, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, 1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z),                          \
      set(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15)}}
#define TL_SET128(...) _mm_setr_epi8(__VA_ARGS__)

/* 16 RGB pixels (48 bytes) into 16 R, 16 G and 16 B bytes with byte shuffles. */
__attribute__((target("ssse3"))) static void
deinterleave_ssse3(const uint8_t *s, int cols, uint8_t *r, uint8_t *g, uint8_t *b)
{
    const __m128i m[3][3] = TL_RGB_MASKS(TL_SET128);
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

#ifdef TL_HAVE_AVX2_PATH
#define TL_SET256(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)

/* 32 RGB pixels at a time: each 128-bit lane does deinterleave_ssse3's 16 (the
 * first 16 pixels in the low lanes, the next 16 in the high ones), so one
 * shuffle does the work of two.  Rows of at least 32 pixels. */
__attribute__((target("avx2"))) static void
deinterleave_avx2(const uint8_t *s, int cols, uint8_t *r, uint8_t *g, uint8_t *b)
{
    const __m256i m[3][3] = TL_RGB_MASKS(TL_SET256);
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
#undef TL_RGB_MASKS
#undef TL_SET128
#undef TL_SET256

static void deinterleave_row(const uint8_t *s, int cols, uint8_t *r, uint8_t *g, uint8_t *b)
{
#ifdef TL_HAVE_AVX2_PATH
    if (cols >= 32 && __builtin_cpu_supports("avx2")) {
        deinterleave_avx2(s, cols, r, g, b);
        return;
    }
#endif
#ifdef TL_HAVE_SSSE3_PATH
    if (cols >= 16 && __builtin_cpu_supports("ssse3")) {
        deinterleave_ssse3(s, cols, r, g, b);
        return;
    }
#endif
    deinterleave_scalar(s, cols, r, g, b);
}

void tl_split_rgb(const uint8_t *src, size_t src_stride, int rows, int cols,
                  uint8_t *planes, size_t plane_size)
{
    int y;
    for (y = 0; y < rows; y++) {
        uint8_t *r = planes + (size_t)y * cols;
        deinterleave_row(src + (size_t)y * src_stride, cols, r, r + plane_size,
                         r + 2 * plane_size);
    }
}

void tl_split_transpose_rgb(const uint8_t *src, size_t src_stride, int rows,
                            int cols, uint8_t *planes, size_t plane_stride,
                            size_t plane_size, uint8_t *strip)
{
    /* Per strip of 16 rows: deinterleave into three planar strips (sequential
     * reads and writes), then transpose each with the 16x16 kernel.  A ragged
     * last strip is the last 16 rows, overlapping the strip before. */
    int y0, y, ch, strip_start;
    size_t ss = tl_padded(cols);
    for (strip_start = 0; strip_start < rows; strip_start += 16) {
        int n = rows < 16 ? rows : 16;
        y0 = rows >= 16 ? chunk_start(strip_start, rows, 16) : strip_start;
        for (y = 0; y < n; y++) {
            uint8_t *r = strip + (size_t)y * ss;
            deinterleave_row(src + (size_t)(y0 + y) * src_stride, cols, r,
                             r + (size_t)16 * ss, r + (size_t)32 * ss);
        }
        for (ch = 0; ch < 3; ch++)
            tl_transpose_u8(strip + (size_t)ch * 16 * ss, ss, n, cols,
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

#ifdef TL_HAVE_AVX2_PATH
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

void tl_transpose_u8(const uint8_t *src, size_t src_stride, int rows, int cols,
                     uint8_t *dst, size_t dst_stride)
{
    int y0, x0, y, x;
#if defined(__SSE2__)
    /* Ragged edges as overlapping full blocks (chunk_start): byte by byte they
     * cost 6% of the resampler. */
    if (rows >= 16 && cols >= 16) {
#ifdef TL_HAVE_AVX2_PATH
        int pairs = __builtin_cpu_supports("avx2") ? cols & ~31 : 0;
#endif
        for (y = 0; y < rows; y += 16) {
            const uint8_t *s;
            uint8_t *d;
            y0 = chunk_start(y, rows, 16);
            s = src + (size_t)y0 * src_stride;
            d = dst + y0;
            x = 0;
#ifdef TL_HAVE_AVX2_PATH
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
    for (y0 = 0; y0 < rows; y0 += TL_BLOCK) {
        int y1 = y0 + TL_BLOCK < rows ? y0 + TL_BLOCK : rows;
        for (x0 = 0; x0 < cols; x0 += TL_BLOCK) {
            int x1 = x0 + TL_BLOCK < cols ? x0 + TL_BLOCK : cols;
            for (y = y0; y < y1; y++)
                for (x = x0; x < x1; x++)
                    dst[(size_t)x * dst_stride + y] = src[(size_t)y * src_stride + x];
        }
    }
#endif
}
