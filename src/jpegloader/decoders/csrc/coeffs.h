/* Pillow's resampling coefficients (coeffs.c).  No Python here. */
#ifndef JL_COEFFS_H
#define JL_COEFFS_H

#include <stddef.h>
#include <stdint.h>

/* Pillow's resampling filters (plan values; 0, the zeroed default, is bilinear). */
enum { JL_FILTER_BILINEAR = 0, JL_FILTER_BICUBIC = 1, JL_FILTER_BOX = 2,
       JL_FILTER_HAMMING = 3, JL_FILTER_LANCZOS = 4, JL_FILTER_COUNT = 5 };

/* Pillow: PRECISION_BITS = 32 - 8 - 2, leaving headroom for the sum. */
#define JL_PRECISION_BITS 22

typedef struct {
    int ksize;        /* taps reserved per output sample */
    int n;            /* output samples described */
    int *bounds;      /* [n][2]: first input index, number of taps */
    int32_t *kk;      /* [n][ksize]: fixed-point weights */
} jl_coeffs;

/* Coefficients of `filter` for output samples [out_start, out_start + n) of
 * a resize of an axis of in_size samples, box [in0, in1), to out_size
 * samples.  Taps are clamped to [0, in_size) exactly as Pillow clamps to the
 * image it resizes.  Returns 0, or -1 when out of memory or arguments are
 * invalid. */
int jl_coeffs_compute(jl_coeffs *c, int filter, int in_size, double in0, double in1,
                      int out_size, int out_start, int n);

void jl_coeffs_free(jl_coeffs *c);

/* Smallest and one-past-largest input index used by any output sample. */
void jl_coeffs_span(const jl_coeffs *c, int *lo, int *hi);

/* Adds delta to every first-tap index (re-bases taps onto another buffer). */
void jl_coeffs_shift(jl_coeffs *c, int delta);

#endif
