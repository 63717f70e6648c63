/* YOLO's validation letterbox: a whole image decoded at its own size into uint8
 * planes padded with a constant (NOTE [ A letterbox ] in
 * letterbox.c).  No Python here. */
#ifndef JL_LETTERBOX_H
#define JL_LETTERBOX_H

#include <stddef.h>
#include <stdint.h>

#include "jpeg_region.h"
#include "plan.h"

/* 1 when the plan keeps the whole image (no DCT scale, flip or colour), at its own
 * size or resized with OpenCV's INTER_LINEAR, inside a constant padding of out_h x
 * out_w uint8 planes (JL_OUT_UINT8); or at its own size, unpadded, as OpenCV's B, G,
 * R rows (JL_OUT_BGR_HWC). */
int jl_is_letterbox(const jl_plan *p, int out_type, int out_h, int out_w);

/* Decodes such a sample into out ([3][out_h][out_w], or [out_h][out_w][3] for
 * JL_OUT_BGR_HWC); a status, msg filled on failure; *decode_seconds is set to the time
 * it took. */
int jl_letterbox_sample(jl_decoder *dec, const uint8_t *data, size_t size, const jl_plan *p,
                        int out_type, uint8_t *out, int out_h, int out_w, int64_t max_pixels,
                        char *msg, double *decode_seconds);

#endif
