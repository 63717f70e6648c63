/* The per-batch image pipeline: region decode -> Pillow-exact bilinear
 * resample (crop / resize / crop fused) -> optional ColorJitter -> flip ->
 * ToTensor + Normalize through a lookup table -> float32 CHW.  No Python
 * here. */
#ifndef TL_PIPELINE_H
#define TL_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "color.h"
#include "jpeg_region.h"

/* One axis of a fused geometry, in pixels of the decoded (scaled) image.
 * The source window [src_lo, src_lo + src_size) plays the part of the
 * image Pillow resizes; [in0, in1) is the resize box inside it; the full
 * resize has out_size samples of which out_start.. are kept. */
typedef struct {
    double in0, in1;
    int32_t src_lo, src_size;
    int32_t out_size, out_start;
} tl_axis;

/* Layout mirrored by jpegloader.decoders.jpeg.PLAN_DTYPE. */
typedef struct {
    int32_t skip;        /* non-zero: the Python path handles this sample */
    int32_t scale_denom; /* 1, 2, 4 or 8 */
    int32_t flip;        /* mirror the output horizontally */
    int32_t jitter_on;   /* non-zero: apply `jitter` after resampling */
    tl_axis x, y;
    tl_jitter jitter;
} tl_plan;

/* Writes n samples of float32 [3, out_h, out_w] into out.  lut is float32
 * [3][256]: the value of each 8-bit level after ToTensor and Normalize.
 * Each sample gets a status and, when not TL_OK, a message of TL_MSG_LEN
 * bytes; its pixels are then zero so a slot never keeps stale data.
 * seconds[0] and seconds[1] are increased by the time spent decoding
 * (libjpeg-turbo) and augmenting (resample, jitter, flip, normalize). */
void tl_decode_batch(const uint8_t *data, const int64_t *offsets,
                     const tl_plan *plans, int n, float *out, int out_h,
                     int out_w, const float *lut, int64_t max_pixels,
                     int32_t *status, char *messages, double *seconds);

/* Header probe for n samples: info is int32 [n][4] (width, height,
 * components, progressive). */
void tl_probe_batch(const uint8_t *data, const int64_t *offsets, int n,
                    int32_t *info, int32_t *status, char *messages);

#endif
