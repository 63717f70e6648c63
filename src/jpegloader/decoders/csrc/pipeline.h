/* The per-batch image pipeline: region decode -> Pillow-exact resample
 * (crop / resize / crop fused; any of Pillow's convolution filters, in the
 * pass order the installed Pillow uses) -> optional colour program
 * (ColorJitter, grayscale) -> flip -> either ToTensor + Normalize through a
 * lookup table into float32 CHW, or the bytes themselves into uint8 CHW
 * (PILToTensor).  No Python here. */
#ifndef JL_PIPELINE_H
#define JL_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "jpeg_region.h"
#include "plan.h"

/* Writes n samples of [3, out_h, out_w] into out: float32 values lut[ch][level]
 * (lut is float32 [3][256]: each 8-bit level after ToTensor and Normalize)
 * when out_type is JL_OUT_FLOAT32, or the 8-bit levels themselves when it is
 * JL_OUT_UINT8 (lut unused).  norm, when not NULL, is float32 [3][2]: per
 * channel a mean and std with which ((level / 255) - mean) / std equals the
 * table, bit for bit, and is computed instead of looked up
 * (jl_filter_rows_lut).  Each sample gets a status and, when not JL_OK, a
 * message of JL_MSG_LEN bytes; its pixels are then zero so a slot never
 * keeps stale data.  seconds[0] and seconds[1] are increased by the time
 * spent decoding (libjpeg-turbo) and augmenting (resample, colour, flip,
 * output). */
void jl_decode_batch(const uint8_t *data, const int64_t *offsets,
                     const jl_plan *plans, int n, void *out, int out_type, int out_h,
                     int out_w, const float *lut, const float *norm, int64_t max_pixels,
                     int32_t *status, char *messages, double *seconds);

/* Where jl_decode_views writes one view: n samples of its out_type, out_h and
 * out_w, laid out as jl_decode_batch lays out its out (lut and norm alike). */
typedef struct {
    void *out;
    const float *lut, *norm;
    int out_type, out_h, out_w;
} jl_view_out;

enum { JL_MAX_VIEWS = 32 };

/* Several views of each sample (plans: [n][views] records sharing a DCT scale
 * and an image size): each JPEG is decoded once, over the union of what its
 * views read, and view v of sample i written into outs[v] (NOTE [ Several
 * views of one decode ]).  One status and message per sample; a failed
 * sample's every view is zero.  A plan's skip is read from view 0. */
void jl_decode_views(const uint8_t *data, const int64_t *offsets, const jl_plan *plans,
                     int n, int views, const jl_view_out *outs, int64_t max_pixels,
                     int32_t *status, char *messages, double *seconds);

/* n samples, each into an output of its own (outs[i], its one sample: images of
 * their own sizes and types), as jl_decode_batch writes one. */
void jl_decode_each(const uint8_t *data, const int64_t *offsets, const jl_plan *plans, int n,
                    const jl_view_out *outs, int64_t max_pixels, int32_t *status,
                    char *messages, double *seconds);

#endif
