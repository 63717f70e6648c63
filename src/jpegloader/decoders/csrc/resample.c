/* The resampling passes: Pillow's fixed-point filter run down the rows of 8-bit
 * planes (AVX2 and AVX-512 loops picked at run time, a scalar loop elsewhere), and
 * the last pass's output stores: bytes, floats through ToTensor + Normalize's table,
 * or the same floats computed by division.  No Python here. */
#include "resample.h"

#include <stdlib.h>
#include <string.h>

#define PRECISION_BITS JL_PRECISION_BITS

/* The hot loop: built for AVX2 and baseline x86-64, picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define JL_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define JL_MULTIVERSION
#endif

static inline void accumulate(const uint8_t *src, size_t src_stride, int row_len,
                              const jl_coeffs *c, int o, int32_t *acc)
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
JL_MULTIVERSION
static void accumulate_rows(const uint8_t *src, size_t src_stride, int row_len,
                            const jl_coeffs *c, int o, int32_t *acc)
{
    accumulate(src, src_stride, row_len, c, o, acc);
}

/* Pillow's clip8: the same as clamping the shifted sum to 0..255. */
static inline uint8_t clip8(int32_t sum)
{
    int32_t v = sum >> PRECISION_BITS;
    return (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define JL_HAVE_AVX2_PATH 1
/* The path's functions also use FMA (divide8); every AVX2 processor we know of
 * has it, but both are checked. */
#define JL_AVX2 __attribute__((target("avx2,fma")))
#define JL_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline))
#define JL_AVX2_ON() (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))

/* 8 * n outputs of one output row from column i: sums[j] holds outputs
 * i + 8j .. i + 8j + 7, shifted (not yet clamped).  The sums stay in registers
 * over the taps (the scalar loop keeps its sums in memory, a load and a store
 * per tap); each tap's bytes are widened as they are loaded, 8 at a time (one
 * 16-byte load split with a shift cost a shuffle more per tap, 12% of the
 * resampler here).  Float rows take n = 4, so that each tap's weight is
 * broadcast once for 32 outputs: measured against n = 2 in the pipeline (one
 * process, alternating batch by batch), eval 0.4-1.9% and train 0.4-1.1%
 * faster. */
JL_AVX2_INLINE static inline void
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
JL_AVX2 static inline __m256i clamp8x8_avx2(__m256i v)
{
    return _mm256_min_epi32(_mm256_max_epi32(v, _mm256_setzero_si256()),
                            _mm256_set1_epi32(255));
}

/* clip8 of eight sums. */
JL_AVX2 static inline __m256i clip8x8_avx2(__m256i sum)
{
    return clamp8x8_avx2(_mm256_srai_epi32(sum, PRECISION_BITS));
}

/* Thirty-two outputs of one output row as 32 levels (clip8), in order.  The
 * bytes are widened with shifts and masks inside each 32-bit lane instead of
 * with shuffles (the shuffle unit is what limits sum_avx2): sum m holds the
 * bytes 4j + m, and shifting and or-ing puts the levels back in place. */
JL_AVX2 static inline __m256i
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
JL_AVX2 static inline __m128i pack16_avx2(__m256i s0, __m256i s1)
{
    __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(s0, s1), 0xD8);
    return _mm_packus_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
}

/* NOTE [ Streaming the float output ]
 * The float batch (600 KB per 224x224 image) is written once and read next by
 * another process: stores that bypass the cache skip reading each line in
 * first and leave the cache to the decoder's working set.  Streaming stores
 * are weakly ordered, so the function that issues them ends with a fence. */
JL_AVX2 static inline void store8_avx2(float *p, __m256 v)
{
    if (((uintptr_t)p & 31) == 0)
        _mm256_stream_ps(p, v);
    else
        _mm256_storeu_ps(p, v);
}

/* lut[level] for eight levels in 0..255.  Eight scalar loads: on the AMD EPYC
 * measured, vgatherdps took 70 us per 224x224 image against 46-53 us. */
JL_AVX2 static inline __m256 lookup8(const float *lut, __m256i levels)
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
 * rounds to the float32 nearest level / 255 for every level 0..255 (the
 * expansion repeats every 8 bits, so it never lies near a rounding midpoint).
 * It replaces one of the two divisions, which bound the last pass.
 * tests/pipelines/test_levels_by_division.py checks all 256 levels. */
#define LEVEL_X (257.0f / 65536.0f)                        /* x = level * LEVEL_X */
#define LEVEL_TAIL (1.0f / 65536.0f + 1.0f / 4294967296.0f) /* x + x * LEVEL_TAIL */
JL_AVX2 static inline __m256 divide8(__m256i levels, const float *ms)
{
    __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(levels), _mm256_set1_ps(LEVEL_X));
    __m256 v = _mm256_fmadd_ps(x, _mm256_set1_ps(LEVEL_TAIL), x);
    return _mm256_div_ps(_mm256_sub_ps(v, _mm256_set1_ps(ms[0])), _mm256_set1_ps(ms[1]));
}

/* What the last pass writes: bytes (clip8), lut[level] floats, or the same floats
 * computed by divide8. */
enum { JL_STORE_BYTES, JL_STORE_LUT, JL_STORE_DIVIDE };

/* Sixteen shifted sums (or levels) as bytes or floats (see above) at chunk i of a
 * row, or mirrored there when flip is set. */
JL_AVX2_INLINE static inline void
store16_avx2(__m256i s0, __m256i s1, int kind, const float *lut, const float *ms, int flip,
             int row_len, int i, void *row)
{
    if (kind == JL_STORE_BYTES) {
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
        __m256 f0 = kind == JL_STORE_DIVIDE ? divide8(l0, ms) : lookup8(lut, l0);
        __m256 f1 = kind == JL_STORE_DIVIDE ? divide8(l1, ms) : lookup8(lut, l1);
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
JL_AVX2_INLINE static inline void
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
JL_AVX2_INLINE static inline void
filter_rows_avx2(const uint8_t *src, size_t src_stride, int row_len, const jl_coeffs *c,
                 int kind, const float *lut, const float *ms, int flip, void *dst,
                 size_t dst_stride)
{
    int floats = kind != JL_STORE_BYTES;
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
JL_AVX2 static void
filter_rows_u8_avx2(const uint8_t *src, size_t src_stride, int row_len, const jl_coeffs *c,
                    int flip, uint8_t *dst, size_t dst_stride)
{
    const __m256i reverse = _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
                                             1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4,
                                             3, 2, 1, 0);
    int o, i;
    if (row_len < 32) {
        filter_rows_avx2(src, src_stride, row_len, c, JL_STORE_BYTES, NULL, NULL, flip, dst,
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

JL_AVX2 static void
filter_rows_lut_avx2(const uint8_t *src, size_t src_stride, int row_len, const jl_coeffs *c,
                     const float *lut, int flip, float *dst, size_t dst_stride)
{
    filter_rows_avx2(src, src_stride, row_len, c, JL_STORE_LUT, lut, NULL, flip, dst,
                     dst_stride);
}

/* Measured against the table's eight scalar loads: augment 0.27 -> 0.22 ms per
 * 224x224 image on this AMD EPYC (train, imagenet-sample). */
JL_AVX2 static void
filter_rows_divide_avx2(const uint8_t *src, size_t src_stride, int row_len,
                        const jl_coeffs *c, const float *ms, int flip, float *dst,
                        size_t dst_stride)
{
    filter_rows_avx2(src, src_stride, row_len, c, JL_STORE_DIVIDE, NULL, ms, flip, dst,
                     dst_stride);
}

/* Levels already in 8 bits to floats, sixteen at a time, as store16_avx2's kind
 * says; rows of at least 16, a ragged end done as the last 16 again.  The
 * vertical-first order ends here (measured: the byte-by-byte table loop took 8%
 * of the resampler on train). */
JL_AVX2_INLINE static inline void
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

JL_AVX2 static void
levels_lut_avx2(const uint8_t *src, int rows, int cols, const float *lut, int flip, float *dst)
{
    levels_to_float_avx2(src, rows, cols, JL_STORE_LUT, lut, NULL, flip, dst);
}

JL_AVX2 static void
levels_divide_avx2(const uint8_t *src, int rows, int cols, const float *ms, int flip,
                   float *dst)
{
    levels_to_float_avx2(src, rows, cols, JL_STORE_DIVIDE, NULL, ms, flip, dst);
}

/* The last pass to floats by division, 32 outputs at a time in two 512-bit
 * halves, on processors with AVX-512: the same sums, clamp and divide8
 * arithmetic as the AVX2 loop (so the same floats), half the instructions.
 * Rows shorter than 32 take the AVX2 loop.  Measured on an AMD EPYC with
 * AVX-512 (Zen 5), one process, eval on the original encoding: augment 64.5 ->
 * 54.5 us per image, the C core 1.5-3% faster. */
#define JL_AVX512 __attribute__((target("avx512f,fma")))

/* clip8 of sixteen sums, then divide8's arithmetic. */
JL_AVX512 static inline __m512 divide16_avx512(__m512i sum, const float *ms)
{
    __m512i levels = _mm512_min_epi32(
        _mm512_max_epi32(_mm512_srai_epi32(sum, PRECISION_BITS), _mm512_setzero_si512()),
        _mm512_set1_epi32(255));
    __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(levels), _mm512_set1_ps(LEVEL_X));
    __m512 v = _mm512_fmadd_ps(x, _mm512_set1_ps(LEVEL_TAIL), x);
    return _mm512_div_ps(_mm512_sub_ps(v, _mm512_set1_ps(ms[0])), _mm512_set1_ps(ms[1]));
}

JL_AVX512 static inline void store16_avx512(float *p, __m512 v)
{
    if (((uintptr_t)p & 63) == 0) /* NOTE [ Streaming the float output ] */
        _mm512_stream_ps(p, v);
    else
        _mm512_storeu_ps(p, v);
}

JL_AVX512 static void
filter_rows_divide_avx512(const uint8_t *src, size_t src_stride, int row_len,
                          const jl_coeffs *c, const float *ms, int flip, float *dst,
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

JL_MULTIVERSION
void jl_filter_rows(const uint8_t *src, size_t src_stride, int row_len,
                    const jl_coeffs *c, int flip, uint8_t *dst, size_t dst_stride,
                    int32_t *acc)
{
    int o, i;
#ifdef JL_HAVE_AVX2_PATH
    if (row_len >= 16 && JL_AVX2_ON()) {
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


void jl_filter_rows_lut(const uint8_t *src, size_t src_stride, int row_len,
                        const jl_coeffs *c, const float *lut, const float *mean_std,
                        int flip, float *dst, size_t dst_stride, int32_t *acc)
{
    int o;
#ifdef JL_HAVE_AVX2_PATH
    if (mean_std && row_len >= 32 && jl_avx512_on(JL_AVX512_BW)) {
        filter_rows_divide_avx512(src, src_stride, row_len, c, mean_std, flip, dst, dst_stride);
        return;
    }
    if (row_len >= 16 && JL_AVX2_ON()) {
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

void jl_levels_to_float(const uint8_t *src, int rows, int cols, const float *lut,
                        const float *mean_std, int flip, float *dst)
{
    int y, x;
#ifdef JL_HAVE_AVX2_PATH
    if (cols >= 16 && JL_AVX2_ON()) {
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

void jl_levels_copy(const uint8_t *src, int rows, int cols, int flip, uint8_t *dst)
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
