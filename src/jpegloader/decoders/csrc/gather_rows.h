/* The horizontal resampling pass on row-major planes, without transposes.
 *
 * NOTE [ The horizontal pass without transposes ]
 * resample.c runs the horizontal pass on a transposed plane, and on small
 * regions the two transposes cost as much as the pass.  Here each row is
 * filtered where it lies: eight outputs at a time, each output's taps picked
 * out of a 16-byte window of the row with a byte shuffle, two taps to a 32-bit
 * lane, multiplied with vpmaddwd.  Pillow's 22-bit weights are split as
 * k = kh * 2^11 + kl and the two sums recombined: the same integer sum.  It
 * applies when four neighbouring outputs' taps fit in 16 input samples, the
 * row has at least 16 samples and 8 outputs, and the CPU has AVX2; otherwise
 * the transposing pass runs (docs/experiments.md). */
#ifndef JL_GATHER_ROWS_H
#define JL_GATHER_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "resample.h"

typedef struct {
    int n;          /* outputs per row */
    int groups;     /* ceil(n / 8); the last one overlaps the one before when n % 8 */
    int pairs;      /* tap pairs per output */
    int *base;      /* [groups][2]: window start of each 128-bit lane */
    uint8_t *table; /* [groups][pairs][3][32]: shuffle, kl and kh vectors */
} jl_gather;

/* Bytes of scratch jl_gather_build needs for these coefficients. */
size_t jl_gather_size(const jl_coeffs *c);

/* Lays out the gathered pass for coefficients over rows of in_size samples in
 * `scratch` (jl_gather_size bytes, any alignment).  Returns 1 when it applies
 * (see the NOTE), 0 when resample.c's pass must run instead. */
int jl_gather_build(jl_gather *g, const jl_coeffs *c, int in_size, void *scratch);

/* dst row y = the horizontal pass of src row y, for `rows` rows: the bytes
 * jl_filter_rows gives on the transposed plane, transposed back. */
void jl_gather_rows(const jl_gather *g, const uint8_t *src, size_t src_stride, int rows,
                    uint8_t *dst, size_t dst_stride);

#endif
