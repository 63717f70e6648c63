/* Pillow's resampling coefficients: its filter functions, the taps of every output
 * sample with antialiasing support scaling, normalised and in 22-bit fixed point, as
 * ImagingResample computes them (Resample.c).  No Python here. */
#include "coeffs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PRECISION_BITS JL_PRECISION_BITS

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
} FILTERS[JL_FILTER_COUNT] = {
    [JL_FILTER_BILINEAR] = {bilinear_filter, 1.0},
    [JL_FILTER_BICUBIC] = {bicubic_filter, 2.0},
    [JL_FILTER_BOX] = {box_filter, 0.5},
    [JL_FILTER_HAMMING] = {hamming_filter, 1.0},
    [JL_FILTER_LANCZOS] = {lanczos_filter, 3.0},
};

/* Each output's taps, normalised and in fixed point, as Pillow computes them.
 * Always inlined with fn a constant, so that the filter is inlined in the loop
 * over the taps (measured: a call per tap was most of this function's time). */
__attribute__((always_inline)) static inline void
fill_coeffs(jl_coeffs *c, double (*fn)(double), int in_size, double fin0, double scale,
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

int jl_coeffs_compute(jl_coeffs *c, int filter, int in_size, double in0, double in1,
                      int out_size, int out_start, int n)
{
    /* Pillow receives the box as C floats; keep that rounding. */
    float fin0 = (float)in0, fin1 = (float)in1;
    double scale, filterscale, support, ss;
    double *w;
    int ksize;

    memset(c, 0, sizeof(*c));
    if (filter < 0 || filter >= JL_FILTER_COUNT || in_size <= 0 || out_size <= 0 || n <= 0 ||
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
        jl_coeffs_free(c);
        return -1;
    }
    c->ksize = ksize;
    c->n = n;
    switch (filter) {
    case JL_FILTER_BILINEAR:
        fill_coeffs(c, bilinear_filter, in_size, fin0, scale, support, ss, out_start, w);
        break;
    case JL_FILTER_BICUBIC:
        fill_coeffs(c, bicubic_filter, in_size, fin0, scale, support, ss, out_start, w);
        break;
    default:
        fill_coeffs(c, FILTERS[filter].fn, in_size, fin0, scale, support, ss, out_start, w);
    }
    free(w);
    return 0;
}

void jl_coeffs_free(jl_coeffs *c)
{
    free(c->bounds);
    free(c->kk);
    c->bounds = NULL;
    c->kk = NULL;
}

void jl_coeffs_span(const jl_coeffs *c, int *lo, int *hi)
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

void jl_coeffs_shift(jl_coeffs *c, int delta)
{
    int i;
    for (i = 0; i < c->n; i++)
        c->bounds[2 * i] += delta;
}
