#include "resample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pillow: PRECISION_BITS = 32 - 8 - 2, leaving headroom for the sum. */
#define PRECISION_BITS 22

static double bilinear_filter(double x)
{
    if (x < 0.0)
        x = -x;
    if (x < 1.0)
        return 1.0 - x;
    return 0.0;
}

int tl_coeffs_compute(tl_coeffs *c, int in_size, double in0, double in1,
                      int out_size, int out_start, int n)
{
    /* Pillow receives the box as C floats; keep that rounding. */
    float fin0 = (float)in0, fin1 = (float)in1;
    double scale, filterscale, support, ss;
    double *w;
    int ksize, i;

    memset(c, 0, sizeof(*c));
    if (in_size <= 0 || out_size <= 0 || n <= 0 || out_start < 0 ||
        out_start + n > out_size)
        return -1;
    filterscale = scale = (double)(fin1 - fin0) / out_size;
    if (filterscale < 1.0)
        filterscale = 1.0;
    support = 1.0 * filterscale; /* bilinear support is 1 */
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
    for (i = 0; i < n; i++) {
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
        for (x = 0; x < xmax; x++) {
            w[x] = bilinear_filter((x + xmin - center + 0.5) * ss);
            ww += w[x];
        }
        for (x = 0; x < ksize; x++) {
            double v = x < xmax ? (ww != 0.0 ? w[x] / ww : w[x]) : 0.0;
            k[x] = v < 0 ? (int32_t)(-0.5 + v * (1 << PRECISION_BITS))
                         : (int32_t)(0.5 + v * (1 << PRECISION_BITS));
        }
        c->bounds[2 * i] = xmin;
        c->bounds[2 * i + 1] = xmax < 0 ? 0 : xmax;
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

TL_MULTIVERSION
void tl_filter_rows(const uint8_t *src, size_t src_stride, int row_len,
                    const tl_coeffs *c, uint8_t *dst, size_t dst_stride,
                    int32_t *acc)
{
    int o, t, i;
    for (o = 0; o < c->n; o++) {
        const int32_t *k = c->kk + (size_t)o * c->ksize;
        int first = c->bounds[2 * o], taps = c->bounds[2 * o + 1];
        uint8_t *out = dst + (size_t)o * dst_stride;

        for (i = 0; i < row_len; i++)
            acc[i] = 1 << (PRECISION_BITS - 1);
        for (t = 0; t < taps; t++) {
            const uint8_t *s = src + (size_t)(first + t) * src_stride;
            int32_t w = k[t];
            for (i = 0; i < row_len; i++)
                acc[i] += (int32_t)s[i] * w;
        }
        /* Pillow's clip8: the same as clamping the shifted sum to 0..255. */
        for (i = 0; i < row_len; i++) {
            int32_t v = acc[i] >> PRECISION_BITS;
            out[i] = (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
        }
    }
}

void tl_transpose_rgb(const uint8_t *src, size_t src_stride, int rows, int cols,
                      uint8_t *dst, size_t dst_stride)
{
    /* Blocked so that both sides stay in cache for large images. */
    enum { B = 32 };
    int y0, x0, y, x;
    for (y0 = 0; y0 < rows; y0 += B) {
        int y1 = y0 + B < rows ? y0 + B : rows;
        for (x0 = 0; x0 < cols; x0 += B) {
            int x1 = x0 + B < cols ? x0 + B : cols;
            for (y = y0; y < y1; y++) {
                const uint8_t *s = src + (size_t)y * src_stride;
                for (x = x0; x < x1; x++) {
                    uint8_t *d = dst + (size_t)x * dst_stride + (size_t)y * 3;
                    d[0] = s[x * 3];
                    d[1] = s[x * 3 + 1];
                    d[2] = s[x * 3 + 2];
                }
            }
        }
    }
}
