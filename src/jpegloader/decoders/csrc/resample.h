/* Pillow-compatible separable resampling on 8-bit planes.
 *
 * Reproduces Pillow's ImagingResample (Resample.c) for its convolution
 * filters (bilinear, bicubic with a = -0.5, box, hamming, lanczos):
 * double-precision coefficients with antialiasing support scaling, converted
 * to 22-bit fixed point, an 8-bit intermediate between the two passes, and
 * the same rounding.  Given the same decoded pixels (and the pass order the
 * installed Pillow uses, see pipeline.c) the output is bit-exact with PIL's
 * Image.resize, which is what torchvision uses for PIL images.
 *
 * Both passes are written as one "filter down the rows" primitive on
 * single-channel planes; the horizontal pass runs it on a transposed plane,
 * so that every inner loop runs over contiguous memory and vectorises, unless
 * gather_rows.h's pass (on the rows themselves) applies.  No Python here.
 */
#ifndef JL_RESAMPLE_H
#define JL_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "coeffs.h"
#include "layout.h"

/* The 512-bit loops (the float pass by division here, the horizontal pass in
 * gather_rows.c) run where jl_avx512_on(JL_AVX512_BW) says (avx512.h).  They give
 * the AVX2 loops' results: the tests compare them with this. */
#include "avx512.h"

/* dst row o = clip8(sum_t src row (bounds[o].first + t) * kk[o][t]), each row
 * mirrored when flip is set (the final pass of PILToTensor's bytes).  Rows are
 * row_len bytes; acc is scratch for row_len int32 values. */
void jl_filter_rows(const uint8_t *src, size_t src_stride, int row_len,
                    const jl_coeffs *c, int flip, uint8_t *dst, size_t dst_stride,
                    int32_t *acc);

/* The same filter, but each 8-bit result v is written as lut[v] to a float
 * row, mirrored when flip is set: the final pass, fused with ToTensor and
 * Normalize (lut holds their exact float32 results for every level).  When
 * mean_std is not NULL, lut[v] is known to equal ((v / 255) - mean_std[0]) /
 * mean_std[1] in float32, bit for bit, and is computed so (NOTE [ Levels by
 * division ] in pipelines/tensor_stage.py). */
void jl_filter_rows_lut(const uint8_t *src, size_t src_stride, int row_len,
                        const jl_coeffs *c, const float *lut, const float *mean_std,
                        int flip, float *dst, size_t dst_stride, int32_t *acc);

/* dst[y][x] = lut[src[y][x]] for a rows x cols plane, mirrored when flip is
 * set: ToTensor + Normalize for pixels already in 8 bits.  mean_std as for
 * jl_filter_rows_lut. */
void jl_levels_to_float(const uint8_t *src, int rows, int cols, const float *lut,
                        const float *mean_std, int flip, float *dst);

/* dst[y][x] = src[y][x] for a rows x cols plane, mirrored when flip is set:
 * PILToTensor's bytes. */
void jl_levels_copy(const uint8_t *src, int rows, int cols, int flip, uint8_t *dst);

#endif
