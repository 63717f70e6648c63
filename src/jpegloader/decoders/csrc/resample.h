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
#ifndef TL_RESAMPLE_H
#define TL_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* Pillow's resampling filters (plan values; 0, the zeroed default, is bilinear). */
enum { TL_FILTER_BILINEAR = 0, TL_FILTER_BICUBIC = 1, TL_FILTER_BOX = 2,
       TL_FILTER_HAMMING = 3, TL_FILTER_LANCZOS = 4, TL_FILTER_COUNT = 5 };

/* Pillow: PRECISION_BITS = 32 - 8 - 2, leaving headroom for the sum. */
#define TL_PRECISION_BITS 22

typedef struct {
    int ksize;        /* taps reserved per output sample */
    int n;            /* output samples described */
    int *bounds;      /* [n][2]: first input index, number of taps */
    int32_t *kk;      /* [n][ksize]: fixed-point weights */
} tl_coeffs;

/* Coefficients of `filter` for output samples [out_start, out_start + n) of
 * a resize of an axis of in_size samples, box [in0, in1), to out_size
 * samples.  Taps are clamped to [0, in_size) exactly as Pillow clamps to the
 * image it resizes.  Returns 0, or -1 when out of memory or arguments are
 * invalid. */
int tl_coeffs_compute(tl_coeffs *c, int filter, int in_size, double in0, double in1,
                      int out_size, int out_start, int n);

/* Whether the 512-bit loops (the float pass by division here, the horizontal
 * pass in gather_rows.c) may run where the processor has AVX-512F, BW and FMA
 * (they may by default); returns the previous setting.  They give the AVX2
 * loops' results: the tests compare them with this. */
int tl_resample_allow_avx512(int allow);
int tl_cpu_has_avx512(void);
/* Allowed and available. */
int tl_avx512_on(void);

/* The filter's support (half-width in input samples before scaling). */
double tl_filter_support(int filter);
void tl_coeffs_free(tl_coeffs *c);

/* Smallest and one-past-largest input index used by any output sample. */
void tl_coeffs_span(const tl_coeffs *c, int *lo, int *hi);

/* Adds delta to every first-tap index (re-bases taps onto another buffer). */
void tl_coeffs_shift(tl_coeffs *c, int delta);

/* dst row o = clip8(sum_t src row (bounds[o].first + t) * kk[o][t]), each row
 * mirrored when flip is set (the final pass of PILToTensor's bytes).  Rows are
 * row_len bytes; acc is scratch for row_len int32 values. */
void tl_filter_rows(const uint8_t *src, size_t src_stride, int row_len,
                    const tl_coeffs *c, int flip, uint8_t *dst, size_t dst_stride,
                    int32_t *acc);

/* The same filter, but each 8-bit result v is written as lut[v] to a float
 * row, mirrored when flip is set: the final pass, fused with ToTensor and
 * Normalize (lut holds their exact float32 results for every level).  When
 * mean_std is not NULL, lut[v] is known to equal ((v / 255) - mean_std[0]) /
 * mean_std[1] in float32, bit for bit, and is computed so (NOTE [ Levels by
 * division ] in pipelines/tensor_stage.py). */
void tl_filter_rows_lut(const uint8_t *src, size_t src_stride, int row_len,
                        const tl_coeffs *c, const float *lut, const float *mean_std,
                        int flip, float *dst, size_t dst_stride, int32_t *acc);

/* dst[y][x] = lut[src[y][x]] for a rows x cols plane, mirrored when flip is
 * set: ToTensor + Normalize for pixels already in 8 bits.  mean_std as for
 * tl_filter_rows_lut. */
void tl_levels_to_float(const uint8_t *src, int rows, int cols, const float *lut,
                        const float *mean_std, int flip, float *dst);

/* dst[y][x] = src[y][x] for a rows x cols plane, mirrored when flip is set:
 * PILToTensor's bytes. */
void tl_levels_copy(const uint8_t *src, int rows, int cols, int flip, uint8_t *dst);

/* Three planes [rows][cols], plane_size bytes apart, to interleaved RGB rows,
 * mirrored when flip is set (the inverse of tl_split_rgb). */
void tl_planes_interleave(const uint8_t *planes, size_t plane_size, int rows, int cols,
                          int flip, uint8_t *dst);

/* Splits interleaved RGB rows into three planes [rows][cols], planes
 * plane_size bytes apart. */
void tl_split_rgb(const uint8_t *src, size_t src_stride, int rows, int cols,
                  uint8_t *planes, size_t plane_size);

/* Row strides rounded up to 32 bytes: 16-byte blocks stored at a stride like
 * 333 straddle cache lines, measured 15-25% slower to split and transpose. */
static inline size_t tl_padded(int n)
{
    return ((size_t)n + 31) & ~(size_t)31;
}

/* Splits interleaved RGB rows into three planes, transposed:
 * planes[ch][x * plane_stride + y] = src[y][x*3 + ch], planes ch apart by
 * plane_size bytes.  strip is scratch for 48 * tl_padded(cols) bytes. */
void tl_split_transpose_rgb(const uint8_t *src, size_t src_stride, int rows,
                            int cols, uint8_t *planes, size_t plane_stride,
                            size_t plane_size, uint8_t *strip);

/* dst[x * dst_stride + y] = src[y * src_stride + x] for a rows x cols block. */
void tl_transpose_u8(const uint8_t *src, size_t src_stride, int rows, int cols,
                     uint8_t *dst, size_t dst_stride);

#endif
