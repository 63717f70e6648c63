/* An 8-bit RGB image in memory resized as Pillow's Image.resize does it (bilinear),
 * into planes: floats through the tensor table (lut float32[3][256]; norm as for
 * jl_filter_rows_lut, or NULL), or bytes.  src: [h][w][3]; out: [3][oh][ow].
 * vertical_first: the installed Pillow's pass order (NOTE [ Pillow's pass order ]
 * in pipeline.c).  Returns 0, or -1 when memory runs out.  No Python here. */
#ifndef JL_RESIZE_IMAGE_H
#define JL_RESIZE_IMAGE_H

#include <stdint.h>

int jl_resize_hwc(const uint8_t *src, int h, int w, int oh, int ow, int vertical_first,
                  int out_float, const float *lut, const float *norm, void *out);

#endif
