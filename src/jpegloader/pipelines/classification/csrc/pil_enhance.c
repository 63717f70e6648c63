/* Pillow's ImageEnhance (Brightness, Color, Contrast, Sharpness) and the
 * look-up tables ImageOps applies, for RGB images, to the bit.  Pillow's
 * libImaging is the specification:
 *   - every enhancement is Image.blend(degenerate, image, factor): each byte
 *     d + factor * (v - d) in float (factor in float), truncated to a byte
 *     after clamping to [0, 255] (inside [0, 1] it never leaves that range, so
 *     Pillow's unclamped path gives the same bytes);
 *   - the degenerates: black (brightness); each pixel's luma (L24 >> 16,
 *     Pillow's RGB to L) in its three channels (colour); the mean of the
 *     pixels' luma rounded as int(mean + 0.5) (contrast);
 *     ImageFilter.SMOOTH (sharpness: the 3 x 3 kernel 1 1 1 / 1 5 1 / 1 1 1
 *     over 13 in float, summed row below, row, row above, plus 0.5, clamped
 *     and truncated; the outermost rows and columns kept as they are).
 * Brightness and contrast have one degenerate level for the whole image, so a
 * byte's result is a table's of the 256 levels.  Colour's and sharpness's
 * rows are runs of bytes against a row of degenerates, so the compiler's vector
 * loops (AVX2 where the processor has it) do every channel alike.  FMA contraction is off (setup.py), as in Pillow's
 * x86-64 wheels. */
#include "pil_enhance.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#define JL_X86 1
#endif

/* Pillow's conversion of an RGB pixel to L */
static inline int luma(const uint8_t *p)
{
    return (p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16;
}

/* Image.blend's byte: degenerate d, image v */
static inline uint8_t blend(float d, float v, float factor)
{
    float t = d + factor * (v - d);
    t = t < 0.0f ? 0.0f : t;
    t = t > 255.0f ? 255.0f : t;
    return (uint8_t)t;
}

/* Bytes blended against their degenerates d[i] */
static inline void blend_run(const uint8_t *restrict d, const uint8_t *restrict v,
                             uint8_t *restrict out, size_t n, float factor)
{
    for (size_t i = 0; i < n; i++)
        out[i] = blend((float)d[i], (float)v[i], factor);
}

/* SMOOTH's interior bytes [3, 3w - 3) of a row, into smooth[] (its first and last
 * three bytes left alone). */
static inline void smooth_run(const uint8_t *restrict below, const uint8_t *restrict row,
                              const uint8_t *restrict above, uint8_t *restrict smooth, int w)
{
    const float side = 1.0f / 13.0f, centre = 5.0f / 13.0f;
    size_t n = (size_t)w * 3 - 3;
    for (size_t i = 3; i < n; i++) {
        float s = 0.5f;
        s += (float)below[i - 3] * side + (float)below[i] * side + (float)below[i + 3] * side;
        s += (float)row[i - 3] * side + (float)row[i] * centre + (float)row[i + 3] * side;
        s += (float)above[i - 3] * side + (float)above[i] * side + (float)above[i + 3] * side;
        s = s < 0.0f ? 0.0f : s;
        s = s > 255.0f ? 255.0f : s;
        smooth[i] = (uint8_t)s;
    }
}

/* The same loops, vectorised for AVX2 where the processor has it */
#if JL_X86
__attribute__((target("avx2"))) static void
blend_run_avx2(const uint8_t *d, const uint8_t *v, uint8_t *out, size_t n, float factor)
{
    blend_run(d, v, out, n, factor);
}
__attribute__((target("avx2"))) static void
smooth_run_avx2(const uint8_t *below, const uint8_t *row, const uint8_t *above,
                uint8_t *smooth, int w)
{
    smooth_run(below, row, above, smooth, w);
}
#endif

static void blend_row(const uint8_t *d, const uint8_t *v, uint8_t *out, size_t n,
                      float factor, int avx2)
{
#if JL_X86
    if (avx2) {
        blend_run_avx2(d, v, out, n, factor);
        return;
    }
#endif
    blend_run(d, v, out, n, factor);
}

static void smooth_row(const uint8_t *below, const uint8_t *row, const uint8_t *above,
                       uint8_t *smooth, int w, int avx2)
{
#if JL_X86
    if (avx2) {
        smooth_run_avx2(below, row, above, smooth, w);
        return;
    }
#endif
    smooth_run(below, row, above, smooth, w);
}

static int mean_luma(const uint8_t *src, int w, int h)
{
    long long sum = 0;
    size_t pixels = (size_t)w * h;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = src + (size_t)y * w * 3;
        uint32_t row_sum = 0;  /* w * 255 < 2^32 for any row Pillow can hold */
        for (int x = 0; x < w; x++)
            row_sum += (uint32_t)luma(row + 3 * x);
        sum += row_sum;
    }
    /* Python's int(sum / count + 0.5): both exact in double, the quotient rounded once */
    return (int)((double)sum / (double)pixels + 0.5);
}

static int avx2_allowed = 1;

int jl_pil_enhance_allow_avx2(int allow)
{
    int before = avx2_allowed;
    avx2_allowed = allow;
    return before;
}

int jl_pil_enhance(const uint8_t *src, int w, int h, uint8_t *dst, int kind, float factor)
{
    size_t stride = (size_t)w * 3;
    uint8_t *degenerate;
    int avx2 = 0;
#if JL_X86
    avx2 = avx2_allowed && __builtin_cpu_supports("avx2");
#endif
    if (w < 1 || h < 1)
        return 0;
    if (kind == JL_PIL_BRIGHTNESS || kind == JL_PIL_CONTRAST) {
        /* one degenerate level for every byte: a byte's result is a table's */
        uint8_t table[256], d = kind == JL_PIL_CONTRAST ? (uint8_t)mean_luma(src, w, h) : 0;
        size_t n = stride * h;
        for (int v = 0; v < 256; v++)
            table[v] = blend((float)d, (float)v, factor);
        for (size_t i = 0; i < n; i++)
            dst[i] = table[src[i]];
        return 0;
    }
    if (kind == JL_PIL_COLOUR) {
        degenerate = malloc(stride);
        if (!degenerate)
            return -1;
        for (int y = 0; y < h; y++) {
            const uint8_t *row = src + y * stride;
            for (int x = 0; x < w; x++) {
                uint8_t l = (uint8_t)luma(row + 3 * x);
                degenerate[3 * x] = degenerate[3 * x + 1] = degenerate[3 * x + 2] = l;
            }
            blend_row(degenerate, row, dst + y * stride, stride, factor, avx2);
        }
        free(degenerate);
        return 0;
    }
    /* sharpness: the outermost pixels are their own degenerate, so they stay */
    memcpy(dst, src, stride);
    memcpy(dst + (h - 1) * stride, src + (h - 1) * stride, stride);
    if (h < 3)
        return 0;
    if (w < 3) {
        memcpy(dst + stride, src + stride, stride * (h - 2));
        return 0;
    }
    degenerate = malloc(stride);
    if (!degenerate)
        return -1;
    for (int y = 1; y < h - 1; y++) {
        const uint8_t *row = src + y * stride;
        memcpy(degenerate, row, 3);
        memcpy(degenerate + stride - 3, row + stride - 3, 3);
        smooth_row(row + stride, row, row - stride, degenerate, w, avx2);
        blend_row(degenerate, row, dst + y * stride, stride, factor, avx2);
    }
    free(degenerate);
    return 0;
}

void jl_pil_histograms(const uint8_t *src, size_t pixels, int64_t counts[3][256])
{
    memset(counts, 0, sizeof(int64_t) * 3 * 256);
    for (size_t i = 0; i < pixels; i++) {
        counts[0][src[3 * i]]++;
        counts[1][src[3 * i + 1]]++;
        counts[2][src[3 * i + 2]]++;
    }
}

void jl_pil_apply_luts(const uint8_t *src, size_t pixels, uint8_t *dst,
                       const uint8_t luts[3][256])
{
    for (size_t i = 0; i < pixels; i++) {
        dst[3 * i] = luts[0][src[3 * i]];
        dst[3 * i + 1] = luts[1][src[3 * i + 1]];
        dst[3 * i + 2] = luts[2][src[3 * i + 2]];
    }
}
