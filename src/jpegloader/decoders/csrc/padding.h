/* Padded crops (NOTE [ Padding a crop ] in padding.c): torchvision's RandomCrop
 * padding and pad_if_needed, as a map from each output row and column to a
 * resampled one, or to the fill.  No Python here. */
#ifndef JL_PADDING_H
#define JL_PADDING_H

#include <stdint.h>

#include "plan.h"

/* The part of an axis's resize that a plan resamples, for an output side of
 * `side` samples: [*start, *start + *count).  Unpadded, the kept window
 * itself; padded (`mode`), the resized samples its window shows through both
 * paddings.  Returns 0, or -1 when a padded axis's fields are out of range. */
int jl_axis_part(const jl_axis *a, int side, int mode, int *start, int *count);

/* A padded plan's output planes dst [3][out_h][out_w] from the resampled planes
 * src [3][rows][cols], the parts of the resize from x_start and y_start
 * (jl_axis_part); map: out_w + out_h ints of scratch. */
void jl_pad_planes(const uint8_t *src, uint8_t *dst, int32_t *map, const jl_plan *p, int out_h,
                   int out_w, int x_start, int y_start, int cols, int rows);

#endif
