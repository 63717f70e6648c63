/* The tensor stage over 8-bit images in memory (tensor_stage.c).  No Python here. */
#ifndef JL_TENSOR_STAGE_H
#define JL_TENSOR_STAGE_H

#include <stddef.h>
#include <stdint.h>

/* [3, h, w] levels (src) to float32 lut[ch][level] in dst, with streaming stores
 * (NOTE [ Levels made float with streaming stores ]). */
void jl_planes_to_float(const uint8_t *src, int h, int w, const float *lut, float *dst);

/* n images of h x w interleaved RGB bytes (src) to [3, h, w]: float32 values
 * lut[ch][level] (JL_OUT_FLOAT32) or the levels (JL_OUT_UINT8).  The tensor stage
 * run after Python code that worked on PIL images. */
void jl_hwc_to_chw(const uint8_t *src, int n, int h, int w, int out_type, const float *lut,
                   void *out);

#endif
