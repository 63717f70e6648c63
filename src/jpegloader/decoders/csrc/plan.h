/* The C boundary's record: one sample's plan and the enums it and the outputs use,
 * which Python mirrors (jpegloader.decoders.jpeg.PLAN_DTYPE, built from the offsets
 * module.c exports: NOTE [ One source of truth across the C boundary ] in module.c).
 * Included by pipeline.h, padding.h and module.c.  No Python here. */
#ifndef JL_PLAN_H
#define JL_PLAN_H

#include <stdint.h>

#include "colour.h"

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

/* OpenCV's INTER_LINEAR (cv_linear.h): a filter for letterbox plans only
 * (letterbox.h), outside Pillow's JL_FILTER_* range. */
enum { JL_FILTER_OPENCV_LINEAR = 16 };

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
    int32_t colour_first;   /* padded plans: the colour program runs on the whole
                               resize before the padding (NOTE [ Colour before the
                               padding ] in pipeline.c) */
    jl_axis x, y;
    jl_colour colour;       /* applied after resampling (and padding) */
} jl_plan;

/* 1 when every field of the plan is in range for an out_h x out_w output. */
int jl_plan_is_valid(const jl_plan *p, int out_h, int out_w);

/* Output element types of jl_decode_batch: float32 CHW through the table, uint8
 * CHW, uint8 HWC (interleaved RGB rows: what a PIL image holds), or uint8 HWC in
 * OpenCV's order (B, G, R rows: what cv2.imread gives; a whole image at its own
 * size only, NOTE [ A letterbox ] in letterbox.c). */
enum { JL_OUT_FLOAT32 = 0, JL_OUT_UINT8 = 1, JL_OUT_UINT8_HWC = 2, JL_OUT_BGR_HWC = 3 };

#endif
