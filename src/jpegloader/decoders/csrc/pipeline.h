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

#include "colour.h"
#include "jpeg_region.h"

/* One axis of a fused geometry, in pixels of the decoded (scaled) image.
 * The source window [src_lo, src_lo + src_size) plays the part of the
 * image Pillow resizes; [in0, in1) is the resize box inside it; the full
 * resize has out_size samples of which the output's side from out_start
 * are kept.  A padded plan instead pads the resize by pad_lo before (and to
 * pad_len in all), pads that again as far as it needs, and keeps the window
 * starting at pad_start of the first padding's coordinates (NOTE [ Padding
 * a crop ]); out_start is then unused. */
typedef struct {
    double in0, in1;
    int32_t src_lo, src_size;
    int32_t out_size, out_start;
    int32_t pad_start, pad_lo, pad_len;
} jl_axis;

/* How a padded crop fills what lies outside the resized image: torchvision's
 * padding modes (constant: pad_fill's bytes, R | G << 8 | B << 16). */
enum { JL_PAD_NONE = 0, JL_PAD_CONSTANT = 1, JL_PAD_EDGE = 2, JL_PAD_REFLECT = 3,
       JL_PAD_SYMMETRIC = 4 };

/* Layout mirrored by jpegloader.decoders.jpeg.PLAN_DTYPE. */
typedef struct {
    int32_t skip;           /* non-zero: the Python path handles this sample */
    int32_t scale_denom;    /* 1, 2, 4 or 8 */
    int32_t flip;           /* mirror the output horizontally */
    int32_t filter;         /* JL_FILTER_* (resample.h) */
    int32_t vertical_first; /* run the vertical pass first (Pillow 13+ does for tall
                               reductions; see NOTE [ Pillow's pass order ]) */
    int32_t image_w, image_h; /* the size the plan was drawn for: NOTE [ A plan fits
                                 one image size ] */
    int32_t pad_mode;       /* JL_PAD_* */
    int32_t pad_fill;       /* JL_PAD_CONSTANT's RGB bytes */
    jl_axis x, y;
    jl_colour colour;       /* applied after resampling */
} jl_plan;

/* Output element types of jl_decode_batch: float32 CHW through the table, uint8
 * CHW, or uint8 HWC (interleaved RGB rows: what a PIL image holds). */
enum { JL_OUT_FLOAT32 = 0, JL_OUT_UINT8 = 1, JL_OUT_UINT8_HWC = 2 };

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

/* n images of h x w interleaved RGB bytes (src) to [3, h, w]: float32 values
 * lut[ch][level] (JL_OUT_FLOAT32) or the levels (JL_OUT_UINT8).  The tensor stage
 * run after Python code that worked on PIL images. */
void jl_hwc_to_chw(const uint8_t *src, int n, int h, int w, int out_type, const float *lut,
                   void *out);

#endif
