/* The horizontal resampling pass on row-major planes, without transposes.
 *
 * NOTE [ The horizontal pass without transposes ]
 * resample.c runs the horizontal pass as "filter down the rows" on a
 * transposed plane: the split into planes transposes the decoded region and
 * the pass's output is transposed back for the vertical pass.  On a 336x336
 * region (imagenet-sample eval) those two transposes cost as much as the
 * pass itself.  Here each row is filtered where it lies: eight outputs at a
 * time, the pixels of each output's taps picked out of a 16-byte window of
 * the row with a byte shuffle (four outputs per 128-bit lane), two taps to a
 * 32-bit lane, multiplied with vpmaddwd.  Pillow's 22-bit weights do not fit
 * 16 bits, so each weight k is used as k = kh * 2^11 + kl (kl in 0..2047)
 * and the two sums recombined: the same integer sum, bit for bit.
 *
 * It applies when four neighbouring outputs' taps fit in 16 input samples
 * (a shrink by up to about 3x with bilinear, which DCT scaling keeps most
 * crops under), the row has at least 16 samples and 8 outputs, and the CPU
 * has AVX2; otherwise resample.c's transposing pass runs.  Measured on this
 * AMD EPYC, 336x352 to 224 wide, split into planes included: 115 -> 76 us
 * (90 us before the loop over tap pairs was unrolled per count); per image in
 * the pipeline, resampling 0.180 -> 0.160 ms on imagenet-sample eval and
 * 0.182 -> 0.165 ms on the original-encoding files' train. */
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
